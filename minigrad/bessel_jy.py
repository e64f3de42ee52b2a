"""torch.special's Bessel functions of the first and second kinds of orders 0 and 1,
`bessel_j0`, `bessel_j1`, `bessel_y0`, `bessel_y1`, elementwise, as PyTorch computes them:
by Cephes' rational approximations (Moshier's coefficients, below), vectorised, so that the
two agree to rounding and at the edges:
- for |x| <= 5, J0 = (x^2 - j01^2)(x^2 - j02^2) R(x^2) (its first two zeros factored out;
  1 - x^2/4 below 1e-5) and J1 = x (x^2 - j11^2)(x^2 - j12^2) R(x^2); Y0 = R(x^2) +
  (2/pi) log(x) J0(x) and Y1 = x R(x^2) + (2/pi) (J1(x) log(x) - 1/x), -inf at 0 and NaN for
  x < 0 (the real functions are complex there);
- beyond, Hankel's asymptotic form sqrt(2/(pi x)) (P(z) cos(x - phase) - (5/x) Q(z)
  sin(x - phase)) (sin and cos swapped, signs as they fall, for Y), P and Q rational in
  z = 25/x^2, phase pi/4 for order 0, 3 pi/4 for order 1; NaN at +-inf (cos(inf)), as
  PyTorch's.
J0 is even and J1 odd. Computed in float64 and rounded to the input's dtype (integers give
the default float; float16 is refused as PyTorch's CPU kernels refuse it).

As in PyTorch, the results never require grad: it defines no derivative for these.
"""
from __future__ import annotations

import math

import numpy as np

from .autograd import op as autograd_op
from .error_functions import _in_float64, _no_half
from .precise import _floating

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"]

# Cephes' j0.c and j1.c: P and Q of the asymptotic form, R of J (RP/RQ) and of Y (YP/YQ)
_J0_PP = (0.0007969367292973471, 0.08283523921074408, 1.239533716464143, 5.447250030587687,
          8.74716500199817, 5.303240382353949, 1.0)
_J0_PQ = (0.0009244088105588637, 0.08562884743544745, 1.2535274390105895, 5.470977403304171,
          8.761908832370695, 5.306052882353947, 1.0)
_J0_QP = (-0.011366383889846916, -1.2825271867050931, -19.553954425773597, -93.20601521237683,
          -177.68116798048806, -147.07750515495118, -51.41053267665993, -6.050143506007285)
_J0_QQ = (64.3178256118178, 856.4300259769806, 3882.4018360540163, 7240.467741956525,
          5930.727011873169, 2062.0933166032783, 242.0057402402914)
_J0_RP = (-4794432209.782018, 1956174919465.5657, -249248344360967.72, 9708622510473064.0)
_J0_RQ = (499.563147152651, 173785.4016763747, 48440965.83399621, 11185553704.535683,
          2112775201154.892, 310518229857422.56, 3.1812195594320496e+16, 1.7108629408104315e+18)
_Y0_YP = (15592.436785523574, -14663929.59039716, 5435264770.518765, -982136065717.9115,
          87590639439536.7, -3466283033847297.0, 4.4273326857256984e+16, -1.8495080043698668e+16)
_Y0_YQ = (1041.2835366425984, 626107.330137135, 268919633.39381415, 86400248710.3935,
          20297961275010.555, 3171577528429750.5, 2.5059625617265306e+17)
_J1_PP = (0.0007621256162081731, 0.07313970569409176, 1.1271960812968493, 5.112079511468076,
          8.424045901417724, 5.214515986823615, 1.0)
_J1_PQ = (0.0005713231280725487, 0.06884559087544954, 1.105142326340617, 5.073863861286015,
          8.399855543276042, 5.209828486823619, 1.0)
_J1_QP = (0.05108625947501766, 4.982138729512334, 75.82382841325453, 366.7796093601508,
          710.8563049989261, 597.4896124006136, 211.68875710057213, 25.207020585802372)
_J1_QQ = (74.23732770356752, 1056.4488603826283, 4986.410583376536, 9562.318924047562,
          7997.041604473507, 2826.1927851763908, 336.0936078106983)
_J1_RP = (-899971225.7055594, 452228297998.19403, -72749424522181.83, 3682957328638529.0)
_J1_RQ = (620.8364781180543, 256987.25675774884, 83514679.14319493, 22151159547.97925,
          4749141220799.914, 784369607876235.9, 8.952223361846274e+16, 5.322786203326801e+18)
_Y1_YP = (1263204747.9017804, -647355876379.1603, 114509511541823.73, -8127702555013251.0,
          2.024394757135949e+17, -7.788771962659501e+17)
_Y1_YQ = (594.3015923461282, 235564.09294306856, 73481194.44597217, 18760131610.870617,
          3882312774962.3857, 620557727146953.8, 6.871410873553005e+16, 3.9727060811656064e+18)


_TWO_OVER_PI = 2.0 / math.pi
_SQRT_TWO_OVER_PI = math.sqrt(2.0 / math.pi)
_J0_ZEROS_SQUARED = (5.78318596294678452118e+00, 3.04712623436620863991e+01)
_J1_ZEROS_SQUARED = (1.46819706421238932572e+01, 4.92184563216946036703e+01)


def polynomial(coefficients, z):
    """sum_i c_i z^(k - i) by Horner's rule, the highest power's coefficient first."""
    out = np.zeros_like(z)
    for c in coefficients:
        out = out * z + c
    return out


def _hankel(order, a, second_kind):
    """J or Y of order 0 or 1 at a > 5 by the asymptotic form (NaN at inf)."""
    pp, pq, qp, qq = ((_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0
                      else (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ))
    z = 25.0 / (a * a) if order == 0 else 5.0 / a * (5.0 / a)  # each kernel's rounding
    p = polynomial(pp, z) / polynomial(pq, z)
    q = 5.0 / a * (polynomial(qp, z) / polynomial(qq, z))
    shifted = a - (0.25 if order == 0 else 0.75) * math.pi
    if second_kind:
        wave = p * np.sin(shifted) + q * np.cos(shifted)
    else:
        wave = p * np.cos(shifted) - q * np.sin(shifted)
    return wave * _SQRT_TWO_OVER_PI / np.sqrt(a)


def _by_range(x, near, far):
    """near(x) where |x| <= 5, far(x) elsewhere (NaN included), warnings silenced."""
    out = np.empty_like(x)
    small = np.abs(x) <= 5.0
    with np.errstate(all="ignore"):
        out[small] = near(x[small])
        out[~small] = far(x[~small])
    return out


def _j0_near(x):
    z = x * x
    exact = (z - _J0_ZEROS_SQUARED[0]) * (z - _J0_ZEROS_SQUARED[1]) * (
        polynomial(_J0_RP, z) / polynomial(_J0_RQ, z))
    return np.where(np.abs(x) < 1e-5, 1.0 - z / 4.0, exact)


def _j1_near(x):  # odd in x as written: the same value, negated, at -x (-0.0 at -0.0)
    z = x * x
    return (polynomial(_J1_RP, z) / polynomial(_J1_RQ, z) * x * (z - _J1_ZEROS_SQUARED[0])
            * (z - _J1_ZEROS_SQUARED[1]))


def j0_array(x):
    """J0 of a float64 array."""
    return _by_range(x, _j0_near, lambda v: _hankel(0, np.abs(v), False))


def j1_array(x):
    """J1 of a float64 array."""
    return _by_range(x, _j1_near,
                     lambda v: np.where(v < 0, -1.0, 1.0) * _hankel(1, np.abs(v), False))


def _y_near(order, x):
    z = x * x
    if order == 0:
        value = (polynomial(_Y0_YP, z) / polynomial(_Y0_YQ, z)
                 + _TWO_OVER_PI * np.log(x) * j0_array(x))
    else:
        value = (x * (polynomial(_Y1_YP, z) / polynomial(_Y1_YQ, z))
                 + _TWO_OVER_PI * (j1_array(x) * np.log(x) - 1.0 / x))
    return np.where(x == 0, -np.inf, np.where(x < 0, np.nan, value))


def _y_far(order, x):
    return np.where(x < 0, np.nan, _hankel(order, np.abs(x), True))


def y0_array(x):
    """Y0 of a float64 array (-inf at 0, NaN for x < 0)."""
    return _by_range(x, lambda v: _y_near(0, v), lambda v: _y_far(0, v))


def y1_array(x):
    """Y1 of a float64 array (-inf at 0, NaN for x < 0)."""
    return _by_range(x, lambda v: _y_near(1, v), lambda v: _y_far(1, v))


def values(name, array_fn, input):
    """array_fn of the input in float64, rounded to its dtype, as a tensor that does not
    require grad (the newer torch.special functions have no derivative)."""
    if not isinstance(input, autograd_op.Tensor):
        raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _no_half(name, input)
    return autograd_op.Tensor._wrap(_in_float64(array_fn, _floating(input).detach()._array))


def bessel_j0(input):
    """J0(x), the Bessel function of the first kind of order 0, elementwise."""
    return values("bessel_j0", j0_array, input)


def bessel_j1(input):
    """J1(x), the Bessel function of the first kind of order 1, elementwise."""
    return values("bessel_j1", j1_array, input)


def bessel_y0(input):
    """Y0(x), the Bessel function of the second kind of order 0, elementwise (NaN for x < 0)."""
    return values("bessel_y0", y0_array, input)


def bessel_y1(input):
    """Y1(x), the Bessel function of the second kind of order 1, elementwise (NaN for x < 0)."""
    return values("bessel_y1", y1_array, input)
