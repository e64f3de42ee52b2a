"""`assert_close`, PyTorch's `torch.testing.assert_close`: the test a unit test asserts
with, comparing tensors (or numbers, or sequences and mappings of them) within tolerances.

Each pair must agree in type, shape and (with `check_dtype`, the default) dtype; then
|actual - expected| <= atol + rtol * |expected| must hold elementwise, with PyTorch's
default tolerances for the dtype when neither is given (exact for integers and bools). NaN
equals NaN only with `equal_nan`; infinities must match exactly. A failure raises
AssertionError in PyTorch's words: how many elements differ, and the greatest absolute and
relative differences with their indices (`msg` replaces that text).
"""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from .tensor import Tensor

__all__ = ["assert_close"]

# (rtol, atol) when neither is given: PyTorch's defaults per dtype
_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
               np.dtype(np.float64): (1e-7, 1e-7), np.dtype(np.complex64): (1.3e-6, 1e-5),
               np.dtype(np.complex128): (1e-7, 1e-7)}


def _tolerances(dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {missing}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _dtype_name(dtype):
    return f"minigrad.{dtype}"


def _mismatch(actual, expected, rtol, atol, equal_nan, scalar, what):
    """The failure text for two arrays (None if they are close)."""
    integral = actual.dtype.kind in "biu"  # differences printed as integers
    # a scalar's differences are Python floats' (float64), as PyTorch prints them
    compute = np.float64 if actual.dtype == np.float64 or integral or scalar else np.float32
    if actual.dtype.kind == "c" or expected.dtype.kind == "c":  # |a - e| of complex values
        compute = np.complex128 if compute is np.float64 else np.complex64
    a, e = actual.astype(compute), expected.astype(compute)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        close |= (a == e)  # equal infinities (isclose takes inf - inf as NaN)
        if close.all():
            return None
        diff = np.abs(a - e)
        rel = diff / np.abs(e)
    if equal_nan:
        both = np.isnan(a) & np.isnan(e)
        diff, rel = np.where(both, 0, diff), np.where(both, 0, rel)
    verb = "equal" if rtol == 0 and atol == 0 else "close"
    allowed_abs = "" if verb == "equal" else f" (up to {atol} allowed)"
    allowed_rel = "" if verb == "equal" else f" (up to {rtol} allowed)"
    if integral:
        diff = diff.astype(np.int64)
    if scalar:
        return (f"Scalars are not {verb}!\n\nExpected {expected.item()} but got "
                f"{actual.item()}.\nAbsolute difference: {diff.item()}{allowed_abs}\n"
                f"Relative difference: {rel.item()}{allowed_rel}")
    n_bad, n = int((~close).sum()), close.size
    return (f"{what} are not {verb}!\n\nMismatched elements: {n_bad} / {n} "
            f"({100 * n_bad / n:.1f}%)\n"
            f"Greatest absolute difference: {_greatest(diff)}{allowed_abs}\n"
            f"Greatest relative difference: {_greatest(rel)}{allowed_rel}")


def _greatest(d):
    """'value at index (i, j)' of d's largest element, a NaN first."""
    nan = np.isnan(d) if d.dtype.kind in "fc" else np.zeros(d.shape, bool)
    flat = int(np.argmax(nan)) if nan.any() else int(np.argmax(d))
    index = tuple(int(i) for i in np.unravel_index(flat, d.shape))
    return f"{d.reshape(-1)[flat].item()} at index {index}"


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride):
    a, e = actual._array, expected._array
    if a.shape != e.shape:
        return (f"The values for attribute 'shape' do not match: {actual.shape!r} != "
                f"{expected.shape!r}.")
    if check_dtype and a.dtype != e.dtype:
        return (f"The values for attribute 'dtype' do not match: {_dtype_name(a.dtype)} != "
                f"{_dtype_name(e.dtype)}.")
    if check_stride and actual.stride() != expected.stride():
        return (f"The values for attribute 'stride()' do not match: {actual.stride()} != "
                f"{expected.stride()}.")
    rtol, atol = _tolerances({a.dtype, e.dtype}, rtol, atol)
    if a.dtype != e.dtype:
        common = np.result_type(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    return _mismatch(a, e, rtol, atol, equal_nan, a.ndim == 0, "Tensor-likes")


def _compare_numbers(actual, expected, rtol, atol, equal_nan):
    if type(actual) is not type(expected):
        return f"The (d)types do not match: {type(actual)} != {type(expected)}."
    as_array = np.asarray(actual)
    dtype = np.dtype(np.float64) if isinstance(actual, float) else as_array.dtype
    rtol, atol = _tolerances({dtype}, rtol, atol)
    return _mismatch(as_array.astype(dtype), np.asarray(expected).astype(dtype), rtol, atol,
                     equal_nan, True, "Scalars")


def _failure(actual, expected, where, **options):
    """(text, where) of the first pair that fails, walking sequences and mappings."""
    tensors = (Tensor, np.ndarray)
    if isinstance(actual, tensors) and isinstance(expected, tensors):
        if type(actual) is not type(expected):
            raise TypeError(f"No comparison pair was able to handle inputs of type "
                            f"{type(actual)} and {type(expected)}.")
        wrap = (lambda x: x) if isinstance(actual, Tensor) else Tensor._wrap
        return _compare_tensors(wrap(actual), wrap(expected), **options), where
    plain = (str, bytes)
    if isinstance(actual, collections.abc.Sequence) and not isinstance(actual, plain) and \
            isinstance(expected, collections.abc.Sequence) and not isinstance(expected, plain):
        if len(actual) != len(expected):
            return f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", \
                where
        for i, (x, y) in enumerate(zip(actual, expected)):
            text, at = _failure(x, y, where + [i], **options)
            if text:
                return text, at
        return None, where
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected,
                                                                  collections.abc.Mapping):
        if set(actual) != set(expected):
            missing = sorted(set(expected) - set(actual), key=repr)
            extra = sorted(set(actual) - set(expected), key=repr)
            return (f"The keys of the mappings do not match:\nMissing keys in the actual "
                    f"mapping: {missing}\nAdditional keys in the actual mapping: {extra}"), where
        for k in expected:
            text, at = _failure(actual[k], expected[k], where + [k], **options)
            if text:
                return text, at
        return None, where
    numeric = (numbers.Number, np.number, np.bool_)
    if isinstance(actual, numeric) and isinstance(expected, numeric):
        options.pop("check_dtype"), options.pop("check_stride")
        return _compare_numbers(actual, expected, **options), where
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless actual and expected (tensors, arrays, numbers, or
    sequences and mappings of them, alike in structure) are close: same shape and dtype,
    and |actual - expected| <= atol + rtol * |expected| elementwise. `msg` (a string, or a
    function of the generated text) replaces the generated text."""
    del allow_subclasses, check_device, check_layout  # one device and one layout here
    text, where = _failure(actual, expected, [], rtol=rtol, atol=atol, equal_nan=equal_nan,
                           check_dtype=check_dtype, check_stride=check_stride)
    if text is None:
        return
    if where:
        text += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in where)
    if msg is not None:
        text = msg(text) if callable(msg) else msg
    raise AssertionError(text)
