"""addmm, baddbmm, lerp and cdist against PyTorch (values, dtypes, gradients, errors) and
float64 gradient checks."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

rng = np.random.default_rng(7)


def _both(torch, program, *arrays, grad=True):
    """program(lib, *tensors) in both libraries: [(values, dtype, input gradients)]."""
    got = []
    for lib in (torch, mg):
        ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out = program(lib, *ts)
        w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(
            str(out.dtype).replace("torch.", "")))
        if out.requires_grad:
            (out * w).sum().backward()
        got.append((out.detach().numpy(), str(out.dtype).replace("torch.", ""),
                    [None if t.grad is None else t.grad.numpy() for t in ts]))
    return got


def _agree(got, tol=1e-12):
    (vt, dt, gt), (vm, dm, gm) = got
    assert dm == dt and vm.shape == vt.shape
    np.testing.assert_allclose(vm, vt, rtol=tol, atol=tol)
    for t, m in zip(gt, gm):
        t = np.zeros_like(m) if t is None and m is not None else t
        m = np.zeros_like(t) if m is None and t is not None else m
        if t is not None:
            np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, math.inf, 1.5])
@pytest.mark.parametrize("shapes", [((4, 3), (5, 3)), ((2, 4, 3), (1, 6, 3)), ((3, 0), (2, 0))])
def test_cdist_matches_torch(torch, p, shapes):
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    if a.size:
        # a distance of exactly 0: its gradient is 0 in both
        b[..., 1, :] = a.reshape(-1, *a.shape[-2:])[0, 0]
    _agree(_both(torch, lambda lib, x, y: lib.cdist(x, y, p), a, b))
    _agree(_both(torch, lambda lib, x, y: lib.cdist(x, y, p), a.astype(np.float32),
                 b.astype(np.float32)), tol=1e-5)


def test_cdist_gradcheck_and_errors():
    a = mg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    b = mg.tensor(rng.standard_normal((2, 5, 4)), requires_grad=True)
    for p in (2.0, 1.0, 3.0, math.inf):
        assert gradcheck(lambda x, y: mg.cdist(x, y, p), [a, b])
    with pytest.raises(RuntimeError, match="cdist: X1 and X2 must have the same number of col"):
        mg.cdist(mg.ones(2, 3), mg.ones(2, 4))
    with pytest.raises(RuntimeError, match="cdist: only supports at least 2D tensors"):
        mg.cdist(mg.ones(3), mg.ones(2, 3))
    with pytest.raises(RuntimeError, match="non-negative p"):
        mg.cdist(mg.ones(2, 3), mg.ones(2, 3), p=-1.0)
    with pytest.raises(ValueError, match="not a valid value for compute_mode"):
        mg.cdist(mg.ones(2, 3), mg.ones(2, 3), compute_mode="fast")


def test_cdist_ignores_compute_mode_and_stays_exact(torch):
    # PyTorch's matrix-product form (used for more than 25 rows) rounds a distance of 0 to
    # about 1e-3 in float32; minigrad always takes the differences
    a = rng.standard_normal((30, 8)).astype(np.float32) * 100
    d = mg.cdist(mg.tensor(a), mg.tensor(a), compute_mode="use_mm_for_euclid_dist")
    assert (np.diag(d.numpy()) == 0).all()
    exact = torch.cdist(torch.tensor(a), torch.tensor(a),
                        compute_mode="donot_use_mm_for_euclid_dist").numpy()
    np.testing.assert_allclose(d.numpy(), exact, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1), (1, 0)])
def test_addmm_and_baddbmm_match_torch(torch, beta, alpha):
    m1, m2 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    for inp in (rng.standard_normal((3, 2)), rng.standard_normal(2), np.full(1, 1.5)):
        _agree(_both(torch, lambda lib, i, a, b: lib.addmm(i, a, b, beta=beta, alpha=alpha),
                     inp, m1, m2))
    b1, b2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    for inp in (rng.standard_normal((2, 3, 5)), rng.standard_normal((3, 1))):
        _agree(_both(torch, lambda lib, i, a, b: lib.baddbmm(i, a, b, beta=beta, alpha=alpha),
                     inp, b1, b2))
    nan = np.full((3, 2), np.nan)  # beta=0 ignores the input, NaN included
    got = _both(torch, lambda lib, i, a, b: lib.addmm(i, a, b, beta=0), nan, m1, m2)
    assert np.isfinite(got[1][0]).all()
    _agree(got)


def test_addmm_baddbmm_gradcheck_and_errors():
    i, a, b = (mg.tensor(rng.standard_normal(s), requires_grad=True)
               for s in [(3, 2), (3, 4), (4, 2)])
    assert gradcheck(lambda x, y, z: mg.addmm(x, y, z, beta=0.3, alpha=-2.0), [i, a, b])
    i, a, b = (mg.tensor(rng.standard_normal(s), requires_grad=True)
               for s in [(2, 3, 2), (2, 3, 4), (2, 4, 2)])
    assert gradcheck(lambda x, y, z: mg.baddbmm(x, y, z, beta=2.0, alpha=0.5), [i, a, b])
    with pytest.raises(RuntimeError, match=r"addmm: mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 4x5\)"):
        mg.addmm(mg.ones(2, 5), mg.ones(2, 3), mg.ones(4, 5))
    with pytest.raises(RuntimeError, match="addmm: mat1 must be a matrix"):
        mg.addmm(mg.ones(2), mg.ones(3), mg.ones(3, 2))
    with pytest.raises(RuntimeError, match="addmm: input of shape"):
        mg.addmm(mg.ones(3), mg.ones(2, 3), mg.ones(3, 2))
    with pytest.raises(RuntimeError, match="baddbmm: batch1 must be a 3D tensor"):
        mg.baddbmm(mg.ones(2, 2), mg.ones(2, 2), mg.ones(1, 2, 2))
    with pytest.raises(RuntimeError, match="baddbmm: batch1 of shape"):
        mg.baddbmm(mg.ones(2, 2, 2), mg.ones(2, 2, 3), mg.ones(1, 3, 2))


def test_lerp_matches_torch(torch):
    s, e = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    w = np.array([-0.5, 0.0, 0.3, 0.5, 0.7, 1.0, 1.5, 0.49, 0.51, 2.0, -1.0, 0.25]).reshape(3, 4)
    _agree(_both(torch, lambda lib, a, b, c: lib.lerp(a, b, c), s, e, w))
    _agree(_both(torch, lambda lib, a, b, c: lib.lerp(a, b, c), s, e[0], w[:, :1]))
    for weight in (0.25, 0.75, 1.0, -2.0):
        _agree(_both(torch, lambda lib, a, b: lib.lerp(a, b, weight), s, e))
    _agree(_both(torch, lambda lib, a, b: lib.lerp(a, b, 0.6), s.astype(np.float32),
                 e.astype(np.float32)), tol=1e-6)
    x = mg.tensor(s, requires_grad=True)
    y = mg.tensor(e, requires_grad=True)
    assert gradcheck(lambda a, b, c: mg.lerp(a, b, c), [x, y, mg.tensor(w, requires_grad=True)])
    assert gradcheck(lambda a, b: mg.lerp(a, b, 0.8), [x, y])
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="expected dtype"):
            lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5)
        with pytest.raises(RuntimeError, match="expected dtype"):
            lib.lerp(lib.ones(2), lib.ones(2), lib.ones(2, dtype=lib.float64))


# --- log1p and expm1 ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["log1p", "expm1"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log1p_expm1_match_torch_also_for_tiny_inputs(torch, name, dtype):
    x = np.array([-0.9, -0.5, -1e-7, -1e-30, 0.0, 1e-12, 3e-8, 0.25, 2.0, 10.0], dtype=dtype)
    got = _both(torch, lambda lib, a: getattr(lib, name)(a), x)
    _agree(got, tol=1e-6 if dtype == "float32" else 1e-14)
    assert got[1][0][5] != 0  # 1 + 1e-12 rounds to 1: the written-out form would give 0


def test_log1p_expm1_of_integers_and_their_errors(torch):
    for name in ("log1p", "expm1"):
        t = getattr(torch, name)(torch.tensor([0, 1, 2]))
        m = getattr(mg, name)(mg.tensor([0, 1, 2]))
        assert m.dtype == mg.float32 and str(t.dtype) == "torch.float32"
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6)


def test_log1p_expm1_gradients_of_every_order():
    from minigrad.autograd import forward_ad as fwAD, gradgradcheck
    x = mg.tensor(rng.uniform(-0.5, 2.0, (3, 4)), requires_grad=True)
    for fn in (mg.log1p, mg.expm1):
        assert gradcheck(fn, [x]) and gradgradcheck(fn, [x])
        with fwAD.dual_level():
            tangent = np.linspace(-1, 1, 12).reshape(3, 4)
            out = fn(fwAD.make_dual(x.detach(), mg.tensor(tangent)))
            jvp = fwAD.unpack_dual(out).tangent.numpy()
        local = 1 / (1 + x.numpy()) if fn is mg.log1p else np.exp(x.numpy())
        np.testing.assert_allclose(jvp, local * tangent, rtol=1e-12)
