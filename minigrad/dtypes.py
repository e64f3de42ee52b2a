"""Dtypes: their PyTorch names, and type promotion as in PyTorch.

A minigrad dtype is a NumPy dtype: `minigrad.float32` is `numpy.dtype('float32')`, the very
object a float32 tensor's `dtype` is, so `tensor.dtype is minigrad.float32`, `==` and dtypes as
dict keys hold as they do in PyTorch. (NumPy's scalar types, `numpy.float32`, are accepted
wherever a dtype is, but as dict keys they are other objects.) PyTorch's aliases (`float`, `double`, `half`, `long`, `int`, `short`, `bool`, `cfloat`)
are exported by `minigrad/__init__.py`, so this module need not shadow Python's builtins.

Dtypes NumPy lacks (bfloat16, the float8 family, complex32) exist as names, so code that
mentions them imports, but any use raises one error naming the dtype and what to use instead.

Type promotion as in PyTorch: the dtype an op on operands of mixed dtypes computes in, and
the operands of a binary op converted to it.

    minigrad.result_type(x_float32, y_int64)   # float32
    minigrad.result_type(x_int64, 0.5)          # float32, the default float dtype
    minigrad.promote_types(minigrad.int8, minigrad.uint8)   # int16

Dtypes fall in four categories, bool < integer < floating < complex. Operands fall in three priority
classes: tensors with at least one dimension, 0-d tensors, and Python numbers (NumPy scalars
count as Python numbers). A lower class changes the result only when it brings a higher
category: `float32 tensor * float64 0-d tensor` stays float32, but `int32 tensor * 0-d
float64 tensor` is float64, and `int tensor * 0.5` is float32, because a Python float counts
as the default float dtype. Two dtypes of one category promote as in NumPy (`uint8 + int8`
is int16, `float16 + float32` is float32); across categories the higher one's dtype wins
unchanged (`int64 + float16` is float16, where NumPy says float64), except that complex with
float promotes the parts (`float64 + complex64` is complex128) and a complex operand of a lower
class keeps the float tensor's precision (`float32 tensor * 1j` is complex64, a Python complex
counting as the default complex dtype).
"""
from __future__ import annotations

import numpy as np

float16, float32, float64 = map(np.dtype, (np.float16, np.float32, np.float64))
int8, int16, int32, int64 = map(np.dtype, (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = map(np.dtype, (np.uint8, np.uint16, np.uint32, np.uint64))
bool_, complex64, complex128 = map(np.dtype, (np.bool_, np.complex64, np.complex128))
half, double, long, short, cfloat, cdouble = float16, float64, int64, int16, complex64, complex128


class UnsupportedDtype:
    """A PyTorch dtype with no NumPy counterpart; using it is an error that says what to use.

    NumPy reads an object's `dtype` attribute whenever it is given one as a dtype, so raising
    there makes `zeros(3, dtype=bfloat16)`, `t.to(bfloat16)` and `model.to(bfloat16)` all fail
    with this message, from every function, without a check in each.
    """

    def __init__(self, name, instead):
        self.name, self.instead = name, instead

    @property
    def dtype(self):
        raise TypeError(f"dtype minigrad.{self.name}: minigrad stores tensors as NumPy arrays "
                        f"and NumPy has no {self.name}; use {self.instead}")

    @property
    def is_floating_point(self):
        return "float" in self.name

    def __repr__(self):
        return f"minigrad.{self.name}"


bfloat16 = UnsupportedDtype("bfloat16", "float32 (or float16 to halve memory)")
float8_e4m3fn = UnsupportedDtype("float8_e4m3fn", "float16 or float32")
float8_e5m2 = UnsupportedDtype("float8_e5m2", "float16 or float32")
complex32 = chalf = UnsupportedDtype("complex32", "complex64")

FLOATING = (float16, float32, float64)


def resolve(dtype, default=None):
    """`dtype` as a NumPy dtype; None gives `default` (the default float dtype unless the
    caller says)."""
    if dtype is None:
        return _DEFAULT_FLOAT if default is None else np.dtype(default)
    return np.dtype(dtype)


class finfo:
    """The limits of a float dtype (the default float dtype if none is given), as PyTorch gives
    them: Python floats, which print every digit (NumPy's finfo holds NumPy scalars of the
    dtype, which print rounded: `1.1920929e-07` for float32's eps)."""

    def __init__(self, type=None):
        info = np.finfo(_DEFAULT_FLOAT if type is None else type)
        self.bits, self.dtype = info.bits, info.dtype.name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -info.precision  # exact decimal, where NumPy rounds it to the dtype

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype, as PyTorch gives them (Python ints; its repr, which
    prints them as %g does)."""

    def __init__(self, type):
        info = np.iinfo(type)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), int(info.max), (
            info.dtype.name)

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


# --- type promotion ----------------------------------------------------------------------

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # bool < integer < floating < complex
_COMPLEX_OF = {np.dtype(np.float16): np.dtype(np.complex64),  # NumPy has no complex32
               np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_DEFAULT_FLOAT = np.dtype(np.float32)


def complex_of(dtype):
    """The complex dtype whose parts have float `dtype` (float64 gives complex128); a complex
    dtype stays as it is, and any other gives the default complex dtype."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return _COMPLEX_OF.get(dt, _COMPLEX_OF[_DEFAULT_FLOAT])


def real_of(dtype):
    """The float dtype of a complex dtype's parts (complex64 gives float32); others unchanged."""
    dt = np.dtype(dtype)
    return np.dtype(np.float32 if dt == np.complex64 else np.float64) if dt.kind == "c" else dt


def get_default_dtype():
    """The dtype of Python floats in tensors and promotions, and of new float tensors and
    layers' weights: float32 unless `set_default_dtype` changed it, as in PyTorch."""
    return _DEFAULT_FLOAT


def set_default_dtype(d):
    """Make `d` (float16, float32 or float64) the default float dtype, process-wide as in
    PyTorch (code that changes it for a while should set it back)."""
    global _DEFAULT_FLOAT
    dt = np.dtype(d)
    if dt.type not in FLOATING:
        raise TypeError(f"set_default_dtype: only floating dtypes are supported (float16, "
                        f"float32, float64), got {dt}")
    _DEFAULT_FLOAT = dt


def legacy_array(args, op):
    """The array of PyTorch's legacy constructor `Tensor(*args)`: sizes give an uninitialised
    float tensor of that shape (zeros here, so nothing depends on stale memory); one sequence
    or array gives its values as floats. The float dtype is the default one."""
    dtype = _DEFAULT_FLOAT
    if not args:
        return np.zeros(0, dtype)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
           for a in args):
        if any(int(a) < 0 for a in args):
            raise ValueError(f"{op}: negative dimension in size {tuple(int(a) for a in args)}")
        return np.zeros(tuple(int(a) for a in args), dtype)
    if len(args) > 1:
        raise TypeError(f"{op}: expected sizes (ints) or one sequence of values, got "
                        f"{tuple(type(a).__name__ for a in args)}")
    data = args[0]
    if not isinstance(data, (list, tuple, np.ndarray)) or isinstance(data, str):
        raise TypeError(f"{op}: data must be a sequence (got {type(data).__name__}); "
                        f"minigrad.tensor(x) makes a tensor of any dtype from a number")
    return np.array(data, dtype=dtype)

def _category(dtype, op):
    try:
        return _CATEGORY[dtype.kind]
    except KeyError:
        raise TypeError(f"{op}: dtype {dtype} is not supported (use bool, an integer type, "
                        f"float16, float32, float64, complex64 or complex128)") from None


def promote_types(type1, type2):
    """The smallest dtype both convert to without leaving the higher category (`torch.promote_types`)."""
    a, b = np.dtype(type1), np.dtype(type2)
    ca, cb = _category(a, "promote_types"), _category(b, "promote_types")
    if 3 in (ca, cb):  # the parts' float dtypes promote: float64 with complex64 is complex128
        parts = [real_of(t) for t in (a, b) if t.kind in "fc"]
        return complex_of(parts[0] if len(parts) == 1 else np.promote_types(*parts))
    if ca != cb:
        return a if ca > cb else b
    out = np.promote_types(a, b)
    if _CATEGORY.get(out.kind) != ca:  # uint64 with a signed type: NumPy would pick float64
        raise TypeError(f"promote_types: {a} and {b} have no common integer dtype")
    return out


def can_cast(from_, to):
    """Whether PyTorch's in-place ops write a result of dtype `from_` into a tensor of dtype
    `to`: never into a lower category (float into an integer type, integer into bool)."""
    a, b = np.dtype(from_), np.dtype(to)
    return _category(a, "can_cast") <= _category(b, "can_cast")


def _classify(x, op):
    """(priority class, dtype): 0 for dimensioned tensors and arrays, 1 for 0-d ones, 2 for
    Python numbers, which count as bool, int64 or the default float."""
    arr = getattr(x, "_array", x)  # a Tensor's array
    if isinstance(arr, np.ndarray):
        return (0 if arr.ndim else 1), arr.dtype
    if isinstance(x, (bool, np.bool_)):
        return 2, np.dtype(np.bool_)
    if isinstance(x, (int, np.integer)):
        return 2, np.dtype(np.int64)
    if isinstance(x, (float, np.floating)):
        return 2, _DEFAULT_FLOAT
    if isinstance(x, (complex, np.complexfloating)):
        return 2, complex_of(_DEFAULT_FLOAT)
    raise TypeError(f"{op}: cannot compute with a {type(x).__name__} "
                    f"(expected tensors, arrays or Python numbers)")


def _combine(higher, lower, op):
    """A lower priority class changes the dtype only if its category is higher."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    cl, ch = _category(lower, op), _category(higher, op)
    if cl == 3 and ch == 2:  # a float tensor keeps its precision: float32 * 1j is complex64
        return complex_of(higher)
    if cl > ch:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """The dtype PyTorch computes `operands` in (`torch.result_type`, for any number of them)."""
    return _result_type(operands, "result_type")


def _result_type(operands, op):
    if not operands:
        raise TypeError(f"{op}: expected at least one operand")
    classes = [None, None, None]  # dimensioned, 0-d, Python numbers
    for x in operands:
        k, dtype = _classify(x, op)
        classes[k] = dtype if classes[k] is None else promote_types(classes[k], dtype)
    return _combine(classes[0], _combine(classes[1], classes[2], op), op)


def computation_dtype(operands, op, floats=False):
    """`result_type`, or with `floats=True` the default float for a non-float result (true
    division of integers gives floats)."""
    dtype = _result_type(operands, op)
    return _DEFAULT_FLOAT if floats and dtype.kind not in "fc" else dtype


_TORCH_DTYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                      "uint8": "Byte", "bool": "Bool", "float16": "Half",
                      "float32": "Float", "float64": "Double"}


def torch_dtype_name(dtype) -> str:
    """The name PyTorch's messages give a dtype (Long, Float, ...)."""
    name = np.dtype(dtype).name
    return _TORCH_DTYPE_NAMES.get(name, name)
