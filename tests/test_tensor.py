"""Tensor basics: creation and dtypes, properties, repr, comparisons, in-place ops."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import Tensor


# --- mg.tensor dtype rules ------------------------------------------------------------------

@pytest.mark.parametrize("data, dtype", [
    (1.5, np.float32),
    ([1.0, 2.0], np.float32),
    ([[1.0, 2.0], [3.0, 4.0]], np.float32),
    ([1, 2.5], np.float32),          # mixed int/float lists are floats
    (3, np.int64),
    ([1, 2, 3], np.int64),
    ([True, False], np.bool_),
    (np.array([1.0, 2.0], dtype=np.float64), np.float64),
    (np.array([1.0, 2.0], dtype=np.float32), np.float32),
    (np.array([1, 2], dtype=np.int32), np.int32),
    (np.zeros((2, 3)), np.float64),
])
def test_tensor_dtype_rules(data, dtype):
    t = mg.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(data))


def test_tensor_explicit_dtype_wins():
    assert mg.tensor([1.0, 2.0], dtype=mg.float64).dtype == np.float64
    assert mg.tensor([1, 2], dtype=mg.float32).dtype == np.float32
    assert mg.tensor(np.ones(2), dtype=np.float32).dtype == np.float32
    assert mg.tensor([1.7, 2.2], dtype=mg.int64).tolist() == [1, 2]


def test_tensor_copies_its_data():
    a = np.array([1.0, 2.0, 3.0])
    t = mg.tensor(a)
    a[0] = 100.0
    assert t.tolist() == [1.0, 2.0, 3.0]
    u = mg.tensor(t)
    t.numpy()[1] = -1.0
    assert u.tolist() == [1.0, 2.0, 3.0]
    assert u.dtype == np.float64  # a float64 tensor stays float64


def test_tensor_constructor_is_pytorchs_legacy_float_tensor(torch):
    """torch.Tensor is the float tensor type: sizes give a float32 tensor of that shape, data
    becomes float32 whatever its type, and a tensor gives an alias."""
    for args in [(5,), (2, 3), (), ([1, 2],), ([[1.5], [2.0]],), (np.ones(2),), ([True],),
                 (np.int64(3),), ((2, 3),)]:
        ours, theirs = Tensor(*args), torch.Tensor(*args)
        assert ours.shape == tuple(theirs.shape) and ours.dtype == np.float32, args
        if args and not isinstance(args[0], (int, np.integer)):
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    t = mg.tensor([1, 2])
    alias = Tensor(t)
    alias[0] = 7
    assert alias.dtype == np.int64 and t.tolist() == [7, 2]
    for bad in [(3.5,), (-1,), (2, "a")]:
        with pytest.raises((TypeError, ValueError), match="Tensor"):
            Tensor(*bad)
    with pytest.raises(RuntimeError, match="CPU only"):
        Tensor(2, device="cuda")


def test_legacy_parameter_then_init():
    """The old idiom: an uninitialised Parameter of a size, then filled by an initialiser."""
    mg.manual_seed(0)
    v = mg.nn.Parameter(Tensor(16))
    mg.nn.init.uniform_(v, -0.1, 0.1)
    assert v.shape == (16,) and v.dtype == np.float32 and v.requires_grad
    assert 0 < float(v.abs().max()) <= 0.1 and len(set(v.tolist())) == 16


def test_tensor_requires_grad_flag():
    assert not mg.tensor([1.0]).requires_grad
    t = mg.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None


# --- factories ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, value", [(mg.zeros, 0.0), (mg.ones, 1.0)])
def test_zeros_ones(fn, value):
    for t in (fn(2, 3), fn((2, 3)), fn([2, 3])):
        assert t.shape == (2, 3)
        assert t.dtype == np.float32
        assert np.all(t.numpy() == value)
        assert not t.requires_grad
    assert fn(4).shape == (4,)
    assert fn(()).shape == ()
    assert fn(2, dtype=mg.float64).dtype == np.float64
    assert fn(2, dtype=mg.int64).dtype == np.int64
    t = fn(2, 2, requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_full():
    t = mg.full((2, 3), 1.5)
    assert t.shape == (2, 3) and t.dtype == np.float32 and np.all(t.numpy() == 1.5)
    t = mg.full(4, 7)
    assert t.shape == (4,) and t.dtype == np.int64 and t.tolist() == [7] * 4
    assert mg.full((2,), True).dtype == np.bool_
    assert mg.full((2,), 1, dtype=mg.float64).dtype == np.float64
    assert mg.full((2, 2), 0.5, requires_grad=True).requires_grad


def test_zeros_like_ones_like():
    src = mg.tensor(np.arange(6, dtype=np.float64).reshape(2, 3))
    z, o = mg.zeros_like(src), mg.ones_like(src)
    assert z.shape == o.shape == (2, 3)
    assert z.dtype == o.dtype == np.float64
    assert np.all(z.numpy() == 0) and np.all(o.numpy() == 1)
    i = mg.tensor([[1, 2]])
    assert mg.zeros_like(i).dtype == np.int64
    assert mg.ones_like(i, dtype=mg.float32).dtype == np.float32
    assert mg.zeros_like(src, requires_grad=True).requires_grad
    # a fresh tensor, not a view of the source
    z.numpy()[0, 0] = 5
    assert src.numpy()[0, 0] == 0


def test_arange():
    t = mg.arange(5)
    assert t.dtype == np.int64 and t.tolist() == [0, 1, 2, 3, 4]
    t = mg.arange(2, 8, 2)
    assert t.dtype == np.int64 and t.tolist() == [2, 4, 6]
    t = mg.arange(0, 1, 0.25)
    assert t.dtype == np.float32
    np.testing.assert_allclose(t.numpy(), [0, 0.25, 0.5, 0.75])
    assert mg.arange(3.0).dtype == np.float32 and mg.arange(3.0).tolist() == [0.0, 1.0, 2.0]
    assert mg.arange(3, dtype=mg.float64).dtype == np.float64
    assert mg.arange(5, 0, -2).tolist() == [5, 3, 1]


def test_eye():
    np.testing.assert_array_equal(mg.eye(3).numpy(), np.eye(3))
    assert mg.eye(3).dtype == np.float32
    np.testing.assert_array_equal(mg.eye(2, 3).numpy(), np.eye(2, 3))
    assert mg.eye(2, dtype=mg.float64).dtype == np.float64


def test_randn_rand_shapes_dtypes():
    mg.manual_seed(0)
    x = mg.randn(200, 50)
    assert x.shape == (200, 50) and x.dtype == np.float32
    assert abs(float(x.numpy().mean())) < 0.05 and abs(float(x.numpy().std()) - 1) < 0.05
    assert mg.randn((2, 3)).shape == (2, 3)
    assert mg.randn(3, dtype=mg.float64).dtype == np.float64
    assert mg.randn(3, requires_grad=True).requires_grad
    u = mg.rand(1000)
    assert u.dtype == np.float32 and u.shape == (1000,)
    assert u.numpy().min() >= 0 and u.numpy().max() < 1
    assert 0.4 < float(u.numpy().mean()) < 0.6


def test_randint():
    mg.manual_seed(1)
    r = mg.randint(3, 7, (500,))
    assert r.dtype == np.int64 and r.shape == (500,)
    assert set(r.tolist()) == {3, 4, 5, 6}
    r = mg.randint(4, size=(2, 3))
    assert r.shape == (2, 3) and r.numpy().min() >= 0 and r.numpy().max() < 4
    assert mg.randint(10, ()).shape == ()  # size is required, as in PyTorch


@pytest.mark.parametrize("make", [
    lambda: mg.randn(4, 3), lambda: mg.rand(5), lambda: mg.randint(0, 100, (6,)),
    lambda: mg.randperm(10), lambda: mg.dropout(mg.ones(50), 0.5),
])
def test_manual_seed_determinism(make):
    mg.manual_seed(123)
    a, a2 = make().numpy().copy(), make().numpy().copy()
    mg.manual_seed(123)
    b, b2 = make().numpy().copy(), make().numpy().copy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a, a2)  # the generator advances between calls
    mg.manual_seed(124)
    assert not np.array_equal(make().numpy(), a)


def test_manual_seed_rejects_bad_seeds():
    mg.manual_seed(-1)  # PyTorch's range is [-2**63, 2**64): a negative seed is one
    with pytest.raises(ValueError, match="manual_seed"):
        mg.manual_seed(2 ** 64)
    with pytest.raises(ValueError, match="manual_seed"):
        mg.manual_seed(1.5)


# --- properties -----------------------------------------------------------------------------

def test_shape_ndim_dtype_size_numel():
    t = mg.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dim() == 3
    assert t.dtype == np.float32
    assert t.size() == (2, 3, 4)
    assert t.size(0) == 2 and t.size(1) == 3 and t.size(-1) == 4 and t.size(-3) == 2
    assert t.numel() == 24
    assert len(t) == 2
    s = mg.tensor(5.0)
    assert s.shape == () and s.ndim == 0 and s.numel() == 1


def test_item():
    assert mg.tensor(2.5).item() == 2.5
    assert isinstance(mg.tensor(2.5).item(), float)
    assert mg.tensor([[7]]).item() == 7
    assert isinstance(mg.tensor([[7]]).item(), int)
    assert mg.tensor([True]).item() is True
    assert float(mg.tensor([1.5])) == 1.5 and int(mg.tensor(3)) == 3


def test_numpy_tolist_array():
    a = np.arange(6.0).reshape(2, 3)
    t = mg.tensor(a)
    assert isinstance(t.numpy(), np.ndarray)
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.tolist() == a.tolist()
    assert isinstance(t.tolist(), list)
    np.testing.assert_array_equal(np.asarray(t), a)
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.array(t).shape == (2, 3)
    assert mg.tensor(3).tolist() == 3


def test_T():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(mg.tensor(a).T.numpy(), a.T)
    b = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(mg.tensor(b).T.numpy(), b.T)
    np.testing.assert_array_equal(mg.tensor(b).t().numpy(), b.T)
    assert mg.tensor([1.0, 2.0]).T.tolist() == [1.0, 2.0]


def test_float_double_long_conversions():
    t = mg.tensor([1.7, -2.2])
    assert t.dtype == np.float32
    d = t.double()
    assert d.dtype == np.float64
    np.testing.assert_allclose(d.numpy(), [1.7, -2.2], rtol=1e-6)
    assert d.float().dtype == np.float32
    lo = t.long()
    assert lo.dtype == np.int64 and lo.tolist() == [1, -2]
    assert mg.tensor([1, 2]).float().dtype == np.float32
    assert t.float() is t  # no-op conversion returns the tensor itself
    assert t.is_floating_point() and not lo.is_floating_point()
    assert t.to(mg.float64).dtype == np.float64


def test_conversion_keeps_grad_only_for_floats():
    x = mg.tensor([1.5, 2.5], requires_grad=True)
    assert x.double().requires_grad
    assert x.double().grad_fn is not None
    assert not x.long().requires_grad


# --- repr -----------------------------------------------------------------------------------

def test_repr_shows_the_values_as_pytorch():
    # the comparison with PyTorch's text, over dtypes, shapes and options: test_printing.py
    assert repr(mg.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(mg.tensor([[1, 2], [3, 4]])) == "tensor([[1, 2],\n        [3, 4]])"
    assert repr(mg.tensor([1, 2], dtype=mg.int32)) == "tensor([1, 2], dtype=minigrad.int32)"


def test_repr_requires_grad_and_grad_fn():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert "grad_fn=<AddBackward0>" in repr(x + 1)
    assert repr(x.sum()) == "tensor(3., grad_fn=<SumBackward0>)"
    with mg.no_grad():
        assert repr(x * 2) == "tensor([2., 4.])"


def test_repr_scalar():
    assert repr(mg.tensor(3.25, dtype=mg.float64)) == "tensor(3.2500, dtype=minigrad.float64)"


# --- comparisons ----------------------------------------------------------------------------

@pytest.mark.parametrize("op, npop", [
    ("__eq__", np.equal), ("__ne__", np.not_equal), ("__lt__", np.less),
    ("__le__", np.less_equal), ("__gt__", np.greater), ("__ge__", np.greater_equal),
])
def test_comparisons_give_bool_tensors_without_grad(op, npop):
    a = np.array([1.0, 2.0, 3.0, 4.0])
    b = np.array([4.0, 2.0, 1.0, 4.0])
    x = mg.tensor(a, requires_grad=True)
    y = mg.tensor(b, requires_grad=True)
    for other, ref in ((y, b), (2.0, 2.0)):
        r = getattr(x, op)(other)
        assert isinstance(r, Tensor)
        assert r.dtype == np.bool_
        np.testing.assert_array_equal(r.numpy(), npop(a, ref))
        assert not r.requires_grad and r.grad_fn is None


def test_comparison_operators_and_logic():
    x = mg.tensor([1.0, 2.0, 3.0])
    assert (x > 1.5).tolist() == [False, True, True]
    assert (x == 2.0).tolist() == [False, True, False]
    assert (~(x > 1.5)).tolist() == [True, False, False]
    assert ((x > 1.5) & (x < 2.5)).tolist() == [False, True, False]
    assert ((x < 1.5) | (x > 2.5)).tolist() == [True, False, True]
    assert {x: 1}[x] == 1  # still hashable despite __eq__


# --- in-place ops ---------------------------------------------------------------------------

def test_inplace_ops_without_grad():
    t = mg.tensor([1.0, 2.0, 3.0])
    v0 = t._version
    assert t.add_(1.0) is t
    assert t.tolist() == [2.0, 3.0, 4.0]
    t.mul_(mg.tensor([1.0, 2.0, 0.5]))
    assert t.tolist() == [2.0, 6.0, 2.0]
    t.add_(mg.tensor([1.0, 1.0, 1.0]), alpha=2)
    assert t.tolist() == [4.0, 8.0, 4.0]
    t.copy_(mg.tensor([9.0, 8.0, 7.0]))
    assert t.tolist() == [9.0, 8.0, 7.0]
    t.copy_(np.array(1.0))  # broadcast source
    assert t.tolist() == [1.0, 1.0, 1.0]
    t.zero_()
    assert t.tolist() == [0.0, 0.0, 0.0]
    assert t.dtype == np.float32
    assert t._version == v0 + 6


def test_inplace_on_requires_grad_under_no_grad():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    data = w.numpy()
    with mg.no_grad():
        w.mul_(3.0)
        w.add_(mg.tensor([1.0, 1.0]))
        w.copy_(w.numpy() * 2)
    assert w.tolist() == [8.0, 14.0]
    assert w.numpy() is data  # really in place
    assert w.requires_grad and w.is_leaf
    with mg.no_grad():
        w.zero_()
    assert w.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name, args", [
    ("zero_", ()), ("add_", (1.0,)), ("mul_", (2.0,)), ("copy_", (np.zeros(2),)),
    ("sub_", (1.0,)), ("div_", (2.0,)), ("fill_", (3.0,)),
])
def test_inplace_on_requires_grad_with_grad_enabled_raises(name, args):
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=name + ".*no_grad"):
        getattr(w, name)(*args)
    assert w.tolist() == [1.0, 2.0]  # unchanged
    assert w._version == 0


def test_inplace_on_non_grad_tensor_allowed_with_grad_enabled():
    t = mg.zeros(3)
    t.add_(2)
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_data_is_a_detached_tensor_sharing_memory_as_in_pytorch():
    """`.data` as older PyTorch code uses it: `p.data.mul_()`, `x.data.clone()`, `t.data = ...`."""
    p = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = p.data
    assert isinstance(d, mg.Tensor) and not d.requires_grad and d.grad_fn is None
    d.mul_(2.0)                                       # writes through to p
    np.testing.assert_array_equal(p.numpy(), [2.0, 4.0, 6.0])
    c = p.data.clone()
    c.add_(1.0)                                       # a clone does not
    np.testing.assert_array_equal(p.numpy(), [2.0, 4.0, 6.0])
    assert p.data.unsqueeze(1).shape == (3, 1)
    p.data = mg.tensor([5.0, 6.0, 7.0])               # assignment replaces the values
    np.testing.assert_array_equal(p.numpy(), [5.0, 6.0, 7.0])
    assert p.requires_grad and p.is_leaf
    (p * p).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [10.0, 12.0, 14.0])


# --- iteration and indices --------------------------------------------------------------------

def test_iterating_without_grad_gives_what_indexing_gives():
    ids = mg.tensor([4, 7, 9])
    rows = list(ids)
    assert [r.item() for r in rows] == [4, 7, 9] and all(r.shape == () for r in rows)
    assert all(r.dtype == np.int64 for r in rows)
    data = mg.arange(20)
    assert [data[i:i + 2].tolist() for i in ids] == [[4, 5], [7, 8], [9, 10]]
    m = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    first = next(iter(m))  # a view: an in-place change of m is a new version of the row too
    before = first._version
    m.add_(1.0)
    assert first.tolist() == [2.0, 3.0] and first._version == before + 1
    with pytest.raises(TypeError, match="0-d"):
        iter(mg.tensor(3.0))


def test_iterating_a_tensor_that_requires_grad_records_each_row():
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = x
    assert a.grad_fn is not None
    (a * 2 + b * 3).sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0], [3.0, 3.0]]
    with mg.no_grad():
        assert all(r.grad_fn is None for r in x)


def test_index_conversion():
    assert [10, 20, 30][mg.tensor(1)] == 20
    assert list(range(10))[mg.tensor(2):mg.tensor(4)] == [2, 3]
    assert mg.tensor(True).__index__() == 1
