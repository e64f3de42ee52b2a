"""`minigrad.special`, PyTorch's `torch.special`: the special functions under their SciPy-style
names, gathered from the modules that compute them (error_functions, normal_functions,
gamma_functions, incomplete_gamma, hurwitz_zeta, bessel, bessel_jy, bessel_k, airy,
orthogonal_polynomials, log_odds, sinc, precise), with PyTorch's aliases (`expit` is
sigmoid, `gammaln` lgamma, `psi` digamma) and its forms of softmax, log_softmax, logsumexp
and round (`decimals`).

`modified_bessel_i0` and `modified_bessel_i1` are I0 and I1 as PyTorch's newer family has
them: their results, like `spherical_bessel_j0`'s, the J, Y and K functions', `airy_ai`'s and
the orthogonal polynomials', never require grad (PyTorch defines no derivative for them), where
`i0` and `i1` are differentiable.
"""
import numpy as np

from . import out_arg as _out_arg
from .out_names import OUT_NAMES as _OUT_NAMES
from .airy import airy_ai
from .autograd import op as autograd_op
from .bessel import i0, i0e, i1, i1e
from .bessel_jy import bessel_j0, bessel_j1, bessel_y0, bessel_y1
from .bessel_k import (modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0,
                       scaled_modified_bessel_k1)
from .error_functions import _no_half, erf, erfc, erfinv, exp2
from .gamma_functions import digamma, multigammaln, polygamma
from .gamma_functions import lgamma as gammaln
from .hurwitz_zeta import zeta
from .incomplete_gamma import gammainc, gammaincc
from .log_odds import entr, logit, xlog1py, xlogy
from .normal_functions import erfcx, log_ndtr, ndtr, ndtri
from .orthogonal_polynomials import (chebyshev_polynomial_t, chebyshev_polynomial_u,
                                     chebyshev_polynomial_v, chebyshev_polynomial_w,
                                     hermite_polynomial_h, hermite_polynomial_he,
                                     laguerre_polynomial_l, legendre_polynomial_p,
                                     shifted_chebyshev_polynomial_t,
                                     shifted_chebyshev_polynomial_u,
                                     shifted_chebyshev_polynomial_v,
                                     shifted_chebyshev_polynomial_w)
from .precise import _floating, expm1, log1p
from .sinc import sinc, spherical_bessel_j0

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
           "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
           "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

psi = digamma


def expit(input):
    """1 / (1 + exp(-x)), elementwise: the logistic sigmoid."""
    return input.sigmoid()


def _cast(input, dtype):
    return input if dtype is None else input.to(dtype)


def softmax(input, dim, *, dtype=None):
    """exp(x) / sum exp(x) along dim, computed in `dtype` when given."""
    return _cast(input, dtype).softmax(dim)


def log_softmax(input, dim, *, dtype=None):
    """x - logsumexp(x) along dim, computed in `dtype` when given."""
    return _cast(input, dtype).log_softmax(dim)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) along dim (an int or a tuple), without overflow."""
    return input.logsumexp(dim, keepdim)


def round(input, *, decimals=0):
    """x rounded half to even, to `decimals` decimal places (negative: to tens, hundreds...):
    as PyTorch, x * 10^d rounded, then divided by 10^d (x / 10^-d, then times, for d < 0)."""
    if not input.is_floating_point():  # as PyTorch's torch.special.round, unlike torch.round
        raise NotImplementedError(f"special.round: not implemented for {input.dtype} tensors; "
                                  f"convert to float first")
    if decimals == 0:
        return input.round()
    if input.dtype == np.float16:
        # PyTorch's CPU kernel computes a float16 x * 10^d in float32 and rounds only the
        # result: a product rounded to float16 first can land on .5 (1.949 * 10 = 19.49 is
        # 19.5 in float16, and 2.0 comes out instead of 1.9) or overflow (2.5e4 * 10)
        return round(input.float(), decimals=decimals).half()
    scale = 10.0 ** abs(decimals)
    if decimals > 0:
        return (input * scale).round() / scale
    return (input / scale).round() * scale


def _no_grad_values(name, fn, input):
    _no_half(name, input)
    return autograd_op.Tensor._wrap(fn(_floating(input).detach())._array)


def modified_bessel_i0(input):
    """I0(x), elementwise; the result does not require grad (see the module's docstring)."""
    return _no_grad_values("modified_bessel_i0", i0, input)


def modified_bessel_i1(input):
    """I1(x), elementwise; the result does not require grad (see the module's docstring)."""
    return _no_grad_values("modified_bessel_i1", i1, input)

# PyTorch's out= on every function here whose PyTorch counterpart takes it (out_arg.py)
globals().update(_out_arg.accept_out(globals(), _OUT_NAMES['special'], 'special_'))
