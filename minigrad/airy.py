"""torch.special.airy_ai: Airy's function Ai(x), the solution of y'' = x y that decays as
x -> inf, elementwise, as PyTorch computes it: by Cephes' airy.c (Moshier's coefficients,
below), vectorised, so that the two agree to rounding and at the edges:
- for x < -2.09, the oscillating asymptotic form pi^-1/2 (-x)^-1/4 (sin(t) (1 + z^2 F(z^2))
  - cos(t) z G(z^2)), t = zeta + pi/4, zeta = (2/3) (-x)^3/2, z = 1/zeta, F and G rational;
- for x >= 2.09, the decaying one pi^-1/2 A(1/zeta) / (2 x^1/4 e^zeta), zeta = (2/3) x^3/2,
  A rational; 0 beyond 103.892, where it underflows;
- between, the Maclaurin series c1 f(x) - c2 g(x) (f = 1 + x^3/3! + 1*4 x^6/6! + ...,
  g = x + 2 x^4/4! + 2*5 x^7/7! + ...), summed until a term of f is below 2^-52 of it;
- NaN at +-inf (as PyTorch's) and at NaN.
Computed in float64 and rounded to the input's dtype (integers give the default float;
float16 is refused as PyTorch's CPU kernel refuses it).

As in PyTorch, the result never requires grad: it defines no derivative for it.
"""
from __future__ import annotations

import math

import numpy as np

from .bessel_jy import polynomial, values

__all__ = ["airy_ai"]

# Cephes' airy.c: A of the decaying form (AN/AD), F and G of the oscillating one (AFN/AFD,
# AGN/AGD)
_AN = (0.346538101525629, 12.007595273964581, 76.27960536152345, 168.08922493463058,
       159.75639135016442, 70.53609068404442, 14.026469116338967, 1.0)
_AD = (0.5675945326387702, 14.75625625848472, 84.51389701414746, 177.31808814540045,
       164.2346928715297, 71.47784008255756, 14.095913560783403, 1.0)
_AFN = (-0.1316963234183318, -0.6264565444319123, -0.6931580360369335, -0.2797799815451191,
        -0.04919001326095003, -0.004062659235948854, -0.0001592764962392621,
        -2.776491081552329e-06, -1.6778769848911465e-08)
_AFD = (13.356042070655324, 32.682503279522464, 26.736704094149957, 9.187074029072596,
        1.4752914677166642, 0.11568717379518804, 0.004402916416152112, 7.547203482874142e-05,
        4.5185009297058035e-07)
_AGN = (0.01973399320916857, 0.39110302961568827, 1.0657989759959559, 0.9391692298166502,
        0.35146565610554764, 0.06338889196289255, 0.005858041130483885, 0.000282851600836737,
        6.98793669997261e-06, 8.117892395543892e-08, 3.415517847659236e-10)
_AGD = (9.30892908077442, 19.835292871831214, 15.564662893286462, 5.476860694229755,
        0.9542936116189619, 0.08645808263523921, 0.004126565238242226, 0.00010125908511650914,
        1.1716673321441352e-06, 4.9183457006293e-09)


_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_C1, _C2 = 0.355028053887817239260, 0.258819403792806798405  # Ai(0) and -Ai'(0)
_EDGE, _UNDERFLOW = 2.09, 103.892


def _oscillating(x):
    zeta = -2.0 * x * np.sqrt(-x) / 3.0
    z = 1.0 / zeta
    zz = z * z
    f = polynomial(_AFN, zz) / polynomial(_AFD, zz)
    g = polynomial(_AGN, zz) / polynomial(_AGD, zz)
    t = zeta + 0.25 * math.pi
    return _INV_SQRT_PI / np.sqrt(np.sqrt(-x)) * (np.sin(t) * (1.0 + zz * f) - np.cos(t) * (z * g))


def _decaying(x):
    zeta = 2.0 * x * np.sqrt(x) / 3.0
    a = polynomial(_AN, 1.0 / zeta) / polynomial(_AD, 1.0 / zeta)
    return _INV_SQRT_PI * a / (2.0 * np.sqrt(np.sqrt(x)) * np.exp(zeta))


def _maclaurin(x):
    """c1 f(x) - c2 g(x), each element summed until its own term is small (once at least)."""
    z = x * x * x
    f, g, m, n, k = np.ones_like(x), x.copy(), np.ones_like(x), x.copy(), np.ones_like(x)
    live = np.ones(x.shape, bool)
    while live.any():
        zl, kl = z[live], k[live]
        ml = m[live] * zl / (kl + 1.0)
        nl = n[live] * zl / (kl + 2.0)
        ml = ml / (kl + 2.0)
        nl = nl / (kl + 3.0)
        m[live], n[live], k[live] = ml, nl, kl + 3.0
        f[live] += ml
        g[live] += nl
        live[live] = np.abs(ml / f[live]) > np.finfo(np.float64).eps
    return _C1 * f - _C2 * g


def airy_ai_array(x):
    """Ai of a float64 array."""
    out = np.full_like(x, np.nan)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x)
        low, high = finite & (x < -_EDGE), finite & (x >= _EDGE) & (x <= _UNDERFLOW)
        middle = ~np.isinf(x) & ~(x < -_EDGE) & ~(x >= _EDGE)  # NaN too: NaN out
        out[low] = _oscillating(x[low])
        out[high] = _decaying(x[high])
        out[finite & (x > _UNDERFLOW)] = 0.0
        out[middle] = _maclaurin(x[middle])
    return out


def airy_ai(x):
    """Ai(x), Airy's function of the first kind, elementwise."""
    return values("airy_ai", airy_ai_array, x)
