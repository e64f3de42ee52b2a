"""Compatibility cases: torch.linalg's pseudo-inverse, rank, least squares, matrix exponential,
condition number, product of Householder reflections, LU family, `_ex` forms, tensor forms
and Vandermonde matrix (the older linalg names are in compat_cases_numeric.py); PyTorch's
older top-level linear-algebra names; the products under BLAS's names (mv, addr, ...). Inputs
come from their own stream, so the shared one's draws stay as they were."""
import math

import numpy as np

from compat_table import A, case

CASES = []
add = CASES.append
_own = np.random.default_rng(25)


def _f32(*shape, diagonal=0.0, grad=True):
    """float32 values, with `diagonal` added to the diagonal (away from singular)."""
    values = _own.standard_normal(shape)
    if diagonal:
        values = values + diagonal * np.eye(*shape[-2:])
    return A(values.astype(np.float32), grad=grad)


TOL = dict(rtol=1e-4, atol=1e-5)


@add
@case("linalg.pinv", "minigrad.pinverse", "Tensor.pinverse", "linalg.matrix_rank",
      inputs=(_f32(2, 4, 3, diagonal=2.0),), **TOL)
def _(lib, a):
    la = lib.linalg
    gram = a[0].t() @ a[0]
    cut = a.detach()  # a cut pseudo-inverse's float32 gradient is ill-conditioned: values
    return (la.pinv(a), la.pinv(a[1].t()), la.pinv(gram, hermitian=True), la.pinv(cut, atol=0.5),
            la.pinv(cut, rtol=0.2), la.pinv(a[0], 1e-3), lib.pinverse(a[1]), a[0].pinverse(),
            la.matrix_rank(a), la.matrix_rank(gram, hermitian=True), la.matrix_rank(a, 1.0),
            la.matrix_rank(a, atol=0.5, rtol=0.1), la.matrix_rank(a[0] @ a[0].t()))


@add
@case("linalg.lstsq", inputs=(_f32(2, 5, 3), _f32(2, 5, 2)), **TOL)
def _(lib, a, b):
    la = lib.linalg
    solution, residuals, rank, values = la.lstsq(a, b)
    return (solution, residuals, rank, values, tuple(la.lstsq(a, b, driver="gelsd")),
            tuple(la.lstsq(a[0], b[0, :, 0], driver="gelss")),
            tuple(la.lstsq(a.transpose(-2, -1)[:, :, :2], b[:, :3], driver="gels")))


@add
@case("linalg.matrix_exp", "minigrad.matrix_exp", "Tensor.matrix_exp",
      inputs=(_f32(2, 3, 3),), **TOL)
def _(lib, a):
    return (lib.linalg.matrix_exp(a), lib.matrix_exp(a[0] * 5), a[1].matrix_exp(),
            lib.linalg.matrix_exp(a[:, :0, :0]))


@add
@case("linalg.cond", inputs=(_f32(2, 3, 3, diagonal=2.0), _f32(3, 4)), **TOL)
def _(lib, a, r):
    la = lib.linalg
    return (la.cond(a), la.cond(r), la.cond(r, -2), la.cond(a, 2), la.cond(a, "nuc"),
            la.cond(a[:, :0, :0]))


@add
@case("linalg.cond", inputs=(_f32(2, 3, 3, diagonal=2.0, grad=False),), **TOL)
def _(lib, a):
    """The norms through the inverse, a singular matrix's (inf) among them; without
    gradients, since PyTorch's backward of these fails (see the differences)."""
    singular = lib.tensor([[1.0, 2.0], [2.0, 4.0]])
    return [lib.linalg.cond(m, p) for p in ("fro", 1, -1, math.inf, -math.inf)
            for m in (a, singular)]


@add
@case("linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu", "linalg.lu_solve",
      inputs=(_f32(2, 3, 3, diagonal=2.0), _f32(4, 3), _f32(2, 3, 2)), **TOL)
def _(lib, a, tall, b):
    la = lib.linalg
    lu, pivots = la.lu_factor(a)
    return (lu, pivots, tuple(la.lu_factor_ex(tall)), tuple(la.lu(a)), tuple(la.lu(tall.t())),
            la.lu_solve(lu, pivots, b), la.lu_solve(lu, pivots, b, adjoint=True),
            la.lu_solve(lu, pivots, b.transpose(-2, -1), left=False),
            tuple(la.lu_factor_ex(lib.zeros(2, 2))))


@add
@case("linalg.lu_factor", compare="raises", match=r"linalg.lu_factor: U\[1,1\] is zero")
def _(lib):
    return lib.linalg.lu_factor(lib.zeros(2, 2))


@add
@case("linalg.inv_ex", "linalg.solve_ex", "linalg.cholesky_ex",
      inputs=(_f32(2, 3, 3, diagonal=3.0), _f32(2, 3)), **TOL)
def _(lib, a, b):
    la = lib.linalg
    spd = a @ a.transpose(-2, -1) + lib.eye(3)
    indefinite = lib.tensor([[4.0, 2.0, 1.0], [2.0, 5.0, 1.0], [1.0, 1.0, -3.0]])
    return (tuple(la.inv_ex(a)), tuple(la.solve_ex(a, b)), tuple(la.solve_ex(a[0], b.t(),
                                                                           left=True)),
            tuple(la.cholesky_ex(spd)), tuple(la.cholesky_ex(spd[1], upper=True)),
            tuple(la.cholesky_ex(indefinite)), la.inv_ex(lib.zeros(2, 2)).info,
            la.solve_ex(lib.zeros(2, 2), lib.ones(2)).info)


@add
@case("linalg.inv_ex", compare="raises", match=r"inv_ex: The diagonal element 1 is zero")
def _(lib):
    return lib.linalg.inv_ex(lib.zeros(2, 2), check_errors=True)


@add
@case("linalg.householder_product", "minigrad.geqrf", "Tensor.geqrf", "minigrad.ormqr",
      "Tensor.ormqr", inputs=(_f32(2, 4, 3), _f32(2, 3), _f32(2, 4, 2)), **TOL)
def _(lib, a, tau, b):
    la = lib.linalg
    reflections, scales = lib.geqrf(a.detach())  # geqrf has no derivative in either library
    return (la.householder_product(a, tau), la.householder_product(a[0, :, :2], tau[0, :1]),
            la.householder_product(a, tau[:, :0]), reflections, scales,
            tuple(a[0].detach().geqrf()),
            lib.ormqr(a, tau, b), a.ormqr(tau, b, transpose=True),
            lib.ormqr(a, tau, b.transpose(-2, -1), left=False))


@add
@case("linalg.tensorinv", "linalg.tensorsolve", "linalg.vander",
      inputs=(A((_own.standard_normal((4, 4)) + 3 * np.eye(4)).reshape(4, 2, 2)
                .astype(np.float32), grad=True), _f32(2, 2), _f32(3)), **TOL)
def _(lib, a, b, x):
    la = lib.linalg
    return (la.tensorinv(a, ind=1), la.tensorinv(a.reshape(2, 2, 2, 2)),
            la.tensorsolve(a.reshape(2, 2, 4), b),
            la.tensorsolve(a.permute(1, 2, 0), b.reshape(4), dims=(0, 1)),
            la.vander(x), la.vander(x, N=5), la.vander(lib.tensor([1, 2, 3])))


# --- the older top-level names ---------------------------------------------------------------

def _factor32(*shape):
    a = _own.standard_normal(shape)
    spd = a @ np.swapaxes(a, -1, -2) + 2 * np.eye(shape[-1])
    return A(np.linalg.cholesky(spd).astype(np.float32), grad=True)


@add
@case("minigrad.cholesky", "Tensor.cholesky", "minigrad.cholesky_solve", "Tensor.cholesky_solve",
      "minigrad.cholesky_inverse", "Tensor.cholesky_inverse",
      inputs=(_factor32(2, 3, 3), _f32(2, 3, 2)), **TOL)
def _(lib, f, b):
    """The factor's gradient reaches its other triangle (PyTorch's A = L L^T in all of L)."""
    import warnings
    spd = f @ f.transpose(-2, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch.cholesky is deprecated
        factors = (lib.cholesky(spd), spd[0].cholesky(upper=True))
    return (*factors, lib.cholesky_solve(b, f), b[0].cholesky_solve(f[1].t(), upper=True),
            lib.cholesky_inverse(f), f[0].t().cholesky_inverse(upper=True))


@add
@case("minigrad.lu_unpack", "minigrad.lu_solve", "Tensor.lu_solve", "minigrad.matrix_power",
      "Tensor.matrix_power", "minigrad.chain_matmul",
      inputs=(_f32(2, 3, 3, diagonal=3.0), _f32(2, 3, 2), _f32(4, 3)), **TOL)
def _(lib, a, b, tall):
    import warnings
    lu, pivots = lib.linalg.lu_factor(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # lu_solve, chain_matmul are deprecated
        solved = (lib.lu_solve(b, lu, pivots), b.lu_solve(lu, pivots),
                  lib.chain_matmul(tall, a[0], a[1]), lib.chain_matmul(a[0]))
    return (*solved, tuple(lib.lu_unpack(lu, pivots)),
            # detached: PyTorch's backward through the empty L and U fails
            tuple(lib.lu_unpack(*lib.linalg.lu_factor(tall.detach()), unpack_data=False)),
            lib.matrix_power(a, 2), a[0].matrix_power(-1))


@add
@case("minigrad.svd", "Tensor.svd", "minigrad.qr", "Tensor.qr", "minigrad.orgqr", "Tensor.orgqr",
      "minigrad.triangular_solve", "Tensor.triangular_solve",
      inputs=(_f32(2, 4, 3, diagonal=2.0), _f32(2, 3), _f32(2, 3, 2)), **TOL)
def _(lib, a, tau, b):
    """What the SVD fixes (the vectors' signs may differ, see the differences)."""
    import warnings
    U, S, V = lib.svd(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # qr, triangular_solve are deprecated
        rest = (tuple(lib.qr(a)), tuple(a[0, :3].qr(some=False)),
                tuple(lib.triangular_solve(b, a[:, :3])),
                b[0].triangular_solve(a[1, :3], upper=False, unitriangular=True).solution)
    return (S, U * U, V * V, (U * S.unsqueeze(-2)) @ V.transpose(-2, -1), a[0].svd(some=False).S,
            tuple(lib.svd(a, compute_uv=False)), *rest, lib.orgqr(a, tau), a[0].orgqr(tau[0]))


# --- the products under BLAS's names ----------------------------------------------------------

@add
@case("minigrad.mv", "Tensor.mv", "minigrad.addmv", "Tensor.addmv", "minigrad.ger", "Tensor.ger",
      "minigrad.addr", "Tensor.addr", "minigrad.addbmm", "Tensor.addbmm", "minigrad.inner",
      "Tensor.inner", "minigrad.vdot", "Tensor.vdot",
      inputs=(_f32(2, 3), _f32(3), _f32(2), _f32(4, 2, 3), _f32(4, 3, 2)), **TOL)
def _(lib, m, v, w, b1, b2):
    square = m @ m.t()
    return (lib.mv(m, v), m.t().mv(w), lib.addmv(w, m, v, beta=0.5, alpha=2), w.addmv(m, v),
            lib.ger(v, w), w.ger(v), lib.addr(m, w, v, alpha=-1.5), m.addr(w, v, beta=0),
            lib.addbmm(square, b1, b2, beta=2), square.addbmm(b1, b2, alpha=0.25),
            lib.inner(m, b1), v.inner(m), lib.inner(w[0], m), lib.vdot(v, m[1]), w.vdot(w),
            lib.mv(lib.tensor([[1, 2], [3, 4]]), lib.tensor([5, 6])),
            lib.addr(lib.zeros(2, 2, dtype=lib.int64), lib.tensor([1, 2]), lib.tensor([3, 4]),
                     beta=2, alpha=3))
