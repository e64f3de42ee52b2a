"""Second derivatives and forward mode through convolution and pooling: gradgradcheck of each
op in float64, forward-mode tangents against PyTorch's, and a gradient penalty through a small
CNN critic (the gradient of the critic's output with respect to its input, differentiated
again) against PyTorch."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradgradcheck
from helpers import t64


def _distinct(rng, shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) / n * 4 - 2).reshape(shape)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(padding=(2, 1), dilation=(1, 2),
                                                                groups=2)])
def test_gradgradcheck_conv2d(kw):
    rng = np.random.default_rng(0)
    x = t64(rng.standard_normal((2, 2, 4, 4)))
    w = t64(rng.standard_normal((2, 2 // kw.get("groups", 1), 2, 3)))
    b = t64(rng.standard_normal(2))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, **kw), [x, w, b])


def test_gradgradcheck_conv_padding_modes_and_conv1d():
    rng = np.random.default_rng(1)
    conv = mg.nn.Conv1d(2, 2, 3, padding=2, padding_mode="reflect").double()
    x = t64(rng.standard_normal((2, 2, 5)))
    assert gradgradcheck(lambda x, w: conv(x), [x, conv.weight])
    conv = mg.nn.Conv2d(1, 2, 2, padding=1, padding_mode="circular").double()
    x = t64(rng.standard_normal((1, 1, 3, 3)))
    assert gradgradcheck(lambda x, w: conv(x), [x, conv.weight])


def test_gradgradcheck_pools():
    rng = np.random.default_rng(2)
    x = t64(_distinct(rng, (1, 2, 5, 5)))
    assert gradgradcheck(lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True) ** 2, [x])
    assert gradgradcheck(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False) ** 2, [x])
    assert gradgradcheck(lambda x: F.adaptive_avg_pool2d(x, (2, 3)) ** 2, [x])


def _tangents(lib, program, arrays, tangents):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
        out = fw.unpack_dual(program(lib, *duals))
    return out.primal.detach().numpy(), out.tangent.detach().numpy()


PROGRAMS = {
    "conv2d": lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=(1, 2), padding=1,
                                                            groups=2),
    "conv1d": lambda lib, x, w, b: lib.nn.functional.conv1d(x[:, :, 0], w[:, :, 0], b,
                                                            padding="same", dilation=2, groups=2),
    "conv_transpose2d": lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(
        x, w, b[:2], stride=2, padding=1, output_padding=1),
    "unfold and fold": lambda lib, x, w, b: lib.nn.functional.fold(
        lib.nn.functional.unfold(x, 2, padding=1) * 2, (5, 5), 2, padding=1),
    "pools": lambda lib, x, w, b: (lib.nn.functional.max_pool2d(x, 3, 1, 1) * 2
                                   + lib.nn.functional.avg_pool2d(x, 3, 1, 1)
                                   + lib.nn.functional.adaptive_avg_pool2d(x, 5)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_forward_mode_matches_pytorch(torch, name):
    rng = np.random.default_rng(3)
    arrays = [_distinct(rng, (2, 4, 5, 5)), rng.standard_normal((4, 2, 3, 3)),
              rng.standard_normal(4)]
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    program = PROGRAMS[name]
    got = _tangents(mg, program, arrays, tangents)
    want = _tangents(torch, program, arrays, tangents)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


def _penalty_program(lib, x, weights):
    """A WGAN-GP style penalty: (||d critic / d x|| - 1)^2 over a conv, pool, linear critic."""
    F_ = lib.nn.functional
    w1, b1, w2, b2, w3 = weights
    x = x.requires_grad_(True)
    h = F_.max_pool2d(F_.conv2d(x, w1, b1, padding=1).tanh(), 2)
    h = F_.avg_pool2d(F_.conv2d(h, w2, b2, groups=2).tanh(), 2, ceil_mode=True)
    score = (F_.adaptive_avg_pool2d(h, 1).flatten(1) @ w3).sum()
    (g,) = lib.autograd.grad(score, x, create_graph=True)
    penalty = ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()
    penalty.backward()
    return penalty.item(), [w.grad.numpy() for w in weights]


def test_gradient_penalty_through_a_cnn_matches_pytorch(torch):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 2, 8, 8))
    shapes = [(4, 2, 3, 3), (4,), (4, 2, 2, 2), (4,), (4, 1)]
    arrays = [rng.standard_normal(s) * 0.5 for s in shapes]
    results = []
    for lib in (mg, torch):
        weights = [lib.tensor(a, requires_grad=True) for a in arrays]
        results.append(_penalty_program(lib, lib.tensor(x), weights))
    (p_mg, g_mg), (p_t, g_t) = results
    np.testing.assert_allclose(p_mg, p_t, rtol=1e-10)
    for a, b in zip(g_mg, g_t):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_gradgradcheck_conv_transpose():
    rng = np.random.default_rng(5)
    x, w = t64(rng.standard_normal((1, 2, 3, 3))), t64(rng.standard_normal((2, 2, 2, 3)))
    assert gradgradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=(0, 1)), [x, w])


def test_gradgradcheck_unfold_and_fold():
    rng = np.random.default_rng(6)
    x = t64(rng.standard_normal((1, 2, 4, 3)))
    assert gradgradcheck(lambda x: F.unfold(x, (2, 2), padding=1, stride=(2, 1)) ** 2, [x])
    cols = t64(rng.standard_normal((1, 8, 6)))
    assert gradgradcheck(lambda c: F.fold(c, (3, 4), 2, padding=(0, 1), stride=(1, 2)) ** 2,
                         [cols])
