"""Complex tensors: type promotion, PyTorch's gradient convention (checked by central
differences through the real and imaginary parts, and against PyTorch), 0-d, empty and
non-contiguous inputs, and the refusal of ops not made complex-aware."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

rng = np.random.default_rng(7)


def _z(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _torch_dtype(torch, dt):
    return getattr(torch, np.dtype(dt).name)


PROMOTIONS = [("float32", "complex64"), ("float64", "complex64"), ("float16", "complex64"),
              ("int64", "complex64"), ("bool", "complex128"), ("complex64", "complex128"),
              ("float64", "complex128"), ("int32", "complex128")]


@pytest.mark.parametrize("a, b", PROMOTIONS)
def test_promotion_as_pytorch(a, b, torch):
    assert str(mg.promote_types(getattr(mg, a), getattr(mg, b))) == str(
        torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")
    for lib_shapes in [((3,), (3,)), ((3,), ()), ((), (3,))]:
        if a == "float16" and lib_shapes[1] == ():  # PyTorch's complex32, which NumPy lacks
            continue
        got = (mg.ones(lib_shapes[0], dtype=getattr(mg, a))
               * mg.ones(lib_shapes[1], dtype=getattr(mg, b))).dtype
        want = (torch.ones(lib_shapes[0], dtype=getattr(torch, a))
                * torch.ones(lib_shapes[1], dtype=getattr(torch, b))).dtype
        assert str(got) == str(want).replace("torch.", ""), (a, b, lib_shapes)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_python_complex_scalars_as_pytorch(dtype, torch):
    x, t = mg.ones(2, dtype=getattr(mg, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    for got, want in [(x * 1j, t * 1j), (x + (2 - 1j), t + (2 - 1j)), (1j / (x + 1), 1j / (t + 1))]:
        assert str(got.dtype) == str(want.dtype).replace("torch.", "")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def _parts(fn):
    """fn of complex inputs as a function of their real and imaginary parts, with a real
    output, so that gradcheck's central differences cover PyTorch's convention."""
    def real_fn(*parts):
        zs = [mg.complex(parts[i], parts[i + 1]) for i in range(0, len(parts), 2)]
        out = fn(*zs)
        return mg.view_as_real(out) if out.is_complex() else out
    return real_fn


def _real_parts(*arrays):
    parts = []
    for a in arrays:
        parts += [mg.tensor(a.real.copy(), requires_grad=True),
                  mg.tensor(a.imag.copy(), requires_grad=True)]
    return parts


def mg_or_torch_exp(x):
    return x.exp()  # exp(i phase), the phasor of signal code


OPS = {
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b + 3),
    "add_sub": lambda a, b: a + b - a * 2,
    "matmul": lambda a, b: a @ b.T,
    "sum_mean": lambda a, b: a.sum(0) * b.mean(),
    "abs": lambda a, b: (a * b).abs(),
    "angle": lambda a, b: (a + b).angle(),
    "conj": lambda a, b: a.conj() * b,
    "real_imag": lambda a, b: a.real * b.imag + a.imag,
    "exp_log": lambda a, b: (a * 0.3).exp() * b.log() + mg_or_torch_exp(1j * a.real),
    "shape": lambda a, b: a.T.reshape(-1)[1:] * b.reshape(-1)[:-1].flip(0),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_by_central_differences(name):
    a, b = _z(3, 4), _z(3, 4)
    assert gradcheck(_parts(OPS[name]), _real_parts(a, b))


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_values_and_gradients_as_pytorch(name, dtype, torch):
    a, b = _z(3, 4, dtype=dtype), _z(3, 4, dtype=dtype)
    results = []
    for lib in (mg, torch):
        wrng = np.random.default_rng(1)  # the same weights in both libraries
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = OPS[name](x, y)
        real = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out
        weights = wrng.standard_normal(tuple(real.shape)).astype(
            str(real.dtype).replace("torch.", ""))
        (real * lib.tensor(weights)).sum().backward()
        results.append((np.array(out.detach().resolve_conj().numpy()), str(out.dtype),
                        x.grad.resolve_conj().numpy(), y.grad.resolve_conj().numpy()))
    (v, dt, gx, gy), (tv, tdt, tgx, tgy) = results
    assert dt == tdt.replace("torch.", "")
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == np.complex64 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(v, tv, **tol)
    np.testing.assert_allclose(gx, tgx, **tol)
    np.testing.assert_allclose(gy, tgy, **tol)


def test_real_input_gets_the_real_part_of_its_gradient(torch):
    x = np.array([1.5, -2.0, 0.0], np.float32)  # polar's kinks at abs <= 0 as PyTorch's
    z = _z(3, dtype=np.complex64)
    grads = []
    for lib in (mg, torch):
        xt, zt = lib.tensor(x, requires_grad=True), lib.tensor(z, requires_grad=True)
        out = (xt * zt + xt.to(lib.complex64) * 1j).abs().sum() + lib.polar(xt, xt).imag.sum()
        out.backward()
        grads.append((xt.grad.numpy(), str(xt.grad.dtype), zt.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-5)
    assert grads[0][1] == "float32" and grads[1][1] == "torch.float32"
    np.testing.assert_allclose(grads[0][2], grads[1][2], rtol=1e-5)


def test_polar_and_complex_gradients():
    r = mg.tensor(rng.uniform(0.5, 2, 4), requires_grad=True)
    t = mg.tensor(rng.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda r, t: mg.view_as_real(mg.polar(r, t) * mg.polar(r * 2, t * r)), [r, t])
    assert gradcheck(lambda r, t: mg.view_as_real(mg.complex(r, t) * mg.complex(t, r) / 3),
                     [r, t])


def test_views_share_memory():
    z = mg.tensor(_z(2, 3))
    v = mg.view_as_real(z)
    v.numpy()[0, 0, 1] = 42.0
    assert z.imag[0, 0].item() == 42.0 and z.real.numpy().base is not None
    back = mg.view_as_complex(v)
    assert np.shares_memory(back.numpy(), z.numpy())
    with pytest.raises(RuntimeError, match="stride 1"):
        mg.view_as_complex(mg.zeros(2, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        mg.view_as_complex(mg.zeros(2, 3))
    with pytest.raises(RuntimeError, match="only supported for complex"):
        mg.view_as_real(mg.zeros(2))


def test_zero_dim_empty_and_non_contiguous(torch):
    for shape in [(), (0,), (2, 0)]:
        z = _z(*shape, dtype=np.complex64)
        for lib in (mg, torch):
            t = lib.tensor(z)
            out = (t * t.conj() + 1j).sum()
            assert out.dtype == getattr(lib, "complex64")
        assert mg.tensor(z).abs().shape == torch.tensor(z).abs().shape
    a = _z(4, 3)
    got = (mg.tensor(a).T * 2j)[::2].real.numpy()
    np.testing.assert_allclose(got, (torch.tensor(a).T * 2j)[::2].real.numpy())


@pytest.mark.parametrize("op", [lambda z: z.relu(), lambda z: z.erf(), lambda z: z.maximum(z),
                                lambda z: z.softmax(-1), lambda z: z < 1, lambda z: z >= z,
                                lambda z: z.sort(), lambda z: z.topk(1), lambda z: z.argmax(),
                                lambda z: z.argmin(0), lambda z: z.max(), lambda z: z.sign(),
                                lambda z: z.clamp(0, 1), lambda z: z.lgamma()])
def test_ops_not_made_complex_aware_refuse(op):
    z = mg.tensor(_z(3, dtype=np.complex64), requires_grad=True)
    with pytest.raises((NotImplementedError, TypeError, RuntimeError), match="complex"):
        op(z)


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match="complex: expected real and imag of one dtype"):
        mg.complex(mg.zeros(2), mg.zeros(2, dtype=mg.float64))
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        mg.zeros(2).imag
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        mg.tensor([1j], requires_grad=True).sum().backward()
    with pytest.raises(TypeError, match="mean"):
        mg.tensor([1, 2]).mean()


def test_repr_shows_complex_values():
    assert repr(mg.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"  # as PyTorch's
    assert repr(mg.tensor([1 + 2j], dtype=mg.complex128)) == \
        "tensor([1.+2.j], dtype=minigrad.complex128)"


def test_no_silent_cast_to_real(torch):
    """Functions that convert integers to floats pass complex tensors on (to compute them or
    to refuse them), never dropping the imaginary parts."""
    z = _z(4, dtype=np.complex64)
    for name in ("reciprocal", "cumsum"):
        got, want = [], []
        for lib, out in ((mg, got), (torch, want)):
            x = lib.tensor(z, requires_grad=True)
            y = x.reciprocal() if name == "reciprocal" else x.cumsum(0)
            (lib.view_as_real(y) * lib.tensor(np.arange(8.0, dtype=np.float32).reshape(4, 2))
             ).sum().backward()
            out += [y.detach().numpy(), x.grad.numpy()]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    for fn in (mg.erf, mg.erfinv, mg.lgamma, mg.digamma):
        with pytest.raises(NotImplementedError, match="not implemented for complex"):
            fn(mg.tensor(z))
    np.testing.assert_allclose(mg.gradient(mg.tensor(z))[0].numpy(),
                               torch.gradient(torch.tensor(z))[0].numpy(), rtol=1e-6)


def test_assert_close_compares_imaginary_parts():
    z = mg.tensor(_z(3, dtype=np.complex64))
    mg.testing.assert_close(z, z * (1 + 1e-7))
    with pytest.raises(AssertionError, match="not close"):
        mg.testing.assert_close(z, z.conj())


def test_double_backward_through_complex_refuses():
    z = mg.tensor(_z(3), requires_grad=True)
    loss = (z * z.conj()).real.sum() + z.abs().sum()
    with pytest.raises(RuntimeError, match="create_graph=True through complex tensors"):
        mg.autograd.grad(loss, [z], create_graph=True)
    (g,) = mg.autograd.grad((z * z.conj()).real.sum(), [z])  # first derivatives are there
    np.testing.assert_allclose(g.numpy(), 2 * z.detach().numpy())
