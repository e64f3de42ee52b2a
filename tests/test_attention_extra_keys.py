"""nn.MultiheadAttention's add_bias_kv= and add_zero_attn=: PyTorch's parameter names
(bias_k, bias_v), state-dict keys in PyTorch's order and initialisation; outputs, attention
weights and every gradient against PyTorch with bool and float masks padded for the extra
keys, both float dtypes, batch_first, kdim/vdim, without biases; float64 gradient checks;
decoding with a cache; the ONNX export."""
import io

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

rng = np.random.default_rng(3)
E, H, L, S, B = 8, 2, 3, 5, 2
KWARGS = [dict(add_bias_kv=True), dict(add_zero_attn=True),
          dict(add_bias_kv=True, add_zero_attn=True),
          dict(add_bias_kv=True, add_zero_attn=True, batch_first=True, kdim=6, vdim=7),
          dict(add_bias_kv=True, bias=False)]


def _pair(torch, kw, dtype):
    """PyTorch's layer and minigrad's holding its state dict (same keys, same order)."""
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, H, **kw).to(getattr(torch, dtype.__name__))
    ours = mg.nn.MultiheadAttention(E, H, **kw, dtype=dtype)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(state) == list(ours.state_dict())
    ours.load_state_dict({k: mg.tensor(v) for k, v in state.items()})
    return ours, theirs


def _masks(dtype):
    padding = np.zeros((B, S), bool)
    padding[1, -2:] = True
    return [{}, dict(key_padding_mask=padding),
            dict(attn_mask=rng.standard_normal((L, S)).astype(dtype)),
            dict(attn_mask=rng.random((B * H, L, S)) < 0.3, key_padding_mask=padding),
            dict(key_padding_mask=np.where(padding, -1e9, 0.0).astype(dtype),
                 average_attn_weights=False)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_outputs_weights_and_gradients_match_pytorch(torch, dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for kw in KWARGS:
        ours, theirs = _pair(torch, kw, dtype)
        first = kw.get("batch_first", False)
        shapes = [(L, E), (S, kw.get("kdim", E)), (S, kw.get("vdim", E))]
        arrays = [rng.standard_normal((B, n, d) if first else (n, B, d)).astype(dtype)
                  for n, d in shapes]
        for masks in _masks(dtype):
            results = []
            for lib, layer in ((mg, ours), (torch, theirs)):
                layer.zero_grad()
                ts = [lib.tensor(a, requires_grad=True) for a in arrays]
                args = {n: (lib.tensor(m) if isinstance(m, np.ndarray) else m)
                        for n, m in masks.items()}
                out, weights = layer(*ts, **args)
                w = np.sin(np.arange(out.numel())).reshape(tuple(out.shape)).astype(dtype)
                (out * lib.tensor(w)).sum().backward()
                results.append([out.detach().numpy(), weights.detach().numpy()]
                               + [t.grad.numpy() for t in ts]
                               + [p.grad.numpy() for _, p in layer.named_parameters()])
            for got, want in zip(*results):
                assert got.shape == want.shape and got.dtype == want.dtype, (kw, masks)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                           err_msg=f"{kw} {list(masks)}")


def test_parameters_and_initialisation_are_pytorchs(torch):
    ours = mg.nn.MultiheadAttention(512, 8, add_bias_kv=True, add_zero_attn=True)
    theirs = torch.nn.MultiheadAttention(512, 8, add_bias_kv=True, add_zero_attn=True)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert ours.add_zero_attn is True and theirs.add_zero_attn is True
    # xavier_normal_ of (1, 1, E): std sqrt(2 / (E + E))
    for p in (ours.bias_k, ours.bias_v):
        assert abs(p.numpy().mean()) < 0.01 and abs(p.numpy().std() - (1 / 512) ** 0.5) < 0.006
    plain = mg.nn.MultiheadAttention(8, 2)
    assert plain.bias_k is None and plain.bias_v is None and plain.add_zero_attn is False
    with pytest.raises(ValueError, match="relative_positions"):
        mg.nn.MultiheadAttention(8, 2, add_zero_attn=True, relative_positions=2)


def test_gradcheck():
    layer = mg.nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True,
                                     batch_first=True).double()
    q, kv = (mg.tensor(rng.standard_normal((2, n, 4)), requires_grad=True) for n in (2, 3))
    mask = mg.tensor(np.array([[False, False, True], [False, True, True]]))
    assert gradcheck(lambda q, kv, bk, bv: layer(q, kv, kv, key_padding_mask=mask)[0],
                     [q, kv, layer.bias_k, layer.bias_v])


def test_training_with_dropout_and_decoding_with_a_cache():
    mg.manual_seed(1)
    layer = mg.nn.MultiheadAttention(8, 2, dropout=0.5, add_bias_kv=True, add_zero_attn=True,
                                     batch_first=True)
    x = mg.randn(2, 4, 8)
    out, _ = layer(x, x, x, need_weights=False)  # training: not the packed path
    out.sum().backward()
    assert layer.bias_k.grad is not None and np.isfinite(layer.bias_k.grad.numpy()).all()
    layer.eval()
    with mg.no_grad():
        full, _ = layer(x, x, x, attn_mask=mg.tensor(np.triu(np.ones((4, 4), bool), 1)))
        cache, steps = {}, []
        for t in range(4):
            steps.append(layer(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], cache=cache)[0])
    np.testing.assert_allclose(mg.cat(steps, 1).numpy(), full.numpy(), rtol=1e-5, atol=1e-6)


def test_onnx_export_runs_to_the_same_outputs():
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    mo = pytest.importorskip("minigrad.onnx")
    layer = mg.nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True,
                                     batch_first=True).eval()

    class Attend(mg.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = layer

        def forward(self, x, pad):
            return self.attn(x, x, x, key_padding_mask=pad)[0]

    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    pad = np.zeros((2, 5), bool)
    pad[1, 3:] = True
    buf = io.BytesIO()
    mo.export(Attend(), (mg.tensor(x), mg.tensor(pad)), buf, input_names=["x", "pad"])
    got = ort.InferenceSession(buf.getvalue()).run(None, {"x": x, "pad": pad})[0]
    want = Attend()(mg.tensor(x), mg.tensor(pad)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
