"""The fused ops inside the Transformer layers: ReLU + dropout in the feed-forward network.

Each fused op has a float64 gradcheck, a comparison with PyTorch given the same dropout mask,
and a check that a layer running it gives exactly the numbers (outputs and every gradient)
of the same layer running the separate ops with the same seed. A forward hook on a layer's
dropout module makes it run the separate ops, as it must: a hook has to see its module run.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad import kernels, ops
from minigrad.autograd import gradcheck
from minigrad.nn import TransformerDecoderLayer, TransformerEncoderLayer
from minigrad.nn import functional as F


def t64(a, grad=True):
    return mg.tensor(np.asarray(a, np.float64), requires_grad=grad)


def away_from_zero(r, shape):
    """Normal numbers at least 0.1 from 0, so a central difference never straddles ReLU's kink."""
    x = r.standard_normal(shape)
    return np.where(np.abs(x) < 0.1, 0.1 * np.sign(x) + x, x)


# ---------------------------------------------------------------- relu + dropout ----
def test_gradcheck_relu_dropout():
    x = t64(away_from_zero(np.random.default_rng(0), (3, 5, 7)))
    assert gradcheck(lambda a: ops.ReluDropout.apply(a, p=0.3, seed=11), [x])


def test_relu_dropout_equals_torch_given_the_mask(torch):
    r = np.random.default_rng(1)
    x = r.standard_normal((4, 6, 16)).astype(np.float32)
    g = r.standard_normal(x.shape).astype(np.float32)
    ours = mg.tensor(x, requires_grad=True)
    y = ops.ReluDropout.apply(ours, p=0.25, seed=5)
    y.backward(mg.tensor(g))
    mask = torch.from_numpy(kernels.dropout_mask(x.shape, 0.25, 5, np.float32))
    tx = torch.from_numpy(x).requires_grad_()
    ty = torch.relu(tx) * mask
    ty.backward(torch.from_numpy(g))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_relu_dropout_function_draws_the_seed_dropout_would():
    x = mg.randn(8, 32)
    mg.manual_seed(3)
    fused = F.relu_dropout(x, 0.4)
    mg.manual_seed(3)
    separate = F.dropout(F.relu(x), 0.4)
    np.testing.assert_array_equal(fused.numpy(), separate.numpy())
    np.testing.assert_array_equal(F.relu_dropout(x, 0.4, training=False).numpy(), F.relu(x).numpy())
    with pytest.raises(ValueError, match=r"relu_dropout: p must be in \[0, 1\), got 1.5"):
        F.relu_dropout(x, 1.5)


# ------------------------------------------------------- whole layers, fused or not ----
FUSED_KERNELS = ("relu_dropout",)


def _spy(fn, name, calls):
    def wrapper(*args, **kwargs):
        calls.append(name)
        return fn(*args, **kwargs)
    return wrapper


def _run(layer, inputs, seed, separate):
    """Output and every gradient of a training step of `layer`, fused or with separate ops."""
    handles = []
    if separate:   # a hook on every dropout module keeps the fused ops out
        handles = [m.register_forward_hook(lambda *a: None) for m in layer.modules()
                   if type(m).__name__ == "Dropout"]
    layer.train()
    layer.zero_grad()
    xs = [mg.tensor(a, requires_grad=True) for a in inputs]
    mg.manual_seed(seed)
    out = layer(*xs)
    out.backward(mg.tensor(np.random.default_rng(seed).standard_normal(out.shape).astype(out.numpy().dtype)))
    for h in handles:
        h.remove()
    grads = {n: p.grad.numpy().copy() for n, p in layer.named_parameters()}
    return out.numpy(), [x.grad.numpy() for x in xs], grads


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_layers_give_exactly_the_numbers_of_the_separate_ops(kind, norm_first, dtype,
                                                                  monkeypatch):
    ran = []
    for name in FUSED_KERNELS:
        monkeypatch.setattr(kernels, name, _spy(getattr(kernels, name), name, ran))
    mg.manual_seed(0)
    cls = TransformerEncoderLayer if kind == "encoder" else TransformerDecoderLayer
    layer = cls(16, 4, 32, dropout=0.2, batch_first=True, norm_first=norm_first).to(dtype)
    r = np.random.default_rng(2)
    inputs = [r.standard_normal((3, 5, 16)).astype(dtype)]
    if kind == "decoder":
        inputs.append(r.standard_normal((3, 4, 16)).astype(dtype))
    fused = _run(layer, inputs, 7, separate=False)
    separate = _run(layer, inputs, 7, separate=True)
    np.testing.assert_array_equal(fused[0], separate[0])
    for a, b in zip(fused[1], separate[1]):
        np.testing.assert_array_equal(a, b)
    assert fused[2].keys() == separate[2].keys()
    for name in fused[2]:
        np.testing.assert_array_equal(fused[2][name], separate[2][name], err_msg=name)
    # the fused kernels ran in the first run only (each layer has one feed-forward network)
    assert ran.count("relu_dropout") == 1
