"""Multi-head attention's packed training path (nn/fast_path.py: PackedAttention).

In training, self-attention makes Q, K and V with one product of the whole in_proj_weight and
cross-attention K and V with one product, and one op takes the heads from there to their
concatenation. The op must give the bits of the separate ops it stands for (head split,
F.attention, head merge), forward and backward; a layer taking it gives the same output bits
and the same gradients up to the rounding of the in-projection's summed input gradient (one
product over 3E instead of three over E, added); it is gradchecked in float64, and its
double-backward and forward-mode rules agree with the separate ops'.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.nn import MultiheadAttention
from minigrad.nn import fast_path as NF
from helpers import t64

E, H, B, L, S = 8, 2, 2, 4, 5
CAUSAL = np.tril(np.ones((L, L), bool))
PADDING = np.ones((B, 1, 1, S), bool)
PADDING[1, ..., -2:] = False


def _inputs(dtype, cross, seed=0):
    r = np.random.default_rng(seed)
    if cross:
        return [r.standard_normal((B, L, E)).astype(dtype),
                r.standard_normal((B, S, 2 * E)).astype(dtype)]
    return [r.standard_normal((B, L, 3 * E)).astype(dtype)]


def _both(arrays, allowed, p, seed=7):
    """(output, gradients) of PackedAttention and of the separate ops, backpropagating the
    same random gradient."""
    res = []
    for fused in (True, False):
        ts = [mg.tensor(a, requires_grad=True) for a in arrays]
        kv = ts[1] if len(ts) > 1 else None
        if fused:
            out = NF.PackedAttention.apply(ts[0], kv, num_heads=H, allowed=allowed, p=p, seed=seed)
        else:
            out = NF._separate(ts[0], kv, H, allowed, p, seed)
        g = np.random.default_rng(1).standard_normal(out.shape).astype(out.numpy().dtype)
        out.backward(mg.tensor(g))
        res.append([out.numpy()] + [t.grad.numpy() for t in ts])
    return res


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cross, allowed, p", [(False, CAUSAL, 0.2), (False, None, 0.0),
                                               (True, PADDING, 0.3), (True, None, 0.0)])
def test_the_bits_of_the_separate_ops(dtype, cross, allowed, p):
    fused, separate = _both(_inputs(dtype, cross), allowed, p)
    for a, b in zip(fused, separate):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cross", [False, True])
def test_gradcheck(cross):
    arrays = _inputs(np.float64, cross, seed=3)
    allowed = PADDING if cross else CAUSAL

    def fn(*ts):
        return NF.PackedAttention.apply(ts[0], ts[1] if cross else None, num_heads=H,
                                        allowed=allowed, p=0.25, seed=4)
    assert gradcheck(fn, [t64(a) for a in arrays])


def test_double_backward_and_forward_mode_agree_with_the_separate_ops():
    from minigrad.autograd import grad
    from minigrad.autograd.functional import jvp
    import minigrad.autograd.forward_ad as fwAD
    q, kv = _inputs(np.float64, True, seed=5)

    def fused(a, b):
        return NF.PackedAttention.apply(a, b, num_heads=H, allowed=PADDING, p=0.3, seed=2)

    def parts(a, b):
        return NF._separate(a, b, H, PADDING, 0.3, 2)
    assert gradgradcheck(fused, [t64(q), t64(kv)])
    seconds = []
    for fn in (fused, parts):
        a, b = t64(q), t64(kv)
        ga, gb = grad((fn(a, b) ** 2).sum(), (a, b), create_graph=True)
        seconds.append([x.numpy() for x in grad((ga * ga).sum() + gb.sum(), (a, b))])
    for got, want in zip(*seconds):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    tq, tkv = (np.random.default_rng(6).standard_normal(x.shape) for x in (q, kv))
    with fwAD.dual_level():
        out = fused(fwAD.make_dual(mg.tensor(q), mg.tensor(tq)),
                    fwAD.make_dual(mg.tensor(kv), mg.tensor(tkv)))
        tangent = fwAD.unpack_dual(out)[1].numpy().copy()
    _, reverse = jvp(parts, (mg.tensor(q), mg.tensor(kv)), (mg.tensor(tq), mg.tensor(tkv)))
    np.testing.assert_allclose(tangent, reverse.numpy(), rtol=1e-10, atol=1e-12)


def _mha_step(packed, dtype, batch_first, cross, monkeypatch, need_weights=False):
    """Output, input gradients and parameter gradients of a training MHA, packed or not."""
    ran = []
    forward = NF.PackedAttention.forward
    monkeypatch.setattr(NF.PackedAttention, "forward",
                        staticmethod(lambda *a, **k: ran.append(1) or forward(*a, **k)))
    if not packed:
        monkeypatch.setattr(MultiheadAttention, "_packs", lambda *a: False)
    mg.manual_seed(0)
    m = MultiheadAttention(E, H, dropout=0.2, batch_first=batch_first).to(dtype).train()
    r = np.random.default_rng(8)
    shape = (B, L, E) if batch_first else (L, B, E)
    x = mg.tensor(r.standard_normal(shape).astype(dtype), requires_grad=True)
    mem = (mg.tensor(r.standard_normal((B, S, E) if batch_first else (S, B, E)).astype(dtype),
                     requires_grad=True) if cross else x)
    mask = None if cross else mg.tensor(~CAUSAL)
    pad = mg.tensor(~PADDING[:, 0, 0]) if cross else None
    mg.manual_seed(1)
    out, w = m(x, mem, mem, attn_mask=mask, key_padding_mask=pad, need_weights=need_weights)
    out.backward(mg.tensor(r.standard_normal(out.shape).astype(dtype)))
    monkeypatch.undo()
    grads = [x.grad.numpy()] + ([mem.grad.numpy()] if cross else [])
    return out.numpy(), grads, {n: p.grad.numpy() for n, p in m.named_parameters()}, len(ran), w


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("batch_first", [True, False])
def test_a_training_layer_takes_it_with_the_numbers_of_the_separate_ops(
        dtype, tol, cross, batch_first, monkeypatch):
    packed = _mha_step(True, dtype, batch_first, cross, monkeypatch)
    separate = _mha_step(False, dtype, batch_first, cross, monkeypatch)
    assert (packed[3], separate[3]) == (1, 0)
    np.testing.assert_array_equal(packed[0], separate[0])  # the same forward bits
    for a, b in zip(packed[1], separate[1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    for name in packed[2]:
        np.testing.assert_allclose(packed[2][name], separate[2][name], rtol=tol, atol=tol,
                                   err_msg=name)


def test_not_taken_where_the_weights_are_wanted(monkeypatch):
    out, _, _, ran, w = _mha_step(True, np.float32, True, False, monkeypatch, need_weights=True)
    assert ran == 0 and w is not None


def test_an_input_without_gradient_or_tangent():
    """Cross-attention over a memory that wants no gradient: second derivatives in the
    queries, and a tangent of the queries alone, as the separate ops give them."""
    from minigrad.autograd import grad
    import minigrad.autograd.forward_ad as fwAD
    q, kv = _inputs(np.float64, True, seed=9)
    results = []
    for fn in (lambda a, b: NF.PackedAttention.apply(a, b, num_heads=H, p=0.3, seed=2),
               lambda a, b: NF._separate(a, b, H, None, 0.3, 2)):
        a = t64(q)
        (ga,) = grad((fn(a, mg.tensor(kv)) ** 2).sum(), a, create_graph=True)
        (h,) = grad((ga * ga).sum(), a)
        with fwAD.dual_level():
            out = fn(fwAD.make_dual(mg.tensor(q), mg.tensor(np.ones_like(q))), mg.tensor(kv))
            results.append((h.numpy(), fwAD.unpack_dual(out)[1].numpy().copy()))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
