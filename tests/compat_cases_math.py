"""Compatibility cases: elementwise math, comparisons and logic, reductions, products, ordering."""
import numpy as np

from compat_table import A, bools, case, f32, f64, ints

CASES = []
add = CASES.append


def unary(name, method=None, low=-2.0, high=2.0, **kw):
    """One case for minigrad.<name>(x) and x.<method>() on float32 values in [low, high)."""
    method = method or name

    def program(lib, x):
        return getattr(lib, name)(x), getattr(x, method)() * 1.5
    return case(f"minigrad.{name}", f"Tensor.{method}", inputs=(f32(3, 4, low=low, high=high),),
                **kw)(program)


for _name, _low in [("exp", -2), ("log", 0.1), ("sqrt", 0.1), ("abs", -2), ("tanh", -2),
                    ("sigmoid", -2), ("relu", -2), ("sin", -3), ("cos", -3), ("rsqrt", 0.2),
                    ("square", -2), ("reciprocal", 0.2), ("neg", -2), ("sign", -2),
                    ("floor", -2), ("ceil", -2), ("round", -2), ("trunc", -2)]:
    add(unary(_name, low=_low))


@add
@case("Tensor.__add__", "Tensor.__radd__", "Tensor.__sub__", "Tensor.__rsub__", "Tensor.__mul__",
      "Tensor.__rmul__", "Tensor.__truediv__", "Tensor.__rtruediv__", "Tensor.__neg__",
      "Tensor.__pow__", "Tensor.__rpow__", "Tensor.add", "Tensor.sub", "Tensor.mul", "Tensor.div",
      "Tensor.neg", "Tensor.pow", "minigrad.add", "minigrad.sub", "minigrad.mul", "minigrad.div",
      "minigrad.pow", "Tensor.__pos__", inputs=(f32(2, 3, low=0.5), f32(3, low=0.5)))
def _(lib, a, b):
    return (a + b, 1 + a, a - b, 2 - b, a * b, 3 * a, a / b, 1 / b, -a, a ** 2, a ** b, 2 ** b,
            a.add(b), a.sub(b), a.mul(b), a.div(b), a.neg(), a.pow(3), lib.add(a, b, alpha=2),
            lib.sub(a, 1.5), lib.mul(a, b), lib.div(a, b), lib.pow(a, 0.5), +a)


@add
@case("Tensor.__floordiv__", "Tensor.__rfloordiv__", "Tensor.__mod__", "Tensor.__rmod__",
      "Tensor.floor_divide", "Tensor.remainder", "minigrad.floor_divide", "minigrad.remainder",
      inputs=(ints(6, low=-9, high=9), A(np.array([5.5, -7.25, 3.0, 0.5])),
              f32(4, low=1, high=3, grad=False)))
def _(lib, i, x, y):  # PyTorch has no gradient for //, so these inputs do not require one
    return (i // 2, i % 3, 7 // (i.abs() + 1), 7 % (i.abs() + 1), x // 2, x % 3, x % y,
            i.floor_divide(4), i.remainder(-4), lib.floor_divide(x, y), lib.remainder(x, y),
            lib.div(i, 4, rounding_mode="floor"), lib.div(x, 2, rounding_mode="trunc"))


@add
@case("Tensor.__mod__", "minigrad.remainder", inputs=(f32(5, low=-4, high=4),
                                                     f32(5, low=0.7, high=2, grad=False)))
def _(lib, x, y):  # PyTorch differentiates remainder in its first argument only
    return x % y, lib.remainder(x, 1.5), 3.0 % y


@add
@case("Tensor.__abs__", "minigrad.abs", inputs=(f32(5),))
def _(lib, x):
    return abs(x), lib.abs(x)


@add
@case("minigrad.clamp", "Tensor.clamp", "minigrad.clip", "Tensor.clip", "minigrad.clamp_min",
      "minigrad.clamp_max", "Tensor.clamp_min", "Tensor.clamp_max", "minigrad.maximum",
      "minigrad.minimum", "Tensor.maximum", "Tensor.minimum",
      inputs=(f32(3, 4, low=-3, high=3), f32(3, 4)))
def _(lib, x, y):
    return (lib.clamp(x, -1, 1), x.clamp(min=0.5), x.clamp(max=0.2), lib.clip(x, -0.5, 0.5),
            x.clip(0, 1), lib.clamp_min(x, 0.1), lib.clamp_max(x, 0.1), x.clamp_min(-0.3),
            x.clamp_max(0.3), lib.maximum(x, y), lib.minimum(x, y), x.maximum(y), x.minimum(y))


# --- comparisons and logic ---------------------------------------------------------------------

@add
@case("Tensor.__eq__", "Tensor.__ne__", "Tensor.__lt__", "Tensor.__le__", "Tensor.__gt__",
      "Tensor.__ge__", "Tensor.eq", "Tensor.ne", "Tensor.lt", "Tensor.le", "Tensor.gt",
      "Tensor.ge", "Tensor.__invert__", "Tensor.__and__", "Tensor.__or__", "Tensor.__xor__",
      "Tensor.logical_not", "Tensor.logical_and", "Tensor.logical_or", "Tensor.logical_xor",
      "minigrad.logical_not", "minigrad.logical_and", "minigrad.logical_or",
      "minigrad.logical_xor", inputs=(ints(3, 4), ints(4), bools(3, 4)))
def _(lib, a, b, m):
    return (a == b, a != 2, a < b, a <= b, a > 1, a >= b, a.eq(b), a.ne(b), a.lt(2), a.le(2),
            a.gt(b), a.ge(1), ~m, m & (a > 1), m | (a > 3), m ^ (a > 2), m.logical_not(),
            m.logical_and(a > 1), a.logical_or(b), m.logical_xor(a > 0), lib.logical_not(a),
            lib.logical_and(m, a > 2), lib.logical_or(m, m), lib.logical_xor(m, a > 1))


@add
@case("Tensor.bitwise_and", "Tensor.bitwise_or", "Tensor.bitwise_xor", "Tensor.bitwise_not",
      "Tensor.bitwise_left_shift", "Tensor.bitwise_right_shift", "Tensor.__rand__",
      "Tensor.__ror__", "Tensor.__rxor__", "Tensor.__lshift__", "Tensor.__rshift__",
      "Tensor.__rlshift__", "Tensor.__rrshift__", "minigrad.bitwise_and", "minigrad.bitwise_or",
      "minigrad.bitwise_xor", "minigrad.bitwise_not", "minigrad.bitwise_left_shift",
      "minigrad.bitwise_right_shift", inputs=(ints(3, 4, low=-9, high=9), ints(4, high=4)))
def _(lib, a, n):
    return (a & 6, a | n, a ^ -1, ~a, a.bitwise_and(n), a.bitwise_or(3), a.bitwise_xor(n),
            a.bitwise_not(), a.bitwise_left_shift(n), a.bitwise_right_shift(1), 5 & a, 5 | a,
            5 ^ a, a << n, a >> n, 1 << n, 64 >> n, lib.bitwise_and(a, n), lib.bitwise_or(a, n),
            lib.bitwise_xor(3, a), lib.bitwise_not(a > 0), lib.bitwise_left_shift(a, 2),
            lib.bitwise_right_shift(a, n))


@add
@case("Tensor.__xor__", inputs=(f32(3, grad=False),), compare="raises",
      match="bitwise_xor: not implemented for float32")
def _(lib, x):
    return x ^ 1


@add
@case("minigrad.isnan", "minigrad.isinf", "minigrad.isfinite", "Tensor.isnan", "Tensor.isinf",
      "Tensor.isfinite", "minigrad.isclose", "minigrad.allclose", "minigrad.equal",
      "Tensor.isclose", "Tensor.allclose", "Tensor.equal",
      inputs=(A(np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)),))
def _(lib, x):
    y = lib.tensor([1.0, 2.0, 3.0])
    z = y + 1e-7
    return (lib.isnan(x), lib.isinf(x), lib.isfinite(x), x.isnan(), x.isinf(), x.isfinite(),
            lib.isclose(y, z), lib.allclose(y, z), lib.allclose(y, y + 1), lib.equal(y, y.clone()),
            lib.equal(y, y[:2]), y.isclose(z, atol=0, rtol=0), y.allclose(z), y.equal(z),
            lib.allclose(x, x, equal_nan=True))


@add
@case("minigrad.any", "minigrad.all", "Tensor.any", "Tensor.all", inputs=(bools(3, 4),))
def _(lib, m):
    return lib.any(m), lib.all(m), m.any(dim=1), m.all(0), m.any(1, keepdim=True), lib.all(m, 1)


@add
@case("minigrad.where", inputs=(bools(3, 4), f32(3, 4), f32(4)))
def _(lib, m, x, y):
    return lib.where(m, x, y), lib.where(m, x, 0.0), lib.where(m, 1.0, y)


# --- reductions and scans ----------------------------------------------------------------------

@add
@case("minigrad.sum", "minigrad.mean", "Tensor.sum", "Tensor.mean", "minigrad.logsumexp",
      "Tensor.logsumexp", inputs=(f32(2, 3, 4),))
def _(lib, x):
    return (lib.sum(x), x.sum(1), x.sum((0, 2), keepdim=True), lib.mean(x, -1), x.mean(),
            x.mean(dim=(1, 2)), lib.logsumexp(x, 1), x.logsumexp(-1, keepdim=True))


@add
@case("minigrad.var", "minigrad.std", "Tensor.var", "Tensor.std", inputs=(f32(3, 5),),
      rtol=1e-4)
def _(lib, x):
    return (lib.var(x), x.var(1), x.var(0, unbiased=False), x.var(1, correction=0, keepdim=True),
            lib.std(x, 1), x.std(), x.std(0, unbiased=False))


@add
@case("minigrad.max", "minigrad.min", "Tensor.max", "Tensor.min", "minigrad.amax",
      "minigrad.amin", "Tensor.amax", "Tensor.amin", "minigrad.argmax", "minigrad.argmin",
      "Tensor.argmax", "Tensor.argmin", inputs=(A(np.array([[1, 3, 3, 0], [2, 2, 0, 5]],
                                                         np.float32), grad=True), f32(2, 4)))
def _(lib, x, y):
    v, i = lib.max(x, 1)
    m = x.min(dim=0, keepdim=True)
    return (lib.max(x), lib.min(x), v, i, m.values, m.indices, x.max(-1).values,
            lib.max(x, y), x.min(y), lib.amax(x, 1), lib.amin(x, 0), x.amax((0, 1)), x.amin(-1),
            lib.argmax(x), lib.argmin(x, 1), x.argmax(dim=1, keepdim=True), x.argmin())


@add
@case("minigrad.cumsum", "Tensor.cumsum", inputs=(f32(3, 4), ints(5), bools(4)))
def _(lib, x, i, m):
    return lib.cumsum(x, 1), x.cumsum(0), x.cumsum(dim=-1), i.cumsum(0), m.cumsum(0)


@add
@case("minigrad.norm", "Tensor.norm", inputs=(f32(3, 4),), rtol=1e-4)
def _(lib, x):
    return (lib.norm(x), x.norm(dim=1), x.norm(p=1, dim=0), x.norm(float("inf"), dim=1),
            x.norm(3, dim=1, keepdim=True), x.norm(dim=(0, 1)))


@add
@case("Tensor.norm", inputs=(A(np.zeros((2, 3), np.float32), grad=True),))
def _(lib, x):
    return x.norm(dim=1), x.norm()  # gradient 0, not NaN, at the zero vector


# --- products ----------------------------------------------------------------------------------

@add
@case("minigrad.matmul", "Tensor.matmul", "Tensor.__matmul__", "Tensor.__rmatmul__",
      "minigrad.mm", "minigrad.bmm", "Tensor.mm", "Tensor.bmm", "minigrad.dot", "Tensor.dot",
      "minigrad.outer", "Tensor.outer", inputs=(f32(2, 3, 4), f32(2, 4, 5), f32(4), f32(3)))
def _(lib, a, b, u, v):
    return (lib.matmul(a, b), a.matmul(u), a @ b, a[0] @ b[0], lib.mm(a[0], b[1]),
            lib.bmm(a, b), a[1].mm(b[0]), a.bmm(b), lib.dot(u, u), u.dot(a[0, 0]),
            lib.outer(u, v), v.outer(u), b[0].__rmatmul__(a[1]))


@add
@case("minigrad.einsum", inputs=(f32(2, 3, 4), f32(2, 5, 4), f32(3, 4), f32(4)))
def _(lib, q, k, m, u):
    return (lib.einsum("bqd,bkd->bqk", q, k), lib.einsum("ij,j->i", m, u),
            lib.einsum("...d,d->...", q, u), lib.einsum("bij->bj", q),
            lib.einsum("ij,kj", m, m), lib.einsum("i,i->", u, u), lib.einsum("bqd", q),
            lib.einsum("bqd,qd->bq", [q, m]))


# --- ordering and selection --------------------------------------------------------------------

@add
@case("minigrad.sort", "minigrad.argsort", "Tensor.sort", "Tensor.argsort",
      inputs=(A(np.array([[3, 1, 2, 1], [0, 5, 5, -1]], np.float32), grad=True), ints(7)))
def _(lib, x, i):
    v, idx = lib.sort(x)
    d = x.sort(dim=0, descending=True)
    return (v, idx, d.values, d.indices, lib.argsort(x, 1), x.argsort(descending=True),
            i.sort().values, lib.sort(x, stable=True).indices)


@add
@case("minigrad.topk", "Tensor.topk", inputs=(f32(3, 6), A(np.array([7, 3, 9, 1, 5, 8]))))
def _(lib, x, i):
    v, idx = lib.topk(x, 2)
    s = x.topk(3, dim=0, largest=False)
    return v, idx, s.values, s.indices, i.topk(4).indices, x.topk(1, dim=1).values


@add
@case("minigrad.nonzero", "Tensor.nonzero", inputs=(ints(3, 4, high=3),))
def _(lib, a):
    return lib.nonzero(a), a.nonzero(as_tuple=True), (a > 0).nonzero()


@add
@case("minigrad.unique", "Tensor.unique", inputs=(ints(10, high=4),))
def _(lib, a):
    u, inv, counts = a.unique(return_inverse=True, return_counts=True)
    return lib.unique(a), u, inv, counts, a.unique(return_counts=True)


@add
@case("minigrad.tril", "minigrad.triu", "Tensor.tril", "Tensor.triu", inputs=(f32(2, 3, 4),))
def _(lib, x):
    return (lib.tril(x), lib.triu(x, 1), x.tril(-1), x.triu(diagonal=-1),
            lib.tril(lib.ones(3, 3)), lib.triu(lib.ones(2, 2, dtype=lib.long)))


@add
@case("Tensor.sum", "Tensor.mean", "Tensor.amax", "Tensor.amin", "Tensor.logsumexp",
      "Tensor.var", "Tensor.std", "Tensor.max", "Tensor.min", "Tensor.argmax", "Tensor.argmin",
      "Tensor.any", "Tensor.all", "minigrad.sum", "minigrad.mean", "minigrad.amax",
      "minigrad.amin", "minigrad.logsumexp", "minigrad.var", "minigrad.std", "minigrad.max",
      "minigrad.min", "minigrad.argmax", "minigrad.argmin", "minigrad.any", "minigrad.all",
      inputs=(f32(3, 4),))
def _(lib, x):
    """NumPy's names axis= and keepdims= for dim= and keepdim=, which PyTorch accepts too."""
    m = x > 0
    return (x.sum(axis=1), x.sum(axis=(0, 1), keepdims=True), x.mean(axis=0, keepdims=True),
            x.amax(axis=1), x.amin(axis=0, keepdims=True), x.logsumexp(axis=1, keepdims=True),
            x.var(axis=0), x.std(axis=1, keepdims=True), tuple(x.max(axis=1, keepdims=True)),
            tuple(x.min(axis=0)), x.argmax(axis=1), x.argmin(axis=0, keepdims=True),
            m.any(axis=1), m.all(axis=0, keepdims=True), lib.sum(x, axis=0, keepdims=True),
            lib.mean(x, axis=1), lib.amax(x, axis=0), lib.amin(x, axis=1, keepdims=True),
            lib.logsumexp(x, axis=0), lib.var(x, axis=1), lib.std(x, axis=0, keepdims=True),
            tuple(lib.max(x, axis=0)), tuple(lib.min(x, axis=1, keepdims=True)),
            lib.argmax(x, axis=1), lib.argmin(x, axis=0), lib.any(m, axis=0),
            lib.all(m, axis=1, keepdims=True))


@add
@case("minigrad.where", inputs=(f32(3, 4),))
def _(lib, x):
    """where(condition) alone: the indices of the True elements, one tensor per dim."""
    return lib.where(x > 0), lib.where(x.detach()[0] > 0), lib.where(lib.tensor([0, 3, 0, 1]))


# the inverse trigonometric and hyperbolic functions, and PyTorch's arc* names of them
for _name, _low, _high in [("asin", -0.95, 0.95), ("acos", -0.95, 0.95), ("atan", -3, 3),
                           ("sinh", -3, 3), ("cosh", -3, 3), ("asinh", -3, 3),
                           ("acosh", 1.05, 4), ("atanh", -0.95, 0.95)]:
    add(unary(_name, low=_low, high=_high))
    if _name[0] == "a":
        add(unary("arc" + _name[1:], low=_low, high=_high))


@add
@case("minigrad.atan2", "minigrad.arctan2", "minigrad.hypot", "minigrad.logaddexp",
      "minigrad.logaddexp2", "Tensor.atan2", "Tensor.arctan2", "Tensor.hypot",
      "Tensor.logaddexp", "Tensor.logaddexp2", inputs=(f32(2, 3), f32(3), ints(2, 3, low=-3)))
def _(lib, a, b, i):
    """Broadcast operands, mixed float32 and float64 ones, every quadrant of atan2 (and its
    integers, which give floats), the origin and large values (no overflow)."""
    big = lib.tensor([200.0, -200.0, 0.0, 3e38])
    return (lib.atan2(a, b), lib.arctan2(b, a.double()), lib.atan2(i, i.t().flip(0).t()),
            lib.hypot(a, b), lib.hypot(big, big), lib.logaddexp(a, b), lib.logaddexp(big, -big),
            lib.logaddexp2(a, b.double()), lib.logaddexp2(big, big), a.atan2(b),
            b.arctan2(a), a.hypot(b), b.logaddexp(a), a.logaddexp2(b),
            lib.atan2(lib.zeros(2), lib.tensor([0.0, -0.0])))


@add
@case("minigrad.logaddexp", compare="raises",
      match="logaddexp: not implemented for int64")
def _(lib):
    return lib.logaddexp(lib.tensor([1]), lib.tensor([2]))


@add
@case("minigrad.atan2", compare="raises", match="must be Tensor, not float")
def _(lib):
    return lib.atan2(lib.tensor([1.0]), 2.0)


@add
@case("minigrad.cummax", "minigrad.cummin", "Tensor.cummax", "Tensor.cummin",
      inputs=(A(np.array([[1.5, -2.0, 1.5, 3.0], [0.5, 0.5, -1.0, 0.5], [2.0, np.nan, 1.0, 4.0]],
                         np.float32), grad=True), ints(3, 5, high=3)))
def _(lib, x, i):
    """Ties (the later index wins), a NaN (kept once met), integers, the first dim, 0-d."""
    return (tuple(lib.cummax(x, 1)), tuple(lib.cummin(x, dim=0)), tuple(x.cummax(-1)),
            tuple(x.t().cummin(1)), tuple(i.cummax(1)), tuple(lib.cummin(i, 0)),
            tuple(x[0, 0].cummax(0)), tuple((i > 0).cummax(1)))


@add
@case("minigrad.logcumsumexp", "Tensor.logcumsumexp", inputs=(f32(3, 4), f64(5, low=-800,
                                                                             high=800)))
def _(lib, x, y):
    """Values far apart (no overflow, no underflow to -inf), -inf and inf, another dim."""
    edges = lib.tensor([-float("inf"), 0.0, -float("inf"), 1.0])
    return (lib.logcumsumexp(x, 1), x.logcumsumexp(dim=0), y.logcumsumexp(0),
            x.t().logcumsumexp(-1), lib.logcumsumexp(edges, 0), x[0, 0].logcumsumexp(0))


@add
@case("minigrad.logcumsumexp", compare="raises", match="not implemented for int64")
def _(lib):
    return lib.logcumsumexp(lib.tensor([1, 2]), 0)
