"""minigrad.linalg (norms, inv, solve, det, slogdet, cholesky, qr, cross) and tensordot, kron
against PyTorch: values and dtypes in float32 and float64, gradients of first order (against
PyTorch's and central differences) and second order, forward-mode tangents against PyTorch's,
0-d, empty and non-contiguous inputs, and errors of PyTorch's type naming the op."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def _well(*shape):
    """Matrices far from singular: a random part plus 3 on the diagonal."""
    return RNG.standard_normal(shape) + 3 * np.eye(shape[-1])


def _spd(lib, a):
    """A symmetric positive-definite matrix made from any square a."""
    return a @ a.transpose(-2, -1) + lib.eye(a.shape[-1], dtype=a.dtype) * 2


def _flat(lib, *ts):
    return lib.cat([t.reshape(-1) for t in ts])


def _normal(*shape):
    return RNG.standard_normal(shape)


def _svd_parts(lib, a, full):
    """What the SVD fixes: S, and of the vectors what does not change when a pair u_i, v_i
    changes sign together (the one freedom LAPACK's drivers use differently)."""
    U, S, Vh = lib.linalg.svd(a, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return _flat(lib, S, U * U, Vh * Vh * 2, (U * S.unsqueeze(-2)) @ Vh, U @ Vh)


def _eigh_parts(lib, a):
    """The eigenvalues, and of the vectors what their signs leave unchanged."""
    L, V = lib.linalg.eigh(a)
    weights = lib.tensor(np.arange(1.0, 1.0 + a.shape[-1]), dtype=a.dtype)
    return _flat(lib, L, V * V, (V * weights) @ V.transpose(-2, -1))


# name: (program(lib, *tensors) -> one tensor, input arrays)
PROGRAMS = {
    "inv": (lambda lib, a: lib.linalg.inv(a), [_well(2, 3, 3)]),
    "inverse": (lambda lib, a: lib.inverse(a) + a.inverse(), [_well(3, 3)]),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), [_well(3, 3), _normal(2, 3, 2)]),
    "solve_vector": (lambda lib, a, b: lib.linalg.solve(a, b), [_well(2, 3, 3), _normal(2, 3)]),
    "solve_right": (lambda lib, a, b: lib.linalg.solve(a, b, left=False),
                    [_well(3, 3), _normal(2, 3)]),
    "det": (lambda lib, a: lib.linalg.det(a), [_normal(2, 3, 3)]),
    "det_singular": (lambda lib, a: lib.linalg.det(a * lib.tensor([1.0, 1.0, 0.0],
                                                                  dtype=a.dtype)),
                     [_normal(3, 3)]),
    "slogdet": (lambda lib, a: lib.linalg.slogdet(a).logabsdet * 2, [_normal(2, 3, 3)]),
    "logdet": (lambda lib, a: lib.logdet(_spd(lib, a)) + a.det(), [_normal(3, 3)]),
    "cholesky": (lambda lib, a: lib.linalg.cholesky(_spd(lib, a)), [_normal(2, 3, 3)]),
    "cholesky_upper": (lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True),
                       [_normal(3, 3)]),
    "qr_tall": (lambda lib, a: _flat(lib, *lib.linalg.qr(a)), [_normal(4, 3)]),
    "qr_wide": (lambda lib, a: _flat(lib, *lib.linalg.qr(a)), [_normal(2, 3, 5)]),
    "qr_complete_square": (lambda lib, a: _flat(lib, *lib.linalg.qr(a, mode="complete")),
                           [_normal(3, 3)]),
    "vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, 3, dim=1), [_normal(3, 4)]),
    "vector_norm_inf": (lambda lib, a: lib.linalg.vector_norm(a, -math.inf, dim=(0, 2),
                                                              keepdim=True),
                        [_normal(2, 3, 4)]),
    "vector_norm_negative": (lambda lib, a: lib.linalg.vector_norm(a, -1.5), [_normal(5)]),
    "matrix_norm_fro": (lambda lib, a: lib.linalg.matrix_norm(a), [_normal(2, 3, 4)]),
    "matrix_norm_1": (lambda lib, a: lib.linalg.matrix_norm(a, 1, dim=(0, 2)),
                      [_normal(3, 2, 4)]),
    "matrix_norm_inf": (lambda lib, a: lib.linalg.matrix_norm(a, -math.inf, keepdim=True),
                        [_normal(2, 3, 4)]),
    "norm": (lambda lib, a: (lib.linalg.norm(a) + lib.linalg.norm(a[0], 1)
                             + lib.linalg.norm(a, math.inf)), [_normal(3, 4)]),
    "norm_dims": (lambda lib, a: _flat(lib, lib.linalg.norm(a, dim=1),
                                       lib.linalg.norm(a, 2.5, (2,)),
                                       lib.linalg.norm(a, dim=(0, 1))), [_normal(2, 3, 4)]),
    "solve_triangular": (lambda lib, a, b: _flat(
        lib, lib.linalg.solve_triangular(a, b, upper=True),
        lib.linalg.solve_triangular(a[0], b[1].t(), upper=False, left=False, unitriangular=True)),
        [_well(2, 3, 3), _normal(2, 3, 2)]),
    "matrix_power": (lambda lib, a: _flat(lib, lib.linalg.matrix_power(a, 3),
                                          lib.linalg.matrix_power(a, -2),
                                          lib.linalg.matrix_power(a, 0)), [_well(2, 3, 3)]),
    "products": (lambda lib, a, b: _flat(lib, lib.linalg.multi_dot([a[0, 0], a[0], b, b[0]]),
                                         lib.linalg.vecdot(a, b.t().unsqueeze(0)),
                                         lib.linalg.diagonal(a, offset=1),
                                         lib.linalg.matmul(a, b)),
                 [_normal(2, 3, 3), _normal(3, 3)]),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), [_normal(2, 4, 3)]),
    "svd_tall": (lambda lib, a: _svd_parts(lib, a, False), [_normal(4, 3)]),
    "svd_wide": (lambda lib, a: _svd_parts(lib, a, False), [_normal(2, 3, 4)]),
    "svd_full": (lambda lib, a: _svd_parts(lib, a, True), [_normal(3, 5)]),
    "matrix_norm_spectral": (lambda lib, a: _flat(lib, lib.linalg.matrix_norm(a, 2),
                                                  lib.linalg.matrix_norm(a, -2, (0, 2)),
                                                  lib.linalg.norm(a[0], "nuc")),
                             [_normal(2, 3, 4)]),
    "eigh": (lambda lib, a: _eigh_parts(lib, a + a.transpose(-2, -1)), [_normal(2, 3, 3)]),
    "eigh_upper": (lambda lib, a: _flat(lib, lib.linalg.eigvalsh(a + a.t(), UPLO="U"),
                                        lib.linalg.eigh(a + a.t(), "U").eigenvectors ** 2),
                   [_normal(4, 4)]),
    "cross": (lambda lib, a, b: lib.linalg.cross(a, b) + lib.cross(a, b, dim=1),
              [_normal(4, 3), _normal(1, 3)]),
    "kron": (lambda lib, a, b: lib.kron(a, b), [_normal(2, 3), _normal(4, 2, 2)]),
    "tensordot": (lambda lib, a, b: (lib.tensordot(a, b, dims=([0, 2], [2, 1]))
                                     + lib.tensordot(a, a, 3)),
                  [_normal(2, 3, 4), _normal(5, 4, 2)]),
}
SLOW = {"qr_wide", "norm_dims", "tensordot", "kron"}  # the larger inputs of gradgradcheck


def _run(lib, name, arrays, dtype, grad=True):
    program, _ = PROGRAMS[name]
    xs = [lib.tensor(a.astype(dtype)).requires_grad_(grad) for a in arrays]
    out = program(lib, *xs)
    return xs, out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_dtypes_and_gradients_as_pytorchs(name, dtype, torch):
    arrays = PROGRAMS[name][1]
    results = []
    for lib in (torch, mg):
        xs, out = _run(lib, name, arrays, dtype)
        w = np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(dtype)
        (out * lib.tensor(w)).sum().backward()
        results.append((out.detach().numpy(), str(out.dtype).split(".")[-1],
                        [x.grad.numpy() for x in xs]))
    (want, want_dtype, want_grads), (got, got_dtype, got_grads) = results
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)
    assert got_dtype == want_dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tol)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, **tol)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in PROGRAMS])
def test_first_and_second_derivatives_by_central_differences(name):
    program, arrays = PROGRAMS[name]
    xs = [mg.tensor(a).requires_grad_() for a in arrays]
    fn = lambda *t: program(mg, *t)  # noqa: E731
    assert gradcheck(fn, xs)
    if name != "det_singular":  # see test_second_derivative_of_det_at_a_singular_matrix
        assert gradgradcheck(fn, xs)


def _forward_mode(lib, fw, name, arrays, tangents):
    program, _ = PROGRAMS[name]
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
        return fw.unpack_dual(program(lib, *duals)).tangent.numpy().copy()


# (PyTorch prepares its forward mode of these ops once per process, in seconds: in the whole
# suite tests/test_forward_ad.py has paid that already)
@pytest.mark.parametrize("name", [n for n in PROGRAMS if n != "det_singular"])
def test_forward_mode_tangents_as_pytorchs(name, torch):
    arrays = PROGRAMS[name][1]
    tangents = [np.random.default_rng(1).standard_normal(a.shape) for a in arrays]
    got = _forward_mode(mg, fwAD, name, arrays, tangents)
    want = _forward_mode(torch, torch.autograd.forward_ad, name, arrays, tangents)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["slogdet", "logdet", "det_singular", "qr_wide", "svd_full"])
def test_forward_mode_tangents_as_reverse_modes(name):
    """J t by forward mode equals J t through reverse mode (autograd.functional.jvp)."""
    arrays = PROGRAMS[name][1]
    tangents = [np.random.default_rng(2).standard_normal(a.shape) for a in arrays]
    got = _forward_mode(mg, fwAD, name, arrays, tangents)
    _, want = mg.autograd.functional.jvp(lambda *xs: PROGRAMS[name][0](mg, *xs),
                                         tuple(mg.tensor(a) for a in arrays),
                                         tuple(mg.tensor(t) for t in tangents))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-9, atol=1e-11)


def test_second_derivative_of_det_at_a_singular_matrix():
    """The first derivative (the cofactors) holds at a singular matrix, also recorded for a
    second one; differentiating it again is refused with an error naming the op (PyTorch
    computes it)."""
    a = mg.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=mg.float64, requires_grad=True)
    (g,) = mg.autograd.grad(mg.linalg.det(a), a, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [[4.0, -2.0], [-2.0, 1.0]])
    with pytest.raises(NotImplementedError, match=r"linalg.det: second derivatives .* \(2, 2\)"):
        g.sum().backward()
    with fwAD.dual_level():  # forward mode is first order: the cofactors again
        tangent = fwAD.unpack_dual(mg.linalg.det(fwAD.make_dual(a.detach(), mg.ones_like(a))))[1]
    assert tangent.item() == pytest.approx(4.0 - 2.0 - 2.0 + 1.0)


def test_slogdet_sign_qr_mode_r_and_special_shapes(torch):
    """slogdet's sign, qr's mode 'r', 0x0 and empty batches, transposed (non-contiguous)
    inputs and 0-d norms, as PyTorch's."""
    a = RNG.standard_normal((3, 4, 4))
    cases = [
        lambda lib, x: lib.linalg.slogdet(x).sign,
        lambda lib, x: lib.linalg.slogdet(x[:0]).logabsdet,
        lambda lib, x: lib.linalg.qr(x[0], mode="r").R,
        lambda lib, x: lib.linalg.qr(x[0], mode="r").Q,
        lambda lib, x: lib.linalg.inv(x.transpose(-2, -1)),
        lambda lib, x: lib.linalg.det(x[:, :0, :0]),
        lambda lib, x: lib.linalg.inv(x[:, :0, :0]),
        lambda lib, x: lib.linalg.solve(x[0].t(), x[1, :, ::2]),
        lambda lib, x: lib.linalg.qr(x[0, :0]).R,
        lambda lib, x: lib.linalg.cholesky(x[:0]),
        lambda lib, x: lib.linalg.vector_norm(x[0, 0, 0], 3),
        lambda lib, x: lib.linalg.vector_norm(x[0, 0, 0], 0),
        lambda lib, x: lib.linalg.vector_norm(x[:0], 2),
        lambda lib, x: lib.linalg.vector_norm(x, 0, dim=-1),
        lambda lib, x: lib.linalg.matrix_norm(x[:, :0], 1),
        lambda lib, x: lib.linalg.vector_norm(x, dtype=lib.float64).float(),
        lambda lib, x: lib.linalg.cross(x[0, :3], x[1, :3], dim=0),
        lambda lib, x: lib.linalg.solve_triangular(x[:, :0, :0], x[:, :0], upper=False),
        lambda lib, x: lib.linalg.solve_triangular(x * 0, x[:, :, :1], upper=True),
        lambda lib, x: lib.linalg.matrix_power(x.transpose(-2, -1), 5),
        lambda lib, x: lib.linalg.matrix_power(x[:0], -1),
        lambda lib, x: lib.linalg.matrix_power(x.long(), 2),
        lambda lib, x: lib.kron(x[0, 0, 0], x[0]),
        lambda lib, x: lib.kron(x[:0], x[0]),
        lambda lib, x: lib.tensordot(x, x, 0).sum((0, 1)),
        lambda lib, x: lib.tensordot(x[:, :0], x[:, :, :0], ([1, 2], [2, 1])),
    ]
    for i, program in enumerate(cases):
        want = program(torch, torch.tensor(a, dtype=torch.float32))
        got = program(mg, mg.tensor(a, dtype=mg.float32))
        assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)[6:], i
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5, err_msg=i)


def test_integer_products_keep_their_dtype(torch):
    a = np.arange(6).reshape(2, 3)
    for program in (lambda lib, x: lib.kron(x, x), lambda lib, x: lib.tensordot(x, x.t(), 1),
                    lambda lib, x: lib.linalg.cross(x, x.flip(1))):
        want, got = program(torch, torch.tensor(a)), program(mg, mg.tensor(a))
        assert str(got.dtype) == "int64" and np.array_equal(got.numpy(), want.numpy())


ERRORS = [  # (program, PyTorch's exception type, minigrad's message)
    (lambda lib: lib.linalg.inv(lib.ones(2, 3)), RuntimeError, "2 by 3 matrices"),
    (lambda lib: lib.linalg.inv(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.det(lib.ones(2, 2, dtype=lib.int64)), RuntimeError, "Got Long"),
    (lambda lib: lib.linalg.inv(lib.ones(2, 2)), "LinAlgError", "linalg.inv: .*singular"),
    (lambda lib: lib.linalg.inv(lib.stack([lib.eye(2), lib.zeros(2, 2)])), "LinAlgError",
     r"\(Batch element 1\)"),
    (lambda lib: lib.linalg.cholesky(-lib.eye(2)), "LinAlgError", "positive-definite"),
    (lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(3)), RuntimeError, r"2x2 and 3x1"),
    (lambda lib: lib.linalg.solve(lib.ones(2, 2), lib.ones(2)), "LinAlgError", "singular"),
    (lambda lib: lib.linalg.solve(lib.eye(2, dtype=lib.float64), lib.ones(2)), RuntimeError,
     "same dtype"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(2, dtype=lib.int64)), RuntimeError, "Got Long"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(3), "fro"), TypeError, "must be Number"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.float64), dtype=lib.float32),
     RuntimeError, r"without narrowing to the specified dtype \(Float\)"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(0), math.inf), RuntimeError, "empty tensor"),
    (lambda lib: lib.linalg.matrix_norm(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), 3), RuntimeError, "Order 3 not supported"),
    (lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), 2), RuntimeError, "must be 1D or 2D. Got 3D"),
    (lambda lib: lib.linalg.qr(lib.ones(2, 3), mode="x"), RuntimeError, "unrecognized mode 'x'"),
    (lambda lib: lib.linalg.qr(lib.ones(3, 2, requires_grad=True), mode="complete")[0].sum()
     .backward(), RuntimeError, "mode='complete' and nrows > ncols"),
    (lambda lib: lib.linalg.qr(lib.ones(3, 2, requires_grad=True), mode="r")[1].sum().backward(),
     RuntimeError, "mode='r'"),
    (lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(4, 2), dims=1), RuntimeError,
     "size 3 in dim -1 and second has size 4 in dim 0"),
    (lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2), dims=-1), RuntimeError,
     "dims >= 0"),
    (lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2), dims=3), RuntimeError, "dims=3"),
    (lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 2), dims=([1], [0, 1])), RuntimeError,
     "same length"),
    (lambda lib: lib.linalg.solve_triangular(lib.eye(2), lib.ones(2), upper=True), RuntimeError,
     "B must have at least 2 dimensions"),
    (lambda lib: lib.linalg.solve_triangular(lib.eye(2), lib.ones(3, 1), upper=True),
     RuntimeError, "2x2 and 3x1"),
    (lambda lib: lib.linalg.matrix_power(lib.ones(2, 3), 2), RuntimeError, "2 by 3 matrices"),
    (lambda lib: lib.linalg.matrix_power(lib.ones(2, 2, dtype=lib.int64), -1), RuntimeError,
     "linalg.inv: .*Got Long"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(2, 2)]), RuntimeError, "at least 2 tensors"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(2, 2, 2), lib.ones(2, 2)]), RuntimeError,
     "first tensor must be 1D or 2D but got 3D"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(2, 3), lib.ones(2, 2)]), RuntimeError,
     r"tensors 0 and 1 with shapes \[2, 3\] and \[2, 2\] cannot be multiplied"),
    (lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X"), RuntimeError, "UPLO argument to be"),
    (lambda lib: lib.linalg.eigvalsh(lib.ones(2, 3)), RuntimeError, "2 by 3 matrices"),
    (lambda lib: lib.linalg.svd(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.cross(lib.ones(2), lib.ones(2)), RuntimeError, "must have length 3"),
    (lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(2, 3)), RuntimeError, "number of dim"),
    (lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(3, 3)), RuntimeError, "broadcast"),
    (lambda lib: lib.cross(lib.ones(2, 2), lib.ones(2, 2)), RuntimeError,
     "no dimension of size 3"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_pytorchs(i, torch):
    program, kind, message = ERRORS[i]
    kinds = {"torch": torch.linalg.LinAlgError, "mg": mg.linalg.LinAlgError} if kind == \
        "LinAlgError" else {"torch": kind, "mg": kind}
    with pytest.raises(kinds["torch"]):
        program(torch)
    with pytest.raises(kinds["mg"], match=message):
        program(mg)
    assert issubclass(mg.linalg.LinAlgError, RuntimeError)


def test_cross_without_dim_warns_as_pytorch():
    a = mg.tensor(np.eye(3, dtype=np.float32))
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        out = mg.cross(a, a.roll(1, 0))
    np.testing.assert_allclose(out.numpy(), np.cross(np.eye(3), np.roll(np.eye(3), 1, 0), axis=0))
