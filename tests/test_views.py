"""Every op PyTorch documents as returning a view, against PyTorch: the view shares the input's
memory, a write through the view shows in the input and one into the input shows in the view,
`_base` and `_is_view()` are PyTorch's, gradients after an in-place write through the view
under a graph are PyTorch's, and so are the errors (writing into an expanded view, into a view
of a leaf that requires grad, into an output of split/chunk/unbind under a graph, `view` of
strides it cannot re-cut). Bases are contiguous, non-contiguous (a transpose), 0-d and empty."""
import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad.autograd.gradcheck import gradcheck, gradgradcheck

LIBS = (torch, mg)


def _lib(t):
    return torch if isinstance(t, torch.Tensor) else mg


def _zeros(t, *shape):
    return _lib(t).zeros(*shape, dtype=t.dtype)


# name -> (view of t, base shape); every base is float64 of that shape
VIEWS = {
    "slice": (lambda t: t[1:3, ::2], (4, 6)),
    "index": (lambda t: t[0], (4, 6)),
    "ellipsis": (lambda t: t[..., 1], (4, 6)),
    "none-index": (lambda t: t[None, :, 2], (4, 6)),
    "adjoint": (lambda t: t.adjoint(), (4, 6)),
    "as_strided": (lambda t: t.as_strided((2, 2), (1, 3), 1), (4, 6)),
    "detach": (lambda t: t.detach(), (4, 6)),
    "diagonal": (lambda t: t.diagonal(), (4, 6)),
    "diagonal-offset": (lambda t: t.diagonal(1), (4, 6)),
    "diagonal-below": (lambda t: t.diagonal(-2), (4, 6)),
    "diagonal-3d": (lambda t: t.diagonal(0, 2, 0), (3, 2, 4)),
    "diagonal-past-end": (lambda t: t.diagonal(9), (4, 6)),
    "movedim": (lambda t: t.movedim(0, 1), (4, 6)),
    "narrow": (lambda t: t.narrow(1, 1, 3), (4, 6)),
    "permute": (lambda t: t.permute(2, 0, 1), (2, 3, 4)),
    "select": (lambda t: t.select(1, 2), (4, 6)),
    "squeeze": (lambda t: t.squeeze(1), (4, 1, 6)),
    "unsqueeze": (lambda t: t.unsqueeze(1), (4, 6)),
    "transpose": (lambda t: t.transpose(0, 1), (4, 6)),
    "t": (lambda t: t.t(), (4, 6)),
    "T": (lambda t: t.T, (4, 6)),
    "H": (lambda t: t.H, (4, 6)),
    "mT": (lambda t: t.mT, (2, 3, 4)),
    "mH": (lambda t: t.mH, (2, 3, 4)),
    "unflatten": (lambda t: t.unflatten(1, (2, 3)), (4, 6)),
    "unfold": (lambda t: t.unfold(1, 2, 2), (4, 6)),
    "view": (lambda t: t.view(2, 12), (4, 6)),
    "view-infer": (lambda t: t.view(-1), (4, 6)),
    "view_as": (lambda t: t.view_as(_zeros(t, 6, 4)), (4, 6)),
    "reshape": (lambda t: t.reshape(3, 8), (4, 6)),
    "reshape_as": (lambda t: t.reshape_as(_zeros(t, 24)), (4, 6)),
    "flatten": (lambda t: t.flatten(), (4, 6)),
    "swapaxes": (lambda t: t.swapaxes(0, 1), (4, 6)),
    "swapdims": (lambda t: t.swapdims(1, 0), (4, 6)),
    "contiguous": (lambda t: t.contiguous(), (4, 6)),
    "view-of-view": (lambda t: t[1:].t()[2], (4, 6)),
    "diagonal-of-transpose": (lambda t: t.t().diagonal(1), (4, 6)),
}
# outputs of ops that return several views: PyTorch refuses to write them under a graph
MULTI = {
    "split": (lambda t: t.split(2)[1], (4, 6), "Split"),
    "split-sizes": (lambda t: t.split([1, 3])[1], (4, 6), "SplitWithSizes"),
    "split_with_sizes": (lambda t: t.split_with_sizes([3, 1])[0], (4, 6), "SplitWithSizes"),
    "chunk": (lambda t: t.chunk(2, 1)[1], (4, 6), "Split"),
    "unbind": (lambda t: t.unbind(0)[2], (4, 6), "Unbind"),
}
COMPLEX = {
    "real": lambda t: t.real,
    "imag": lambda t: t.imag,
    "view_as_real": lambda t: _lib(t).view_as_real(t),
    "real-of-transpose": lambda t: t.t().real[1:],
    "view_as_real-of-diagonal": lambda t: _lib(t).view_as_real(t.diagonal()),
}


def _data(shape, complex_=False):
    a = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)
    return a + 1j * a[::-1] * 0.5 if complex_ else a


def _bases(lib, shape, layout, complex_=False):
    """(root, base): base has `shape`; for "transposed" it is a transpose of root."""
    a = _data(shape, complex_)
    if layout == "transposed":
        root = lib.tensor(np.ascontiguousarray(np.moveaxis(a, -1, 0)))
        return root, root.movedim(0, -1)
    root = lib.tensor(a)
    return root, root


def _shares(base, view):
    """Whether the two show one storage (an empty view too; np.shares_memory says no there)."""
    same = view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    if isinstance(base, mg.Tensor) and view.numel():
        assert same == np.shares_memory(base._array, view._array)
    return same


def _numpy(t):
    return t.detach().numpy().copy() if isinstance(t, torch.Tensor) else t.numpy().copy()


def _writes(lib, f, shape, layout, complex_=False):
    root, base = _bases(lib, shape, layout, complex_)
    try:
        view = f(base)
    except RuntimeError as e:  # view of a transpose: both refuse (the message is compared)
        return {"error": str(e).split(".")[0][-60:]}
    state = {"shares": _shares(base, view), "is_view": view._is_view(),
             "base": [view._base is x for x in (root, base)]}
    if view.numel():
        view.mul_(2)
    state["view->base"] = _numpy(root)
    root, base = _bases(lib, shape, layout, complex_)
    view = f(base)
    base.add_(100)
    state["base->view"] = _numpy(view)
    return state


def _check_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", sorted(VIEWS) + sorted(MULTI))
def test_view_shares_memory_both_ways(name, layout):
    f, shape = (VIEWS[name] if name in VIEWS else MULTI[name][:2])
    _check_same(_writes(torch, f, shape, layout), _writes(mg, f, shape, layout))


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_views_share_memory_both_ways(name, layout):
    f = COMPLEX[name]
    _check_same(_writes(torch, f, (4, 5), layout, True), _writes(mg, f, (4, 5), layout, True))


def _grads_after_write(lib, f, shape, layout, complex_=False):
    """x -> y = 1.5 x; y's view multiplied in place by w; loss of y and the view."""
    a = _data(shape, complex_)
    if layout == "transposed":
        x = lib.tensor(np.ascontiguousarray(np.moveaxis(a, -1, 0)), requires_grad=True)
        y = x.movedim(0, -1) * 1.5
    else:
        x = lib.tensor(a, requires_grad=True)
        y = x * 1.5
    try:
        v = f(y)
    except RuntimeError as e:
        return (str(e).split(".")[0][-60:],)
    vshape = tuple(v.shape)
    wd = np.linspace(0.5, 2.0, int(np.prod(vshape))).reshape(vshape)
    w = lib.tensor(wd.astype(v.numpy().dtype if lib is mg else np.float64) if True else wd,
                   requires_grad=True)
    if lib is torch:
        w = torch.tensor(wd, dtype=v.dtype, requires_grad=True)
    v.mul_(w)
    loss = (y * y.conj()).real.sum() + (v * v.conj()).real.sum() * 0.5 if complex_ else \
        (y * y).sum() + (v * v).sum() * 0.5
    loss.backward()
    return _numpy(x.grad), _numpy(w.grad), _numpy(y)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", sorted(set(VIEWS) - {"detach"}))
def test_gradients_after_write_through_view(name, layout):
    f, shape = VIEWS[name]
    want, got = _grads_after_write(torch, f, shape, layout), _grads_after_write(mg, f, shape,
                                                                                 layout)
    assert len(want) == len(got)
    for a, b in zip(want, got):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_gradients_after_write_through_complex_view(name):
    f = COMPLEX[name]
    for a, b in zip(_grads_after_write(torch, f, (4, 5), "contiguous", True),
                    _grads_after_write(mg, f, (4, 5), "contiguous", True)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_detach_shares_memory_but_is_not_a_view():
    for lib in LIBS:
        x = lib.ones(2, 3, requires_grad=True)
        d = x.detach()
        d[0, 0] = 5.0
        assert x[0, 0].item() == 5.0 and not d._is_view() and d._base is None


def test_base_of_views_made_without_grad_mode():
    for lib in LIBS:
        x = lib.ones(4, 6)
        with lib.no_grad():
            v = x.t()[1:]
        assert v._base is x and v._is_view()
        assert x.t().contiguous()._base is None  # a copy
        assert x.reshape(24)._base is x and x.t().reshape(24)._base is None


# --- gradients of the new rules, float64 central differences ----------------------------------

@pytest.mark.parametrize("args", [(0, 0, 1), (1, 0, 2), (-2, 2, 0), (7, 1, 2), (0, -1, -2)])
def test_diagonal_gradcheck(args):
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4, 5)), requires_grad=True)
    assert gradcheck(lambda t: t.diagonal(*args), (x,))
    assert gradgradcheck(lambda t: t.diagonal(*args) * t.diagonal(*args), (x,))


@pytest.mark.parametrize("view", [lambda t: t.diagonal(1), lambda t: t.t()[1:, 2],
                                  lambda t: t.unfold(1, 2, 3), lambda t: t.t().diagonal(-1)])
def test_write_through_view_gradcheck(view):
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    w = mg.tensor(rng.standard_normal(tuple(view(mg.zeros(4, 5)).shape)), requires_grad=True)

    def f(x, w):
        y = x * 1.0
        view(y).mul_(w)
        return y
    assert gradcheck(f, (x, w))
    assert gradgradcheck(lambda x, w: f(x, w) * f(x, w), (x, w))


@pytest.mark.parametrize("part", ["real", "imag", "view_as_real"])
def test_write_through_complex_view_gradcheck(part):
    rng = np.random.default_rng(2)
    z = mg.tensor(rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)),
                  requires_grad=True)
    pick = COMPLEX[part]
    w = mg.tensor(rng.standard_normal(tuple(pick(mg.zeros(3, 4, dtype=mg.complex128)).shape)),
                  requires_grad=True)

    def f(z, w):
        y = z * 1.0
        pick(y).mul_(w)
        return mg.view_as_real(y)
    assert gradcheck(f, (z, w))


# --- 0-d and empty bases ----------------------------------------------------------------------

ZERO_D = {
    "view": lambda t: t.view(1, 1), "reshape": lambda t: t.reshape(1), "unsqueeze":
    lambda t: t.unsqueeze(0), "squeeze": lambda t: t.squeeze(), "flatten": lambda t: t.flatten(),
    "t": lambda t: t.t(), "T": lambda t: t.T, "as_strided": lambda t: t.as_strided((1,), (1,)),
    "unfold": lambda t: t.unfold(0, 1, 1), "index": lambda t: t[...], "mT-like": lambda t: t.H,
}
EMPTY = {
    "t": lambda t: t.t(), "view": lambda t: t.view(3, 0), "diagonal": lambda t: t.diagonal(),
    "select": lambda t: t.select(1, 1), "split": lambda t: t.split(1, 1)[0],
    "unfold": lambda t: t.unfold(1, 2, 1), "unbind": lambda t: t.unbind(1)[2],
}


@pytest.mark.parametrize("name", sorted(ZERO_D))
def test_views_of_0d(name):
    f = ZERO_D[name]
    got = []
    for lib in LIBS:
        x = lib.tensor(3.0)
        v = f(x)
        v.mul_(2)
        y = lib.tensor(3.0, requires_grad=True) * 1.0
        f(y).mul_(lib.tensor(4.0, dtype=y.dtype, requires_grad=True))
        (y * y).sum().backward()
        got.append((x.item(), _shares(x, v), v._is_view(), tuple(v.shape), y.item()))
    assert got[0] == got[1]


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_views_of_empty(name):
    f = EMPTY[name]
    got = []
    for lib in LIBS:
        x = lib.zeros(0, 3)
        v = f(x)
        v.add_(1)
        got.append((tuple(v.shape), v._is_view(), v._base is x))
    assert got[0] == got[1]


# --- errors -----------------------------------------------------------------------------------

def _raises(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), str(e)
    return None, None


def _same_error(fn, *, contains=True):
    (t_type, t_msg), (m_type, m_msg) = _raises(torch, fn), _raises(mg, fn)
    assert t_type is not None and m_type is not None, (t_msg, m_msg)
    assert issubclass(m_type, t_type), (m_type, t_type, m_msg)
    if contains:
        assert t_msg.split("\n")[0] in m_msg, (t_msg, m_msg)


@pytest.mark.parametrize("name", sorted(MULTI))
def test_write_into_output_of_multi_view_op_under_graph(name):
    f, shape, op = MULTI[name]
    _same_error(lambda lib: f(lib.ones(*shape, dtype=lib.float64, requires_grad=True) * 1)
                .add_(1))
    _same_error(lambda lib: f(lib.ones(*shape, requires_grad=True)).mul_(2))
    _same_error(lambda lib: f(lib.ones(*shape, requires_grad=True) * 1)[0].mul_(2),
                contains=False)  # a view of such an output: PyTorch names the last view op
    # without a graph the write goes through
    for lib in LIBS:
        x = lib.ones(*shape)
        f(x).fill_(5)
        assert (x == 5).sum().item() == f(x).numel()


@pytest.mark.parametrize("name", sorted(set(VIEWS) - {"detach", "contiguous"}))
def test_write_into_view_of_leaf_that_requires_grad(name):
    f, shape = VIEWS[name]
    _same_error(lambda lib: f(lib.ones(*shape, dtype=lib.float64, requires_grad=True)).mul_(2))


@pytest.mark.parametrize("make", [lambda lib: lib.ones(3, 1).expand(3, 4),
                                  lambda lib: lib.ones(2, 3).expand(2, 2, 3)[:, 1:],
                                  lambda lib: lib.ones(4).as_strided((2, 2), (0, 1))])
def test_write_into_expanded_view(make):
    _same_error(lambda lib: make(lib).add_(1))


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2, 3).expand(2, 2, 3)[0],
                                  lambda lib: lib.arange(6.0).unfold(0, 3, 1),
                                  lambda lib: lib.arange(6.0).unfold(0, 3, 2)[1:],
                                  lambda lib: lib.zeros(0, 1).expand(0, 3)])
def test_write_into_view_without_repeated_elements(make):
    """An expanded tensor's slice that repeats no element, overlapping windows (PyTorch's check
    finds no overlap it can prove there) and an empty expanded tensor may be written; a fill
    gives the same values (in-place arithmetic on overlapping windows does not, see
    compat_notes)."""
    got = []
    for lib in LIBS:
        v = make(lib)
        v.fill_(5)
        got.append(_numpy(v))
    np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize("make,shape", [
    (lambda lib: lib.ones(4, 6).t(), (24,)), (lambda lib: lib.ones(2, 3, 4).permute(1, 0, 2),
                                             (3, 8)),
    (lambda lib: lib.ones(4, 6)[1:3, 1:4], (6,)), (lambda lib: lib.ones(3, 1).expand(3, 4), (12,)),
])
def test_view_of_strides_it_cannot_recut(make, shape):
    _same_error(lambda lib: make(lib).view(shape))
    for lib in LIBS:  # reshape copies instead
        assert tuple(make(lib).reshape(shape).shape) == shape


@pytest.mark.parametrize("shape", [(-2, 2), (2, -3), (-1, -2)])
def test_sizes_below_minus_one(shape):
    _same_error(lambda lib: lib.ones(4).view(*shape))
    _same_error(lambda lib: lib.ones(4).reshape(shape))


def test_view_keeps_a_view_where_the_strides_allow():
    for lib in LIBS:
        x = lib.ones(4, 6)
        v = x[:, ::2].view(2, 2, 3)
        v.fill_(7)
        assert x[:, ::2].sum().item() == 7 * 12 and x[:, 1::2].sum().item() == 12
        assert tuple(x.t().view(6, 4).shape) == (6, 4)  # the shape unchanged: a view as it is


def test_write_into_view_made_under_no_grad():
    for lib in LIBS:
        x = lib.ones(3, 4)
        with lib.no_grad():
            v = x[0]
        w = lib.ones(4, requires_grad=True)
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                                               "modified inplace with grad mode enabled"):
            v.mul_(w)
