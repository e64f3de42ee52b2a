"""Tensors print as PyTorch's: str() and repr() of the same tensor give PyTorch's text, with the
module named `minigrad` where PyTorch's text names `torch` (`dtype=minigrad.float64`)."""
import math
import re

import numpy as np
import pytest

import minigrad as mg
from minigrad import printing


def as_minigrad(text):
    """PyTorch's text with its module's name replaced: the one difference allowed."""
    return re.sub(r"\btorch\.", "minigrad.", text)


@pytest.fixture(autouse=True)
def default_options(torch):
    yield
    for lib in (torch, mg):
        lib.set_printoptions(profile="default")
        lib.set_default_dtype(lib.float32)


def _rng():
    return np.random.default_rng(7)


def _uniform(*shape, scale=1.0):
    return ((_rng().random(shape) - 0.5) * 2 * scale).astype(np.float32)


# Each case builds a tensor from `lib` (torch or minigrad) alike; arrays are built once here.
ARRAYS = {
    "f32_1d": np.array([1.0, 2.5, -3.25], np.float32),
    "f32_whole": np.array([1.0, 2.0, -30.0], np.float32),
    "f32_2d": _uniform(3, 4),
    "f32_3d": _uniform(2, 3, 4, scale=10),
    "f32_4d": _uniform(2, 2, 2, 3),
    "f32_wide": _uniform(40, scale=100),
    "f32_sci_small": np.array([1e-5, 0.5, 2.0], np.float32),
    "f32_sci_large": np.array([1e9, 1.0, -2.5], np.float32),
    "f32_ratio": np.array([0.01, 100.0, 3.5], np.float32),
    "f32_exact_1e8": np.array([1e8, 1.0], np.float32),
    "f32_nonfinite": np.array([np.nan, np.inf, -np.inf, 1.5, 0.0], np.float32),
    "f32_nonfinite_whole": np.array([np.nan, -np.inf, 2.0], np.float32),
    "f32_only_nan": np.array([np.nan, np.nan], np.float32),
    "f32_zeros": np.zeros((2, 3), np.float32),
    "f32_negzero": np.array([-0.0, 0.0, 1.5], np.float32),
    "f32_negzero_whole": np.array([-0.0, 1.0], np.float32),
    "f32_tiny_rounding": np.array([9.99996, -0.00004, 1.0], np.float32),
    "f32_huge_exponent": np.array([1e-38, 3e38], np.float32),
    "f64": np.array([[1.0 / 3, -2.0], [1e3, 7.0]]),
    "f64_exp3": np.array([1e-300, 1.0, 1e300]),
    "f16": np.array([0.1, -2.5, 1000.0], np.float16),
    "i64": np.array([[1, -20], [300, 4]], np.int64),
    "i32": np.array([5, -6, 7], np.int32),
    "i16": np.array([-32768, 32767], np.int16),
    "i8": np.array([-128, 0, 127], np.int8),
    "u8": np.array([0, 255, 7], np.uint8),
    "u16": np.array([65535, 1], np.uint16),
    "u32": np.array([4294967295, 3], np.uint32),
    "u64": np.array([2 ** 63 + 5, 2], np.uint64),
    "bool": np.array([[True, False], [False, True]]),
    "bool_true": np.array([True, True]),
    "c64": np.array([1 + 2j, 3.25 - 1j, -0.5 + 0j], np.complex64),
    "c64_whole": np.array([1 + 2j, -3 - 4j], np.complex64),
    "c128_sci": np.array([1e-6 + 1e6j, 2 - 3j], np.complex128),
    "c64_negzero_imag": np.array([complex(1.0, -0.0), 2 + 1j], np.complex64),
    "big_f32": _uniform(1000, 1000),
    "big_i64": np.arange(2000, dtype=np.int64).reshape(40, 50),
    "big_1d": np.arange(1001, dtype=np.float32) / 7,
    "big_3d": _uniform(11, 12, 13, scale=1e5),
    "big_sci_edges": np.concatenate([[1e-7], np.ones(2000, np.float32), [5.0]]).astype(
        np.float32),
    "big_c64": (_uniform(30, 40) + 1j * _uniform(30, 40)).astype(np.complex64),
}

SCALARS = {"f32_0d": np.float32(3.25), "f32_0d_whole": np.float32(2.0),
           "f32_0d_sci": np.float32(1e-7), "f64_0d": np.float64(-0.5),
           "i64_0d": np.int64(-7), "u8_0d": np.uint8(9), "bool_0d": np.bool_(True),
           "c64_0d": np.complex64(1 - 2j), "nan_0d": np.float32(np.nan),
           "negzero_0d": np.float32(-0.0)}

EMPTY_SHAPES = [(0,), (0, 3), (2, 0), (0, 0, 4), (3, 0, 2)]


def _cases():
    for name, a in ARRAYS.items():
        yield name, (lambda lib, a=a: lib.tensor(a))
    for name, a in SCALARS.items():
        yield name, (lambda lib, a=a: lib.tensor(a))
    for shape in EMPTY_SHAPES:
        for dt in ("float32", "float64", "int64", "bool", "complex64"):
            yield f"empty_{shape}_{dt}", (
                lambda lib, shape=shape, dt=dt: lib.zeros(shape, dtype=getattr(lib, dt)))
    # non-contiguous: a transpose, a strided slice, an expand
    yield "transposed", lambda lib: lib.tensor(ARRAYS["f32_2d"]).t()
    yield "strided", lambda lib: lib.tensor(ARRAYS["f32_3d"])[:, ::2, 1::2]
    yield "expanded", lambda lib: lib.tensor(ARRAYS["i32"]).expand(3, 3)
    yield "big_transposed", lambda lib: lib.tensor(ARRAYS["big_f32"]).t()
    # autograd: leaves, graph results, a gradient, parameters
    yield "leaf", lambda lib: lib.tensor(ARRAYS["f32_1d"], requires_grad=True)
    yield "leaf_0d", lambda lib: lib.tensor(1.5, requires_grad=True)
    yield "leaf_f64", lambda lib: lib.tensor(ARRAYS["f64"], requires_grad=True)
    yield "mul", lambda lib: lib.tensor(ARRAYS["f32_1d"], requires_grad=True) * 2
    # graph results whose values are exact, so that the digits shown cannot differ
    yield "sum", lambda lib: (lib.tensor(ARRAYS["f32_whole"], requires_grad=True) ** 2).sum()
    yield "sum_dim", lambda lib: lib.tensor(ARRAYS["f32_2d"], requires_grad=True).sum(1)
    yield "mean", lambda lib: lib.tensor(ARRAYS["f32_2d"], requires_grad=True).mean()
    yield "mm", lambda lib: (lib.tensor(ARRAYS["f32_2d"], requires_grad=True)
                             @ lib.tensor(ARRAYS["f32_2d"]).t())
    yield "neg", lambda lib: -lib.tensor(ARRAYS["f32_3d"], requires_grad=True)
    yield "tanh_f64", lambda lib: lib.tensor(ARRAYS["f64"], requires_grad=True).tanh()
    yield "view", lambda lib: lib.tensor(ARRAYS["f32_2d"], requires_grad=True).view(-1)
    yield "select", lambda lib: lib.tensor(ARRAYS["f32_2d"], requires_grad=True)[0]
    yield "slice", lambda lib: lib.tensor(ARRAYS["f32_2d"], requires_grad=True)[1:]
    yield "softmax", lambda lib: lib.tensor(ARRAYS["f32_2d"], requires_grad=True).softmax(-1)
    yield "relu_big", lambda lib: lib.tensor(ARRAYS["big_f32"], requires_grad=True).relu()
    yield "grad", lambda lib: _grad_of(lib)
    yield "parameter", lambda lib: lib.nn.Parameter(lib.tensor(ARRAYS["f32_2d"]))
    yield "parameter_0d", lambda lib: lib.nn.Parameter(lib.tensor(2.0))
    yield "linear_weight", lambda lib: _linear(lib).weight
    yield "linear_out", lambda lib: _linear(lib)(lib.tensor(ARRAYS["f32_2d"]))


def _grad_of(lib):
    x = lib.tensor(ARRAYS["f32_2d"], requires_grad=True)
    (x * x).sum().backward()
    return x.grad


def _linear(lib):
    layer = lib.nn.Linear(4, 2)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(ARRAYS["f32_2d"][:2]))
        layer.bias.copy_(lib.tensor([0.5, -1.0]))
    return layer


CASES = dict(_cases())

OPTIONS = {
    "default": {},
    "short": dict(profile="short"),
    "full": dict(profile="full"),
    "precision_2": dict(precision=2),
    "precision_7": dict(precision=7),
    "precision_0": dict(precision=0),
    "threshold_5": dict(threshold=5),
    "edgeitems_1": dict(threshold=5, edgeitems=1),
    "edgeitems_0": dict(threshold=5, edgeitems=0),
    "linewidth_30": dict(linewidth=30),
    "linewidth_200": dict(linewidth=200),
    "sci_on": dict(sci_mode=True),
    "sci_off": dict(sci_mode=False),
    "short_sci": dict(profile="short", sci_mode=True, linewidth=50),
}

# every case under the default options; the smaller ones under every option too
_SMALL = [n for n in CASES if not n.startswith("big") and n not in ("relu_big",
                                                                     "big_transposed")]
PAIRS = ([(case, "default") for case in CASES]
         + [(case, opt) for opt in OPTIONS if opt != "default" for case in _SMALL]
         + [(case, opt) for opt in ("short", "full", "threshold_5", "edgeitems_1",
                                    "edgeitems_0", "sci_on", "linewidth_30")
            for case in ("big_i64", "big_1d", "big_3d", "big_c64", "big_sci_edges")])


@pytest.mark.parametrize("case,option", PAIRS)
def test_prints_as_pytorch(torch, case, option):
    for lib in (torch, mg):
        lib.set_printoptions(**OPTIONS[option])
    want, got = CASES[case](torch), CASES[case](mg)
    assert repr(got) == as_minigrad(repr(want))
    assert str(got) == as_minigrad(str(want))


@pytest.mark.parametrize("case", ["f32_1d", "f64", "c64", "f32_0d", "empty_(0, 3)_float64",
                                  "empty_(0,)_float32", "leaf_f64", "tanh_f64", "i64"])
def test_the_default_dtype_decides_which_dtype_is_named(torch, case):
    for lib in (torch, mg):
        lib.set_default_dtype(lib.float64)
    want, got = CASES[case](torch), CASES[case](mg)
    assert repr(got) == as_minigrad(repr(want))


def test_the_rule_replaces_only_the_module_name(torch):
    text = repr(torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert text == "tensor([1., 2.], dtype=torch.float64)"
    assert as_minigrad(text) == "tensor([1., 2.], dtype=minigrad.float64)"
    assert repr(mg.tensor([1.0, 2.0], dtype=mg.float64)) == as_minigrad(text)


def test_format_and_fstrings_as_pytorch(torch):
    for make in (lambda lib: lib.tensor(2.5), lambda lib: lib.tensor(3),
                 lambda lib: lib.tensor(True), lambda lib: lib.tensor([1.0, 2.0]),
                 lambda lib: lib.tensor(1.5, requires_grad=True) * 2,
                 lambda lib: lib.nn.Parameter(lib.tensor(1.5))):
        want, got = make(torch), make(mg)
        assert f"{got}" == as_minigrad(f"{want}") and format(got) == as_minigrad(format(want))
    assert f"{mg.tensor(2.0):.3f}" == f"{torch.tensor(2.0):.3f}" == "2.000"


def test_size_prints_as_pytorch(torch):
    for shape in [(2, 3), (), (5,), (0, 4)]:
        want, got = torch.zeros(shape).shape, mg.zeros(shape).shape
        assert str(got) == repr(got) == f"{got}" == as_minigrad(str(want))
        assert repr(got) == as_minigrad(repr(want))
    assert str(mg.zeros(2, 3).size()) == "minigrad.Size([2, 3])"


def test_graph_nodes_are_named_as_pytorch(torch):
    for make in (lambda lib, x: x * 2, lambda lib, x: x + x, lambda lib, x: x.sum(),
                 lambda lib, x: x.sum(0), lambda lib, x: x.mean(), lambda lib, x: x @ x.t(),
                 lambda lib, x: x[0] @ x[1], lambda lib, x: x.exp(), lambda lib, x: x.relu(),
                 lambda lib, x: x.reshape(-1), lambda lib, x: x.permute(1, 0),
                 lambda lib, x: x[0], lambda lib, x: x[:, 1:], lambda lib, x: x[[0, 1]],
                 lambda lib, x: x.softmax(-1), lambda lib, x: x.log_softmax(-1),
                 lambda lib, x: x.max(), lambda lib, x: x.amax(1), lambda lib, x: x.double(),
                 lambda lib, x: lib.cat([x, x]), lambda lib, x: x.tanh(),
                 lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2])),
                 lambda lib, x: lib.nn.functional.layer_norm(x, (4,))):
        want = make(torch, torch.tensor(ARRAYS["f32_2d"], requires_grad=True)).grad_fn
        got = make(mg, mg.tensor(ARRAYS["f32_2d"], requires_grad=True)).grad_fn
        assert got.name() == type(want).__name__
        assert re.fullmatch(rf"<{type(want).__name__} object at 0x[0-9a-f]+>", repr(got))


def test_a_users_function_is_named_without_a_digit(torch):
    class Twice(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class TorchTwice(torch.autograd.Function):
        forward, backward = Twice.forward, Twice.backward

    y = Twice.apply(mg.tensor([1.0], requires_grad=True))
    want = TorchTwice.apply(torch.tensor([1.0], requires_grad=True))
    assert y.grad_fn.name() == "TwiceBackward" and "TorchTwiceBackward" in repr(want)
    assert repr(y) == "tensor([2.], grad_fn=<TwiceBackward>)"


def test_a_subclass_prints_its_name(torch):
    def subclass(lib):
        return type("Mine", (lib.Tensor,), {})

    want, got = subclass(torch)([1.0, 2.5]), subclass(mg)([1.0, 2.5])
    assert repr(got) == as_minigrad(repr(want)) == "Mine([1.0000, 2.5000])"


def test_options_are_set_and_restored(torch):
    mg.set_printoptions(precision=2, threshold=10, edgeitems=1, linewidth=40, sci_mode=True)
    assert printing.get_printoptions() == dict(precision=2, threshold=10, edgeitems=1,
                                               linewidth=40, sci_mode=True)
    mg.set_printoptions(profile="full")
    assert printing.get_printoptions() == dict(precision=4, threshold=math.inf, edgeitems=3,
                                               linewidth=80, sci_mode=None)
    torch.set_printoptions(profile="full")
    assert printing.get_printoptions() == torch._tensor_str.get_printoptions()
    with printing.printoptions(precision=1):
        assert repr(mg.tensor([1.25])) == "tensor([1.2])"
    assert repr(mg.tensor([1.25])) == "tensor([1.2500])"
    with pytest.raises(ValueError, match="set_printoptions: profile must be one of"):
        mg.set_printoptions(profile="long")


def test_a_large_tensor_prints_summarized():
    text = repr(mg.zeros(1000, 1000))
    assert text.count("\n") == 6 and "..." in text  # three rows each end, and the dots
    assert len(repr(mg.arange(10 ** 6))) < 200


def test_named_results_print_as_pytorchs_with_minigrad_module(torch):
    x = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], np.float32)
    calls = [lambda lib, t: lib.topk(t, 2), lambda lib, t: lib.sort(t[0], descending=True),
             lambda lib, t: t.max(1), lambda lib, t: lib.linalg.slogdet(t[:, :2]),
             lambda lib, t: lib.frexp(t[0]), lambda lib, t: lib.aminmax(t)]
    for call in calls:
        want = repr(call(torch, torch.tensor(x)))
        got = repr(call(mg, mg.tensor(x)))
        assert got == want.replace("torch.", "minigrad."), (got, want)
    assert mg.topk(mg.tensor(x), 2).values.shape == (2, 2)  # still a named tuple
