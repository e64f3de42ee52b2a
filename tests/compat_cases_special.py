"""Compatibility cases: torch.special as minigrad.special (each name on float32, float64,
integer, 0-d, empty and non-contiguous inputs, gradients included), the top-level sinc and
mvlgamma, and the in-place forms added with them (`t.lgamma_()`, `t.gcd_(u)`,
`t.multiply_(y)`, ...) written on tensors inside the graph, so that the runner compares the
gradients through the writes; and the errors PyTorch raises. Inputs come from their own
stream, so the shared one's draws stay as they were."""
import numpy as np

from compat_table import A, case

CASES = []
add = CASES.append
_own = np.random.default_rng(61)


def _f32(*shape, low=-3.0, high=3.0):
    return A(_own.uniform(low, high, shape).astype(np.float32), grad=True)


def _f64(*shape, low=-3.0, high=3.0):
    return A(_own.uniform(low, high, shape), grad=True)


def _ints(*shape, low=-4, high=7):
    return A(_own.integers(low, high, shape))


_EDGES = A(np.array([0.0, -0.0, 1.0, -1.0, 30.0, -30.0, float("inf"), float("-inf"),
                     float("nan")]))


def _forms(lib, fn, x, i):
    """fn of x, its transposed and strided views, one element, no elements, and integers."""
    return [fn(x), fn(x.t()[::2]), fn(x[0, 0]), fn(x[:0]), fn(i)]


@add
@case("special.erf", "special.erfc", "special.erfinv", "special.exp2", "special.expm1",
      "special.log1p", "special.expit", "special.gammaln", "special.psi", "special.digamma",
      "special.polygamma", "special.i0",
      inputs=(_f32(3, 4), _f64(4, 3, low=-0.9, high=0.9), _ints(3, 4)), rtol=1e-5, atol=1e-6)
def _(lib, x, p, i):
    s = lib.special
    out = []
    for fn in (s.erf, s.erfc, s.exp2, s.expm1, s.expit, s.gammaln, s.psi, s.digamma, s.i0):
        out += _forms(lib, fn, x, i)
    out += _forms(lib, s.erfinv, p, i) + _forms(lib, lambda t: s.log1p(t.abs()), p, i.abs())
    return out + [s.polygamma(1, x), s.polygamma(3, p.t()), s.polygamma(2, i)]


@add
@case("special.logit", "special.xlogy",
      inputs=(_f64(3, 4, low=0.01, high=0.99), _f32(4, 3, low=0.1, high=3.0), _ints(3, 4, low=0),
              A(np.array([0.0, 0.0, 0.0, 2.0, -1.0]), grad=True),
              A(np.array([0.0, -1.0, 2.0, 0.0, 2.0]), grad=True)))
def _(lib, p, y, i, zx, zy):
    s = lib.special
    return (s.logit(p), s.logit(p, eps=0.2), s.logit(p.t()[::2]), s.logit(i),
            s.logit(p * 3 - 1),  # outside [0, 1]: NaN values and gradients, as PyTorch's
            s.xlogy(p, y.t()), s.xlogy(p, 2.5), s.xlogy(3, y), s.xlogy(i, i),
            s.xlogy(zx, zy))  # x = 0 where y <= 0: gradient 0, elsewhere log(y)


@add
@case("special.ndtr", "special.log_ndtr", "special.ndtri", "special.erfcx",
      inputs=(_f64(3, 4, low=-6, high=6), _f32(4, 3, low=-6, high=6),
              _f64(3, 4, low=0.001, high=0.999), _ints(3, 4), _EDGES,
              A(np.array([0.0, 1.0, 1e-300, 1e-20, 0.5, 1 - 1e-16, -0.5, 1.5, float("nan")]))),
      rtol=1e-6, atol=1e-7)
def _(lib, x, x32, p, i, edges, p_edges):
    s = lib.special
    out = []
    for fn in (s.ndtr, s.log_ndtr, s.erfcx):
        out += _forms(lib, fn, x, i) + [fn(x32), fn(edges), fn(x * 8)]  # down to -48: the tails
    return out + _forms(lib, s.ndtri, p, i.clamp(0, 1)) + [s.ndtri(p.float()), s.ndtri(p_edges)]


@add
@case("special.i0e", "special.i1", "special.i1e", "special.modified_bessel_i0",
      "special.modified_bessel_i1", "special.spherical_bessel_j0",
      inputs=(_f64(3, 4, low=-25, high=25), _f32(4, 3), _ints(3, 4), _EDGES), rtol=1e-6,
      atol=1e-7)
def _(lib, x, x32, i, edges):
    s = lib.special
    out = []
    for fn in (s.i0e, s.i1, s.i1e, s.modified_bessel_i0, s.modified_bessel_i1,
               s.spherical_bessel_j0):
        out += _forms(lib, fn, x, i) + [fn(x32), fn(edges), fn(x32 / 10)]
    return out


@add
@case("special.entr", "special.xlog1py", "special.sinc", "minigrad.sinc", "Tensor.sinc",
      inputs=(_f64(3, 4, low=0.01, high=3), _f32(4, 3), _ints(3, 4), _EDGES,
              A(np.array([0.0, 0.0, 0.0, 2.0, -1.0]), grad=True),
              A(np.array([-1.0, -2.0, 1.0, -1.0, 2.0]), grad=True)))
def _(lib, x, y, i, edges, zx, zy):
    s = lib.special
    return (_forms(lib, s.entr, x, i) + [s.entr(edges), s.entr(y)]
            + [s.xlog1py(x, y.t()), s.xlog1py(x, 2.5), s.xlog1py(3, y), s.xlog1py(i, i),
               s.xlog1py(zx, zy), s.xlog1py(x[:0], y[0, 0])]
            + _forms(lib, s.sinc, y.t(), i) + [lib.sinc(x), x.sinc(), s.sinc(edges),
                                                y.sinc(), lib.sinc(i.float().round())])


@add
@case("special.zeta",
      inputs=(_f64(3, 4, low=1.1, high=6), _f64(3, 4, low=0.2, high=5), _f32(4, 3, low=0.5,
                                                                                high=4),
              A(np.array([2.0, 2.0, 2.0, 2.5, 1.0, 0.5, 3.0, 2.0, float("inf")])),
              A(np.array([1.0, 0.0, -1.5, -1.5, 2.0, 2.0, 1e9, float("inf"), 1.0]))),
      rtol=1e-6, atol=1e-7)
def _(lib, x, q, q32, xe, qe):
    s = lib.special
    return (s.zeta(x.detach(), q), s.zeta(x.detach().t(), q.t()), s.zeta(3, q32),
            s.zeta(x.detach(), 2), s.zeta(xe, qe), s.zeta(x[:0].detach(), q[:0]),
            s.zeta(lib.tensor([2, 3, 4]), lib.tensor([1, 1, 2])), s.zeta(x[0, 0].detach(), q))


@add
@case("special.gammainc", "special.gammaincc",
      inputs=(A(_own.uniform(0.1, 12, (3, 4))), _f64(3, 4, low=0.01, high=20),
              _f32(4, 3, low=0.1, high=6), A(np.array([0.0, 0.0, 1.0, 2.0, -1.0, np.inf, 3.0])),
              A(np.array([0.0, 1.0, 0.0, np.inf, 1.0, 1.0, np.nan]))),
      rtol=1e-6, atol=1e-7)
def _(lib, a, x, x32, ae, xe):
    s = lib.special
    out = []
    for fn in (s.gammainc, s.gammaincc):  # the gradient toward x (PyTorch has none toward a)
        out += [fn(a, x), fn(a.t(), x.t()), fn(a[0, 0], x), fn(a[:0], x[:0]), fn(ae, xe),
                fn(a.float().t(), x32), fn(a[0], x32.t()[1])]
    return out


@add
@case("special.gammainc", compare="raises", match="derivative for 'igamma: input'")
def _(lib):
    a = lib.tensor([2.0, 3.0], requires_grad=True)
    return lib.special.gammainc(a, lib.tensor([1.0, 1.0])).sum().backward()


@add
@case("special.gammaincc", compare="raises", match="not implemented for 'Long'")
def _(lib):
    return lib.special.gammaincc(lib.tensor([1, 2]), lib.tensor([1, 2]))


@add
@case("special.multigammaln", "minigrad.mvlgamma", "Tensor.mvlgamma",
      inputs=(_f64(3, 4, low=1.6, high=6), _f32(4, 3, low=1.1, high=4), _ints(3, 4, low=2)),
      rtol=1e-6, atol=1e-6)
def _(lib, a, b, i):
    return (lib.special.multigammaln(a, 4), lib.special.multigammaln(b.t(), 1),
            lib.mvlgamma(a[0, 0], 2), a.mvlgamma(3), lib.mvlgamma(i, 2), b[:0].mvlgamma(2))


@add
@case("special.softmax", "special.log_softmax", "special.logsumexp", "special.round",
      inputs=(_f32(3, 4), _f64(2, 3, 4), _ints(3, 4)))
def _(lib, x, y, i):
    s = lib.special
    return (s.softmax(x, 1), s.softmax(x.t(), 0, dtype=lib.float64), s.log_softmax(y, -1),
            s.log_softmax(i, 0, dtype=lib.float32), s.softmax(x[0, 0], 0),
            s.logsumexp(y, (0, 2)), s.logsumexp(x, 1, keepdim=True), s.logsumexp(x[:0], 1),
            s.round(x * 10), s.round(x, decimals=2), s.round(y * 500, decimals=-2),
            s.round(x.t()[::2], decimals=1))


@add
@case("special.round")
def _(lib):
    # float16 is rounded in float32, as PyTorch's kernel does: in float16, 1.949 * 10 would be
    # 19.5 (and 2.0 the result) and 2.5e4 * 10 would overflow
    h = lib.tensor([[1.949, 0.85], [-0.85, 2.5e4], [0.0, -1.949]], dtype=lib.float16)
    return (lib.special.round(h, decimals=1), lib.special.round(h.t(), decimals=-1),
            h[:, ::2].round(decimals=2), lib.special.round(h[:0], decimals=1))


# --- errors ------------------------------------------------------------------------------------

@add
@case("special.zeta", compare="raises", match="derivative for 'zeta' is not implemented")
def _(lib):
    return lib.special.zeta(lib.tensor([2.0, 3.0], requires_grad=True), 2.0).sum().backward()


@add
@case("special.multigammaln", compare="raises", match="p has to be greater than or equal to 1")
def _(lib):
    return lib.special.multigammaln(lib.tensor([2.0]), 0)


@add
@case("special.multigammaln", compare="raises", match="may not be a boolean tensor")
def _(lib):
    return lib.special.multigammaln(lib.tensor([True]), 2)


@add
@case("special.ndtri", "special.erfcx", compare="raises", match="not implemented for 'Half'")
def _(lib):
    return lib.special.ndtri(lib.tensor([0.5], dtype=lib.float16))


@add
@case("special.round", compare="raises", match="not implemented")
def _(lib):
    return lib.special.round(lib.tensor([1, 2]))


@add
@case("special.polygamma", compare="raises", match="does not support negative n")
def _(lib):
    return lib.special.polygamma(-1, lib.tensor([1.0]))


# --- in-place forms ----------------------------------------------------------------------------

@add
@case("Tensor.lgamma_", "Tensor.digamma_", "Tensor.polygamma_", "Tensor.i0_", "Tensor.sinc_",
      "Tensor.mvlgamma_", "Tensor.logit_", "Tensor.deg2rad_", "Tensor.rad2deg_", "Tensor.frac_",
      "Tensor.absolute_", "Tensor.negative_", "Tensor.fix_",
      inputs=(_f32(3, 4, low=0.05, high=0.95), _f64(4, 3, low=1.2, high=4)),
      rtol=1e-5, atol=1e-5)
def _(lib, p, a):
    """Each write on its own copy of p * 1 (a node in the graph, as PyTorch requires); a
    non-contiguous one, and a row of it, written through."""
    def write(x, name, *args):
        return getattr(x * 1, name)(*args)
    h = a.t() * 2
    h[1].lgamma_()
    return ([write(p, n) for n in ("lgamma_", "digamma_", "i0_", "sinc_", "logit_", "deg2rad_",
                                   "rad2deg_", "frac_", "absolute_", "negative_", "fix_")]
            + [write(p, "polygamma_", 2), write(a, "mvlgamma_", 2), write(p, "logit_", 0.2),
               h, h.t().digamma_()])


@add
@case("Tensor.xlogy_", "Tensor.copysign_", "Tensor.heaviside_", "Tensor.float_power_",
      "Tensor.multiply_", "Tensor.subtract_", "Tensor.divide_", "Tensor.true_divide_",
      "Tensor.addbmm_", "Tensor.addmv_", "Tensor.addr_",
      inputs=(_f32(3, 4), _f32(3, 4, low=0.2, high=2), _f64(3, 4, low=0.5, high=2),
              _f32(2, 3, 5), _f32(2, 5, 4), _f32(4), _f32(3)), rtol=1e-5, atol=1e-5)
def _(lib, x, y, d, b1, b2, v, u):
    def write(name, *args, base=x):
        return getattr(base * 1, name)(*args)
    return (write("xlogy_", y), write("xlogy_", 2.0), write("copysign_", y - 1),
            write("copysign_", -1.0), x.detach().clone().heaviside_(y.detach().round()),
            write("float_power_", 2, base=d),
            write("float_power_", d.t().t(), base=d), write("multiply_", y),
            write("subtract_", y), (x * 1).subtract_(y, alpha=2), write("divide_", y),
            (x * 1).divide_(y, rounding_mode="floor"), write("true_divide_", 2),
            write("addbmm_", b1, b2), (x[:, 0] * 1).addmv_(x, v, beta=0.5, alpha=2),
            write("addr_", u, v))


@add
@case("Tensor.gcd_", "Tensor.lcm_", "Tensor.bitwise_left_shift_",
      "Tensor.bitwise_right_shift_", "Tensor.greater_", "Tensor.greater_equal_", "Tensor.less_",
      "Tensor.less_equal_", "Tensor.not_equal_",
      inputs=(_ints(3, 4), _ints(3, 4, low=0, high=4),
              A(_own.uniform(-2, 2, (3, 4)).astype(np.float32))))
def _(lib, i, j, x):
    return (i.clone().gcd_(j), i.clone().lcm_(j), i.t().clone().gcd_(j.t()),
            i.clone().bitwise_left_shift_(j), i.clone().bitwise_right_shift_(j),
            i.clone().bitwise_left_shift_(2), x.clone().greater_(0.5), i.clone().greater_(j),
            x.clone().greater_equal_(x.t().t()), i.clone().less_(2),
            x.clone().less_equal_(x[0]), i.clone().not_equal_(j))


@add
@case("Tensor.lgamma_", "Tensor.sinc_", compare="raises",
      match="leaf Variable that requires grad")
def _(lib):
    return lib.ones(2, requires_grad=True).lgamma_()


@add
@case("Tensor.heaviside_", "minigrad.heaviside", compare="raises",
      match="derivative for 'heaviside' is not implemented")
def _(lib):
    x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    return (x * 1).heaviside_(lib.tensor([0.5, 0.5, 0.5])).sum().backward()


@add
@case("Tensor.digamma_", compare="raises", match="can't be cast to the desired output type")
def _(lib):
    return lib.tensor([1, 2]).digamma_()


@add
@case("Tensor.float_power_", compare="raises", match="float_power_")
def _(lib):
    return lib.ones(2).float_power_(2)


@add
@case("Tensor.gcd_", compare="raises", match="gcd")
def _(lib):
    return lib.ones(2).gcd_(lib.ones(2))


_BESSELS = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
            "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
            "airy_ai")


@add
@case(*(f"special.{n}" for n in _BESSELS),
      inputs=(_f64(3, 4, low=-20, high=20), _f32(4, 3, low=0.1, high=8), _ints(3, 4), _EDGES),
      rtol=1e-6, atol=1e-6)
def _(lib, x, x32, i, edges):
    # inputs that require grad give results that do not (PyTorch defines no derivative)
    out = []
    for name in _BESSELS:
        out += _forms(lib, getattr(lib.special, name), x, i)
        out += [getattr(lib.special, name)(x32), getattr(lib.special, name)(edges)]
    return out


@add
@case(*(f"special.{n}" for n in _BESSELS), compare="raises", match="not implemented for 'Half'")
def _(lib):
    return lib.special.bessel_y1(lib.ones(3, dtype=lib.float16))


_POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")


@add
@case(*(f"special.{n}" for n in _POLYNOMIALS),
      inputs=(_f64(3, 4, low=-1.2, high=1.2), _f32(4, 3, low=-1.2, high=1.2),
              A(_own.integers(-1, 12, (3, 4))), _ints(3, 4),
              A(np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, float("inf"), float("-inf")]))),
      rtol=1e-5, atol=1e-5)
def _(lib, x, x32, n, i, edges):
    # inputs that require grad give results that do not (PyTorch defines no derivative);
    # atol: PyTorch computes float32 in float32, a few roundings of 1 near the zeros
    out = []
    for name in _POLYNOMIALS:
        fn = getattr(lib.special, name)
        out += [fn(x, n), fn(x.t()[::2], n.t()[::2]), fn(x[0, 0], 5), fn(x[:0], n[:0]),
                fn(i, n), fn(x32, 3), fn(0.25, n), fn(x, 4.5), fn(edges[:, None], n[0])]
    return out


@add
@case(*(f"special.{n}" for n in _POLYNOMIALS), compare="raises",
      match="not implemented for 'Half'")
def _(lib):
    return lib.special.legendre_polynomial_p(lib.ones(3, dtype=lib.float16), 2)
