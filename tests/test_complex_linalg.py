"""Linear algebra of complex matrices: values and the gradients of real losses against
PyTorch's (complex64 and complex128, batched, empty and non-contiguous inputs), float64
gradcheck on complex inputs, linalg.eig and eigvals of real and complex matrices, and the
errors PyTorch gives."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

rng = np.random.default_rng(5)


def _z(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _hermitian(lib, a):
    n = a.shape[-1]
    return a @ a.mH + n * lib.eye(n, dtype=a.dtype)


def _rebuilt(u, s, vh):
    return (u * s.to(u.dtype).unsqueeze(-2)) @ vh


# each a function of one complex (*, 3, 3) tensor (or (*, 4, 3) for "tall"), whose result
# does not depend on the arbitrary phases of eigen- or singular vectors
OPS = {
    "inv": lambda L, a: L.linalg.inv(a),
    "solve": lambda L, a: L.linalg.solve(a, a[..., :2].flip(-2)),
    "solve_vector": lambda L, a: L.linalg.solve(a, a[..., 0]),
    "det": lambda L, a: L.linalg.det(a),
    "slogdet": lambda L, a: L.view_as_real(L.linalg.slogdet(a).sign) * L.linalg.slogdet(a)[1][
        ..., None],
    "logdet_hermitian": lambda L, a: L.logdet(_hermitian(L, a)),
    "vector_norm": lambda L, a: L.linalg.vector_norm(a, 3.0, dim=-1),
    "matrix_norm_fro": lambda L, a: L.linalg.matrix_norm(a),
    "matrix_norm_nuc": lambda L, a: L.linalg.matrix_norm(a, "nuc"),
    "matrix_norm_inf": lambda L, a: L.linalg.matrix_norm(a, float("inf")),
    "norm": lambda L, a: L.linalg.norm(a[..., 0, :]),
    "tensor_norm": lambda L, a: a.norm(dim=-1) + a.norm(1, dim=-2),
    "svdvals_tall": lambda L, a: L.linalg.svdvals(a),
    "svd_tall": lambda L, a: _rebuilt(*L.linalg.svd(a, full_matrices=False)) * 1.5
    + L.linalg.svd(a, full_matrices=False).U.abs().to(a.dtype),
    "svd_wide": lambda L, a: _rebuilt(*L.linalg.svd(a.mT, full_matrices=False)),
    "qr_tall": lambda L, a: L.linalg.qr(a).Q * 2 + L.linalg.qr(a).R.sum(-2, keepdim=True),
    "qr_wide": lambda L, a: L.linalg.qr(a.mT).Q.sum(-1, keepdim=True) + L.linalg.qr(a.mT).R,
    "cholesky": lambda L, a: L.linalg.cholesky(_hermitian(L, a)),
    "cholesky_upper": lambda L, a: L.linalg.cholesky(_hermitian(L, a), upper=True),
    "eigh": lambda L, a: L.linalg.eigh(_hermitian(L, a)).eigenvalues.to(a.dtype)
    + L.linalg.eigh(_hermitian(L, a)).eigenvectors.abs().to(a.dtype).sum(-2),
    "eigh_upper": lambda L, a: L.linalg.eigh(_hermitian(L, a), UPLO="U").eigenvectors.abs(),
    "eigvalsh": lambda L, a: L.linalg.eigvalsh(_hermitian(L, a)),
    "eig": lambda L, a: L.linalg.eig(a).eigenvalues.unsqueeze(-1)
    * L.linalg.eig(a).eigenvectors.abs().to(a.dtype),
    "eigvals": lambda L, a: L.linalg.eigvals(a),
    "matrix_exp": lambda L, a: L.linalg.matrix_exp(a),
    "matrix_exp_unitary": lambda L, a: L.linalg.matrix_exp(a - a.mH),
}
TALL = {"svdvals_tall", "svd_tall", "svd_wide", "qr_tall", "qr_wide"}


def _run(lib, name, a, weights):
    x = lib.tensor(a, requires_grad=True)
    out = OPS[name](lib, x)
    w = lib.tensor(weights[:out.numel()].reshape(tuple(out.shape))).to(
        out.dtype if out.is_complex() else lib.complex128)
    loss = (out * w).abs().sum() if out.is_complex() else (out * w.real).sum()
    loss.backward()
    return out.detach().numpy(), str(out.dtype), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_values_and_gradients_as_pytorch(name, dtype, torch):
    a = _z(2, 4 if name in TALL else 3, 3, dtype=dtype)
    weights = _z(64)
    (v, dt, g), (tv, tdt, tg) = (_run(lib, name, a, weights) for lib in (mg, torch))
    assert dt == tdt.replace("torch.", "")
    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.complex64 else dict(rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(v, tv, **tol)
    np.testing.assert_allclose(g, tg, **tol)


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_on_complex_inputs(name):
    a = mg.tensor(_z(4 if name in TALL else 3, 3), requires_grad=True)
    assert gradcheck(lambda x: OPS[name](mg, x), [a], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "svdvals_tall", "eigvals", "eig",
                                  "eigvalsh", "cholesky", "qr_tall"])
def test_non_contiguous_and_empty_batches(name, torch):
    rows = 4 if name in TALL else 3
    a = _z(3, 3, rows)
    for make in (lambda lib: lib.tensor(a).mT, lambda lib: lib.tensor(a[:0]).mT):
        got, want = OPS[name](mg, make(mg)), OPS[name](torch, make(torch))
        assert tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype) == str(want.dtype).replace("torch.", "")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eig_of_real_matrices_as_pytorch(dtype, torch):
    a = rng.standard_normal((2, 4, 4)).astype(dtype)
    a[1] = a[1] + a[1].T  # a real spectrum: still complex results, as PyTorch's
    results = []
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        values, vectors = lib.linalg.eig(x)
        loss = ((values * values).real.sum() + vectors.abs().sum()
                + lib.linalg.eigvals(x).abs().sum())
        loss.backward()
        results.append((values.detach().numpy(), str(values.dtype), vectors.detach().numpy(),
                        x.grad.numpy(), str(x.grad.dtype)))
    (v, dt, vec, g, gdt), (tv, tdt, tvec, tg, tgdt) = results
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)
    assert dt == tdt.replace("torch.", "") and gdt == tgdt.replace("torch.", "")
    np.testing.assert_allclose(v, tv, **tol)
    np.testing.assert_allclose(np.abs(vec), np.abs(tvec), **tol)
    np.testing.assert_allclose(g, tg, **tol)
    x = mg.tensor(a[0].astype(np.float64), requires_grad=True)
    assert gradcheck(lambda t: mg.view_as_real(mg.linalg.eigvals(t)), [x])


def test_eig_refuses_what_pytorch_refuses(torch):
    a = _z(3, 3)
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
            lib.view_as_real(lib.linalg.eig(x).eigenvectors).sum().backward()
        with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
            lib.linalg.eig(lib.tensor([[1.0, float("nan")], [0.0, 1.0]]))
        with pytest.raises(RuntimeError, match="square"):
            lib.linalg.eigvals(lib.tensor(_z(2, 3)))


def test_linear_algebra_still_refused_on_complex_names_the_op():
    z = mg.tensor(_z(3, 3))
    for fn, name in ((lambda a: mg.linalg.lstsq(a, a), "lstsq"), (mg.linalg.pinv, "pinv"),
                     (mg.linalg.lu_factor, "lu_factor"), (mg.linalg.cond, "cond")):
        with pytest.raises(RuntimeError, match=name):
            fn(z)


def test_phase_dependent_losses_refuse_as_pytorch(torch):
    a = _z(3, 3)
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        h = _hermitian(lib, x)
        with pytest.raises(RuntimeError, match="linalg_eigh_backward: The eigenvectors"):
            lib.linalg.eigh(h).eigenvectors.real.sum().backward()
        with pytest.raises(RuntimeError, match="svd_backward: The singular vectors"):
            lib.linalg.svd(x).U.real.sum().backward()
        lib.linalg.svd(x).U.abs().sum().backward()  # what the phases leave alone is fine
