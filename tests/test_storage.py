"""The raw-memory API against PyTorch: `data_ptr()` and aliasing, `untyped_storage()` and
`storage()` (sizes, bytes, elements, writes through them), `is_set_to`, `set_`,
`as_strided` (values, views, gradients where elements overlap, errors) and `as_strided_`,
`resize_` and `resize_as_`."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

DTYPES = ["float32", "float64", "int64", "int32", "int16", "uint8", "bool"]

VIEWS = {
    "plain": lambda t: t,
    "reshaped": lambda t: t.view(6, 4),
    "row": lambda t: t[1],
    "sliced": lambda t: t[1:, ::2, 1:3],
    "transposed": lambda t: t.transpose(0, 2),
    "element": lambda t: t[1, 2, 3],
    "expanded": lambda t: t[:, :1].expand(2, 3, 4),
    "unfolded": lambda t: t.unfold(2, 2, 1),
    "narrowed": lambda t: t.narrow(2, 1, 2),
    "empty slice": lambda t: t[:, 3:],
}


def both(torch, dtype="float32", shape=(2, 3, 4)):
    base = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    return torch.tensor(base), mg.tensor(base)


def ptr_offset(v, base):
    return v.data_ptr() - base.data_ptr()


@pytest.mark.parametrize("view", list(VIEWS))
def test_data_ptr_and_storage_of_views(torch, view):
    for dtype in ("float32", "int16"):
        want, got = both(torch, dtype)
        w, g = VIEWS[view](want), VIEWS[view](got)
        if w.numel():  # NumPy does not move the start of an empty slice
            assert ptr_offset(g, got) == ptr_offset(w, want)
            assert g.storage_offset() == w.storage_offset()
        assert g.untyped_storage().data_ptr() == got.data_ptr()
        assert g.untyped_storage().nbytes() == w.untyped_storage().nbytes()
        assert g.untyped_storage().tolist() == w.untyped_storage().tolist()  # the same bytes


def test_data_ptr_tests_aliasing(torch):
    for lib in (torch, mg):
        t = lib.arange(6.0).reshape(2, 3)
        assert t.view(6).data_ptr() == t.data_ptr() == t.t().data_ptr() == t[0].data_ptr()
        assert t[1].data_ptr() == t.data_ptr() + 3 * t.element_size()
        assert t.clone().data_ptr() != t.data_ptr() and t.detach().data_ptr() == t.data_ptr()
        assert lib.empty(0).data_ptr() == 0 and lib.tensor(3.0).data_ptr() != 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_untyped_storage_bytes(torch, dtype):
    want, got = both(torch, dtype, (3, 4))
    s, w = got[1:].untyped_storage(), want[1:].untyped_storage()
    assert type(s).__name__ == type(w).__name__ == "UntypedStorage"
    assert s.size() == len(s) == s.nbytes() == w.nbytes() and s.element_size() == 1
    assert s.tolist() == w.tolist() and s[5] == w[5] and s[-1] == w[-1]
    assert isinstance(s[1:3], mg.UntypedStorage) and s[1:3].tolist() == w[1:3].tolist()
    s[0] = 1  # a write through the storage is seen by the tensor, as PyTorch's
    w[0] = 1
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(IndexError):
        s[len(s)]
    with pytest.raises(IndexError):
        w[len(w)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_typed_storage_elements(torch, dtype):
    want, got = both(torch, dtype, (3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, w = got.t()[1:].storage(), want.t()[1:].storage()
    assert s.size() == len(s) == w.size() == 12 and s.nbytes() == w.nbytes()
    assert s.element_size() == w.element_size() and str(s.dtype) == dtype
    assert s.tolist() == w.tolist() and s[-1] == w[-1] and type(s[3]) is type(w[3])
    assert s.data_ptr() == got.data_ptr() and list(s) == s.tolist()
    s[4], w[4] = 1, 1
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for lib_s in (s, w):
        with pytest.raises(RuntimeError):
            lib_s[1:3]
        with pytest.raises(RuntimeError):
            lib_s[1.0]
        with pytest.raises(IndexError):
            lib_s[12]


def test_storage_warns_deprecated_once_and_fills():
    import minigrad.storage as storage
    storage._warned[0] = False
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        mg.zeros(2).storage()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = mg.zeros(2, 2).storage()
    t = mg.zeros(2, 2)
    t.untyped_storage().fill_(0)
    t.storage().fill_(3)
    assert t.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    u = mg.ones(2, 2)
    t.untyped_storage().copy_(u.untyped_storage())
    assert t.tolist() == u.tolist() and s.is_shared() is False
    assert mg.UntypedStorage(3).tolist() == [0, 0, 0]
    assert mg.UntypedStorage([1, 2]).tolist() == [1, 2]
    assert mg.TypedStorage([1, 2], dtype=mg.int64).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="size mismatch"):
        t.untyped_storage().copy_(mg.ones(3).untyped_storage())


def test_is_set_to(torch):
    for lib in (torch, mg):
        t = lib.arange(6.0).reshape(2, 3)
        cases = [t.is_set_to(t), t.view(2, 3).is_set_to(t), t.view(6).is_set_to(t),
                 t[1:].is_set_to(t), t.t().t().is_set_to(t), t.clone().is_set_to(t),
                 t.detach().is_set_to(t)]
        assert cases == [True, True, False, False, True, False, True], lib.__name__


def set_program(lib):
    y = lib.arange(6.0)
    x = lib.zeros(3)
    out = [x.set_(y).tolist(), x.data_ptr() == y.data_ptr(), x.is_set_to(y)]
    x.set_(y.untyped_storage(), 2, (2, 2), (1, 2))
    out += [x.tolist(), x.stride(), x.storage_offset()]
    x[0, 0] = 10.0  # writes reach y's memory
    out += [y.tolist(), x.set_().shape == (0,), x.tolist()]
    x.set_(y[1:].untyped_storage())  # a storage is all of the memory, not the view's part
    out += [x.tolist()]
    x.set_(y.untyped_storage()[8:], 1, (2,), (1,))  # from a slice of the storage
    out += [x.tolist()]
    return out


def test_set_as_in_pytorch(torch):
    assert set_program(mg) == set_program(torch)
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="Could not set tensor of type"):
            lib.zeros(3).set_(lib.ones(2, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="out of bounds for storage of size 8"):
            lib.zeros(3).set_(lib.ones(2).untyped_storage(), 1, (3,), (1,))
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.zeros(3, requires_grad=True).set_(lib.ones(2))
        leaf = lib.zeros(3, requires_grad=True)
        with lib.no_grad():
            leaf.set_(lib.ones(2))
        assert leaf.tolist() == [1.0, 1.0] and leaf.requires_grad and leaf.is_leaf


GEOMETRIES = [  # (size, stride, offset): overlapping, gapped, 0-d, empty, from a view's start
    ((3, 3), (1, 1), 0), ((2, 2), (3, 1), 1), ((2, 3), (0, 1), None), ((), (), 4),
    ((0, 2), (1, 1), 0), ((4,), (2,), None), ((2, 2, 2), (4, 0, 1), 2),
]


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
@pytest.mark.parametrize("view", ["plain", "row", "transposed", "sliced"])
def test_as_strided_values_as_in_pytorch(torch, geometry, dtype, view):
    size, stride, offset = geometry
    want, got = both(torch, dtype)
    w = VIEWS[view](want).as_strided(size, stride, offset)
    g = VIEWS[view](got).as_strided(size, stride, offset)
    assert g.shape == w.shape
    assert g.stride() == w.stride() or g.numel() == 0  # an empty one's: see compat_notes.py
    assert g.storage_offset() == w.storage_offset() and str(g.dtype) == dtype
    np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert ptr_offset(g, got) == ptr_offset(w, want) or g.numel() == 0
    assert mg.as_strided(VIEWS[view](got), size, stride, offset).tolist() == w.tolist()


def test_as_strided_is_a_view(torch):
    for lib in (torch, mg):
        t = lib.zeros(6)
        v = t.as_strided((2, 2), (1, 2), 1)
        v[1, 1] = 5.0  # memory element 1 + 1 + 2 = 4
        assert t.tolist() == [0, 0, 0, 0, 5, 0]
        assert v._version == t._version
        t.add_(1)
        assert v.tolist() == [[1.0, 1.0], [1.0, 6.0]]


GRAD_CASES = {
    "overlapping": (lambda x: x.as_strided((3, 3), (1, 1), 0), (6,)),
    "gapped": (lambda x: x.as_strided((2, 2), (3, 1), 1), (3, 3)),
    "of a transposed input": (lambda x: x.t().as_strided((2, 3), (1, 2), 0), (2, 3)),
    "of a view": (lambda x: x[1:].as_strided((2, 2), (1, 1)), (2, 3)),
    "of an expanded input": (lambda x: x.expand(2, 3).as_strided((2, 3), (0, 1)), (3,)),
    "reaching past the input": (lambda x: x[:2].as_strided((2,), (1,), 1), (3,)),
    "0-d": (lambda x: x.as_strided((), (), 2), (4,)),
    "empty": (lambda x: x.as_strided((0, 3), (3, 1), 0), (2, 3)),
}


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_as_strided_gradient_as_in_pytorch(torch, case):
    fn, shape = GRAD_CASES[case]
    base = np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape)
    grads = []
    for lib in (torch, mg):
        x = lib.tensor(base, requires_grad=True)
        y = fn(x)
        w = lib.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)))
        (y * y * w).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)
    if case != "reaching past the input":  # there the output reads memory the input does not
        # show, which central differences see and autograd (PyTorch's too) does not
        assert gradcheck(lambda a: fn(a) * 1.5, [mg.tensor(base, requires_grad=True)])


def test_as_strided_errors_as_in_pytorch(torch):
    calls = [
        ((3, 3), (3, 1), 0, "out of bounds for storage of size 24"),
        ((2,), (-1,), 0, "Negative strides are not supported"),
        ((2, 2), (1,), 0, "mismatch in length of strides and shape"),
        ((2,), (1,), -1, "invalid storage offset -1"),
        ((-2,), (1,), 0, "Storage size calculation overflowed"),
    ]
    for size, stride, offset, text in calls:
        for lib in (torch, mg):
            with pytest.raises(RuntimeError, match=text):
                lib.arange(6.0).as_strided(size, stride, offset)


def test_as_strided_in_place_as_in_pytorch(torch):
    out = []
    for lib in (torch, mg):
        x = lib.tensor(np.arange(6.0), requires_grad=True)
        y = x * 2
        z = y.as_strided_((2, 2), (1, 2), 1)
        assert z is y and y.shape == (2, 2) and y.storage_offset() == 1
        (y * y).sum().backward()
        t = lib.arange(6.0)
        t.as_strided_((3,), (2,))
        out.append((y.tolist(), x.grad.tolist(), t.tolist(), t.stride()))
        with pytest.raises(RuntimeError):  # a leaf that requires grad, while recording
            lib.zeros(3, requires_grad=True).as_strided_((2,), (1,))
    assert out[0] == out[1]


def resize_program(lib):
    t = lib.arange(6.0)
    u = t.view(2, 3)
    out = [t.resize_(2, 2).tolist(), t.stride(), t.data_ptr() == u.data_ptr()]
    t.resize_(5)  # grows back within its memory: the old elements are still there
    out += [t.tolist()]
    v = lib.arange(6.0)[1:]
    out += [v.resize_(2, 2).tolist(), v.storage_offset()]
    big = lib.arange(4.0)
    big.resize_(3, 3)  # beyond its memory: the leading elements are kept
    out += [big.shape, big.reshape(-1)[:4].tolist(), big.is_contiguous()]
    s = lib.arange(6.0).reshape(2, 3).t()
    out += [s.resize_(3, 2).stride(), s.resize_(2, 3).stride()]  # same shape: unchanged
    out += [lib.zeros(3).resize_as_(lib.ones(1, 2)).shape, lib.zeros(2).resize_(0).shape]
    return out


def test_resize_as_in_pytorch(torch):
    assert resize_program(mg) == resize_program(torch)
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            lib.zeros(3, requires_grad=True).resize_(2)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            with lib.no_grad():
                lib.zeros(3, requires_grad=True).resize_(2)
        with pytest.raises(TypeError):
            lib.zeros(3).resize_(2.5)


def test_resize_beyond_memory_fills_zeros():
    t = mg.arange(1.0, 5.0)
    t.resize_(2, 3)
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]]
    assert t.untyped_storage().nbytes() == 24


@pytest.mark.parametrize("case", ["overlapping", "of an expanded input", "of a view"])
def test_as_strided_second_derivatives_and_forward_mode(torch, case):
    from minigrad.autograd import gradgradcheck
    fn, shape = GRAD_CASES[case]
    base = np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape)
    assert gradgradcheck(lambda a: fn(a) * fn(a).sum(), [mg.tensor(base, requires_grad=True)])
    tangent = np.linspace(0.5, 1.5, base.size).reshape(shape)
    got = mg.func.jvp(lambda a: fn(a) * 2, (mg.tensor(base),), (mg.tensor(tangent),))[1]
    want = torch.func.jvp(lambda a: fn(a) * 2, (torch.tensor(base),), (torch.tensor(tangent),))[1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
