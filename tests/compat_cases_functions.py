"""Compatibility cases: elementwise functions and reductions PyTorch has at its top level,
as functions and as Tensor methods: logit, xlogy, deg2rad, rad2deg, float_power; frac,
signbit, copysign, heaviside, isposinf, isneginf; fmax, fmin, aminmax; take, argwhere; gcd,
lcm; histc; lgamma, digamma, polygamma, i0. Each on values and gradients, integer and bool
promotion, 0-d, empty and non-contiguous (transposed, strided) inputs, and errors. Inputs come
from their own stream, so the shared one's draws stay as they were."""
import numpy as np

from compat_table import A, case

CASES = []
add = CASES.append
_own = np.random.default_rng(27)


def _f32(*shape, low=-3.0, high=3.0):
    return A(_own.uniform(low, high, shape).astype(np.float32), grad=True)


def _f64(*shape, low=-3.0, high=3.0):
    return A(_own.uniform(low, high, shape), grad=True)


def _ints(*shape, low=-6, high=7):
    return A(_own.integers(low, high, shape))


_SPECIAL = A(np.array([0.0, -0.0, 1.0, -1.5, float("inf"), float("-inf"), float("nan")],
                      np.float32))


# --- log-odds and conversions --------------------------------------------------------------

@add
@case("minigrad.logit", "Tensor.logit", "minigrad.xlogy", "Tensor.xlogy",
      inputs=(_f32(3, 4, low=0.01, high=0.99), _f32(4, 3, low=0.1, high=3.0), _ints(3, 4, low=0),
              A(np.array([0.0, 0.0, 2.0, 1.0, -1.0], np.float32)),
              A(np.array([0.0, float("nan"), 0.0, float("inf"), 2.0], np.float32))),
      rtol=1e-5, atol=1e-5)
def _(lib, p, y, i, zx, zy):
    return (lib.logit(p), p.logit(eps=0.2), lib.logit(p.t()[::2], 0.3), lib.logit(i),
            lib.logit(p[0, 0]), lib.logit(p[:0]), lib.xlogy(p, y.t()), p.xlogy(y[0, :1]),
            lib.xlogy(p, 2.5), lib.xlogy(3, y), lib.xlogy(i, i), lib.xlogy(i, 2.0),
            lib.xlogy(zx, zy), lib.xlogy(p[0, 0], y[0, 0]), lib.xlogy(p[:0], y[0, 0]),
            lib.xlogy(i.bool(), p))


@add
@case("minigrad.deg2rad", "Tensor.deg2rad", "minigrad.rad2deg", "Tensor.rad2deg",
      "minigrad.float_power", "Tensor.float_power",
      inputs=(_f32(3, 4), _f32(4, 3, low=0.5, high=2.0), _ints(3, 4), _f64(3)),
      rtol=1e-6, atol=1e-6)
def _(lib, x, b, i, d):
    return (lib.deg2rad(x * 90), x.t().deg2rad(), lib.deg2rad(i), lib.rad2deg(x),
            x[::2].rad2deg(), lib.rad2deg(i[0, 0]), lib.rad2deg(x[:0]),
            lib.float_power(b, x.t()), b.float_power(2), lib.float_power(i, 2),
            lib.float_power(2.5, x), lib.float_power(b.t(), i), lib.float_power(d, b[0, :3]),
            lib.float_power(b[0, 0], 0.5), lib.float_power(b[:0], 3))


@add
@case("minigrad.float_power", compare="raises", match="Tensor as input or exponent")
def _(lib):
    return lib.float_power(2.0, 3)


@add
@case("minigrad.xlogy", compare="raises", match="xlogy: shapes")
def _(lib):
    return lib.xlogy(lib.ones(2, 3), lib.ones(2))


# --- parts of floats -------------------------------------------------------------------------

@add
@case("minigrad.frac", "Tensor.frac", "minigrad.signbit", "Tensor.signbit", "minigrad.copysign",
      "Tensor.copysign", "minigrad.isposinf", "Tensor.isposinf", "minigrad.isneginf",
      "Tensor.isneginf", inputs=(_f32(3, 4), _f32(4, 3), _ints(3, 4), _SPECIAL))
def _(lib, x, y, i, s):
    return (lib.frac(x * 2), x.t().frac(), lib.frac(x[0, 0]), lib.frac(x[:0]), lib.frac(s),
            lib.signbit(x), s.signbit(), lib.signbit(i), lib.signbit(i.bool()),
            lib.copysign(x, y.t()), x.copysign(-1), lib.copysign(x, s[:4].reshape(1, 4)),
            lib.copysign(i, x), lib.copysign(i, -2), lib.copysign(s, 1.0), x[::2].copysign(y[:, 0]),
            lib.copysign(x[0, 0], y[0, 0]), lib.copysign(x[:0], 2.0), lib.isposinf(s),
            s.isposinf(), lib.isposinf(i), lib.isneginf(s), s.isneginf(), lib.isneginf(i.bool()),
            lib.isneginf(x[:0]))


@add
@case("minigrad.heaviside", "Tensor.heaviside",
      inputs=(A(np.array([[-1.5, 0.0, 2.0], [0.0, -0.0, 3.0]], np.float32)), _ints(2, 3)))
def _(lib, x, i):
    return (lib.heaviside(x, lib.tensor(0.5)), x.t().heaviside(lib.tensor([7.0, 8.0])),
            lib.heaviside(i, lib.tensor(9)), lib.heaviside(x[0, 1], lib.tensor(-1.0)),
            lib.heaviside(x[:0], lib.tensor(1.0)))


@add
@case("minigrad.frac", compare="raises", match="'Long'")
def _(lib):
    return lib.frac(lib.tensor([1, 2]))


@add
@case("minigrad.heaviside", compare="raises", match="different dtypes")
def _(lib):
    return lib.heaviside(lib.ones(3), lib.tensor(0.5, dtype=lib.float64))


# --- extrema that ignore NaN -----------------------------------------------------------------

@add
@case("minigrad.fmax", "Tensor.fmax", "minigrad.fmin", "Tensor.fmin", "minigrad.aminmax",
      "Tensor.aminmax",
      inputs=(A(np.array([[1.0, np.nan, 3.0, 2.0], [2.0, 2.0, -1.0, np.nan]], np.float32),
                grad=True), A(np.array([1.0, 0.0, np.nan, np.nan], np.float32), grad=True),
              _f32(3, 4), _ints(3, 4), A(np.array([[1.0, 2.0, 2.0], [0.0, 0.0, 3.0]]), grad=True)))
def _(lib, x, y, z, i, t):
    return (lib.fmax(x, y), x.fmin(y), lib.fmax(z.t(), z[0, :3]), z[::2].fmin(z[1]),
            lib.fmax(i, i.t()[:1].t()), lib.fmin(i, z), lib.fmax(i, i.bool()),
            lib.fmin(z[0, 0], z[1, 1]), lib.fmax(z[:0], z[0]),
            lib.aminmax(z), z.aminmax(dim=0), lib.aminmax(t, dim=1, keepdim=True),
            t.t().aminmax(dim=-1), lib.aminmax(z, keepdim=True), lib.aminmax(i, dim=1),
            lib.aminmax(z[1, 2]), lib.aminmax(z[:0], dim=1))


@add
@case("minigrad.aminmax", compare="raises", match="empty dimension")
def _(lib):
    return lib.aminmax(lib.ones(0))


@add
@case("minigrad.aminmax", compare="raises", match="dim 1 to have non-zero size")
def _(lib):
    return lib.aminmax(lib.ones(2, 0), dim=1)


@add
@case("minigrad.fmax", compare="raises", match="must be Tensor")
def _(lib):
    return lib.fmax(lib.ones(2), 1.0)


# --- flat positions, integers and counts -----------------------------------------------------

@add
@case("minigrad.take", "Tensor.take", "minigrad.argwhere", "Tensor.argwhere",
      inputs=(_f32(3, 4), A(np.array([[0, -1, 5], [11, 5, -12]])), _ints(3, 4, low=-1, high=2)))
def _(lib, x, idx, i):
    return (lib.take(x, idx), x.t().take(idx), lib.take(x, idx[0, 1]), lib.take(x, idx[:0]),
            x[:, ::2].take(idx[0, :2]), lib.take(i, idx), lib.take(x[0, 0], lib.tensor([0, -1])),
            lib.argwhere(i), i.t().argwhere(), lib.argwhere(x > 0), lib.argwhere(i[0, 0]),
            lib.argwhere(x[:0]), lib.argwhere(lib.tensor(0.0)))


@add
@case("minigrad.take", compare="raises", match="out of range: tried to access index 12")
def _(lib):
    return lib.take(lib.ones(3, 4), lib.tensor([1, 12]))


@add
@case("minigrad.take", compare="raises", match="Expected a long tensor for index")
def _(lib):
    return lib.take(lib.ones(3, 4), lib.tensor([1], dtype=lib.int32))


@add
@case("minigrad.gcd", "Tensor.gcd", "minigrad.lcm", "Tensor.lcm",
      inputs=(_ints(3, 4, low=-20, high=21), _ints(4, 3, low=-20, high=21)))
def _(lib, a, b):
    return (lib.gcd(a, b.t()), a.t().gcd(b), lib.gcd(a, a[0].to(lib.int32)),
            lib.gcd(a.to(lib.int16), b.t().to(lib.int8)), lib.gcd(a[0, 0], b[0, 0]),
            lib.gcd(a[:0], b[:, 0]), lib.lcm(a, b.t()), a[::2].lcm(b[:, 0]),
            lib.lcm(a.to(lib.int32), b.t().to(lib.uint8)), lib.lcm(a[:0], a[0, 0]),
            lib.gcd(lib.tensor([0, 0, 7]), lib.tensor([0, -14, 0])))


@add
@case("minigrad.gcd", compare="raises", match="'Float'")
def _(lib):
    return lib.gcd(lib.ones(2), lib.ones(2))


@add
@case("minigrad.lcm", compare="raises", match="'Bool'")
def _(lib):
    return lib.lcm(lib.ones(2).bool(), lib.ones(2).bool())


@add
@case("minigrad.histc", "Tensor.histc",
      inputs=(_f32(5, 6), A(np.array([1.0, 2.0, 1.0, 3.0, 2.5, 7.0, 2.0]))))
def _(lib, x, e):
    return (lib.histc(x), x.t().histc(bins=7), lib.histc(x[::2], bins=4, min=-1, max=1),
            lib.histc(e, bins=3, min=1, max=2), e.histc(4), lib.histc(e[:0], bins=3),
            lib.histc(e[1], bins=5), lib.histc(x.detach().double(), 10, -3, 3))


@add
@case("minigrad.histc", compare="raises", match="max must be larger than min")
def _(lib):
    return lib.histc(lib.ones(3), bins=3, min=2, max=1)


@add
@case("minigrad.histc", compare="raises", match="'Long'")
def _(lib):
    return lib.histc(lib.tensor([1, 2]), bins=3)


# --- the gamma family and I0 -----------------------------------------------------------------

@add
@case("minigrad.lgamma", "Tensor.lgamma", "minigrad.digamma", "Tensor.digamma",
      "minigrad.polygamma", "Tensor.polygamma",
      inputs=(_f32(3, 4, low=-4.0, high=6.0), _f64(4, 3, low=0.1, high=9.0), _ints(3, 4, low=1),
              A(np.array([0.0, -0.0, -1.0, -2.5, 0.5, float("inf"), float("nan"), 30.0],
                         np.float32))),
      rtol=2e-5, atol=1e-5)
def _(lib, x, p, i, s):
    return (lib.lgamma(x), p.t().lgamma(), lib.lgamma(i), lib.lgamma(s), lib.lgamma(x[0, 0]),
            lib.lgamma(x[:0]), lib.digamma(x), p[::2].digamma(), lib.digamma(i), lib.digamma(s),
            lib.polygamma(0, p), lib.polygamma(1, x), p.polygamma(2), lib.polygamma(3, i),
            lib.polygamma(1, s[3:5]), lib.polygamma(2, x[1, 1]), lib.polygamma(1, x[:0]))


@add
@case("minigrad.polygamma", compare="raises", match="negative n")
def _(lib):
    return lib.polygamma(-1, lib.ones(2))


@add
@case("minigrad.i0", "Tensor.i0",
      inputs=(_f32(3, 4, low=-25.0, high=25.0), _f64(4, 3, low=-3.0, high=3.0), _ints(3, 4),
              A(np.array([0.0, -0.0, 20.0, -21.0, 80.0, 700.0, float("-inf"), float("nan")],
                         np.float32))),
      rtol=1e-5, atol=1e-6)
def _(lib, x, y, i, s):
    return (lib.i0(x), y.t().i0(), lib.i0(i), lib.i0(s[:7].double()), lib.i0(s[:5]),
            lib.i0(x[0, 0]), lib.i0(x[:0]), x[::2].i0())


@add
@case("minigrad.histc", compare="raises", match="is not finite")
def _(lib):
    return lib.histc(lib.tensor([1.0, float("nan"), 2.0]), bins=3)
