"""torch.special's modified Bessel functions of the second kind of orders 0 and 1,
`modified_bessel_k0`, `modified_bessel_k1`, and their exponentially scaled forms
`scaled_modified_bessel_k0` = e^x K0(x), `scaled_modified_bessel_k1` = e^x K1(x) (which do
not underflow), elementwise, as PyTorch computes them: by Cephes' Chebyshev expansions
(Moshier's coefficients, below), vectorised, so that the two agree to rounding and at the
edges:
- for 0 < x <= 2, K0 = A(x^2 - 2) - log(x/2) I0(x) and K1 = log(x/2) I1(x) + A(x^2 - 2) / x,
  A a Chebyshev series evaluated by Clenshaw's recurrence (I0 and I1 from bessel.py);
- beyond, e^-x B(8/x - 2) / sqrt(x) (0 at inf; the scaled forms leave e^-x out);
- inf at 0 and NaN for x < 0 (the real functions are complex there), NaN at NaN.
Computed in float64 and rounded to the input's dtype (integers give the default float;
float16 is refused as PyTorch's CPU kernels refuse it).

As in PyTorch, the results never require grad: it defines no derivative for these.
"""
from __future__ import annotations

import numpy as np

from .bessel import i0_array, i1_array
from .bessel_jy import values

__all__ = ["modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1"]

# Cephes' k0.c and k1.c: A on (0, 2], B on (2, inf)
_K0_A = (1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11,
         1.904516377220209e-09, 2.5347910790261494e-07, 2.286212103119452e-05,
         0.001264615411446926, 0.0359799365153615, 0.3442898999246285, -0.5353273932339028)
_K0_B = (5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17,
         -1.678231096805412e-16, 5.512055978524319e-16, -1.848593377343779e-15,
         6.3400764774050706e-15, -2.2275133269916698e-14, 8.032890775363575e-14,
         -2.9800969231727303e-13, 1.140340588208475e-12, -4.514597883373944e-12,
         1.8559491149547177e-11, -7.957489244477107e-11, 3.577397281400301e-10,
         -1.69753450938906e-09, 8.574034017414225e-09, -4.660489897687948e-08,
         2.766813639445015e-07, -1.8317555227191195e-06, 1.39498137188765e-05,
         -0.00012849549581627802, 0.0015698838857300533, -0.0314481013119645, 2.4403030820659555)
_K1_A = (-7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13,
         -1.4114883926335278e-10, -2.213387630734726e-08, -2.4334061415659684e-06,
         -0.0001730288957513052, -0.006975723859639864, -0.12261118082265715, -0.3531559607765449,
         1.5253002273389478)
_K1_B = (-5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17,
         1.838093544366639e-16, -6.057047248373319e-16, 2.038703165624334e-15,
         -7.019837090418314e-15, 2.4771544244813043e-14, -8.976705182324994e-14,
         3.3484196660784293e-13, -1.2891739609510289e-12, 5.13963967348173e-12,
         -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10,
         2.015049755197033e-09, -1.0345762465678097e-08, 5.7410841254500495e-08,
         -3.5019606030878126e-07, 2.406484947837217e-06, -1.936197974166083e-05,
         0.00019521551847135162, -0.002857816859622779, 0.10392373657681724, 2.7206261904844427)


def chebyshev_series(coefficients, t):
    """Cephes' chbevl: the Chebyshev series of `coefficients` (highest order first) at t/2."""
    b0, b1, b2 = np.full_like(t, coefficients[0]), np.zeros_like(t), np.zeros_like(t)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = t * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _k(order, x, scaled):
    """K_order of a float64 array (order 0 or 1), times e^x when scaled."""
    out = np.empty_like(x)
    small = x <= 2.0
    with np.errstate(all="ignore"):
        s = x[small]
        if order == 0:
            near = chebyshev_series(_K0_A, s * s - 2.0) - np.log(0.5 * s) * i0_array(s)
        else:
            near = np.log(0.5 * s) * i1_array(s) + chebyshev_series(_K1_A, s * s - 2.0) / s
        out[small] = near * np.exp(s) if scaled else near
        b = x[~small]
        far = chebyshev_series(_K0_B if order == 0 else _K1_B, 8.0 / b - 2.0) / np.sqrt(b)
        out[~small] = far if scaled else np.exp(-b) * far
    out[x == 0] = np.inf
    out[x < 0] = np.nan
    return out


def k0_array(x):
    """K0 of a float64 array."""
    return _k(0, x, False)


def k1_array(x):
    """K1 of a float64 array."""
    return _k(1, x, False)


def k0e_array(x):
    """e^x K0(x) of a float64 array."""
    return _k(0, x, True)


def k1e_array(x):
    """e^x K1(x) of a float64 array."""
    return _k(1, x, True)


def modified_bessel_k0(input):
    """K0(x), the modified Bessel function of the second kind of order 0, elementwise."""
    return values("modified_bessel_k0", k0_array, input)


def modified_bessel_k1(input):
    """K1(x), the modified Bessel function of the second kind of order 1, elementwise."""
    return values("modified_bessel_k1", k1_array, input)


def scaled_modified_bessel_k0(x):
    """e^x K0(x), the exponentially scaled K0, elementwise (does not underflow)."""
    return values("scaled_modified_bessel_k0", k0e_array, x)


def scaled_modified_bessel_k1(x):
    """e^x K1(x), the exponentially scaled K1, elementwise (does not underflow)."""
    return values("scaled_modified_bessel_k1", k1e_array, x)
