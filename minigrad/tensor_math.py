"""Tensor methods beyond the autograd core, under PyTorch's names: more elementwise math
(sin, cos, rsqrt, floor, `//`, `%`, ...), scans and norms (cumsum, norm), PyTorch's other
names of the core's methods, and triangles (tril, triu); the bitwise operators and the tests
with bool results are in tensor_logic.py, ordering and selection (sort, topk, unique, ...) in
tensor_order.py, the products and the rest of linear algebra in tensor_linalg.py.

Each differentiable method is either one op class from `minigrad.ops` or a composition of
existing ops (rsqrt is sqrt then reciprocal; sort's values are a `gather` at the sorted
positions), so its gradient comes from ops that are already tested. `Tensor` inherits these
(see tensor.py); the shape methods are in tensor_shape.py and the writes in tensor_write.py.
"""
from __future__ import annotations

import importlib

import numpy as np

from . import dtypes, ops
from . import tensor as _t
from .errors import DTypeError, DTypeNotImplementedError, ShapeError
from .scalar_conversion import checked_scalar
from .tensor_logic import LogicMethods
from .tensor_order import OrderMethods


_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


def _wrap(arr):
    return _t.Tensor._wrap(np.asarray(arr))


def _triangle(fn, name, t, diagonal):
    """tril/triu: zero the elements above (below) the given diagonal of the last two dims."""
    if t.ndim < 2:
        raise ShapeError(f"{name}: needs a tensor with at least 2 dims, got shape {t.shape}")
    keep = fn(np.ones(t.shape[-2:], dtype=bool), diagonal)
    return t.masked_fill(~keep, 0)


def _floating(t):
    """`t`, or for an integer or bool tensor `t` in the default float dtype: PyTorch's exp,
    log, sin, ... of integers are floats of that dtype (NumPy's would be float64 or float16)."""
    return t if t._array.dtype.kind in "fc" else t.to(dtypes.get_default_dtype())


def _delegate(module, name):
    """The method `t.name(...)`: `name(t, ...)` of `module`, imported when first called."""
    def method(self, *args, **kwargs):
        return getattr(importlib.import_module(module, __package__), name)(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def _softmax(op, t, dim):
    """Softmax or log-softmax as PyTorch's: a 0-d tensor is one element, and float16 is
    computed in float32 and rounded back (the kernels take float32 and float64)."""
    a = t._array
    dtype = a.dtype
    if dtype.kind != "f":
        name = "log_softmax" if op.__name__.startswith("Log") else "softmax"
        raise DTypeNotImplementedError(f"{name}: not implemented for "
                                       f"{dtype} (a floating-point tensor is needed)")
    if a.ndim == 0:
        return _softmax(op, t.reshape(1), dim).reshape(())
    if dtype.itemsize == 2:  # float16 (a cheaper test than comparing with np.float16)
        return op.apply(t.float(), dim=dim).half()
    return op.apply(t, dim=dim)


def _float_only(t, op, kinds="f"):
    """Means and variances are defined for float tensors only, as in PyTorch (means for
    complex ones too: `kinds="fc"`)."""
    if t._array.dtype.kind not in kinds:
        raise DTypeError(f"{op}: needs a floating-point tensor, got dtype {t.dtype} (convert "
                         f"it with .float())")
    return t


class MathMethods(LogicMethods, OrderMethods):
    """These methods, and through this class those of tensor_logic.py and tensor_order.py."""

    # --- elementwise ----------------------------------------------------------------------
    def __abs__(self): return self.abs()
    def __pos__(self): return self

    def pow(self, exponent): return self ** exponent
    def square(self): return self * self
    def sin(self): return ops.Sin.apply(_floating(self))
    def cos(self): return ops.Cos.apply(_floating(self))
    def tan(self): return ops.Tan.apply(_floating(self))
    def floor(self): return ops.Floor.apply(self)
    def ceil(self): return ops.Ceil.apply(self)
    def round(self, *, decimals=0):
        if decimals == 0:
            return ops.Round.apply(self)
        from .special import round as round_decimals
        return round_decimals(self, decimals=decimals)
    def trunc(self): return ops.Trunc.apply(self)
    def sign(self): return ops.Sign.apply(self)
    def clamp(self, min=None, max=None):
        bounds = [b for b in (min, max) if b is not None]
        if self._array.dtype.kind == "b" and bounds and all(
                isinstance(b, (bool, np.bool_)) for b in bounds):
            which = "clamp" if len(bounds) == 2 else "clamp_min" if max is None else "clamp_max"
            raise DTypeNotImplementedError(f'"{which}_scalar_cpu" not implemented for \'Bool\'')
        if self._array.dtype.kind == "b" and any(isinstance(b, int) and 2 ** 63 <= b < 2 ** 64
                                                 for b in bounds):
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                               "attempted to promote Bool and UInt64")  # PyTorch's words
        if bounds and (self._array.dtype.kind in "biu" or any(isinstance(b, _t.Tensor)
                                                                for b in bounds)):
            # the result's dtype is the operands' promoted one, as PyTorch's: an integer
            # tensor clamped to 1.5 gives the default float (NumPy's clip: float64), a
            # float32 one clamped to a float64 0-d tensor stays float32
            from .tensor_operators import as_dtype
            dtype = dtypes.computation_dtype([self, *bounds], "clamp")
            self = as_dtype(self, dtype)
            min, max = (b if b is None or not isinstance(b, _t.Tensor) else as_dtype(b, dtype)
                        for b in (min, max))
            if any(isinstance(b, _t.Tensor) and b.requires_grad for b in (min, max)):
                return _clamp_to_tensors(self, min, max)
            min, max = (b._array if isinstance(b, _t.Tensor) else b for b in (min, max))
        # a number bound is converted to the result's dtype as PyTorch converts it: checked
        # (int8 clamped to 1000, float16 to 1e6 raise), wrapped into uint8 (-1 is 255)
        min, max = (checked_scalar(b, self._array.dtype) if isinstance(b, _NUMBERS) else b
                    for b in (min, max))
        return ops.Clamp.apply(self, min=min, max=max)
    clip = clamp
    def clamp_min(self, min): return self.clamp(min=min)
    def clamp_max(self, max): return self.clamp(max=max)

    def fmod(self, other):
        from .ops.truncated import fmod
        return fmod(self, other)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        from .ops.nonfinite import nan_to_num
        return nan_to_num(self, nan, posinf, neginf)

    def reciprocal(self):
        return 1 / (self if self._array.dtype.kind in "fc" else self.float())

    def rsqrt(self):
        return self.sqrt().reciprocal()

    # --- scans, norms, products -----------------------------------------------------------
    def cumsum(self, dim, dtype=None):
        return ops.Cumsum.apply(self, dim=dim, dtype=dtype)

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        from .ops.product_reductions import prod
        return prod(self, dim, keepdim, dtype=dtype)

    def cumprod(self, dim, *, dtype=None):
        from .ops.product_reductions import cumprod
        return cumprod(self, dim, dtype=dtype)

    def median(self, dim=None, keepdim=False):
        from .statistics import median
        return median(self, dim, keepdim)

    def kthvalue(self, k, dim=-1, keepdim=False):
        from .statistics import kthvalue
        return kthvalue(self, k, dim, keepdim)

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        from .statistics import quantile
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    def count_nonzero(self, dim=None):
        from .statistics import count_nonzero
        return count_nonzero(self, dim)

    def mode(self, dim=-1, keepdim=False):
        from .order_statistics import mode
        return mode(self, dim, keepdim)

    def nanmedian(self, dim=None, keepdim=False):
        from .order_statistics import nanmedian
        return nanmedian(self, dim, keepdim)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        from .order_statistics import nanquantile
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        from .nan_reductions import nansum
        return nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        from .nan_reductions import nanmean
        return nanmean(self, dim, keepdim, dtype=dtype)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        from .differences import diff
        return diff(self, n, dim, prepend, append)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        from .tensor_assembly import diag_embed
        return diag_embed(self, offset, dim1, dim2)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """The vector p-norm over dim (all elements by default); "fro" is the 2-norm; that of
        complex values is the norm of their moduli. With `dtype` the input is cast to it
        first (as PyTorch computes it)."""
        x = self if dtype is None else self.to(dtype)
        x = x.abs() if x._array.dtype.kind == "c" else x
        return ops.Norm.apply(x, p=2.0 if p in ("fro", None) else p, dim=dim, keepdim=keepdim)

    # PyTorch's other names for these methods (aliases.py)
    def greater(self, other):
        return self.gt(other)

    def greater_equal(self, other):
        return self.ge(other)

    def less(self, other):
        return self.lt(other)

    def less_equal(self, other):
        return self.le(other)

    def not_equal(self, other):
        return self.ne(other)

    def subtract(self, other, *, alpha=1):
        from .aliases import subtract
        return subtract(self, other, alpha=alpha)

    def multiply(self, other):
        from .aliases import multiply
        return multiply(self, other)

    def divide(self, other, *, rounding_mode=None):
        from .aliases import divide
        return divide(self, other, rounding_mode=rounding_mode)

    def true_divide(self, other):
        from .aliases import true_divide
        return true_divide(self, other)

    def negative(self):
        return -self

    def absolute(self):
        return self.abs()

    def fix(self):
        return self.trunc()

    def moveaxis(self, source, destination):
        from .aliases import moveaxis
        return moveaxis(self, source, destination)

    def ravel(self):
        return self.reshape(-1)

    def fliplr(self):
        from .aliases import fliplr
        return fliplr(self)

    def flipud(self):
        from .aliases import flipud
        return flipud(self)

    def msort(self):
        return self.sort(0).values

    def polygamma(self, n):
        """psi's n-th derivative (gamma_functions.py): `polygamma(n, self)`."""
        from .gamma_functions import polygamma
        return polygamma(n, self)

    # functions of other modules (imported on first call: their ops import the rule tables,
    # which import the tensor)
    log1p, expm1 = _delegate(".precise", "log1p"), _delegate(".precise", "expm1")
    erf, erfc, erfinv, log2, log10, exp2 = (_delegate(".error_functions", n) for n in (
        "erf", "erfc", "erfinv", "log2", "log10", "exp2"))
    asin, acos, atan = (_delegate(".ops.inverse_trig", n) for n in ("asin", "acos", "atan"))
    sinh, cosh, asinh, acosh, atanh = (_delegate(".ops.hyperbolic", n) for n in (
        "sinh", "cosh", "asinh", "acosh", "atanh"))
    atan2, hypot = _delegate(".ops.polar", "atan2"), _delegate(".ops.polar", "hypot")
    logaddexp = _delegate(".ops.log_add_exp", "logaddexp")
    logaddexp2 = _delegate(".ops.log_add_exp", "logaddexp2")
    arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
    arcsinh, arccosh, arctanh = asinh, acosh, atanh
    take_along_dim = _delegate(".array_functions", "take_along_dim")
    deg2rad, rad2deg, float_power = (_delegate(".conversions", n) for n in (
        "deg2rad", "rad2deg", "float_power"))
    copysign, frac, heaviside, isneginf, isposinf, signbit = (
        _delegate(".float_parts", n) for n in (
            "copysign", "frac", "heaviside", "isneginf", "isposinf", "signbit"))
    histc = _delegate(".histograms", "histc")
    conj, angle, conj_physical, resolve_conj, resolve_neg, is_conj = (
        _delegate(".complex_tensors", n) for n in (
            "conj", "angle", "conj_physical", "resolve_conj", "resolve_neg", "is_conj"))
    stft, istft = _delegate(".spectral", "stft"), _delegate(".spectral", "istft")
    real = property(_delegate(".complex_tensors", "real"))
    imag = property(_delegate(".complex_tensors", "imag"))
    lgamma, digamma = (_delegate(".gamma_functions", n) for n in ("lgamma", "digamma"))
    i0 = _delegate(".bessel", "i0")
    argwhere, take = (_delegate(".index_functions", n) for n in ("argwhere", "take"))
    gcd, lcm = _delegate(".integer_math", "gcd"), _delegate(".integer_math", "lcm")
    logit, xlogy = _delegate(".log_odds", "logit"), _delegate(".log_odds", "xlogy")
    aminmax, fmax, fmin = (_delegate(".nan_extrema", n) for n in ("aminmax", "fmax", "fmin"))
    tensor_split = _delegate(".array_functions", "tensor_split")
    rot90 = _delegate(".array_functions", "rot90")
    cummax, cummin = _delegate(".scans", "cummax"), _delegate(".scans", "cummin")
    logcumsumexp = _delegate(".scans", "logcumsumexp")

    def lerp(self, end, weight):
        from .composite import lerp
        return lerp(self, end, weight)

    def addcmul(self, tensor1, tensor2, *, value=1):
        from .composite import addcmul
        return addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        from .composite import addcdiv
        return addcdiv(self, tensor1, tensor2, value=value)

    def bincount(self, weights=None, minlength=0):
        """Counts of each value of a 1-D non-negative integer tensor (summed weights if given)."""
        if self.ndim != 1 or self.dtype.kind not in "iub":
            raise RuntimeError(f"bincount: only 1-d non-negative integral inputs are supported, "
                               f"got a {self.ndim}-d tensor of {self.dtype}")
        if self.numel() and int(self._array.min()) < 0:
            raise RuntimeError("bincount: the input must have non-negative values, got "
                               f"{int(self._array.min())}")
        if minlength < 0:
            raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
        w = None if weights is None else np.asarray(_t.array_of(weights))
        if w is not None and w.shape != self.shape:
            raise RuntimeError(f"bincount: weights of shape {w.shape} do not match the input's "
                               f"shape {self.shape}")
        if not self.numel():  # PyTorch's int64 zeros, whatever the weights
            return _wrap(np.zeros(minlength, np.int64))
        if w is not None and w.dtype == np.float32:
            # PyTorch adds float weights into a float result one element after another, in
            # the input's order (np.bincount would sum them in double and round once)
            size = max(minlength, int(self._array.max()) + 1)
            out = np.zeros(size, np.float32)
            np.add.at(out, self._array, w)
            return _wrap(out)
        out = np.bincount(self._array, weights=w, minlength=minlength)
        if w is None:
            return _wrap(out.astype(np.int64))
        return _wrap(out.astype(np.float64))  # other weights are counted in double

    def diagonal(self, offset=0, dim1=0, dim2=1):
        from .matrix_parts import diagonal
        return diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal=0):
        from .matrix_parts import diag
        return diag(self, diagonal)

    def trace(self):
        from .matrix_parts import trace
        return trace(self)

    def tile(self, dims):
        from .tensor_assembly import tile
        return tile(self, dims)

    def tril(self, diagonal=0): return _triangle(np.tril, "tril", self, diagonal)
    def triu(self, diagonal=0): return _triangle(np.triu, "triu", self, diagonal)


def _clamp_to_tensors(x, lo, hi):
    """clamp with bounds that take gradients: each element's gradient goes to x where x lies
    within [lo, hi] (ties included), else to the bound it was clamped to, as PyTorch's."""
    if lo is not None:
        x = ops.Where.apply((x < lo)._array, lo, x)
    if hi is not None:
        x = ops.Where.apply((x > hi)._array, hi, x)
    return x
