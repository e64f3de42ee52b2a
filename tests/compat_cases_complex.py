"""Compatibility cases: the elementwise math, reductions and linear algebra of complex tensors
(the transforms and the parts of a complex number are in compat_cases_spectral.py), and tan.

Complex results are returned through `view_as_real` where a gradient is compared (the runner
weights each output by a real random tensor); eigenvectors, fixed only up to a phase, through
what the phase leaves unchanged."""
import numpy as np

from compat_table import A, case

CASES = []
add = CASES.append

_rng = np.random.default_rng(2027)  # a stream of its own: the other files' inputs stay theirs


def _c(*shape, dtype=np.complex64):
    return A((_rng.uniform(-1, 1, shape) + 1j * _rng.uniform(-1, 1, shape)).astype(dtype), True)


def _f(*shape, low=-1.2, high=1.2):
    return A(_rng.uniform(low, high, shape).astype(np.float32), True)


@add
@case("minigrad.tan", "Tensor.tan", "Tensor.tan_", inputs=(_f(3, 4),))
def _(lib, x):
    return lib.tan(x), x.tan() * 1.5, (x * 1).tan_()


@add
@case("minigrad.sqrt", "Tensor.rsqrt", "Tensor.__pow__", "Tensor.__rpow__", "minigrad.sgn",
      "minigrad.sin", "Tensor.cos", "Tensor.tan", "minigrad.sinh", "Tensor.cosh",
      "minigrad.tanh", "minigrad.asin", "Tensor.acos", "minigrad.atan", "minigrad.asinh",
      "Tensor.acosh", "minigrad.atanh", "minigrad.log2", "minigrad.log10", "minigrad.log1p",
      "minigrad.expm1", "minigrad.sigmoid", "Tensor.reciprocal", "Tensor.square",
      inputs=(_c(3, 4),), rtol=2e-5, atol=2e-6)
def _(lib, z):
    fns = (lib.sqrt(z), z.rsqrt(), z ** 2, z ** (0.5 - 1j), 2 ** z, (1j + 0.5) ** z,
           z ** z.flip(0), lib.sgn(z), lib.sin(z), z.cos(), z.tan(), lib.sinh(z), z.cosh(),
           lib.tanh(z), lib.asin(z), z.acos(), lib.atan(z), lib.asinh(z), z.acosh(),
           lib.atanh(z), lib.log2(z), lib.log10(z), lib.log1p(z), lib.expm1(z),
           lib.sigmoid(z), z.reciprocal(), z.square())
    return [lib.view_as_real(f) for f in fns]


@add
@case("minigrad.prod", "Tensor.cumprod", "minigrad.var", "Tensor.std", "minigrad.vdot",
      "minigrad.dot", "minigrad.inner", "minigrad.outer", "minigrad.einsum", "minigrad.bmm",
      "minigrad.is_conj", "minigrad.isclose", "Tensor.isfinite", "minigrad.allclose",
      inputs=(_c(3, 4, dtype=np.complex128),))
def _(lib, z):
    return (lib.view_as_real(lib.prod(z, 1)), lib.view_as_real(z.prod()),
            lib.view_as_real(z.cumprod(1)), lib.var(z, 0), z.std(), z.var(1, correction=0),
            lib.view_as_real(lib.vdot(z[0], z[1])), lib.view_as_real(lib.dot(z[0], z[2])),
            lib.view_as_real(lib.inner(z, z)), lib.view_as_real(lib.outer(z[0], z[1])),
            lib.view_as_real(lib.einsum("ij,kj->ik", z, z.conj())),
            lib.view_as_real(lib.bmm(z[None], z.mT[None])), lib.is_conj(z.conj()),
            lib.isclose(z, z.conj()), z.isfinite(), lib.allclose(z, z * (1 + 1e-9)))


@add
@case("linalg.eig", "linalg.eigvals", inputs=(_c(2, 3, 3, dtype=np.complex128),
                                              A(_rng.standard_normal((3, 3)), True)))
def _(lib, a, r):
    values, vectors = lib.linalg.eig(a)
    real_values = lib.linalg.eigvals(r)  # a real input: complex eigenvalues, a real gradient
    return (lib.view_as_real(values), vectors.abs(), lib.view_as_real(lib.linalg.eigvals(a)),
            lib.view_as_real(real_values), lib.linalg.eig(r).eigenvectors.abs(),
            str(real_values.dtype).replace("torch.", ""))


@add
@case("linalg.inv", "linalg.solve", "linalg.det", "linalg.slogdet", "linalg.svdvals",
      "linalg.matrix_norm", "linalg.vector_norm", "linalg.eigvalsh", "linalg.cholesky",
      "linalg.qr", "linalg.svd", "linalg.eigh", "linalg.matrix_exp",
      inputs=(_c(3, 3, dtype=np.complex128), _c(3, 2, dtype=np.complex128)))
def _(lib, a, b):
    la = lib.linalg
    h = a @ a.mH + 3 * lib.eye(3, dtype=a.dtype)  # Hermitian positive-definite
    sign, logabs = la.slogdet(a)
    q, r = la.qr(b)
    u, s, vh = la.svd(b, full_matrices=False)
    values, vectors = la.eigh(h)
    return (lib.view_as_real(la.inv(a)), lib.view_as_real(la.solve(a, b)),
            lib.view_as_real(la.det(a)), lib.view_as_real(sign), logabs, la.svdvals(b),
            la.matrix_norm(a), la.matrix_norm(a, "nuc"), la.matrix_norm(a, 2),
            la.vector_norm(b, 3.0, dim=0), la.eigvalsh(h), lib.view_as_real(la.cholesky(h)),
            lib.view_as_real(q @ r), lib.view_as_real((u * s.to(u.dtype)) @ vh), values,
            lib.view_as_real((vectors * values.to(vectors.dtype)) @ vectors.mH), s,
            lib.view_as_real(la.matrix_exp(a - a.mH)))
