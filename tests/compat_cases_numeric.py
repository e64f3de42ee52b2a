"""Compatibility cases: special functions (erf, erfc, erfinv, log2, log10, exp2), products,
statistics, matrix parts, tensor assembly, fmod and nan_to_num, addcmul and addcdiv, and the
torch._foreach_* list functions."""
import numpy as np

from compat_table import A, case, f32, f64, ints

CASES = []
add = CASES.append


@add
@case("minigrad.erf", "minigrad.erfc", "minigrad.erfinv", "minigrad.log2", "minigrad.log10",
      "minigrad.exp2", "Tensor.erf", "Tensor.erfc", "Tensor.erfinv", "Tensor.log2",
      "Tensor.log10", "Tensor.exp2", inputs=(f32(3, 4, low=-0.95, high=0.95),
                                              f64(5, low=0.1, high=9)))
def _(lib, x, p):
    return (lib.erf(x), lib.erfc(x * 3), lib.erfinv(x), lib.log2(p), lib.log10(p), lib.exp2(x),
            x.erf(), x.t().erfc(), (x / 2).erfinv(), p.log2(),
            p.log10(), p.exp2(), lib.log2(lib.tensor([1, 8, 1024])), lib.erf(lib.tensor(True)))


@add
@case("Tensor.erf_", "Tensor.erfc_", "Tensor.erfinv_", "Tensor.log2_", "Tensor.log10_",
      "Tensor.exp2_", inputs=(f32(2, 3, low=0.05, high=0.95),))
def _(lib, x):
    return [getattr(x * 1, name)() for name in ("erf_", "erfc_", "erfinv_", "log2_",
                                                "log10_", "exp2_")]


@add
@case("minigrad.prod", "Tensor.prod", "minigrad.cumprod", "Tensor.cumprod",
      inputs=(A(np.array([[1.5, -2.0, 0.5], [2.0, 0.0, -1.5], [0.0, 2.5, 0.0]], np.float32),
                grad=True), ints(2, 3, low=-3, high=4)))
def _(lib, x, i):
    """Rows with no zero, one and two zeros: the gradient of each case is PyTorch's."""
    return (lib.prod(x), x.prod(1), x.prod(0, keepdim=True), lib.prod(i, 1), i.prod(),
            x.prod(dtype=lib.float64), lib.cumprod(x, 1), x.t().cumprod(0), i.cumprod(1),
            (i > 0).cumprod(0), x.cumprod(-1, dtype=lib.float64))


@add
@case("minigrad.median", "Tensor.median", inputs=(A(np.array(
    [[1.0, 5.0, 3.0, 2.0], [4.0, 4.0, 1.0, 4.0], [2.0, 6.0, 0.5, 7.0]], np.float32), grad=True),))
def _(lib, x):
    values, indices = x.median(1)
    return lib.median(x), x[1].median(), values, indices, tuple(lib.median(x, 0, keepdim=True))


@add
@case("minigrad.var_mean", "minigrad.std_mean", "minigrad.count_nonzero",
      "Tensor.count_nonzero", inputs=(f32(3, 4),))
def _(lib, x):
    return (lib.var_mean(x), lib.var_mean(x, 1, keepdim=True), lib.std_mean(x, 0),
            lib.std_mean(x, dim=1, correction=0), lib.var_mean(x, False),
            lib.count_nonzero(x > 0), lib.count_nonzero(x.relu(), 1), (x > 0).count_nonzero((0, 1)))


@add
@case("minigrad.median", compare="raises", match="median: not implemented for bool")
def _(lib):
    return lib.median(lib.tensor([True, False]))


@add
@case("minigrad.diagonal", "Tensor.diagonal", "minigrad.diag", "Tensor.diag", "minigrad.trace",
      "Tensor.trace", "minigrad.tril_indices", "minigrad.triu_indices",
      inputs=(f32(2, 3, 4), f32(3)))
def _(lib, x, v):
    return (lib.diagonal(x), x.diagonal(1, 1, 2), x[0].diagonal(-1), lib.diag(v, 1), v.diag(),
            lib.diag(x[1], -1), lib.trace(x[0]), x[1].t().trace(), lib.tril_indices(3, 4),
            lib.triu_indices(4, 3, 1), lib.tril_indices(3, 3, -1, dtype=lib.int32))


@add
@case("minigrad.meshgrid", "minigrad.tile", "Tensor.tile", "minigrad.hstack", "minigrad.vstack",
      inputs=(f32(3), f32(2), f32(2, 3)))
def _(lib, a, b, m):
    return (lib.meshgrid(a, b, indexing="ij"), lib.meshgrid([a, b], indexing="xy"),
            lib.tile(m, (2,)), m.tile((2, 1, 2)), lib.hstack([a, b]), lib.hstack([m, m]),
            lib.vstack([a, m]), lib.vstack((b, b)))


@add
@case("minigrad.fmod", "Tensor.fmod", "Tensor.fmod_", "minigrad.nan_to_num", "Tensor.nan_to_num",
      "Tensor.nan_to_num_", inputs=(f32(5, low=-6, high=6), f32(5, low=0.5, high=2),
                                    ints(4, low=-9, high=9)))
def _(lib, a, b, i):
    odd = a / lib.tensor([0.0, 1.0, 0.0, 2.0, 0.0]) * lib.tensor([0.0, 1.0, 1.0, 1.0, -1.0])
    return (lib.fmod(a, b), a.fmod(-1.5), i.fmod(4), lib.fmod(i, b[:4]), (a * 1).fmod_(b),
            lib.nan_to_num(odd), odd.nan_to_num(nan=1.0, posinf=2.0), (odd * 1).nan_to_num_(),
            i.nan_to_num())


@add
@case("minigrad.addcmul", "minigrad.addcdiv", "Tensor.addcmul", "Tensor.addcdiv",
      "Tensor.addcmul_", "Tensor.addcdiv_", inputs=(f32(2, 3), f32(3), f32(2, 3, low=0.5)))
def _(lib, x, a, b):
    """The second-moment update of Adam and the step of its parameters, in place on copies."""
    v, p = x * 1, x * 2
    v.mul_(0.9).addcmul_(a, a, value=0.1)
    p.addcdiv_(a, b.sqrt(), value=-0.01)
    return (lib.addcmul(x, a, b, value=2), x.addcmul(a, a), lib.addcdiv(x, a, b),
            x.addcdiv(a, b), v, p)


@add
@case("minigrad._foreach_add_", "minigrad._foreach_mul_", "minigrad._foreach_addcmul_",
      "minigrad._foreach_addcdiv_", "minigrad._foreach_lerp_", "minigrad._foreach_sqrt",
      "minigrad._foreach_norm", "minigrad._foreach_zero_", "minigrad._foreach_add",
      inputs=(f32(2, 3), f32(4), f32(2, 3, low=0.1), f32(4, low=0.1)))
def _(lib, g1, g2, s1, s2):
    """One Adam step as PyTorch's foreach path takes it, on copies of the moment buffers."""
    grads, m, v = [g1, g2], [g1 * 0.5, g2 * 0.5], [s1 * 1, s2 * 1]
    lib._foreach_lerp_(m, grads, 0.1)
    lib._foreach_mul_(v, 0.999)
    lib._foreach_addcmul_(v, grads, grads, 0.001)
    denom = lib._foreach_add(lib._foreach_sqrt(v), 1e-8)
    params = [g1.detach() * 3, g2.detach() * 3]
    lib._foreach_addcdiv_(params, m, denom, [-0.01, -0.02])
    lib._foreach_add_(params, grads, alpha=-0.1)
    norms = lib._foreach_norm(grads)
    with lib.no_grad():
        lib._foreach_zero_([t.detach() for t in v])
    return m, v, params, norms


@add
@case("minigrad.searchsorted", "minigrad.bucketize", inputs=(f32(2, 5),))
def _(lib, x):
    edges = lib.tensor([-1.0, 0.0, 0.5, 1.5])
    rows = x.detach().sort(-1).values
    return (lib.searchsorted(edges, x), lib.searchsorted(edges, x, right=True),
            lib.searchsorted(rows, x.detach()[:, :3]), lib.bucketize(x, edges),
            lib.bucketize(x, edges, right=True, out_int32=True), lib.searchsorted(edges, 0.5))


@add
@case("minigrad.kthvalue", "Tensor.kthvalue", inputs=(A(np.array(
    [[1.0, 5.0, 3.0, 2.0], [8.5, 4.0, 1.0, 6.0], [2.0, 6.5, 0.5, 7.0]], np.float32), grad=True),))
def _(lib, x):
    """Distinct values: among equal ones PyTorch's index is not fixed (see the differences)."""
    return tuple(lib.kthvalue(x, 2)), tuple(x.kthvalue(1, 0, keepdim=True)), tuple(x[1].kthvalue(4))


@add
@case("minigrad.quantile", "Tensor.quantile", inputs=(f32(3, 5),))
def _(lib, x):
    levels = lib.tensor([0.1, 0.5, 0.9])
    return (lib.quantile(x, 0.25), x.quantile(levels, dim=1), x.quantile(0.5, 0, keepdim=True),
            lib.quantile(x, levels, 1, interpolation="nearest"),
            x.quantile(0.4, interpolation="midpoint"))


# --- linear algebra, tensor products, order statistics (their own stream: the shared one's
# later draws stay as they were) ---------------------------------------------------------------

_own = np.random.default_rng(24)


def _matrices(*shape, diagonal=3.0):
    """float32 matrices, away from singular: random values plus `diagonal` on the diagonal."""
    values = _own.standard_normal(shape) + diagonal * np.eye(shape[-1])
    return A(values.astype(np.float32), grad=True)


@add
@case("linalg.vector_norm", "linalg.matrix_norm", "linalg.norm",
      inputs=(A(_own.standard_normal((2, 3, 4)).astype(np.float32), grad=True),))
def _(lib, x):
    la = lib.linalg
    return (la.vector_norm(x), la.vector_norm(x, 3, dim=(0, 2)), la.vector_norm(x, float("inf")),
            la.vector_norm(x, 0, dim=1, keepdim=True), la.vector_norm(x, -2, dim=-1),
            la.matrix_norm(x), la.matrix_norm(x, 1), la.matrix_norm(x, float("-inf"), (0, 2)),
            la.norm(x), la.norm(x[0], 1), la.norm(x, dim=1), la.norm(x, 2.5, (0,)),
            la.norm(x, dim=(1, 2), keepdim=True), la.norm(x[0, 0], float("inf")))


@add
@case("linalg.inv", "minigrad.inverse", "Tensor.inverse", "linalg.solve",
      inputs=(_matrices(2, 3, 3), A(_own.standard_normal((3, 2)).astype(np.float32), grad=True)))
def _(lib, a, b):
    la = lib.linalg
    return (la.inv(a), lib.inverse(a[0]), a[1].inverse(), la.solve(a, b), la.solve(a[0], b[:, 0]),
            la.solve(a, b.t().unsqueeze(1), left=False), la.inv(a[:, :0, :0]))


@add
@case("linalg.det", "minigrad.det", "Tensor.det", "linalg.slogdet", "minigrad.slogdet",
      "Tensor.slogdet", "minigrad.logdet", "Tensor.logdet",
      inputs=(A(_own.standard_normal((2, 3, 3)).astype(np.float32), grad=True),))
def _(lib, a):
    spd = a @ a.transpose(-2, -1) + lib.eye(3)
    return (lib.linalg.det(a), lib.det(a[0]), a.det(), tuple(lib.linalg.slogdet(a)),
            tuple(lib.slogdet(a[1])), tuple(a.slogdet()), lib.logdet(spd), spd[0].logdet(),
            lib.linalg.det(a[:, :0, :0]))


@add
@case("linalg.cholesky", "linalg.qr",
      inputs=(A(_own.standard_normal((2, 3, 3)).astype(np.float32), grad=True),
              A(_own.standard_normal((4, 3)).astype(np.float32), grad=True)))
def _(lib, a, b):
    spd = a @ a.transpose(-2, -1) + lib.eye(3)
    la = lib.linalg
    return (la.cholesky(spd), la.cholesky(spd[0], upper=True), tuple(la.qr(b)),
            tuple(la.qr(b.t())), tuple(la.qr(a, mode="complete")), la.qr(b.detach(), mode="r").R)


@add
@case("linalg.LinAlgError", "linalg.inv")
def _(lib):
    try:
        lib.linalg.inv(lib.zeros(2, 2))
    except lib.linalg.LinAlgError as e:
        return isinstance(e, RuntimeError)
    return False


@add
@case("linalg.inv", compare="raises", match="linalg.inv: A must be batches of square matrices, "
      "but they are 2 by 3 matrices")
def _(lib):
    return lib.linalg.inv(lib.ones(2, 3))


@add
@case("linalg.cross", "minigrad.cross", "Tensor.cross", "minigrad.kron", "Tensor.kron",
      "minigrad.tensordot",
      inputs=(A(_own.standard_normal((4, 3)).astype(np.float32), grad=True),
              A(_own.standard_normal((1, 3)).astype(np.float32), grad=True)))
def _(lib, a, b):
    return (lib.linalg.cross(a, b), lib.cross(a, b, dim=1), a.t().cross(b.t().expand(3, 4), 0),
            lib.kron(a, b), b.kron(a[0]), lib.kron(lib.tensor([[1, 2]]), lib.tensor([3, 4])),
            lib.tensordot(a, b, ([1], [1])), lib.tensordot(a, a, 2), lib.tensordot(a, b, 0))


@add
@case("minigrad.mode", "Tensor.mode", "minigrad.nanmedian", "Tensor.nanmedian",
      "minigrad.nanquantile", "Tensor.nanquantile",
      inputs=(A(np.array([[1.0, 2.0, 2.5, np.nan], [3.5, np.nan, -1.0, 0.5],
                          [7.0, 7.0, 7.0, 5.0]], np.float32), grad=True),))
def _(lib, x):
    """Distinct non-NaN values where an index or a gradient picks one of equal values."""
    whole = lib.nan_to_num(x, 0.0)
    return (tuple(lib.mode(whole, 1)), tuple(whole.mode(0, keepdim=True)),
            tuple(lib.nanmedian(x[:2], 1)), x[1].nanmedian(), tuple(x[1:2].nanmedian(0)),
            lib.nanquantile(x[:2], 0.3, 1), x[1].nanquantile(lib.tensor([0.25, 0.75])),
            lib.nanquantile(x[:2], 0.5, 1, keepdim=True, interpolation="higher"))


@add
@case("linalg.solve_triangular", "linalg.matrix_power", "linalg.multi_dot", "linalg.vecdot",
      "linalg.diagonal", "linalg.matmul",
      inputs=(_matrices(2, 3, 3), A(_own.standard_normal((3, 2)).astype(np.float32), grad=True)))
def _(lib, a, b):
    la = lib.linalg
    return (la.solve_triangular(a, b, upper=True), la.solve_triangular(a[0], b.t(), upper=False,
                                                                       left=False),
            la.solve_triangular(a, b, upper=False, unitriangular=True), la.matrix_power(a, 3),
            la.matrix_power(a[0], -2), la.matrix_power(a, 0), la.multi_dot([b[:, 0], a[0], b]),
            la.multi_dot([a[0], a[1], b, b.t()]), la.vecdot(a, b[:, 0]), la.diagonal(a),
            la.diagonal(a, offset=-1, dim1=0, dim2=2), la.matmul(a, b))


@add
@case("minigrad.column_stack", "minigrad.dstack", "minigrad.atleast_1d", "minigrad.atleast_2d",
      "minigrad.atleast_3d",
      inputs=(A(_own.standard_normal((3, 2)).astype(np.float32), grad=True),
              A(_own.standard_normal(3).astype(np.float32), grad=True)))
def _(lib, m, v):
    return (lib.column_stack([v, m, v * 2]), lib.column_stack([v[0], v[1]]),
            lib.column_stack((m[:0], v[:0])), lib.dstack([v, v]), lib.dstack([m, m.unsqueeze(-1)]),
            lib.dstack((v[0], v[1])), lib.atleast_1d(v[0]), lib.atleast_1d(v, m),
            lib.atleast_2d(v), lib.atleast_2d([v[0], m]), lib.atleast_3d(v), lib.atleast_3d(m),
            lib.atleast_3d(v[0], m.unsqueeze(0)))


@add
@case("minigrad.column_stack", "minigrad.dstack", compare="raises",
      match="expects a non-empty TensorList")
def _(lib):
    return lib.dstack([])


@add
@case("linalg.svd", "linalg.svdvals",
      inputs=(A(_own.standard_normal((2, 3, 4)).astype(np.float32), grad=True),))
def _(lib, a):
    """What the SVD fixes: the vectors' signs may differ (see the differences)."""
    la = lib.linalg
    U, S, Vh = la.svd(a, full_matrices=False)
    full = la.svd(a[0].t())
    return (S, U * U, Vh * Vh, (U * S.unsqueeze(-2)) @ Vh, U @ Vh, la.svdvals(a),
            la.svdvals(a[:, :0]), full.S, full.U.shape, full.Vh.shape,
            la.matrix_norm(a, 2), la.matrix_norm(a, "nuc"), la.norm(a[1], -2))


@add
@case("linalg.eigh", "linalg.eigvalsh",
      inputs=(A(_own.standard_normal((2, 3, 3)).astype(np.float32), grad=True),))
def _(lib, a):
    """The eigenvalues, and what the eigenvectors' signs leave unchanged (see the differences)."""
    sym = a + a.transpose(-2, -1)
    values, vectors = lib.linalg.eigh(sym)
    upper = lib.linalg.eigh(a[0], UPLO="U")
    rebuilt = (vectors * values.unsqueeze(-2)) @ vectors.transpose(-2, -1)
    return (values, vectors * vectors, rebuilt,
            lib.linalg.eigvalsh(sym), lib.linalg.eigvalsh(a, "U"), upper.eigenvalues,
            upper.eigenvectors.abs())


@add
@case("minigrad.nansum", "Tensor.nansum", "minigrad.nanmean", "Tensor.nanmean", "minigrad.diff",
      "Tensor.diff",
      inputs=(A(np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan],
                          [0.5, 4.0, np.nan, 1.5]], np.float32), grad=True),
              A(_own.standard_normal((3, 5)).astype(np.float32), grad=True)))
def _(lib, x, y):
    return (lib.nansum(x), x.nansum(1), lib.nansum(x, (0, 1), keepdim=True),
            x.nansum(0, dtype=lib.float64), lib.nanmean(x[::2], 1), lib.nanmean(x.detach(), 1),
            x[0].nanmean(), x.nanmean(0, True),
            lib.nansum(lib.tensor([1, 2, 3])), lib.nansum(lib.tensor(True)),
            lib.diff(y), y.diff(2, 0), lib.diff(y, dim=0, prepend=y[:1], append=y[1:]),
            y.diff(n=7), lib.diff(lib.tensor([1, 4, 9, 16]), n=2),
            lib.diff(lib.tensor([True, False, False])))


@add
@case("minigrad.nanmean", compare="raises", match="nanmean\\(\\): expected input to have "
      "floating point")
def _(lib):
    return lib.nanmean(lib.tensor([1, 2]))


@add
@case("minigrad.block_diag", "minigrad.cartesian_prod", "minigrad.diag_embed",
      "Tensor.diag_embed",
      inputs=(A(_own.standard_normal((2, 3)).astype(np.float32), grad=True),
              A(_own.standard_normal(2).astype(np.float32), grad=True)))
def _(lib, m, v):
    return (lib.block_diag(m, v, v[0], m.t()), lib.block_diag(lib.ones(1, 2, dtype=lib.int64), m),
            lib.block_diag(), lib.cartesian_prod(v, m[0], v), lib.cartesian_prod(v),
            lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5])),
            lib.diag_embed(m), m.diag_embed(1), lib.diag_embed(m, -2, 0, 2), v.diag_embed(0, 1, 0))


@add
@case("minigrad.trapezoid", "minigrad.trapz", "minigrad.cumulative_trapezoid",
      inputs=(A(_own.standard_normal((2, 4)).astype(np.float32), grad=True),
              A(np.array([0.0, 0.5, 2.0, 3.0], np.float32), grad=True)))
def _(lib, y, x):
    return (lib.trapezoid(y), lib.trapezoid(y, x), lib.trapezoid(y, dx=0.5, dim=0),
            lib.trapz(y, x.expand(2, 4), dim=1), lib.trapz(y, dx=2),
            lib.cumulative_trapezoid(y), lib.cumulative_trapezoid(y, x),
            lib.trapezoid(lib.tensor([1, 2, 4])), lib.cumulative_trapezoid(lib.ones(2, 0)))
