"""The sweep's ops (tests/compat_sweep.py) of torch.special as minigrad.special, of the
top-level functions added with it (sinc, mvlgamma), and the in-place forms of the special,
conversion and integer functions and of PyTorch's other names of the core's methods: each on
every dtype and layout, against PyTorch. Arguments are kept in their domains where the swept
values would leave them (ndtri's p in (0, 1), erfinv's in (-1, 1))."""
from __future__ import annotations


def _u(name, fn):
    return name, 1, fn


def _b(name, fn):
    return name, 2, fn


def _special(name):
    return _u(f"special.{name}", lambda L, x: getattr(L.special, name)(x))


UNARY_SPECIAL = [_special(n) for n in (
    "expit", "logit", "gammaln", "psi", "digamma", "i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr",
    "erf", "erfc", "erfcx", "exp2", "expm1", "log1p", "entr", "sinc", "spherical_bessel_j0",
    "modified_bessel_i0", "modified_bessel_i1", "round", "bessel_j0", "bessel_j1", "bessel_y0",
    "bessel_y1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "airy_ai")] + [
    _u("special.ndtri", lambda L, x: L.special.ndtri(x / 6 + 0.5)),
    _u("special.erfinv", lambda L, x: L.special.erfinv(x / 3)),
    _u("special.polygamma", lambda L, x: L.special.polygamma(2, x)),
    _u("special.multigammaln", lambda L, x: L.special.multigammaln(x, 3)),
    _u("special.round (decimals)", lambda L, x: L.special.round(x, decimals=1)),
    _u("special.round (negative decimals)", lambda L, x: L.special.round(x * 40, decimals=-1)),
    _u("special.softmax", lambda L, x: L.special.softmax(x, -1)),
    _u("special.log_softmax", lambda L, x: L.special.log_softmax(x, -1, dtype=L.float64)),
    _u("special.logsumexp", lambda L, x: L.special.logsumexp(x, -1)),
    _u("special.logit (eps)", lambda L, x: L.special.logit(x / 3 + 0.5, eps=0.1)),
    _u("special.zeta (number x)", lambda L, x: L.special.zeta(3, x)),
    _u("special.xlogy (number y)", lambda L, x: L.special.xlogy(x, 2.5)),
    _u("minigrad.sinc", lambda L, x: L.sinc(x)),
    _u("minigrad.mvlgamma", lambda L, x: L.mvlgamma(x, 2)),
    _u("Tensor.sinc", lambda L, x: x.sinc()),
    _u("Tensor.mvlgamma", lambda L, x: x.mvlgamma(1)),
]
BINARY_SPECIAL = [
    _b("special.xlogy", lambda L, x, y: L.special.xlogy(x, y)),
    _b("special.xlog1py", lambda L, x, y: L.special.xlog1py(x, y)),
    _b("special.zeta", lambda L, x, y: L.special.zeta(x, y)),
    _b("special.zeta (x > 1)", lambda L, x, y: L.special.zeta(x.double().abs() + 1, y)),
    _b("special.gammainc", lambda L, x, y: L.special.gammainc(x, y)),
    _b("special.gammaincc", lambda L, x, y: L.special.gammaincc(x, y)),
    _b("special.gammainc (domain)", lambda L, x, y: L.special.gammainc(x.abs(), y.abs())),
    _b("special.gammaincc (domain)", lambda L, x, y: L.special.gammaincc(x.abs(), y.abs())),
] + [_b(f"special.{n}", lambda L, x, y, n=n: getattr(L.special, n)(x, y)) for n in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")]
INPLACE_SPECIAL = [_u(f"Tensor.{m}", lambda L, x, m=m: getattr(x, m)()) for m in (
    "sinc_", "lgamma_", "digamma_", "i0_", "logit_", "deg2rad_", "rad2deg_", "frac_",
    "absolute_", "negative_", "fix_")] + [
    _u("Tensor.polygamma_", lambda L, x: x.polygamma_(1)),
    _u("Tensor.mvlgamma_", lambda L, x: x.mvlgamma_(1)),
    _u("Tensor.float_power_", lambda L, x: x.float_power_(2)),
] + [_b(f"Tensor.{m}", lambda L, x, y, m=m: getattr(x, m)(y)) for m in (
    "xlogy_", "copysign_", "heaviside_", "gcd_", "lcm_", "multiply_", "subtract_", "divide_",
    "true_divide_", "greater_", "greater_equal_", "less_", "less_equal_", "not_equal_")] + [
    _b("Tensor.bitwise_left_shift_", lambda L, x, y: x.bitwise_left_shift_(y.abs())),
    _b("Tensor.bitwise_right_shift_", lambda L, x, y: x.bitwise_right_shift_(y.abs())),
]
