"""The fused ops inside the Transformer layers: ReLU + dropout in the feed-forward network,
dropout + residual add (+ layer norm when post-norm) in each residual connection, and
attention's mask + softmax + dropout.

Each fused op has a float64 gradcheck, a comparison with PyTorch given the same dropout mask,
and a check that a layer running it gives exactly the numbers (outputs and every gradient)
of the same layer running the separate ops with the same seed, under either dropout setting
(PyTorch's masks, the default, and the hash's). A forward hook on a layer's
dropout module makes it run the separate ops, as it must: a hook has to see its module run.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad import kernels, ops
from minigrad.autograd import gradcheck
from minigrad.nn import TransformerDecoderLayer, TransformerEncoderLayer
from minigrad.nn import functional as F
from minigrad.nn import fast_path as NF
from helpers import t64


def same_as_torch(torch, op, torch_op, arrays, g, tol, grad_tol=None):
    """`op` on minigrad leaves and `torch_op` on PyTorch leaves made of the same `arrays` give
    the same output and, backpropagating `g`, the same gradients: within `tol` (rtol, atol),
    the gradients within `grad_tol` where given."""
    ours = [mg.tensor(a, requires_grad=True) for a in arrays]
    y = op(*ours)
    y.backward(mg.tensor(g))
    theirs = [torch.from_numpy(a).requires_grad_() for a in arrays]
    ty = torch_op(*theirs)
    ty.backward(torch.from_numpy(g))
    rtol, atol = tol
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=rtol, atol=atol)
    rtol, atol = grad_tol or tol
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


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
    mask = torch.from_numpy(kernels.dropout_mask(x.shape, 0.25, 5, np.float32))
    same_as_torch(torch, lambda a: ops.ReluDropout.apply(a, p=0.25, seed=5),
                  lambda a: torch.relu(a) * mask, [x], g, (1e-6, 1e-7))


def test_relu_dropout_function_draws_the_seed_dropout_would():
    x = mg.randn(8, 32)
    mg.manual_seed(3)
    fused = NF.relu_dropout(x, 0.4)
    mg.manual_seed(3)
    separate = F.dropout(F.relu(x), 0.4)
    np.testing.assert_array_equal(fused.numpy(), separate.numpy())
    np.testing.assert_array_equal(NF.relu_dropout(x, 0.4, training=False).numpy(), F.relu(x).numpy())
    with pytest.raises(ValueError, match=r"relu_dropout: p must be in \[0, 1\), got 1.5"):
        NF.relu_dropout(x, 1.5)


# ------------------------------------------------ dropout + add + layer norm ----
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_gradcheck_dropout_add_layer_norm(affine):
    r = np.random.default_rng(3)
    x, s = t64(r.standard_normal((2, 3, 6))), t64(r.standard_normal((2, 3, 6)))
    params = [t64(1 + 0.1 * r.standard_normal(6)), t64(0.1 * r.standard_normal(6))]
    params = params[:{"both": 2, "weight": 1, "none": 0}[affine]]
    assert gradcheck(lambda *a: ops.DropoutAddLayerNorm.apply(
        a[0], a[1], *(list(a[2:]) + [None] * (2 - len(a[2:]))), p=0.3, seed=9, eps=1e-5),
        [x, s] + params)


def test_dropout_add_layer_norm_equals_torch_given_the_mask(torch):
    r = np.random.default_rng(4)
    x, s, g = (r.standard_normal((4, 5, 16)).astype(np.float32) for _ in range(3))
    w, b = (r.standard_normal(16).astype(np.float32) for _ in range(2))
    mask = torch.from_numpy(kernels.dropout_mask(x.shape, 0.2, 13, np.float32))
    same_as_torch(torch, lambda *a: ops.DropoutAddLayerNorm.apply(*a, p=0.2, seed=13, eps=1e-5),
                  lambda x, s, w, b: torch.nn.functional.layer_norm(x + s * mask, (16,), w, b,
                                                                    1e-5),
                  [x, s, w, b], g, (1e-5, 1e-5), grad_tol=(1e-4, 1e-5))


def test_dropout_add_layer_norm_function_draws_the_seed_dropout_would():
    x, s = mg.randn(4, 8), mg.randn(4, 8)
    w, b = mg.randn(8), mg.randn(8)
    mg.manual_seed(5)
    fused = NF.dropout_add_layer_norm(s, x, 0.3, w, b)
    mg.manual_seed(5)
    separate = F.layer_norm(x + F.dropout(s, 0.3), (8,), w, b)
    np.testing.assert_array_equal(fused.numpy(), separate.numpy())
    np.testing.assert_array_equal(NF.dropout_add_layer_norm(s, x, 0.3, w, b, training=False).numpy(),
                                  F.layer_norm(x + s, (8,), w, b).numpy())
    with pytest.raises(ValueError, match="dropout_add_layer_norm: x of shape"):
        ops.DropoutAddLayerNorm.apply(x, s[:2], w, b, p=0.1, seed=1)


# ------------------------------------------------------------ dropout + add ----
def test_gradcheck_dropout_add():
    r = np.random.default_rng(10)
    x, s = t64(r.standard_normal((3, 4, 5))), t64(r.standard_normal((3, 4, 5)))
    assert gradcheck(lambda a, b: ops.DropoutAdd.apply(a, b, p=0.4, seed=2), [x, s])


def test_dropout_add_equals_torch_given_the_mask(torch):
    r = np.random.default_rng(11)
    x, s, g = (r.standard_normal((4, 6, 8)).astype(np.float32) for _ in range(3))
    mask = torch.from_numpy(kernels.dropout_mask(x.shape, 0.3, 12, np.float32))
    same_as_torch(torch, lambda x, s: ops.DropoutAdd.apply(x, s, p=0.3, seed=12),
                  lambda x, s: x + s * mask, [x, s], g, (1e-6, 1e-6))


def test_dropout_add_function_draws_the_seed_dropout_would():
    x, s = mg.randn(4, 8), mg.randn(4, 8)
    mg.manual_seed(5)
    fused = NF.dropout_add(s, x, 0.3)
    mg.manual_seed(5)
    np.testing.assert_array_equal(fused.numpy(), (x + F.dropout(s, 0.3)).numpy())
    np.testing.assert_array_equal(NF.dropout_add(s, x, 0.3, training=False).numpy(), (x + s).numpy())
    with pytest.raises(ValueError, match="dropout_add: x of shape"):
        ops.DropoutAdd.apply(x, s[:2], p=0.1, seed=1)


# ------------------------------------------------------- whole layers, fused or not ----
FUSED_OPS = (ops.ReluDropout, ops.DropoutAddLayerNorm, ops.DropoutAdd)


def _spy(op, calls):
    """op with its forward recorded in calls: (its name, whether it drew PyTorch's mask)."""
    forward = op.forward

    def wrapper(ctx, *args, **kwargs):
        calls.append((op.__name__, kwargs.get("gen") is not None))
        return forward(ctx, *args, **kwargs)
    return staticmethod(wrapper)


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


@pytest.mark.parametrize("drawn", [True, False])   # PyTorch's masks (the default), the hash's
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_layers_give_exactly_the_numbers_of_the_separate_ops(kind, norm_first, dtype,
                                                                  drawn, monkeypatch):
    ran = []
    for op in FUSED_OPS:
        monkeypatch.setattr(op, "forward", _spy(op, ran))
    with mg.random.use_pytorch_dropout(drawn):
        _fused_and_separate(kind, norm_first, dtype, ran)
    assert {d for _, d in ran} == {drawn}


def _fused_and_separate(kind, norm_first, dtype, ran):
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
    # the fused kernels ran in the first run only: one feed-forward network per layer, and a
    # residual connection per sublayer when post-norm
    names = [name for name, _ in ran]
    assert names.count("ReluDropout") == 1
    residuals = 2 if kind == "encoder" else 3
    assert names.count("DropoutAddLayerNorm") == (0 if norm_first else residuals)
    assert names.count("DropoutAdd") == (residuals if norm_first else 0)


# ------------------------------------------------ attention: mask, softmax, dropout ----
def test_gradcheck_masked_softmax_dropout():
    r = np.random.default_rng(6)
    x = t64(r.standard_normal((2, 3, 4, 5)))
    allowed = r.random((2, 1, 1, 5)) < 0.7
    allowed[..., 0] = True
    assert gradcheck(lambda a: ops.MaskedSoftmaxDropout.apply(a, allowed=allowed, p=0.3, seed=4), [x])
    assert gradcheck(lambda a: ops.MaskedSoftmaxDropout.apply(a), [x])


def test_masked_softmax_dropout_equals_torch_given_the_mask(torch):
    r = np.random.default_rng(7)
    x = (3 * r.standard_normal((3, 2, 6, 6))).astype(np.float32)
    g = r.standard_normal(x.shape).astype(np.float32)
    allowed = np.tril(np.ones((6, 6), bool))
    mask = torch.from_numpy(kernels.dropout_mask(x.shape, 0.25, 8, np.float32))
    same_as_torch(
        torch, lambda a: ops.MaskedSoftmaxDropout.apply(a, allowed=allowed, p=0.25, seed=8),
        lambda a: torch.softmax(a.masked_fill(~torch.from_numpy(allowed), float("-inf")), -1) * mask,
        [x], g, (1e-5, 1e-6))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_gives_exactly_the_numbers_of_the_separate_ops(dtype):
    r = np.random.default_rng(9)
    q, k, v = (r.standard_normal((2, 3, 5, 4)).astype(dtype) for _ in range(3))
    allowed = r.random((2, 1, 1, 5)) < 0.8
    allowed[..., 0] = True
    g = r.standard_normal((2, 3, 5, 4)).astype(dtype)

    def run(fused):
        ts = [mg.tensor(a, requires_grad=True) for a in (q, k, v)]
        mg.manual_seed(3)
        if fused:
            out, w = F.attention(*ts, allowed=allowed, dropout_p=0.2)
        else:
            scores = (ts[0] * (1 / np.sqrt(4))) @ ts[1].transpose(-2, -1)
            w = F.dropout(scores.masked_fill(~allowed, float("-inf")).softmax(-1), 0.2)
            out = w @ ts[2]
        out.backward(mg.tensor(g))
        return [out.numpy(), w.numpy()] + [t.grad.numpy() for t in ts]

    for a, b in zip(run(True), run(False)):
        np.testing.assert_array_equal(a, b)
