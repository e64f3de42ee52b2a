"""Compatibility cases: special functions (erf, erfc, erfinv, log2, log10, exp2), product
reductions, statistics and order statistics, matrix parts and tensor assembly."""
import numpy as np

from compat_table import A, case, f32, f64, ints

CASES = []
add = CASES.append


@add
@case("minigrad.erf", "minigrad.erfc", "minigrad.erfinv", "minigrad.log2", "minigrad.log10",
      "minigrad.exp2", "Tensor.erf", "Tensor.erfc", "Tensor.erfinv", "Tensor.log2",
      "Tensor.log10", "Tensor.exp2", inputs=(f32(3, 4, low=-0.95, high=0.95),
                                              f64(5, low=0.1, high=9)))
def _(lib, x, p):
    return (lib.erf(x), lib.erfc(x * 3), lib.erfinv(x), lib.log2(p), lib.log10(p), lib.exp2(x),
            x.erf(), x.t().erfc(), (x / 2).erfinv(), p.log2(),
            p.log10(), p.exp2(), lib.log2(lib.tensor([1, 8, 1024])), lib.erf(lib.tensor(True)))


@add
@case("Tensor.erf_", "Tensor.erfc_", "Tensor.erfinv_", "Tensor.log2_", "Tensor.log10_",
      "Tensor.exp2_", inputs=(f32(2, 3, low=0.05, high=0.95),))
def _(lib, x):
    return [getattr(x * 1, name)() for name in ("erf_", "erfc_", "erfinv_", "log2_",
                                                "log10_", "exp2_")]
