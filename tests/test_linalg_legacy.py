"""PyTorch's older top-level linear-algebra names (cholesky, cholesky_solve, cholesky_inverse,
lu_unpack, lu_solve, svd, qr, orgqr, triangular_solve, matrix_power, chain_matmul) against
PyTorch: values, dtypes, named results and gradients in float32 and float64, derivatives by
central differences, forward mode, the warnings of the deprecated ones, and errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(11)


def _normal(*shape):
    return RNG.standard_normal(shape)


def _factor(*shape):
    """Cholesky factors of well-conditioned symmetric positive-definite matrices."""
    a = RNG.standard_normal(shape)
    return np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + 2 * np.eye(shape[-1]))


def _flat(lib, *ts):
    return lib.cat([t.reshape(-1) for t in ts])


def _quiet(fn):
    """fn with the deprecation warnings of both libraries silenced (tested on their own)."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(*args)
    return run


def _triangle(lib, upper):
    """The factor's triangle: the op reads nothing else, so central differences see nothing
    else (PyTorch's gradient also reaches the other triangle; compared against PyTorch)."""
    return (lambda t: t.triu()) if upper else (lambda t: t.tril())


PROGRAMS = {  # name: (program(lib, *tensors) -> one tensor, input arrays)
    "cholesky": (lambda lib, a: _flat(
        lib, lib.cholesky(a @ a.transpose(-2, -1) + lib.eye(3, dtype=a.dtype)),
        (a[0] @ a[0].t() + lib.eye(3, dtype=a.dtype)).cholesky(upper=True)), [_normal(2, 3, 3)]),
    "cholesky_solve": (lambda lib, b, f: _flat(
        lib, lib.cholesky_solve(b, _triangle(lib, False)(f)),
        b[0].cholesky_solve(_triangle(lib, True)(f[1].t()), upper=True)),
        [_normal(2, 3, 2), _factor(2, 3, 3)]),
    "cholesky_inverse": (lambda lib, f: _flat(
        lib, lib.cholesky_inverse(_triangle(lib, False)(f)),
        _triangle(lib, True)(f[0].t()).cholesky_inverse(upper=True)), [_factor(2, 3, 3)]),
    "lu_unpack": (lambda lib, a: _flat(lib, *lib.lu_unpack(*lib.linalg.lu_factor(a))),
                  [_normal(2, 4, 3)]),
    "lu_solve": (lambda lib, b, a: lib.lu_solve(b, *lib.linalg.lu_factor(a)) + b.lu_solve(
        *lib.linalg.lu_factor(a)), [_normal(2, 3, 2), _normal(2, 3, 3) + 3 * np.eye(3)]),
    "svd": (lambda lib, a: _flat(lib, *(t.abs() for t in lib.svd(a)),
                                 a[0].svd(compute_uv=False).S), [_normal(2, 4, 3)]),
    "qr": (lambda lib, a: _flat(lib, *lib.qr(a), *a[0, :3].qr(some=False)), [_normal(2, 4, 3)]),
    "orgqr": (lambda lib, a, tau: lib.orgqr(a, tau) + a.orgqr(tau), [_normal(2, 4, 3),
                                                                     _normal(2, 2)]),
    "triangular_solve": (lambda lib, b, a: _flat(  # the triangles read (see compat_notes.py)
        lib, *lib.triangular_solve(b, a.triu()),
        b.triangular_solve(a.tril(-1), upper=False, unitriangular=True)[0]),
        [_normal(2, 3, 2), _normal(2, 3, 3) + 3 * np.eye(3)]),
    "triangular_solve_transposed": (lambda lib, b, a: _flat(
        lib, lib.triangular_solve(b, a, transpose=True).solution,
        b.triangular_solve(a, upper=False, transpose=True, unitriangular=True)[0]),
        [_normal(2, 3, 2), _normal(3, 3) + 3 * np.eye(3)]),
    "matrix_power": (lambda lib, a: lib.matrix_power(a, 3) + a.matrix_power(-1),
                     [_normal(2, 3, 3) + 3 * np.eye(3)]),
    "chain_matmul": (lambda lib, a, b: _flat(lib, lib.chain_matmul(a, b, a.t()),
                                             lib.chain_matmul(a @ b)),
                     [_normal(3, 4), _normal(4, 4)]),
}
FORWARD = ["cholesky_solve", "svd", "qr", "triangular_solve", "lu_solve"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_dtypes_and_gradients_as_pytorchs(name, dtype, torch):
    program, arrays = PROGRAMS[name]
    results = []
    for lib in (torch, mg):
        xs = [lib.tensor(a.astype(dtype)).requires_grad_() for a in arrays]
        out = _quiet(program)(lib, *xs)
        w = np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(dtype)
        (out * lib.tensor(w)).sum().backward()
        results.append((out.detach().numpy(), str(out.dtype).split(".")[-1],
                        [x.grad.numpy() for x in xs]))
    (want, want_dtype, want_grads), (got, got_dtype, got_grads) = results
    tol = dict(rtol=5e-4, atol=5e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)
    assert got_dtype == want_dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tol)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, **tol)


# thin wrappers of linalg functions whose second derivatives tests/test_linalg*.py check in
# the fast suite: these run in the slow one (their first derivatives are compared with
# PyTorch's in the fast one)
SLOW = {"lu_solve", "lu_unpack", "svd", "qr"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in PROGRAMS])
def test_first_and_second_derivatives_by_central_differences(name):
    program, arrays = PROGRAMS[name]
    xs = [mg.tensor(a).requires_grad_() for a in arrays]
    fn = _quiet(lambda *t: program(mg, *t))
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


def test_the_factors_gradient_reaches_its_other_triangle_as_pytorchs(torch):
    """cholesky_solve and cholesky_inverse differentiate A = L L^T in the whole of L."""
    b, f = _normal(3, 2), _factor(3, 3)
    grads = []
    for lib in (torch, mg):
        L = lib.tensor(f, requires_grad=True)
        (lib.cholesky_solve(lib.tensor(b), L).sum() + lib.cholesky_inverse(L).sum()).backward()
        grads.append(L.grad.numpy())
    assert np.abs(np.triu(grads[1], 1)).max() > 1e-3
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", FORWARD)
def test_forward_mode_tangents_as_pytorchs(name, torch):
    program, arrays = PROGRAMS[name]
    tangents = [np.random.default_rng(1).standard_normal(a.shape) for a in arrays]
    got = []
    for lib, fw in ((mg, fwAD), (torch, torch.autograd.forward_ad)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
            got.append(fw.unpack_dual(_quiet(program)(lib, *duals)).tangent.numpy().copy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-9, atol=1e-11)


def test_cholesky_inverse_forward_mode_is_the_derivative():
    """Its tangents equal reverse mode's J t and central differences (PyTorch's differ: see
    tests/compat_notes.py)."""
    f = _factor(3, 3)
    t = np.tril(np.random.default_rng(5).standard_normal((3, 3)))
    with fwAD.dual_level():
        got = fwAD.unpack_dual(mg.cholesky_inverse(fwAD.make_dual(mg.tensor(f), mg.tensor(t))))[1]
    _, want = mg.autograd.functional.jvp(mg.cholesky_inverse, (mg.tensor(f),), (mg.tensor(t),))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    inverse = lambda x: np.linalg.inv(x @ x.T)  # noqa: E731
    central = (inverse(f + 1e-6 * t) - inverse(f - 1e-6 * t)) / 2e-6
    np.testing.assert_allclose(got.numpy(), central, rtol=1e-6, atol=1e-7)


def test_named_results_and_empty_parts(torch):
    a = _normal(4, 3)
    for lib in (torch, mg):
        t = lib.tensor(a)
        lu, pivots = lib.linalg.lu_factor(t)
        assert [len(x) for x in lib.lu_unpack(lu, pivots, unpack_data=False)[1:]] == [0, 0]
        assert lib.lu_unpack(lu, pivots, unpack_pivots=False).P.numel() == 0
        U, S, V = lib.svd(t, some=False)
        assert (tuple(U.shape), tuple(V.shape)) == ((4, 4), (3, 3))
        assert tuple(lib.svd(t, compute_uv=False).U.shape) == (4, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            solution, coefficient = lib.triangular_solve(t[:3, :2], t[:3])
            assert np.array_equal(coefficient.numpy(), a[:3])
            assert tuple(lib.qr(t, some=False).Q.shape) == (4, 4)


def test_deprecated_names_warn_once_as_pytorchs():
    from minigrad import linalg_legacy
    a = mg.tensor(_factor(3, 3))
    linalg_legacy._warned.clear()
    for call in (lambda: mg.cholesky(a @ a.t()), lambda: mg.qr(a),
                 lambda: mg.triangular_solve(a, a), lambda: mg.chain_matmul(a, a),
                 lambda: mg.lu_solve(a, *mg.linalg.lu_factor(a))):
        with pytest.warns(UserWarning, match="is deprecated in favor of"):
            call()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            call()  # once per process


ERRORS = [  # (program, minigrad's message); PyTorch raises a RuntimeError for each
    (lambda lib: lib.cholesky_solve(lib.ones(3), lib.eye(3)), "at least 2 dimensions"),
    (lambda lib: lib.cholesky_solve(lib.ones(2, 1), lib.eye(3)), "each A matrix is 3 by 3"),
    (lambda lib: lib.cholesky_solve(lib.ones(3, 1, dtype=lib.float64), lib.eye(3)),
     "same dtype"),
    (lambda lib: lib.cholesky_inverse(lib.ones(2, 3)), "square matrices"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i, torch):
    program, message = ERRORS[i]
    with pytest.raises(RuntimeError):
        program(torch)
    with pytest.raises(RuntimeError, match=message):
        program(mg)
