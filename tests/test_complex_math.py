"""The elementwise ops, reductions and products on complex tensors: values, dtypes and the
gradients of a real loss against PyTorch's (complex64 and complex128, 0-d, empty and
non-contiguous inputs), float64 gradcheck on complex inputs, and the errors PyTorch gives."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.autograd.op import Op

rng = np.random.default_rng(11)


def _z(*shape, dtype=np.complex128, scale=0.7):
    return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale).astype(dtype)


UNARY = {
    "sqrt": lambda a: a.sqrt(), "rsqrt": lambda a: a.rsqrt(), "square": lambda a: a.square(),
    "reciprocal": lambda a: a.reciprocal(), "sgn": lambda a: a.sgn(),
    "pow_int": lambda a: a ** 3, "pow_float": lambda a: a ** 0.5,
    "pow_complex": lambda a: a ** (1.5 - 0.5j), "rpow": lambda a: 2 ** a,
    "rpow_complex": lambda a: (0.5 + 1j) ** a, "pow_self": lambda a: a ** a,
    "sin": lambda a: a.sin(), "cos": lambda a: a.cos(), "tan": lambda a: a.tan(),
    "sinh": lambda a: a.sinh(), "cosh": lambda a: a.cosh(), "tanh": lambda a: a.tanh(),
    "asin": lambda a: a.asin(), "acos": lambda a: a.acos(), "atan": lambda a: a.atan(),
    "asinh": lambda a: a.asinh(), "acosh": lambda a: a.acosh(), "atanh": lambda a: a.atanh(),
    "log2": lambda a: a.log2(), "log10": lambda a: a.log10(), "log1p": lambda a: a.log1p(),
    "expm1": lambda a: a.expm1(), "exp2": lambda a: a.exp2(), "sigmoid": lambda a: a.sigmoid(),
    "prod": lambda a: a.prod(), "prod_dim": lambda a: a.prod(1, keepdim=True),
    "cumprod": lambda a: a.cumprod(1), "var": lambda a: a.var(1), "std": lambda a: a.std(),
    "var_biased": lambda a: a.var(0, correction=0), "conj_physical": lambda a: a.conj_physical(),
    "dot": lambda a: a[0].dot(a[1]), "vdot": lambda a: a[0].vdot(a[1]),
    "inner": lambda a: a.inner(a.flip(0)), "outer": lambda a: a[0].outer(a[1]),
    "bmm": lambda a: a.reshape(1, 3, 4).bmm(a.reshape(1, 4, 3)),
    "einsum": lambda a: (mg_or_torch(a).einsum("ij,kj->ik", a, a.conj())),
    "pow_tensor": lambda a: a[0] ** a[1],
}


def mg_or_torch(t):
    return mg if isinstance(t, mg.Tensor) else __import__("torch")


def _run(lib, fn, z, weights):
    """fn(z) and the gradient of the real loss sum(|fn(z) * w|) (or of sum(fn(z) * w) for a
    real result), as arrays."""
    x = lib.tensor(z, requires_grad=True)
    out = fn(x)
    w = lib.tensor(weights[:out.numel()].reshape(tuple(out.shape)).astype(
        "complex128" if out.is_complex() else "float64")).to(out.dtype)
    loss = (out * w).abs().sum() if out.is_complex() else (out * w).sum()
    loss.backward()
    return out.detach().resolve_conj().numpy(), str(out.dtype), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_values_and_gradients_as_pytorch(name, dtype, torch):
    z = _z(3, 4, dtype=dtype)
    weights = _z(64)
    (v, dt, g), (tv, tdt, tg) = (_run(lib, UNARY[name], z, weights) for lib in (mg, torch))
    assert dt == tdt.replace("torch.", "")
    tol = dict(rtol=3e-4, atol=3e-5) if dtype == np.complex64 else dict(rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(v, tv, **tol)
    np.testing.assert_allclose(g, tg, **tol)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_gradcheck_on_complex_inputs(name, torch):
    z = mg.tensor(_z(3, 4), requires_grad=True)
    assert gradcheck(UNARY[name], [z])
    if name in ("sqrt", "sin", "prod_dim", "var", "sgn"):  # the same check passes in PyTorch
        assert torch.autograd.gradcheck(UNARY[name], [torch.tensor(z.detach().numpy(),
                                                                  requires_grad=True)])


def test_gradcheck_catches_a_missing_conjugate():
    class SinWithoutConj(Op):
        complex_aware = True

        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return np.sin(a)

        @staticmethod
        def backward(ctx, g):
            return g * np.cos(ctx.saved[0])  # the holomorphic slope, not its conjugate

    z = mg.tensor(_z(4), requires_grad=True)
    assert not gradcheck(SinWithoutConj.apply, [z], raise_exception=False)
    with pytest.raises(AssertionError, match="input 0"):
        gradcheck(SinWithoutConj.apply, [z])
    with pytest.raises(TypeError, match="complex128"):
        gradcheck(lambda a: a.sin(), [mg.tensor(_z(2, dtype=np.complex64), requires_grad=True)])


def test_real_inputs_with_complex_exponents(torch):
    x = np.array([0.5, 2.0, 3.0])
    results = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        out = t ** (0.5 + 1j) + (1j * t).tanh() + (2 + 0j) ** t
        out.abs().sum().backward()
        results.append((out.detach().numpy(), str(out.dtype), t.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    assert results[0][1] == results[1][1].replace("torch.", "")
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-10)


@pytest.mark.parametrize("name", ["sqrt", "tan", "acosh", "sigmoid", "pow_complex", "sgn",
                                  "prod", "std", "log1p"])
def test_zero_dim_empty_and_non_contiguous(name, torch):
    fn = UNARY[name]
    z = _z(4, 6)
    cases = [lambda lib: lib.tensor(z[1, 2]), lambda lib: lib.tensor(z[:0]),
             lambda lib: lib.tensor(z).T[::2]]
    for case in cases:
        got, want = fn(case(mg)), fn(case(torch))
        assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(
            want.dtype).replace("torch.", "")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_kinks_at_zero_as_pytorch(torch):
    z = np.array([0j, 1 + 1j, -2 + 0j])
    for fn in (lambda a: a.sgn(), lambda a: a ** 2, lambda a: a ** (0.5 + 0.5j), lambda a: a.prod(),
               lambda a: a ** 0):
        grads = []
        for lib in (mg, torch):
            t = lib.tensor(z, requires_grad=True)
            out = fn(t)
            lib.view_as_real(out.reshape(-1)).sum().backward()
            grads.append(t.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-14, equal_nan=True)


def test_comparisons_and_finite_tests_as_pytorch(torch):
    z = np.array([1 + 1j, complex(np.nan, 0), complex(0, np.inf), 2 - 1j])
    other = np.array([1 + 1j, complex(np.nan, 0), complex(0, np.inf), 2 + 1j])
    for fn in (lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a.isfinite(),
               lambda a, b: a.isnan(), lambda a, b: a.isinf(),
               lambda a, b: a.isclose(b * (1 + 1e-7)),
               lambda a, b: a.isclose(b, equal_nan=True), lambda a, b: mg_or_torch(a).eq(a, b)):
        got = fn(mg.tensor(z), mg.tensor(other))
        want = fn(torch.tensor(z), torch.tensor(other))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for a, b in ((z[[0, 3]], z[[0, 3]] * (1 + 1e-9)), (z[[0, 3]], other[[0, 3]])):
        assert mg.tensor(a).allclose(mg.tensor(b)) == torch.tensor(a).allclose(torch.tensor(b))


def test_conjugate_flag_as_pytorch(torch):
    z = _z(3)
    for lib in (mg, torch):
        t = lib.tensor(z)
        assert t.conj().is_conj() and lib.is_conj(t.conj()) and not t.is_conj()
        assert not t.conj_physical().is_conj() and not t.conj().resolve_conj().is_conj()
        assert not lib.tensor([1.0]).conj().is_conj()
        assert t.resolve_conj() is t
        np.testing.assert_array_equal(t.conj().resolve_conj().numpy(), np.conj(z))


def test_sign_of_complex_refuses_as_pytorch(torch):
    for lib in (mg, torch):
        with pytest.raises(NotImplementedError, match="Please use torch.sgn instead"):
            lib.tensor(_z(2)).sign()


@pytest.mark.parametrize("name", ["sqrt_", "rsqrt_", "sin_", "cos_", "tan_", "tanh_", "sigmoid_",
                                  "pow_", "reciprocal_", "square_", "log1p_", "expm1_", "sgn_",
                                  "asin_", "sinh_", "log2_"])
def test_in_place_forms_as_pytorch(name, torch):
    z = _z(2, 3)
    results = []
    for lib in (mg, torch):
        x = lib.tensor(z, requires_grad=True)
        y = x * 1  # a node in the graph, as PyTorch requires
        out = getattr(y, name)(*((0.5 + 2j,) if name == "pow_" else ()))
        assert out is y
        (lib.view_as_real(y) * lib.tensor([1.0, -0.5], dtype=lib.float64)).sum().backward()
        results.append((y.detach().numpy(), str(y.dtype), x.grad.numpy()))
    (v, dt, g), (tv, tdt, tg) = results
    assert dt == tdt.replace("torch.", "")
    np.testing.assert_allclose(v, tv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)
