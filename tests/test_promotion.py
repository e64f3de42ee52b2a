"""Type promotion against PyTorch: the dtype and the values of + - * / and comparisons for
every pair of dtypes and operand kinds (dimensioned tensor, 0-d tensor, Python number), and
backward through graphs that mix dtypes."""
import itertools
import operator

import numpy as np
import pytest

import minigrad as mg

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
       "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
       "gt": operator.gt, "ge": operator.ge}
SCALARS = {"True": True, "3": 3, "2.5": 2.5}


def _values(dtype, ndim):
    """Small values every dtype holds exactly (no overflow, no division by zero)."""
    vals = np.array([1, 0, 1] if dtype == "bool" else [3, 1, 2]).astype(dtype)
    return vals if ndim else vals[0]


def _pair(torch, kind, dtype, ndim_or_scalar):
    """The same operand for minigrad and for torch."""
    if kind == "scalar":
        return ndim_or_scalar, ndim_or_scalar
    arr = _values(dtype, ndim_or_scalar)
    return mg.tensor(np.array(arr)), torch.tensor(np.array(arr))


def _run(torch, op, a, b):
    (ma, ta), (mb, tb) = a, b
    with np.errstate(all="ignore"):  # 1 / 0 and 0 / 0: PyTorch does not warn
        return _run_quietly(torch, op, ma, ta, mb, tb)


def _run_quietly(torch, op, ma, ta, mb, tb):
    try:
        expected = op(ta, tb)
    except (RuntimeError, TypeError) as e:  # e.g. bool - bool
        with pytest.raises((RuntimeError, TypeError, ValueError)):
            op(ma, mb)
        return str(e)
    got = op(ma, mb)
    assert str(got.dtype) == str(expected.dtype).replace("torch.", ""), (got.dtype, expected.dtype)
    tol = 1e-3 if "float16" in str(got.dtype) else 1e-6
    np.testing.assert_allclose(got.numpy().astype(np.float64),
                               expected.numpy().astype(np.float64), rtol=tol)
    return None


@pytest.mark.parametrize("name", list(OPS))
def test_tensor_pairs_like_torch(torch, name):
    op, checked = OPS[name], 0
    for da, db in itertools.product(DTYPES, DTYPES):
        for na, nb in ((1, 1), (1, 0), (0, 1), (0, 0)):  # dimensioned or 0-d, each side
            _run(torch, op, _pair(torch, "tensor", da, na), _pair(torch, "tensor", db, nb))
            checked += 1
    assert checked == 4 * len(DTYPES) ** 2


@pytest.mark.parametrize("name", list(OPS))
def test_tensor_with_python_number_like_torch(torch, name):
    op = OPS[name]
    for dtype, ndim, scalar in itertools.product(DTYPES, (1, 0), SCALARS):
        t = _pair(torch, "tensor", dtype, ndim)
        s = _pair(torch, "scalar", None, SCALARS[scalar])
        _run(torch, op, t, s)
        _run(torch, op, s, t)


def test_result_type_and_promote_types_like_torch(torch):
    for da, db in itertools.product(DTYPES, DTYPES):
        expected = torch.promote_types(getattr(torch, da), getattr(torch, db))
        assert str(mg.promote_types(np.dtype(da), np.dtype(db))) == str(expected)[6:]
        for na, nb in ((1, 0), (0, 1), (0, 0)):
            ma, ta = _pair(torch, "tensor", da, na)
            mb, tb = _pair(torch, "tensor", db, nb)
            assert str(mg.result_type(ma, mb)) == str(torch.result_type(ta, tb))[6:]
        for scalar in SCALARS.values():
            ma, ta = _pair(torch, "tensor", da, 1)
            assert str(mg.result_type(ma, scalar)) == str(torch.result_type(ta, scalar))[6:]


def test_promotion_examples():
    x = mg.tensor([1.0, 2.0])
    n = mg.tensor([2, 4])
    assert (x / n).dtype == np.float32            # NumPy would say float64
    assert (n * 0.5).dtype == np.float32          # the default float dtype
    assert (n / n).dtype == np.float32            # true division of integers
    assert (x * np.float64(2.0)).dtype == np.float32  # a NumPy scalar is a Python number
    assert (x * mg.tensor(2.0, dtype=mg.float64)).dtype == np.float32  # 0-d: same category
    assert (n * mg.tensor(2.0, dtype=mg.float64)).dtype == np.float64  # 0-d: higher category
    assert mg.get_default_dtype() is mg.float32
    assert mg.result_type(n, 2.5) == np.float32 and mg.promote_types(mg.int64, mg.float16) == np.float16


def test_promotion_errors_name_the_op():
    with pytest.raises(TypeError, match="mul: cannot compute with a str"):
        mg.tensor([1.0]) * "a"
    with pytest.raises(TypeError, match="promote_types: uint64 and int64 have no common"):
        mg.promote_types(np.uint64, np.int64)
    assert (mg.tensor([1.0]) == None) is False  # noqa: E711  (as in PyTorch)


def test_where_cat_stack_promote_like_torch(torch):
    a32, a64 = np.array([1.0, -2.0], np.float32), np.array([0.5, 4.0])
    i64, cond = np.array([3, 4]), np.array([True, False])
    for lib in (mg, torch):
        t32, t64, ti = lib.tensor(a32), lib.tensor(a64), lib.tensor(i64)
        c = lib.tensor(cond)
        got = [lib.where(c, t32, t64), lib.where(c, ti, 0.5), lib.where(c, t32, 0.0),
               lib.cat([t32, ti]), lib.cat([t32, t64]), lib.stack([ti, t32])]
        if lib is mg:
            ours = got
        else:
            theirs = got
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype)[6:]
        np.testing.assert_allclose(o.numpy(), t.numpy())


def test_mixed_dtype_backward_like_torch(torch):
    # float32 / int64 must stay float32: a float64 result reached log_softmax's float32 kernel
    # in the backward, which failed there, far from the division
    a = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
    n = np.array([2, 4, 8])
    w = np.array([[0.1], [-0.2], [0.3]])
    grads = {}
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        w64 = lib.tensor(w, requires_grad=True)
        k = lib.tensor(n)
        h = (x / k).log_softmax(-1)                 # float32
        y = (h * 2 + k * 0.5) @ w64.float()         # int64 * 0.5 is float32
        z = (y.double() * w64.sum() + x.sum(1, keepdim=True)).sum()  # float64 + float32
        assert str(z.dtype).endswith("float64")
        z.backward()
        grads[lib.__name__] = (x.grad.numpy(), w64.grad.numpy(), str(x.grad.dtype),
                               str(w64.grad.dtype))
    (gx, gw, dx, dw), (tx, tw, tdx, tdw) = grads["minigrad"], grads["torch"]
    assert (dx, dw) == ("float32", "float64") and tdx.endswith("float32") and tdw.endswith("float64")
    np.testing.assert_allclose(gx, tx, rtol=1e-5)
    np.testing.assert_allclose(gw, tw, rtol=1e-5)


def test_mixed_dtype_gradcheck():
    from minigrad.autograd import gradcheck
    x = mg.tensor(np.array([0.5, -1.5, 2.0]), requires_grad=True)   # float64
    k = mg.tensor(np.array([1, 2, 3]))                               # int64
    assert gradcheck(lambda t: (t / k + k * 0.25 - t * k) ** 2, [x])


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64"])
@pytest.mark.parametrize("name", ["add", "sub", "mul"])
def test_index_arithmetic_without_a_node_is_the_ops(dtype, name):
    # integer tensor with a Python int (`i + block_size`) skips Op.apply; the op's own
    # forward (the path an apply hook, such as the ONNX tracer's, keeps) gives the same values,
    # dtype and errors, 0-d or not, at the edges of the dtype too
    from minigrad import ops
    from minigrad.autograd.op import add_apply_hook
    op = {"add": ops.Add, "sub": ops.Sub, "mul": ops.Mul}[name]
    info = np.iinfo(dtype)
    for values in (np.array(7, dtype), np.array([0, 1, info.max, info.min], dtype)):
        for number in (3, -2, 0, int(info.max)):
            seen = []
            handle = add_apply_hook(lambda cls, args, kwargs, out: seen.append(cls))
            try:
                with np.errstate(all="ignore"):
                    hooked = _outcome(lambda: OPS[name](mg.tensor(values), number))
            finally:
                handle.remove()
            with np.errstate(all="ignore"):
                fast = _outcome(lambda: OPS[name](mg.tensor(values), number))
            assert seen[-1:] == [op] or isinstance(hooked, type)
            assert type(fast) is type(hooked)
            if isinstance(fast, tuple):
                assert fast[1] == hooked[1] and fast[2] == hooked[2] and not fast[0]
                np.testing.assert_array_equal(fast[3], hooked[3])


def _outcome(fn):
    """(requires_grad, dtype, shape, values) of fn's tensor, or its exception's type."""
    try:
        t = fn()
    except Exception as e:   # noqa: BLE001 (the two paths must raise alike)
        return type(e)
    return t.requires_grad, t.dtype, t.shape, t.numpy()


def test_tensor_infers_the_dtype_of_numpy_scalars_beside_python_numbers_like_torch(torch):
    """NumPy makes float64 of every mix of floats; PyTorch gives a Python float the default
    dtype and a NumPy scalar its own, promoted together."""
    for data in [np.float64(3.0), [np.float64(1.0)], [1.0, np.float64(2.0)],
                 [np.float32(1.0), 2.0], [np.float64(1.0), np.float32(2.0)],
                 [np.float32(1.0), 2], [np.int32(1), 2.5], (np.float64(1.0),),
                 [np.complex128(1j), 1.0], np.complex128(1j), [np.float16(1.0)], [True, 2.0],
                 [[1.0], [np.float64(2.0)]], [1.0, 2.0], 1j, [], [[], []], np.float16(1.0)]:
        ours, theirs = mg.tensor(data).dtype, torch.tensor(data).dtype
        assert str(ours).split(".")[-1] == str(theirs).split(".")[-1], data
    assert mg.tensor([mg.tensor(1.0, dtype=mg.float64), 2.0]).dtype == mg.float64


@pytest.mark.parametrize("expr", ["h + 1000", "h - 1000", "1000 - h", "h * 200", "h // 1000",
                                  "h % 1000", "h.add(300)", "h < 300", "h == 1000", "u - 300",
                                  "u * 1000", "h + 1000.0"])
def test_python_int_outside_an_integer_dtype_wraps_like_pytorch(torch, expr):
    # PyTorch converts the number to the tensor's dtype (wrapping); NumPy refuses it
    got = eval(expr, {"h": mg.tensor([1, 2, 100, -7], dtype=mg.int8),
                      "u": mg.tensor([1, 2, 250], dtype=mg.uint8)})
    want = eval(expr, {"h": torch.tensor([1, 2, 100, -7], dtype=torch.int8),
                       "u": torch.tensor([1, 2, 250], dtype=torch.uint8)})
    assert got.tolist() == want.tolist()
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", None])
def test_finfo_gives_python_floats_as_pytorch(torch, dtype):
    got = mg.finfo() if dtype is None else mg.finfo(getattr(mg, dtype))
    want = torch.finfo() if dtype is None else torch.finfo(getattr(torch, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert str(getattr(got, field)) == str(getattr(want, field)), field
    assert repr(got) == repr(want)


@pytest.mark.parametrize("expr", ["x.clamp(max=1.5)", "x.clamp(min=1.5, max=2)",
                                  "b.clamp(min=0.5)", "x.clip(max=1.5)", "x.clamp_max(1.5)",
                                  "f.clamp(max=L.tensor(1.5, dtype=L.float64))",
                                  "x.clamp(max=L.tensor([1.5, 2.5, 0.5]))", "h.clamp(max=1.5)",
                                  "L.clamp(x, 0.5, 2.5)", "x.clamp(max=2)"])
def test_clamp_gives_the_promoted_dtype(torch, expr):
    def run(L):
        env = {"L": L, "x": L.tensor([1, 2, 3]), "b": L.tensor([True, False]),
               "f": L.tensor([1.0, 2.0, 3.0]), "h": L.tensor([1.0, 2.0, 3.0], dtype=L.float16)}
        return eval(expr, env)
    got, want = run(mg), run(torch)
    assert got.tolist() == want.tolist()
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")


def test_clamp_to_a_wider_bound_passes_the_gradient_in_the_input_dtype():
    x = mg.tensor([0.5, 2.0, 3.0], requires_grad=True)
    y = x.clamp(max=mg.tensor(2.5, dtype=mg.float64))
    y.sum().backward()
    assert y.dtype == mg.float32 and x.grad.dtype == mg.float32
    assert x.grad.tolist() == [1.0, 1.0, 0.0]


def test_clamp_to_tensor_bounds_gives_them_pytorchs_gradients(torch):
    grads = []
    for L in (mg, torch):
        x = L.tensor([0.5, 2.0, 3.0, 1.0, 2.5], requires_grad=True)
        lo = L.tensor([1.0, 1.0, 1.0, 1.0, 0.0], requires_grad=True)
        hi = L.tensor(2.5, requires_grad=True)
        y = L.clamp(x, lo, hi)
        (y * L.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
        grads.append([y.tolist(), x.grad.tolist(), lo.grad.tolist(), hi.grad.tolist()])
    assert grads[0] == grads[1]


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_as_pytorch(torch, dtype):
    got, want = mg.iinfo(getattr(mg, dtype)), torch.iinfo(getattr(torch, dtype))
    assert (got.bits, got.min, got.max, got.dtype, repr(got)) == (
        want.bits, want.min, want.max, want.dtype, repr(want))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_trunc_division_of_integers_is_exact_in_their_dtype(dtype):
    torch = pytest.importorskip("torch")
    a = [5, -7, 7, -5, 6, -6, 0, 100, -100]
    b = [2, 2, -2, -2, 3, 4, 7, -7, 9]
    for lib in (mg, torch):
        got = lib.div(lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(
            lib, dtype)), rounding_mode="trunc")
        assert got.tolist() == [int(x / y) for x, y in zip(a, b)]
        assert str(got.dtype).endswith(dtype)
    # a float quotient would lose the low bits of a large int64
    big = mg.div(mg.tensor([2**60 + 1, -(2**60) - 1]), 3, rounding_mode="trunc")
    assert big.tolist() == torch.div(torch.tensor([2**60 + 1, -(2**60) - 1]), 3,
                                     rounding_mode="trunc").tolist()


@pytest.mark.parametrize("call", [lambda L: L.div(L.tensor([5, 3]), 0, rounding_mode="trunc"),
                                  lambda L: L.div(L.tensor([5, 3]), 0, rounding_mode="floor"),
                                  lambda L: L.tensor([5, 3]) % L.tensor([1, 0]),
                                  lambda L: L.fmod(L.tensor([5]), 0)])
def test_an_integer_division_by_zero_is_pytorchs_runtime_error(call):
    torch = pytest.importorskip("torch")
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            call(lib)
    with pytest.raises(ZeroDivisionError):  # and still the type minigrad raised before
        call(mg)
