"""Compatibility cases: the Tensor methods and torch functions PyTorch programs commonly call
that minigrad added together: `Size` and the layout questions, the matrix transposes, the
in-place shape changes (whose history continues through the change), `unfold`, the scatter
family, the splits, the float-bit functions, `dist`, `renorm`, `gradient`, `histogram`, the
random fills (compared by shape and dtype) and `testing.assert_close`."""
import numpy as np

from compat_table import bools, case, f32, f64, ints

CASES = []
add = CASES.append


def _raises(names, program, match, inputs=()):
    names = (names,) if isinstance(names, str) else names
    add(case(*names, compare="raises", match=match, inputs=inputs)(program))


@add
@case("minigrad.Size", "minigrad.is_same_size", "Tensor.size", inputs=(f32(2, 3, grad=False),))
def _(lib, x):
    s = lib.Size([2, 3])
    return (s == x.shape, x.shape == (2, 3), s.numel(), x.size()[1:], len(x.shape[:1] + (4,)),
            x.shape * 2, lib.is_same_size(x, x), lib.is_same_size(x, x.t()), tuple(s))


@add
@case("Tensor.stride", "Tensor.storage_offset", "Tensor.is_contiguous", "Tensor.contiguous",
      "Tensor.nbytes", "Tensor.itemsize", inputs=(f32(3, 4),))
def _(lib, x):
    t = x.t()
    return (x.stride(), t.stride(), t.stride(0), x[1:, ::2].stride(), x[1:, 1:].storage_offset(),
            x[0, 1:].storage_offset(), x.unsqueeze(0).expand(2, 3, 4).stride(),
            t.is_contiguous(), x[:, :1].is_contiguous(), x[1:].is_contiguous(),
            t.contiguous().is_contiguous(), t.contiguous().stride(), t.contiguous() * 2,
            x.contiguous() is x, x.nbytes, x.itemsize, x.double().nbytes)


@add
@case("Tensor.is_signed", "Tensor.is_complex", "Tensor.is_nonzero",
      inputs=(ints(3), f32(3, grad=False), bools(3)))
def _(lib, i, x, b):
    return (i.is_signed(), x.is_signed(), b.is_signed(), i.to(lib.uint8).is_signed(),
            x.is_complex(), i.is_complex(), x[:1].is_nonzero(), lib.tensor(0.0).is_nonzero(),
            lib.tensor([True]).is_nonzero())


_raises("Tensor.is_nonzero", lambda lib: lib.zeros(2).is_nonzero(), "more than one value")


@add
@case("Tensor.mT", "Tensor.mH", "Tensor.H", inputs=(f32(2, 3, 4), f32(3, 4)))
def _(lib, b, m):
    return b.mT, b.mH * 2, m.H, m.mT @ m


_raises("Tensor.mT", lambda lib: lib.zeros(3).mT, "only supported on matrices")
_raises("Tensor.H", lambda lib: lib.zeros(2, 3, 4).H, "only supported on matrices")


@add
@case("Tensor.squeeze_", "Tensor.unsqueeze_", "Tensor.t_", "Tensor.transpose_",
      "Tensor.swapdims_", "Tensor.swapaxes_", inputs=(f32(2, 1, 3),))
def _(lib, x):
    """In-place shape changes inside the graph; the tensors are used after the change."""
    a = x * 2
    a.squeeze_(1)
    a.t_()
    b = (x + 1).squeeze_()
    b.unsqueeze_(0).transpose_(0, 2)
    c = (x * 3).swapdims_(0, 2)
    c.swapaxes_(1, 0)
    return a, a.sin(), b, b * b, c, c.exp(), a.shape, b.shape, c.shape


@add
@case("Tensor.transpose_", inputs=(f64(3, 4),))
def _(lib, x):
    """A view written after its base changed shape in place still writes through."""
    base = x * 1
    row = base[1]
    base.transpose_(0, 1)
    row.mul_(10)
    return base, row, base.sum(0)


@add
@case("Tensor.unfold", inputs=(f32(2, 7), f64(5)))
def _(lib, x, v):
    return (x.unfold(1, 3, 2), x.unfold(-1, 2, 1), x.unfold(0, 1, 1), v.unfold(0, 5, 1),
            v.unfold(0, 2, 3), x.unfold(1, 3, 2).stride(), lib.tensor(2.0).unfold(0, 1, 1))


_raises("Tensor.unfold", lambda lib: lib.zeros(3).unfold(0, 4, 1), "maximum size")
_raises("Tensor.unfold", lambda lib: lib.zeros(3).unfold(0, 2, 0), "step")


@add
@case("Tensor.sum_to_size", inputs=(f32(2, 3, 4),))
def _(lib, x):
    return x.sum_to_size(3, 4), x.sum_to_size(1, 3, 1), x.sum_to_size((2, 1, 4)), x.sum_to_size(())


_raises("Tensor.sum_to_size", lambda lib: lib.zeros(2, 3).sum_to_size(2, 1, 3), "expandable")


@add
@case("minigrad.slice_scatter", "Tensor.slice_scatter", "minigrad.select_scatter",
      "Tensor.select_scatter", "minigrad.diagonal_scatter", "Tensor.diagonal_scatter",
      inputs=(f32(4, 5), f32(4, 2), f32(5), f32(3), f32(2, 3, 4), f32(3, 2)))
def _(lib, x, cols, row, diag, cube, cdiag):
    return (lib.slice_scatter(x, cols, 1, 1, 5, 2), x.slice_scatter(x[:2] * 2, 0, 0, 2),
            lib.select_scatter(x, row, 0, -1), x.select_scatter(x[:, 0], 1, 2),
            lib.diagonal_scatter(x, x.diagonal() * 3),
            x.diagonal_scatter(x.diagonal(1) * 2, 1), lib.diagonal_scatter(x, diag, -1),
            cube.diagonal_scatter(cdiag, 0, 0, 2))


_raises(("minigrad.slice_scatter",), lambda lib: lib.slice_scatter(lib.zeros(4, 5),
                                                                   lib.zeros(4, 3), 1, 0, 2),
        "size")


@add
@case("minigrad.index_copy", "Tensor.index_copy", "Tensor.index_copy_",
      "minigrad.masked_scatter", "Tensor.masked_scatter", "Tensor.masked_scatter_",
      inputs=(f32(4, 3), f32(2, 3), bools(4, 3), f32(12), bools(3)))
def _(lib, x, src, mask, flat, row_mask):
    idx = lib.tensor([3, 0])
    written = x * 1
    written.index_copy_(0, idx, src)
    filled = x * 1
    filled.masked_scatter_(mask, flat)
    return (lib.index_copy(x, 0, idx, src), x.index_copy(1, lib.tensor([2]), x[:, :1] * 5),
            written, lib.masked_scatter(x, mask, flat), x.masked_scatter(row_mask, flat * 2),
            filled)


_raises("Tensor.masked_scatter", lambda lib: lib.zeros(3).masked_scatter(
    lib.tensor([True, True, True]), lib.zeros(2)), "source")


@add
@case("minigrad.put", "Tensor.put", "Tensor.put_", "minigrad.index_reduce",
      "Tensor.index_reduce", "Tensor.index_reduce_", inputs=(f64(3, 4), f64(3), f64(3, 2)))
def _(lib, x, vals, src):
    idx = lib.tensor([0, -1, 5])
    acc = x * 1
    acc.put_(lib.tensor([1, 1, 2]), vals, accumulate=True)
    red = x * 1
    red.index_reduce_(1, lib.tensor([0, 0]), src, "prod")
    return (lib.put(x, idx, vals), x.put(idx, vals * 2), acc,
            lib.index_reduce(x, 1, lib.tensor([3, 1]), src, "amax"),
            x.index_reduce(1, lib.tensor([2, 2]), src, "mean", include_self=False),
            x.index_reduce(0, lib.tensor([1, 0, 1]), x[:, :4] * 2, "amin"), red)


_raises("Tensor.put_", lambda lib: lib.zeros(3).put_(lib.tensor([3]), lib.ones(1)), "range")


@add
@case("Tensor.split_with_sizes", "minigrad.split_with_sizes", "minigrad.hsplit", "Tensor.hsplit",
      "minigrad.vsplit", "Tensor.vsplit", "minigrad.dsplit", "Tensor.dsplit",
      inputs=(f32(4, 6), f32(2, 3, 4), f32(6)))
def _(lib, x, c, v):
    return (x.split_with_sizes([1, 3]), lib.split_with_sizes(x, [2, 4], 1), lib.hsplit(x, 2),
            x.hsplit([1, 4]), lib.hsplit(v, 3), lib.vsplit(x, [3]), x.vsplit(2),
            lib.dsplit(c, 2), c.dsplit([1]))


_raises("minigrad.hsplit", lambda lib: lib.hsplit(lib.zeros(4, 6), 4), "divisible")
_raises("minigrad.vsplit", lambda lib: lib.vsplit(lib.zeros(4), 2), "at least 2")
_raises("minigrad.split_with_sizes", lambda lib: lib.zeros(4).split_with_sizes([1, 2]),
        "sum exactly")


@add
@case("minigrad.unique_consecutive", "Tensor.unique_consecutive",
      inputs=(ints(12, high=3), ints(5, 3, high=2)))
def _(lib, i, m):
    m = m.repeat_interleave(2, 0)
    return (lib.unique_consecutive(i), i.unique_consecutive(return_inverse=True,
                                                            return_counts=True),
            lib.unique_consecutive(m, return_counts=True, dim=0),
            m.unique_consecutive(return_inverse=True, dim=1), lib.tensor(3).unique_consecutive())


@add
@case("minigrad.frexp", "Tensor.frexp", "minigrad.ldexp", "Tensor.ldexp", "Tensor.ldexp_",
      "minigrad.nextafter", "Tensor.nextafter", "Tensor.nextafter_",
      inputs=(f64(5), ints(5, low=0, high=4), f32(5, grad=False)))
def _(lib, x, e, y):
    m, p = lib.frexp(x)
    return (m, p, x.frexp(), lib.ldexp(x, e), x.ldexp(x.detach()), (x * 1).ldexp_(e),
            lib.ldexp(e, e), lib.nextafter(y, y + 1), y.nextafter(lib.zeros(5)) - y,
            (y * 1).nextafter_(y * 2) - y, lib.nextafter(x, x.detach() + 1) * 2)


_raises("minigrad.frexp", lambda lib: lib.frexp(lib.tensor([1, 2])), "floating")


@add
@case("minigrad.dist", "Tensor.dist", "minigrad.renorm", "Tensor.renorm", "Tensor.renorm_",
      inputs=(f64(3, 4), f64(3, 4), f32(2, 3, 2)))
def _(lib, a, b, c):
    r = a * 1
    r.renorm_(1, 1, 2.0)
    return (lib.dist(a, b), a.dist(b, 1), a.dist(b, float("inf")), a.dist(b[0], 3),
            lib.renorm(a, 2, 0, 1.5), a.renorm(3, 1, 1.0), c.renorm(2, 2, 0.5), r)


_raises("minigrad.dist", lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([1, 2])),
        "floating point")
_raises("Tensor.renorm", lambda lib: lib.zeros(3).renorm(2, 0, 1.0), "at least 2")


@add
@case("minigrad.sgn", "Tensor.sgn", "Tensor.sgn_", "minigrad.positive", "Tensor.positive",
      "minigrad.rsub", inputs=(f32(5), ints(5, low=-2, high=3)))
def _(lib, x, i):
    return (lib.sgn(x), i.sgn(), (x * 1).sgn_(), lib.sgn(lib.tensor([True, False])),
            lib.positive(x), i.positive(), lib.rsub(x, 3.0), lib.rsub(x, x * x, alpha=2),
            lib.rsub(i, 10))


_raises("minigrad.positive", lambda lib: lib.positive(lib.tensor([True])), "bool")


@add
@case("minigrad.unravel_index", "minigrad.combinations", "minigrad.can_cast",
      inputs=(ints(2, 3, high=24), f32(4)))
def _(lib, flat, v):
    return (lib.unravel_index(flat, (4, 6)), lib.unravel_index(lib.tensor(7), (2, 4)),
            lib.unravel_index(lib.tensor([-1]), (2, 3)), lib.combinations(v),
            lib.combinations(v, 3), lib.combinations(v, 2, with_replacement=True),
            lib.combinations(v, 5), lib.can_cast(lib.float32, lib.int32),
            lib.can_cast(lib.int64, lib.float16), lib.can_cast(lib.bool, lib.uint8),
            lib.can_cast(lib.int32, lib.bool), lib.can_cast(lib.float64, lib.float16))


_raises("minigrad.unravel_index", lambda lib: lib.unravel_index(lib.tensor([1.0]), (2,)),
        "integer")


@add
@case("minigrad.histogram", inputs=(f64(20, grad=False), f64(20, grad=False, low=0, high=1)))
def _(lib, x, w):
    return (lib.histogram(x, 5), lib.histogram(x.float(), 4, range=(-1.0, 1.0)),
            lib.histogram(x, lib.tensor([-2.0, -0.5, 0.0, 2.0], dtype=lib.float64), weight=w),
            lib.histogram(x, 3, density=True), lib.histogram(lib.tensor([1.0, 1.0]), 2))


@add
@case("minigrad.gradient", inputs=(f64(6), f64(3, 4), f32(5)))
def _(lib, v, m, f):
    coords = lib.tensor([0.0, 0.5, 1.5, 1.75, 3.0, 4.5], dtype=lib.float64)
    return (lib.gradient(v), lib.gradient(v, spacing=0.5, edge_order=2),
            lib.gradient(v, spacing=(coords,)), lib.gradient(v, spacing=(coords,), edge_order=2),
            lib.gradient(m), lib.gradient(m, spacing=[2.0, 3.0], dim=[1, 0]),
            lib.gradient(m, dim=1, edge_order=2), lib.gradient(f),
            lib.gradient(lib.tensor([1, 4, 9, 16])))


_raises("minigrad.gradient", lambda lib: lib.gradient(lib.tensor([1.0]), edge_order=1),
        "at least edge_order")


@add
@case("Tensor.bernoulli_", "Tensor.bernoulli", "Tensor.random_", "Tensor.exponential_",
      "Tensor.geometric_", "Tensor.log_normal_", "Tensor.cauchy_", "minigrad.poisson",
      compare="meta", inputs=(f32(3, 4, grad=False, low=0, high=1),))
def _(lib, p):
    z = lib.zeros(3, 4)
    return (z.clone().bernoulli_(), z.clone().bernoulli_(p), p.bernoulli(),
            lib.zeros(3, dtype=lib.int64).bernoulli_(0.3), z.clone().random_(),
            lib.zeros(3, dtype=lib.uint8).random_(), z.clone().random_(5),
            z.clone().random_(-3, 3), z.clone().exponential_(2.0),
            lib.zeros(3, dtype=lib.int32).geometric_(0.4), z.clone().log_normal_(0.0, 0.5),
            z.double().cauchy_(1.0, 2.0), lib.poisson(p * 3))


_raises("Tensor.bernoulli_", lambda lib: lib.zeros(3).bernoulli_(1.5), "p")
_raises("Tensor.random_", lambda lib: lib.zeros(3).random_(3, 3), "from")
_raises("Tensor.exponential_", lambda lib: lib.zeros(3, dtype=lib.int64).exponential_(),
        "floating point")
_raises("Tensor.geometric_", lambda lib: lib.zeros(3).geometric_(1.0), "expects p")
_raises("Tensor.log_normal_", lambda lib: lib.zeros(3).log_normal_(0.0, 0.0), "std")
_raises("Tensor.cauchy_", lambda lib: lib.zeros(3).cauchy_(0.0, -1.0), "sigma")
_raises("minigrad.poisson", lambda lib: lib.poisson(lib.tensor([-1.0])), "rate")


@add
@case("testing.assert_close", inputs=(f32(3, grad=False),))
def _(lib, x):
    lib.testing.assert_close(x, x * (1 + 1e-7))
    lib.testing.assert_close([x, {"a": 1.0}], [x.clone(), {"a": 1.0 + 1e-9}])
    lib.testing.assert_close(x, x.double(), check_dtype=False)
    lib.testing.assert_close(lib.tensor([float("nan")]), lib.tensor([float("nan")]),
                             equal_nan=True)
    lib.testing.assert_close(x, x + 0.01, rtol=0, atol=0.02)
    return x


_raises("testing.assert_close", lambda lib: lib.testing.assert_close(
    lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.5])), "Mismatched elements: 1 / 2")
_raises("testing.assert_close", lambda lib: lib.testing.assert_close(
    lib.tensor([1.0]), lib.tensor([1.0], dtype=lib.float64)), "dtype")
