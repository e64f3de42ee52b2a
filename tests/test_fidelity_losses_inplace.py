"""PyTorch's behaviour where minigrad differed: the loss dtype of
binary_cross_entropy_with_logits with mixed dtypes, the target dtypes cross_entropy and
nll_loss accept, the exceptions of a bad padding_idx and of F.linear on mixed dtypes, and the
in-place math methods (t.exp_(), t.addmm_(...)) with their gradients and errors."""
import itertools

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

FLOATS = ("float16", "float32", "float64")


def _pair(torch, array, dtype, grad=False):
    a = np.asarray(array).astype(dtype)
    return (torch.tensor(a, requires_grad=grad), mg.tensor(a, requires_grad=grad))


def _error(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001  (the comparison is which exception)
        return type(e), str(e)
    return None, ""


@pytest.mark.parametrize("x_dtype, t_dtype", list(itertools.product(FLOATS, FLOATS)))
def test_bce_with_logits_has_the_targets_dtype(torch, x_dtype, t_dtype):
    rng = np.random.default_rng(0)
    grad = x_dtype != "float16"  # PyTorch's float16 gradients round differently on the CPU
    xt, xm = _pair(torch, rng.normal(size=(3, 4)) * 3, x_dtype, grad)
    tt, tm = _pair(torch, rng.random((3, 4)), t_dtype)
    wt, wm = _pair(torch, rng.random(4) + 0.5, "float64")
    for kw_t, kw_m in (({}, {}), ({"pos_weight": wt}, {"pos_weight": wm}),
                       ({"weight": wt, "reduction": "none"}, {"weight": wm, "reduction": "none"})):
        want = torch.nn.functional.binary_cross_entropy_with_logits(xt, tt, **kw_t)
        got = mg.nn.functional.binary_cross_entropy_with_logits(xm, tm, **kw_m)
        assert str(got.dtype) == str(want.dtype).replace("torch.", "")
        tol = 2e-3 if "float16" in (x_dtype, t_dtype) else 1e-5
        np.testing.assert_allclose(got.detach().numpy().astype(float),
                                   want.detach().numpy().astype(float), rtol=tol, atol=tol)
        if grad:
            for x in (xt, xm):
                x.grad = None
            want.sum().backward()
            got.sum().backward()
            assert xm.grad.dtype == np.dtype(x_dtype)
            np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("t_dtype", ["int64", "bool"])
def test_bce_with_logits_refuses_a_target_that_cannot_hold_the_loss(torch, t_dtype):
    xt, xm = _pair(torch, [0.5, -1.0], "float32")
    tt, tm = _pair(torch, [1, 0], t_dtype)
    assert _error(torch.nn.functional.binary_cross_entropy_with_logits, xt, tt)[0] is RuntimeError
    with pytest.raises(RuntimeError, match=f"binary_cross_entropy_with_logits: .*{t_dtype}"):
        mg.nn.functional.binary_cross_entropy_with_logits(xm, tm)


def test_bce_with_logits_gradcheck_with_a_float32_target():
    x = mg.tensor(np.linspace(-3, 3, 6), requires_grad=True)
    t = mg.tensor(np.linspace(0, 1, 6), dtype=mg.float32)
    assert mg.nn.functional.binary_cross_entropy_with_logits(x.double(), t).dtype == np.float32
    # the gradient reaches x in its own dtype through the cast
    assert gradcheck(lambda x: mg.nn.functional.binary_cross_entropy_with_logits(
        x, t.double(), pos_weight=mg.tensor([2.0]), reduction="none"), [x])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 2)])
def test_class_ids_of_long_or_byte_only(torch, dtype, loss, shape):
    """uint8 ids are taken for (N, C) inputs only, as by PyTorch's kernels."""
    rng = np.random.default_rng(1)
    xt, xm = _pair(torch, rng.normal(size=shape), "float32", grad=True)
    tt, tm = _pair(torch, rng.integers(0, 2, shape[:1] + shape[2:]), dtype)
    want_error, _ = _error(getattr(torch.nn.functional, loss), xt, tt)
    got_error, message = _error(getattr(mg.nn.functional, loss), xm, tm)
    assert got_error is want_error
    if want_error is None:
        want = getattr(torch.nn.functional, loss)(xt, tt)
        got = getattr(mg.nn.functional, loss)(xm, tm)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    else:
        assert f"{loss}: expected target dtype to be Long" in message
        assert dtype in message


@pytest.mark.parametrize("padding_idx", [5, -6, 10])
def test_padding_idx_out_of_range_is_an_assertion_error(torch, padding_idx):
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        torch.nn.Embedding(5, 2, padding_idx=padding_idx)
    with pytest.raises(AssertionError, match=f"Embedding: padding_idx {padding_idx}, "
                                             f"num_embeddings 5"):
        mg.nn.Embedding(5, 2, padding_idx=padding_idx)
    with pytest.raises(AssertionError, match=f"embedding: padding_idx {padding_idx}"):
        mg.nn.functional.embedding(mg.tensor([0, 1]), mg.ones(5, 2), padding_idx=padding_idx)


def test_negative_padding_idx_counts_from_the_end(torch):
    w = np.arange(10.0).reshape(5, 2)
    for lib in (torch, mg):
        table = lib.tensor(w, requires_grad=True)
        lib.nn.functional.embedding(lib.tensor([4, 1, 4]), table, padding_idx=-1).sum().backward()
        assert table.grad.numpy()[:, 0].tolist() == [0, 1, 0, 0, 0]
    assert mg.nn.Embedding(5, 2, padding_idx=-2).padding_idx == 3


@pytest.mark.parametrize("dtypes", [("float32", "float64", None), ("float64", "float32", None),
                                    ("float16", "float32", None),
                                    ("float32", "float32", "float64")])
def test_linear_on_mixed_dtypes_is_a_runtime_error(torch, dtypes):
    x_dtype, w_dtype, b_dtype = dtypes
    args = [np.ones((2, 3), x_dtype), np.ones((4, 3), w_dtype)]
    if b_dtype:
        args.append(np.ones(4, b_dtype))
    for lib in (torch, mg):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.linear(*map(lib.tensor, args))
    assert "linear: expected input, weight and bias to have the same dtype" in str(info.value)
    assert all(d in str(info.value) for d in dtypes if d)
    layer = mg.nn.Linear(3, 4).double()
    with pytest.raises(RuntimeError, match="input float32, weight float64"):
        layer(mg.ones(2, 3))


# --- in-place math ------------------------------------------------------------------------------

UNARY = ["abs_", "neg_", "exp_", "expm1_", "log_", "log1p_", "sqrt_", "rsqrt_", "sigmoid_",
         "tanh_", "sin_", "cos_", "reciprocal_", "square_", "sign_", "floor_", "round_"]


@pytest.mark.parametrize("name", UNARY)
def test_in_place_math_matches_pytorch_through_a_view(torch, name):
    """A write into a column view of a graph node: values, the version, and the gradient of
    the whole tensor (the written column through the op, the rest untouched)."""
    rng = np.random.default_rng(2)
    leaf = rng.uniform(0.2, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    if name in ("log_", "log1p_", "sqrt_", "rsqrt_"):
        leaf = np.abs(leaf)
    results = []
    for lib in (torch, mg):
        x = lib.tensor(leaf, requires_grad=True)
        h = x * 2
        out = getattr(h[:, 1], name)()
        assert out is not h  # the view itself is returned, as PyTorch's
        assert h._version == 1
        (h * lib.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
        results.append((h.detach().numpy().copy(), x.grad.numpy().copy()))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, args", [("exp_", ()), ("sigmoid_", ()), ("pow_", (3,)),
                                        ("clamp_min_", (0.1,)), ("tanh_", ())])
def test_in_place_math_gradcheck(name, args):
    x = mg.tensor(np.linspace(-1.5, 1.7, 6).reshape(2, 3), requires_grad=True)
    assert gradcheck(lambda x: getattr(x * 1.5, name)(*args) * x, [x])


def test_addmm_and_baddbmm_in_place_gradcheck():
    rng = np.random.default_rng(3)
    c, a, b = (mg.tensor(rng.normal(size=s), requires_grad=True) for s in ((3, 2), (3, 4), (4, 2)))
    assert gradcheck(lambda c, a, b: (c * 1).addmm_(a, b, beta=0.5, alpha=-2), [c, a, b])
    a3, b3 = (mg.tensor(rng.normal(size=s), requires_grad=True) for s in ((2, 3, 4), (2, 4, 2)))
    assert gradcheck(lambda c, a, b: (c.expand(2, 3, 2) * 1).baddbmm_(a, b, beta=0), [c, a3, b3])


def test_in_place_math_errors_as_pytorch(torch):
    for lib in (torch, mg):
        leaf = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            leaf.sigmoid_()
        h = leaf * 2
        y = h * h  # saves h, which the write then changes
        h.exp_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            lib.tensor([1, 2]).log1p_()
        with pytest.raises(RuntimeError):
            lib.ones(3).baddbmm_(lib.ones(1, 3, 2), lib.ones(1, 2, 3))
        with lib.no_grad():  # an optimizer's update of a leaf
            assert leaf.mul_(4).sqrt_() is leaf and leaf.tolist() == [2.0, 2.0]
