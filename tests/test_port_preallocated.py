"""Port test: a program that preallocates its buffers and writes into them with `out=`, as
code tuned to avoid allocations does: logistic regression trained by hand-written gradients
(no autograd) where every intermediate (the logits, the probabilities, the residual, the
gradient, the parameter update) lives in a buffer made once, `torch.matmul(X, w, out=z)`,
`torch.sigmoid(z, out=p)`, `torch.sub(w, g, alpha=lr, out=w)`; a running sum of the
per-epoch gradients with `torch.add(acc, g, out=acc)`; each batch's loss written into its slot
of the epoch's buffer (`out=` a 0-d view), the epoch's mean by `torch.mean(buf, 0, out=m)`,
all of them joined into a preallocated buffer by `torch.cat(buffers, out=losses)`; the
final statistics with `torch.max(scores, 1, out=(values, indices))` and
`torch.linalg.vector_norm(w, out=n)`. Run by PyTorch and by minigrad (passed in as `torch`)
on the same data and initial weights."""
import numpy as np

from port_runner import run_both


def preallocated_program(torch, X, Y, init=None, epochs=25, lr=0.5, batch=32):
    n, d = X.shape
    X = torch.tensor(X, dtype=torch.float32)
    Y = torch.tensor(Y, dtype=torch.float32).unsqueeze(1)
    w0 = np.random.default_rng(3).normal(0, 0.1, (d, 1)).astype(np.float32) \
        if init is None else init
    w = torch.tensor(w0)
    b = torch.zeros(1)

    z = torch.empty(batch, 1)      # the buffers, made once
    p = torch.empty(batch, 1)
    r = torch.empty(batch, 1)
    g = torch.empty(d, 1)
    gb = torch.empty(())
    acc = torch.zeros(d, 1)
    losses = torch.empty(epochs * (n // batch))  # every batch's loss, joined by cat at the end
    per_epoch = []
    curve = []
    for _ in range(epochs):
        epoch_loss = torch.empty(n // batch)
        for i in range(n // batch):
            xb, yb = X[i * batch:(i + 1) * batch], Y[i * batch:(i + 1) * batch]
            torch.matmul(xb, w, out=z)
            torch.add(z, b, out=z)                      # out aliasing an input
            torch.sigmoid(z, out=p)
            torch.sub(p, yb, out=r)
            torch.matmul(xb.t(), r, out=g)
            torch.div(g, batch, out=g)
            torch.mean(r, (0, 1), out=gb)
            torch.sub(w, g, alpha=lr, out=w)
            torch.sub(b, gb, alpha=lr, out=b)
            torch.add(acc, g, out=acc)
            # the batch's binary cross entropy, written into the epoch's slot (a 0-d view)
            bce = torch.nn.functional.binary_cross_entropy_with_logits(z, yb)
            torch.mul(bce, 1.0, out=epoch_loss[i])
        m = torch.empty(())
        torch.mean(epoch_loss, 0, out=m)
        curve.append(m.item())
        per_epoch.append(epoch_loss)
    torch.cat(per_epoch, dim=0, out=losses)
    scores = torch.empty(n, 2)
    torch.matmul(X, w, out=scores[:, 1:])               # a non-contiguous out
    torch.neg(scores[:, 1], out=scores[:, 0])
    values, indices = torch.empty(0), torch.empty(0, dtype=torch.long)
    torch.max(scores, 1, out=(values, indices))
    norm = torch.empty(())
    torch.linalg.vector_norm(w, out=norm)
    accuracy = (indices.float() == Y.squeeze(1)).float().mean().item()
    return {"init": w0, "curve": curve, "w": w.numpy().copy(), "acc": acc.numpy().copy(),
            "losses": losses.numpy().copy(), "values": values.numpy().copy(),
            "accuracy": accuracy, "norm": norm.item()}


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (256, 5)).astype(np.float32)
    Y = (X @ np.array([1.5, -2.0, 0.5, 0.0, 1.0]) + rng.normal(0, 0.5, 256) > 0)
    return X, Y.astype(np.float32)


def test_preallocated_buffers_give_pytorchs_numbers(torch):
    X, Y = _data()
    expected, got = run_both(preallocated_program, torch, X, Y)
    assert expected["curve"][-1] < 0.5 * expected["curve"][0]  # it learns
    np.testing.assert_allclose(got["curve"], expected["curve"], rtol=1e-5)
    for key in ("w", "acc", "losses", "values"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-6, err_msg=key)
    assert got["accuracy"] == expected["accuracy"] > 0.85
    np.testing.assert_allclose(got["norm"], expected["norm"], rtol=1e-5)
