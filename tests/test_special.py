"""erf, erfc, erfinv, log2, log10 and exp2 (minigrad/special.py) against PyTorch: float64
values to within a few units in the last place over their whole range (tails, +-inf, NaN,
tiny and huge arguments), every float dtype, integer inputs, gradients of first and second
order, and the in-place forms."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

RNG = np.random.default_rng(5)
EDGES = [0.0, -0.0, 1e-310, -1e-300, 1e-8, 0.5, 0.999, 1.0, 1.0000001, 1.5, 2.0, 5.9, 26.5,
         27.3, 1e200, np.inf, -np.inf, np.nan]
X = np.concatenate([RNG.uniform(-6, 6, 4000), RNG.uniform(0.9, 1.1, 500), EDGES,
                    -RNG.uniform(0, 30, 500), RNG.standard_normal(500) * 1e-4])
Y = np.concatenate([RNG.uniform(-1, 1, 4000), 1 - 10.0 ** -RNG.uniform(1, 16, 300),
                    -1 + 10.0 ** -RNG.uniform(1, 15, 300),
                    [0.0, 1e-300, 0.5, 1.0, -1.0, 1 - 2 ** -53, 1.5, -2.0, np.nan]])
POSITIVE = np.concatenate([RNG.uniform(0, 10, 2000), 10.0 ** RNG.uniform(-300, 300, 1000),
                           [1, 2, 8, 1024, 2 ** -1074, 10, 1000, 1e-5, 0.0, np.inf, -1.0]])

# name: (inputs, the relative error allowed in float64 against PyTorch)
FUNCTIONS = {"erf": (X, 5e-16), "erfc": (X, 2e-15), "erfinv": (Y, 2e-15),
             "log2": (POSITIVE, 0), "log10": (POSITIVE, 0), "exp2": (X * 40, 0)}


def _relative(got, want):
    with np.errstate(all="ignore"):
        err = np.abs(got - want) / np.abs(want)
    err[(got == want) | (np.isnan(got) & np.isnan(want))] = 0
    return err


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_float64_values_as_pytorchs(torch, name):
    x, rtol = FUNCTIONS[name]
    want = getattr(torch, name)(torch.tensor(x)).numpy()
    with np.errstate(all="ignore"):
        got = getattr(mg, name)(mg.tensor(x)).numpy()
    err = _relative(got, want)
    # log2, log10 and exp2 are NumPy's (the C library's), PyTorch's are its own: one ulp
    assert err.max() <= max(rtol, 2.3e-16), (x[err.argmax()], got[err.argmax()],
                                              want[err.argmax()])
    assert (np.isnan(got) == np.isnan(want)).all() and (got[np.isinf(want)] ==
                                                        want[np.isinf(want)]).all()


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "bool"])
def test_other_dtypes_and_layouts(torch, name, dtype):
    """float16, float32 within one unit of their last place; integers and bools compute in
    the default dtype; 0-d, empty and transposed inputs keep their shapes."""
    base, _ = FUNCTIONS[name]
    x = np.clip(base[:600], -60, 60).reshape(20, 30).astype(dtype)
    for arr in (x, x.T, x[0, 0], x[:0]):
        want = getattr(torch, name)(torch.tensor(arr)).numpy()
        with np.errstate(all="ignore"):
            got = getattr(mg.tensor(arr), name)().numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        tiny = np.finfo(want.dtype).tiny
        np.testing.assert_allclose(got, want, rtol=2 * np.finfo(want.dtype).eps,
                                   atol=tiny, equal_nan=True)


@pytest.mark.parametrize("name, low, high", [("erf", -3, 3), ("erfc", -3, 3),
                                             ("erfinv", -0.99, 0.99), ("log2", 0.1, 4),
                                             ("log10", 0.1, 4), ("exp2", -3, 3)])
def test_gradients_of_first_and_second_order(torch, name, low, high):
    x = np.linspace(low, high, 7)
    x_mg = mg.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: getattr(t, name)(), [x_mg])
    grads = []
    for lib, leaf in ((torch, torch.tensor(x, requires_grad=True)), (mg, x_mg)):
        (g,) = lib.autograd.grad(getattr(lib, name)(leaf).sum(), [leaf], create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), [leaf])
        grads.append((g.detach().numpy(), gg.numpy()))
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_forward_mode(torch):
    """The tangent of an elementwise function along ones is its derivative: PyTorch's
    reverse-mode gradient of the sum (its forward mode takes seconds to set up)."""
    x = np.linspace(-0.9, 0.9, 5)
    fw = mg.autograd.forward_ad
    for name in FUNCTIONS:
        with fw.dual_level():
            out = getattr(mg, name)(fw.make_dual(mg.tensor(x), mg.ones(5, dtype=mg.float64)))
            tangent = fw.unpack_dual(out).tangent.numpy()
        leaf = torch.tensor(x, requires_grad=True)
        getattr(torch, name)(leaf).sum().backward()
        np.testing.assert_allclose(tangent, leaf.grad.numpy(), rtol=1e-12)


def test_in_place_forms(torch):
    for name in FUNCTIONS:
        results = []
        for lib in (torch, mg):
            x = lib.tensor(np.linspace(0.1, 0.9, 6).reshape(2, 3), requires_grad=True)
            h = x * 1
            getattr(h.t(), name + "_")()
            h.sum().backward()
            results.append((h.detach().numpy(), x.grad.numpy()))
            with pytest.raises(RuntimeError, match="can't be cast"):
                getattr(lib.tensor([1, 2]), name + "_")()
        for got, want in zip(results[1], results[0]):
            np.testing.assert_allclose(got, want, rtol=1e-14)


def test_erf_exports_to_onnx_as_erf():
    """A GELU written out with erf, as PyTorch code often has it, exports to one Erf node."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import io

    import minigrad.onnx

    class Gelu(mg.nn.Module):
        def forward(self, x):
            return x * 0.5 * (1.0 + mg.erf(x / np.sqrt(2.0)))

    buf = io.BytesIO()
    minigrad.onnx.export(Gelu(), (mg.randn(3, 4),), buf)
    proto = onnx.load_from_string(buf.getvalue())
    assert [n.op_type for n in proto.graph.node].count("Erf") == 1
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    x = mg.tensor(np.linspace(-4, 4, 12, dtype=np.float32).reshape(3, 4))
    (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    np.testing.assert_allclose(got, Gelu()(x).numpy(), rtol=1e-6, atol=1e-7)
