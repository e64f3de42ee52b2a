"""Factories for new tensors, with PyTorch's signatures and dtype rules.

Floats default to the default float dtype (float32 unless `set_default_dtype` changed it, as in
PyTorch), so `dtype=None` means `get_default_dtype()`. Every
factory takes `device=` (a CPU device; see device.py), `layout=` and `pin_memory=` (checked:
see platform/layout.py), and the random ones take `generator=` (random.py); without one they
draw from the generator `manual_seed` resets.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .platform.device import check_device
from .platform.layout import factory_keywords
from .platform.memory_format import check_memory_format
from .dtypes import (bool_, complex_of, float16, float32, float64, get_default_dtype, int32,  # noqa: F401
                     int64, long, promote_types, resolve, uint8)
from .errors import DTypeNotImplementedError, InvalidValueError, negative_size
from .linalg_checks import torch_dtype_name
from .scalar_conversion import checked_array, checked_scalar
from . import random_draws as _draws
from .random import engine as _engine
from .spacing import arange_values, linspace_values
from .tensor import Tensor


def _shape(size, op):
    """PyTorch's `*size`: zeros(2, 3), zeros((2, 3)), zeros([2, 3]) or zeros(()), as ints >= 0."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        shape = tuple(int(n.__index__()) for n in size)
    except (AttributeError, TypeError):
        raise TypeError(f"{op}: size must be ints or one tuple of ints, got "
                        f"{tuple(size)!r}") from None
    if any(n < 0 for n in shape):
        raise negative_size(op, shape)
    return shape


def _make(arr, dtype, requires_grad, device, op):
    """Wrap `arr` (cast to `dtype` if given) after checking the device."""
    check_device(device, op)
    t = Tensor._wrap(arr if dtype is None else arr.astype(resolve(dtype), copy=False))
    return t.requires_grad_(True) if requires_grad else t


_PYTHON_NUMBERS = (np.dtype(np.float64), np.dtype(np.complex128))


_PYTHON_DTYPES = {bool: lambda: bool_, int: lambda: int64, float: get_default_dtype,
                  complex: lambda: complex_of(get_default_dtype())}


def _leaf_dtypes(data, found):
    """Add to `found` the dtype PyTorch gives each number of nested lists `data`: a NumPy
    scalar or array (or a tensor) its own, a Python float the default float dtype (a complex
    its complex form), an int int64, a bool bool. A list is looked at by the types it holds,
    so a long list of floats costs one pass in C."""
    if not isinstance(data, (list, tuple)):
        data = [data]
    for kind in set(map(type, data)):
        if kind in _PYTHON_DTYPES:
            found.add(np.dtype(_PYTHON_DTYPES[kind]()))
        elif issubclass(kind, np.generic):
            found.add(np.dtype(kind))
        else:  # nested lists, arrays, tensors: each their own
            for item in data:
                if type(item) is kind:
                    if isinstance(item, (list, tuple)):
                        _leaf_dtypes(item, found)
                    else:
                        found.add(np.dtype(item.dtype))
    return found


def _inferred_dtype(data):
    """PyTorch's dtype for `data` holding Python floats or complex numbers: each number's own
    (see _leaf_dtypes), promoted together; so np.float64(1.0) keeps float64 and
    [np.float32(1.0), 2.0] is float32, where NumPy would make both float64."""
    found = _leaf_dtypes(data, set())
    return functools.reduce(promote_types, found) if found else get_default_dtype()  # []


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of `data` (a list, number, array or tensor); Python floats
    take the default float dtype, arrays keep theirs."""
    check_device(device, "tensor")
    if isinstance(data, Tensor):
        data = data._array
    target = None if dtype is None else np.dtype(resolve(dtype))
    if target is not None and target.kind in "iu" and not isinstance(data, np.ndarray):
        arr = checked_array(data, target)  # numbers range-checked (uint8 wraps -1), as PyTorch
    else:
        with np.errstate(over="ignore"):  # 1e300 as float32 is inf, without a warning
            arr = np.array(data, dtype=target)
    if arr.dtype.kind in "USO":
        raise TypeError(f"tensor: invalid data type '{type(data).__name__}' (got {arr.dtype})")
    if dtype is None and arr.dtype in _PYTHON_NUMBERS and not isinstance(data, np.ndarray):
        # NumPy made float64 of Python floats, which take the default float dtype here
        with np.errstate(over="ignore"):
            arr = arr.astype(_inferred_dtype(data))
    t = Tensor.__new__(Tensor)
    t._init(arr, requires_grad)  # its error names "tensor" for an integer dtype
    return t


def as_tensor(data, dtype=None, device=None):
    """`data` as a tensor, sharing memory with a NumPy array or tensor when the dtype allows."""
    check_device(device, "as_tensor")
    if isinstance(data, Tensor) and (dtype is None or resolve(dtype) == data.dtype):
        return data
    if isinstance(data, np.ndarray):
        return Tensor._wrap(data if dtype is None else data.astype(resolve(dtype), copy=False))
    return tensor(data, dtype)


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray` (writes to one show in the other), dtype kept."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    if ndarray.dtype.hasobject:
        raise TypeError("from_numpy: arrays of dtype object cannot become tensors")
    return Tensor._wrap(ndarray)


@factory_keywords
def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _make(np.zeros(_shape(size, "zeros"), resolve(dtype)), None, requires_grad, device,
                 "zeros")


@factory_keywords
def ones(*size, dtype=None, device=None, requires_grad=False):
    return _make(np.ones(_shape(size, "ones"), resolve(dtype)), None, requires_grad, device,
                 "ones")


@factory_keywords
def empty(*size, dtype=None, device=None, requires_grad=False):
    """A tensor whose values are whatever the memory held (fill it before reading it)."""
    return _make(np.empty(_shape(size, "empty"), resolve(dtype)), None, requires_grad, device,
                 "empty")


def _fill_dtype(fill_value):
    """full()'s dtype from its value: bool, int64, the default float or its complex dtype
    (PyTorch's rule)."""
    if isinstance(fill_value, (bool, np.bool_)):
        return bool_
    if isinstance(fill_value, (int, np.integer)):
        return int64
    if isinstance(fill_value, (complex, np.complexfloating)):
        return complex_of(get_default_dtype())
    return get_default_dtype()


@factory_keywords
def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    shape = _shape((size,) if isinstance(size, (tuple, list)) else (size,), "full")
    fill = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    dtype = resolve(dtype, _fill_dtype(fill))
    return _make(np.full(shape, checked_scalar(fill, dtype), dtype), None, requires_grad, device,
                 "full")


def _like(op, make, t, dtype, device, requires_grad, memory_format=None):
    """The `*_like` family: `make(shape, dtype)` with t's shape and (by default) its dtype."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(t).__name__}")
    check_memory_format(memory_format, op, t.ndim)
    return _make(make(t.shape, resolve(dtype, t.dtype)), None, requires_grad, device, op)


@factory_keywords
def zeros_like(input, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like("zeros_like", np.zeros, input, dtype, device, requires_grad, memory_format)


@factory_keywords
def ones_like(input, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like("ones_like", np.ones, input, dtype, device, requires_grad, memory_format)


@factory_keywords
def empty_like(input, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like("empty_like", np.empty, input, dtype, device, requires_grad, memory_format)


@factory_keywords
def full_like(input, fill_value, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return _like("full_like", lambda s, d: np.full(s, checked_scalar(fill_value, d), d), input,
                 dtype, device, requires_grad, memory_format)


def _number(x):
    return x.item() if isinstance(x, Tensor) else x


@factory_keywords
def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """[start, end) in steps: integers give int64, any float argument the default float."""
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise InvalidValueError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise InvalidValueError(f"arange: start {start}, end {end} and step {step}: upper bound "
                                f"and lower bound inconsistent with step sign")
    floats = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
    dtype = resolve(dtype, None if floats else int64)
    if np.dtype(dtype) in (np.float32, np.float64) and not any(
            isinstance(v, (complex, np.complexfloating)) for v in (start, end, step)):
        size = int(math.ceil((end - start) / step))  # in float64, as PyTorch sizes it
        return _make(arange_values(start, step, size, dtype), None, requires_grad, device,
                     "arange")
    return _make(np.arange(start, end, step, dtype=np.float64 if floats else None), dtype,
                 requires_grad, device, "arange")


@factory_keywords
def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """`steps` evenly spaced values from start to end, both included."""
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise InvalidValueError(f"linspace: steps must be a non-negative int, got {steps!r} "
                                f"(number of steps must be non-negative)")
    start, end = _number(start), _number(end)
    complex_ends = any(isinstance(v, (complex, np.complexfloating)) for v in (start, end))
    dtype = complex_of(get_default_dtype()) if dtype is None and complex_ends else resolve(dtype)
    kind = np.dtype(dtype)
    if steps and not complex_ends and (kind.kind in "iu" or kind in (np.float32, np.float64)):
        # PyTorch's own arithmetic (see spacing.py), bit for bit; NumPy's rounds differently.
        return _make(linspace_values(start, end, steps, dtype), None, requires_grad, device,
                     "linspace")
    return _make(np.linspace(start, end, steps), dtype, requires_grad, device, "linspace")


@factory_keywords
def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps)."""
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise InvalidValueError(f"logspace: steps must be a non-negative int, got {steps!r} "
                                f"(number of steps must be non-negative)")
    return _make(np.power(base, np.linspace(_number(start), _number(end), steps)),
                 resolve(dtype), requires_grad, device, "logspace")


@factory_keywords
def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    if n < 0 or (m is not None and m < 0):
        raise InvalidValueError(f"eye: n must be greater or equal to 0, got {n if n < 0 else m}")
    return _make(np.eye(n, m, dtype=resolve(dtype)), None, requires_grad, device, "eye")


# --- random -----------------------------------------------------------------------------------

@factory_keywords
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples."""
    return _make(_draws.fill_normal(_engine(generator), np.empty(
        _shape(size, "randn"), _float_dtype("randn", resolve(dtype)))), None, requires_grad,
        device, "randn")


@factory_keywords
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    return _make(_draws.fill_uniform(_engine(generator), np.empty(
        _shape(size, "rand"), _float_dtype("rand", resolve(dtype)))), None, requires_grad,
        device, "rand")


def _float_dtype(op, dtype):
    """`dtype`, which must be a floating-point one: random draws have no integer kernel."""
    if dtype.kind not in "fc":
        raise DTypeNotImplementedError(f"{op}: needs a floating-point dtype, got {dtype} (pass "
                                       f"dtype=): not implemented for "
                                       f"'{torch_dtype_name(dtype)}'")
    return dtype


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) or (
        isinstance(x, Tensor) and x.ndim == 0 and np.issubdtype(x.dtype, np.integer))


@factory_keywords
def randint(*args, size=None, low=None, high=None, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers drawn uniformly from [low, high): randint(high, size) or randint(low, high, size).

    As in PyTorch, `size` is a tuple and always required. A call with two numbers and no size,
    randint(2, 10), could mean either form, so it is an error rather than a guess.
    """
    args = list(args)
    if size is None and args and (isinstance(args[-1], (tuple, list)) or len(args) == 3):
        size = args.pop()  # checked to be a tuple below
    nums = args + [v for v in (low, high) if v is not None]
    if size is None and len(args) == 2:
        raise TypeError(f"randint{tuple(args)}: two numbers and no size is ambiguous (PyTorch "
                        f"rejects it too); write randint(high, size), e.g. randint({args[0]}, "
                        f"({args[1]},)), or randint(low, high, size), e.g. "
                        f"randint({args[0]}, {args[1]}, (n,))")
    if size is None or not isinstance(size, (tuple, list)):
        got = "no size" if size is None else f"size {size!r}"
        raise TypeError(f"randint: size must be a tuple and is required, got {got}; the forms "
                        f"are randint(high, size) and randint(low, high, size), e.g. "
                        f"randint(10, (3,)) or randint(0, 10, (3,))")
    if len(nums) == 1 and low is None:
        low, high = 0, nums[0]
    elif len(nums) == 2:
        if low is None and high is None:
            low, high = nums
        elif low is None:  # randint(5, high=10, ...): the positional one is low
            low = nums[0]
        elif high is None:
            high = nums[0]
    else:
        raise TypeError(f"randint: expected high, or low and high, before size; got "
                        f"{len(nums)} numbers {tuple(nums)}")
    if not (_is_int(low) and _is_int(high)):
        raise TypeError(f"randint: low and high must be ints, got {low!r} and {high!r}")
    low, high = int(low), int(high)
    if high <= low:
        raise InvalidValueError(f"randint: high ({high}) must be greater than low ({low})")
    shape = _shape((size,), "randint")
    dtype = resolve(dtype, int64)
    vals = _draws.integers(_engine(generator), int(np.prod(shape, dtype=np.int64)), low, high,
                           dtype)
    return _make(vals.reshape(shape), dtype, requires_grad, device, "randint")


@factory_keywords
def randperm(n, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0 .. n-1."""
    if n < 0:
        raise negative_size("randperm", (n,))
    return _make(_draws.randperm(_engine(generator), int(n)), resolve(dtype, int64),
                 requires_grad, device, "randperm")


def _random_like(op, draw, t, dtype, device, requires_grad, generator=None, memory_format=None):
    check_memory_format(memory_format, op, t.ndim)
    dtype = _float_dtype(op, resolve(dtype, t.dtype))
    return _make(draw(_engine(generator), np.empty(t.shape, dtype)), None, requires_grad,
                 device, op)


@factory_keywords
def rand_like(input, dtype=None, device=None, requires_grad=False, generator=None,
              memory_format=None):
    return _random_like("rand_like", _draws.fill_uniform, input, dtype, device,
                        requires_grad, generator, memory_format)


@factory_keywords
def randn_like(input, dtype=None, device=None, requires_grad=False, generator=None,
               memory_format=None):
    return _random_like("randn_like", _draws.fill_normal, input, dtype, device,
                        requires_grad, generator, memory_format)


@factory_keywords
def randint_like(input, low=0, high=None, dtype=None, device=None, requires_grad=False,
                 generator=None, memory_format=None):
    """randint_like(t, high) or randint_like(t, low, high): t's shape and dtype."""
    check_memory_format(memory_format, "randint_like", input.ndim)
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator,
                   dtype=resolve(dtype, input.dtype), device=device, requires_grad=requires_grad)
