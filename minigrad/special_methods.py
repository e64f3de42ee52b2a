"""The Tensor methods of the special and elementwise functions added beside the core's, and
the in-place forms PyTorch has for them and for PyTorch's other names of the core's methods
(`t.lgamma_()`, `t.xlogy_(y)`, `t.gcd_(u)`, `t.multiply_(y)`, `t.addmv_(m, v)`, ...).

Every in-place form is the out-of-place method written into the tensor through
tensor_write's `_assign`, the one in-place path: it checks that the result casts to the
tensor's dtype under PyTorch's rule (a float result into an integer tensor is refused, as
`lgamma_` of int64 is there), writes through views, bumps the version counter, refuses a
leaf that requires grad while recording, and records the write so that gradients flow
through it. `Tensor` inherits these methods (see tensor.py).
"""
from __future__ import annotations

from .tensor_math import _delegate
from .tensor_write import _in_place


class SpecialMethods:
    sinc = _delegate(".sinc", "sinc")
    mvlgamma = _delegate(".gamma_functions", "multigammaln")

    # the special functions' in-place forms
    sinc_, mvlgamma_ = _in_place("sinc"), _in_place("mvlgamma")
    lgamma_, digamma_, polygamma_ = _in_place("lgamma"), _in_place("digamma"), _in_place(
        "polygamma")
    i0_, logit_, xlogy_ = _in_place("i0"), _in_place("logit"), _in_place("xlogy")
    # conversions, float parts and integer math
    deg2rad_, rad2deg_ = _in_place("deg2rad"), _in_place("rad2deg")
    frac_, copysign_, heaviside_ = _in_place("frac"), _in_place("copysign"), _in_place(
        "heaviside")
    gcd_, lcm_ = _in_place("gcd"), _in_place("lcm")
    # PyTorch's other names of the core's in-place methods
    absolute_, negative_, fix_ = _in_place("absolute"), _in_place("negative"), _in_place("fix")
    multiply_, subtract_ = _in_place("multiply"), _in_place("subtract")
    divide_, true_divide_ = _in_place("divide"), _in_place("true_divide")
    greater_, greater_equal_ = _in_place("greater"), _in_place("greater_equal")
    less_, less_equal_, not_equal_ = _in_place("less"), _in_place("less_equal"), _in_place(
        "not_equal")
    addbmm_, addmv_, addr_ = _in_place("addbmm"), _in_place("addmv"), _in_place("addr")
    bitwise_left_shift_ = _in_place("bitwise_left_shift")
    bitwise_right_shift_ = _in_place("bitwise_right_shift")

    def float_power_(self, exponent):
        """In place: `t.float_power(exponent)`, which is float64, so t must be float64 (as in
        PyTorch, where the float32 it could be written into is refused too)."""
        if str(self.dtype) != "float64":
            raise RuntimeError(f"float_power_: the base given to float_power_ has dtype "
                               f"{self.dtype} but the operation's result requires dtype "
                               f"float64")
        return self._assign("float_power_", lambda old: old.float_power(exponent))
