"""Float64 gradient checks of the differentiable functions added for PyTorch programs'
common calls (unfold, sum_to_size, the scatter family, dist, renorm, gradient, ldexp, frexp's
mantissa), and edge cases against PyTorch beyond the compatibility table's."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(5)


def leaf(*shape):
    return mg.tensor(rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("name, fn, shapes", [
    ("unfold", lambda x: x.unfold(1, 3, 2), [(2, 7)]),
    ("unfold overlapping", lambda x: x.unfold(0, 3, 1) * x.unfold(0, 3, 1), [(6, 2)]),
    ("unfold 0-d", lambda x: x.unfold(0, 1, 1), [()]),
    ("sum_to_size", lambda x: x.sum_to_size(1, 3, 1) ** 2, [(2, 3, 4)]),
    ("slice_scatter", lambda x, s: mg.slice_scatter(x, s, 1, 0, 4, 2) ** 2, [(3, 4), (3, 2)]),
    ("select_scatter", lambda x, s: mg.select_scatter(x, s, 0, 1) ** 2, [(3, 4), (4,)]),
    ("diagonal_scatter", lambda x, s: mg.diagonal_scatter(x, s, 1, 0, 2) ** 2,
     [(3, 2, 4), (2, 3)]),
    ("index_copy", lambda x, s: x.index_copy(1, mg.tensor([3, 0]), s) ** 2, [(2, 4), (2, 2)]),
    ("masked_scatter", lambda x, s: x.masked_scatter(mg.tensor([True, False, True]), s) ** 2,
     [(2, 3), (5,)]),
    ("put", lambda x, s: x.put(mg.tensor([1, -1, 1]), s, accumulate=True) ** 2, [(2, 3), (3,)]),
    ("index_reduce prod", lambda x, s: x.index_reduce(0, mg.tensor([0, 2, 0]), s, "prod"),
     [(3, 2), (3, 2)]),
    ("index_reduce mean", lambda x, s: x.index_reduce(0, mg.tensor([1, 1]), s, "mean",
                                                      include_self=False), [(3, 2), (2, 2)]),
    ("index_reduce amax", lambda x, s: x.index_reduce(1, mg.tensor([0]), s, "amax"),
     [(2, 3), (2, 1)]),
    ("dist", lambda x, y: x.dist(y, 3), [(3, 4), (4,)]),
    ("renorm", lambda x: x.renorm(2, 0, 1.0), [(3, 4)]),
    ("renorm p=1", lambda x: x.renorm(1, 1, 0.5), [(3, 4)]),
    ("gradient", lambda x: mg.gradient(x, spacing=0.5, edge_order=2)[0], [(6,)]),
    ("gradient coordinates", lambda x: mg.gradient(
        x, spacing=(mg.tensor([0.0, 1.0, 1.5, 3.0, 4.0]),), dim=1, edge_order=2)[0],
     [(2, 5)]),
    ("ldexp", lambda x, e: mg.ldexp(x, e), [(4,), (4,)]),
    ("frexp mantissa", lambda x: mg.frexp(x).mantissa * x, [(5,)]),
    ("nextafter", lambda x: mg.nextafter(x, x.detach() + 1) * x, [(3,)]),
    ("scatter multiply", lambda x, s: x.scatter(1, mg.tensor([[0, 2, 0], [1, 1, 1]]), s,
                                                reduce="multiply"), [(2, 4), (2, 3)]),
])
def test_gradients_in_float64(name, fn, shapes):
    inputs = [leaf(*s) for s in shapes]
    assert gradcheck(fn, inputs)


def test_second_order_through_the_scatter_family():
    x, s = leaf(3, 4), leaf(3, 2)
    assert gradgradcheck(lambda a, b: mg.slice_scatter(a * a, b * b, 1, 1, 3), [x, s])
    assert gradgradcheck(lambda a: a.unfold(1, 2, 2) ** 3, [x])


def test_unfold_is_a_view(torch):
    for lib in (torch, mg):
        x = lib.arange(8.0)
        w = x.unfold(0, 2, 2)
        w[1, 0] = 100.0          # non-overlapping windows write through
        assert x[2].item() == 100.0
    # overlapping windows share elements: PyTorch's check cannot prove the overlap and writes
    filled = []
    for lib in (torch, mg):
        x = lib.arange(8.0)
        x.unfold(0, 3, 1).fill_(0)
        filled.append(x.tolist())
    assert filled[0] == filled[1] == [0.0] * 8


def test_gradient_against_numpy_and_pytorch(torch):
    v = rng.standard_normal((4, 7))
    x = rng.uniform(0, 1, 7).cumsum()
    for edge in (1, 2):
        want = np.gradient(v, x, axis=1, edge_order=edge)
        got = mg.gradient(mg.tensor(v), spacing=(mg.tensor(x),), dim=1, edge_order=edge)[0]
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
        t = torch.gradient(torch.tensor(v), spacing=(torch.tensor(x),), dim=1, edge_order=edge)
        np.testing.assert_allclose(got.numpy(), t[0].numpy(), rtol=1e-10)


def test_histogram_edges_as_pytorch(torch):
    x = rng.standard_normal(50).astype(np.float32)
    x[:3] = [0.5, 0.5, 1.0]
    for args, kw in (((7,), {}), ((4,), {"range": (-1.0, 1.0)}),
                     ((torch.tensor([-1.0, 0.5, 1.0, 3.0]),), {})):
        want = torch.histogram(torch.tensor(x), *args, **kw)
        margs = tuple(mg.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args)
        got = mg.histogram(mg.tensor(x), *margs, **kw)
        np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
        np.testing.assert_allclose(got.bin_edges.numpy(), want.bin_edges.numpy(), rtol=1e-5)


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match="index_copy"):
        mg.zeros(3, 2).index_copy(0, mg.tensor([0]), mg.zeros(2, 2))
    with pytest.raises(RuntimeError, match="index_reduce"):
        mg.zeros(3).index_reduce(0, mg.tensor([0]), mg.zeros(1), "sum")
    with pytest.raises(RuntimeError, match="put"):
        mg.zeros(3).put(mg.tensor([0, 1]), mg.zeros(1))
    with pytest.raises(RuntimeError, match="diagonal_scatter"):
        mg.diagonal_scatter(mg.zeros(3, 3), mg.zeros(2))
    with pytest.raises(RuntimeError, match="same dtypes"):
        mg.zeros(3).masked_scatter(mg.tensor([True, False, True]), mg.zeros(3).double())


@pytest.mark.parametrize("fn", [
    lambda a: a.unfold(0, 3, 2), lambda a: a.reshape(2, 3).t().contiguous(),
    lambda a: mg.nextafter(a, a.detach() + 1), lambda a: a.unfold(0, 2, 1).sum(-1)])
def test_forward_mode_agrees_with_the_jacobian(fn):
    import minigrad.autograd.forward_ad as fwAD
    from minigrad.autograd.functional import jacobian
    x, v = leaf(6).detach(), mg.tensor(rng.standard_normal(6))
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fn(fwAD.make_dual(x, v))).tangent
    jac = jacobian(fn, x).numpy()
    np.testing.assert_allclose(tangent.numpy(), jac @ v.numpy(), rtol=1e-12, atol=1e-12)
    assert gradgradcheck(lambda a: fn(a) ** 3, [x.clone().requires_grad_()])


@pytest.mark.parametrize("seed", range(3))
def test_bincount_adds_float32_weights_in_order_as_pytorch(torch, seed):
    # PyTorch adds float32 weights into a float32 result one by one; a double sum rounded
    # once differs in the last place for some bins
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 7, 500)
    w = rng.standard_normal(500).astype(np.float32) * 10
    for weights in (w, w.astype(np.float64), w.astype(np.float16)):
        want = torch.bincount(torch.tensor(ids), weights=torch.tensor(weights), minlength=9)
        got = mg.bincount(mg.tensor(ids), weights=mg.tensor(weights), minlength=9)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for lib in (torch, mg):  # an empty input counts in int64 whatever the weights
        empty = lib.tensor(np.zeros(0, np.int64)).bincount(lib.tensor(np.zeros(0, np.float32)),
                                                           minlength=2)
        assert empty.tolist() == [0, 0] and empty.dtype == lib.int64


def test_scatter_multiply_as_pytorch(torch):
    """reduce="multiply" multiplies self's elements by every source written there, a number
    too; any other reduce is PyTorch's error."""
    x = rng.standard_normal((3, 4))
    index = np.array([[0, 0, 3], [2, 1, 2], [1, 1, 1]])
    src = rng.standard_normal((3, 3))
    got = []
    for lib in (torch, mg):
        a = lib.tensor(x).scatter(1, lib.tensor(index), lib.tensor(src), reduce="multiply")
        b = lib.tensor(x).scatter_(1, lib.tensor(index[:, :2]), 2.5, reduce="multiply")
        c = lib.ones(4, dtype=lib.int64).scatter_(0, lib.tensor([0, 0, 3]), lib.tensor([2, 3, 5]),
                                                  reduce="multiply")
        got.append((a.numpy(), b.numpy(), c.numpy(), str(c.dtype).split(".")[-1]))
        with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
            lib.zeros(3).scatter(0, lib.tensor([0]), 1.0, reduce="mean")
    for want, have in zip(*got):
        np.testing.assert_array_equal(have, want)


def test_repeat_interleave_of_counts_alone_as_pytorch(torch):
    """torch.repeat_interleave(counts): each position repeated its count, in counts' dtype."""
    for lib in (torch, mg):
        assert lib.repeat_interleave(lib.tensor([2, 0, 3], dtype=lib.int32)).tolist() == \
            [0, 0, 2, 2, 2]
        out = lib.repeat_interleave(lib.tensor([1, 2]), output_size=3)
        assert out.tolist() == [0, 1, 1] and str(out.dtype).endswith("int64")
        assert lib.repeat_interleave(lib.tensor([1.0, 2.0]), 2).tolist() == [1.0, 1.0, 2.0, 2.0]
        with pytest.raises(RuntimeError, match="repeat_interleave only accept 1D vector"):
            lib.repeat_interleave(lib.tensor([[1, 2]]))
        with pytest.raises(NotImplementedError, match="'Float'"):
            lib.repeat_interleave(lib.tensor([1.0, 2.0]))
