"""The tracer: runs a model once and records every operation on values that come from its inputs.

Two levels are recorded. Every op's `Op.apply` reports (op class, inputs, keyword
arguments, output) through `autograd.autograd_op.add_apply_hook`, whether or not a gradient is wanted, so
integer and boolean ops, and ops on parameters, are seen too. And the arrays of the inputs, and
of every op's output, are `TracedArray`s: a NumPy subclass that records the NumPy operations
applied to it outside any op (the padding masks a model computes with `ids == pad_id`, `~mask`,
`mask[:, None, None, :]`), and inside an op's forward, which is how an op without an ONNX
mapping of its own is exported: as the NumPy operations its forward ran.

Values are identified by their arrays: a tensor and its `.data` or `detach()` share one, and
`np.asarray` of a traced array (a plain view of the same memory) is found by its memory.
Parameters and buffers are named values; any other array whose origin is unknown is a constant,
except a traced array that reached it by a route the tracer does not see, which is an error
when the output needs it (never a constant silently baked in).
"""
from __future__ import annotations

import threading

import numpy as np

from ..autograd.op import add_apply_hook
from ..tensor import Tensor
from ..grad_mode import current_module_path

_active = threading.local()  # the tracer of this thread, while a trace runs


def current():
    return getattr(_active, "tracer", None)


class Value:
    """One value of the traced graph: an input, a parameter, a constant or an op's output.

    `kind` is "input", "param", "const" (with `array`), "node" (made by `record`), or "bad"
    (traced, but computed by a NumPy operation the tracer cannot follow: `reason` says which).
    """

    __slots__ = ("name", "shape", "dtype", "kind", "array", "record", "reason")

    def __init__(self, name, shape, dtype, kind, array=None, record=None, reason=None):
        self.name, self.shape, self.dtype, self.kind = name, tuple(shape), np.dtype(dtype), kind
        self.array, self.record, self.reason = array, record, reason

    def __repr__(self):
        return f"Value({self.name}, {self.shape}, {self.dtype}, {self.kind})"


class Record:
    """One operation: `op` is an Op class or a NumPy operation's name ("add", "getitem",
    "where", ...); `inputs` holds Values (or None, or Python values); `kwargs` its keyword
    arguments with arrays replaced by Values; `path` the module that ran it."""

    __slots__ = ("op", "inputs", "kwargs", "out", "path", "inner")

    def __init__(self, op, inputs, kwargs, out, path, inner=None):
        self.op, self.inputs, self.kwargs, self.out, self.path = op, inputs, kwargs, out, path
        self.inner = inner  # for an op: the Value its forward's NumPy operations computed

    @property
    def op_name(self):
        return self.op if isinstance(self.op, str) else self.op.__name__


def _plain(x):
    """x with every TracedArray inside (tuples and lists too) seen as a plain ndarray."""
    if isinstance(x, TracedArray):
        return x.view(np.ndarray)
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(i) for i in x)
    return x


class TracedArray(np.ndarray):
    """An ndarray whose NumPy operations are recorded while a trace runs (plain otherwise)."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        tracer = current()
        if out is not None:  # written in place: those arrays no longer hold what was traced
            if tracer is not None:
                for o in out:
                    tracer.forget(o, f"numpy.{ufunc.__name__} writing into it (out=)")
            return out[0] if len(out) == 1 else out
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        return _recorded(tracer, name, inputs, kwargs, result)

    def __array_function__(self, func, types, args, kwargs):
        tracer = current()
        if func.__name__ in SHAPE_ONLY:  # values that depend on the shape alone: constants
            return func(*_plain(args), **_plain(kwargs))
        if func.__name__ in FUNCTIONS:
            result = func(*_plain(args), **_plain(kwargs))
            return _recorded(tracer, func.__name__, args, kwargs, result)
        # the others run NumPy's own code: for the functions in COMPOSITE it calls only
        # recorded ufuncs and methods; any other function's results cannot be followed
        result = super().__array_function__(func, types, args, kwargs)
        if tracer is not None:
            for r in (result if isinstance(result, (tuple, list)) else (result,)):
                if isinstance(r, np.ndarray) and (func.__name__ not in COMPOSITE
                                                  or tracer.lookup(r) is None):
                    tracer.mark_bad(r, f"numpy.{func.__name__}")
        return result

    def __getitem__(self, index):
        return _recorded(current(), "getitem", (self,), {"index": index},
                         self.view(np.ndarray)[_plain(index)])

    def __setitem__(self, index, value):
        self.view(np.ndarray)[_plain(index)] = _plain(value)
        self._written("an assignment into it")

    def sort(self, *args, **kwargs):
        self.view(np.ndarray).sort(*args, **kwargs)
        self._written("ndarray.sort")

    def fill(self, value):
        self.view(np.ndarray).fill(value)
        self._written("ndarray.fill")

    def _written(self, how):
        tracer = current()
        if tracer is not None:
            tracer.forget(self, how)

    def reshape(self, *shape, **kwargs):
        return _recorded(current(), "reshape", (self,), {},
                         self.view(np.ndarray).reshape(*shape, **kwargs))

    def squeeze(self, axis=None):
        return _recorded(current(), "reshape", (self,), {}, self.view(np.ndarray).squeeze(axis))

    def ravel(self, order="C"):
        return _recorded(current(), "reshape", (self,), {}, self.view(np.ndarray).ravel(order))

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = tuple(axes) or tuple(reversed(range(self.ndim)))
        return _recorded(current(), "transpose", (self,), {"axes": axes},
                         self.view(np.ndarray).transpose(axes))

    T = property(lambda self: self.transpose())

    def swapaxes(self, axis1, axis2):
        axes = list(range(self.ndim))
        axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
        return self.transpose(axes)

    def astype(self, dtype, *args, **kwargs):
        return _recorded(current(), "astype", (self,), {},
                         self.view(np.ndarray).astype(dtype, *args, **kwargs))

    def copy(self, order="C"):
        return _recorded(current(), "copy", (self,), {}, self.view(np.ndarray).copy(order))


# NumPy functions recorded as one operation each (the others are recorded through the ufuncs
# and methods their code calls); `symbolic.NUMPY` maps them
FUNCTIONS = frozenset({"where", "concatenate", "stack", "broadcast_to", "expand_dims", "tril",
                       "triu", "matmul", "clip", "argmax", "argmin", "argsort", "take"})
# NumPy functions whose results depend on their argument's shape alone (constants)
SHAPE_ONLY = frozenset({"zeros_like", "ones_like", "full_like", "empty_like"})
# NumPy functions whose own code calls only recorded ufuncs and methods; the results of any
# other function are not followed (np.sort, say, sorts a recorded copy in place)
COMPOSITE = frozenset({"moveaxis", "squeeze", "split", "array_split", "swapaxes", "transpose",
                       "reshape", "ravel", "sum", "amax", "amin", "max", "min", "atleast_1d",
                       "atleast_2d", "atleast_3d"})


def _recorded(tracer, name, inputs, kwargs, result):
    """`result` of a NumPy operation, traced (and recorded) if a trace runs and it is an array."""
    if tracer is None or not isinstance(result, np.ndarray):
        return result
    return tracer.numpy_op(name, inputs, kwargs, result)


class Tracer:
    """Records the ops of one forward pass: `with Tracer(named arrays) as t: ...`."""

    def __init__(self, named):
        """named: {state-dict name: array} of the model's parameters and buffers."""
        self.values = {}     # id(array) -> Value
        self.memory = {}     # (data pointer, shape, strides, dtype) -> Value, for plain views
        self.alive = []      # every bound array, so that no id is reused during the trace
        self.records = []
        self.inputs = []
        self._count = 0
        self._handle = None
        for name, arr in named.items():
            if id(arr) not in self.values:
                self._bind(arr, Value(name, arr.shape, arr.dtype, "param", array=arr))

    def __enter__(self):
        if current() is not None:
            raise RuntimeError("onnx.export: a trace is already running in this thread")
        _active.tracer = self
        self._handle = add_apply_hook(self._on_apply)
        return self

    def __exit__(self, *exc):
        self._handle.remove()
        _active.tracer = None
        return False

    # --- values ---------------------------------------------------------------------------
    def _fresh(self, hint):
        self._count += 1
        return f"/{hint}_{self._count}"

    def _bind(self, arr, value):
        self.values[id(arr)] = value
        self.alive.append(arr)
        if isinstance(arr, TracedArray):
            self.memory[_memory_key(arr)] = value
        return value

    def input(self, name, arr):
        """A traced copy-free view of `arr` standing for the graph input `name`."""
        traced = arr.view(TracedArray)
        self.inputs.append(self._bind(traced, Value(name, arr.shape, arr.dtype, "input")))
        return traced

    def lookup(self, arr):
        """The Value of a known array (itself, or a plain view of a traced array's memory)."""
        v = self.values.get(id(arr))
        if v is not None:
            return v
        if isinstance(arr, np.ndarray) and not isinstance(arr, TracedArray):
            return self.memory.get(_memory_key(arr))
        return None

    def value_of(self, x):
        """The Value for an operand: known, a constant, or an error value for a traced array
        that nothing recorded. Python numbers become constants too; None stays None."""
        if x is None:
            return None
        arr = x._array if isinstance(x, Tensor) else x
        if isinstance(arr, np.ndarray):
            v = self.lookup(arr)
            if v is not None:
                return v
            if isinstance(arr, TracedArray):
                return self.mark_bad(arr, "a NumPy operation the exporter does not follow")
            arr = np.array(arr)  # a constant, copied: the model may change its own array later
        elif isinstance(arr, (bool, int, float, np.generic)):
            arr = np.asarray(arr)
        else:
            return arr  # a Python value (a dim, a slice, a string): an attribute of the op
        return Value(self._fresh("Constant"), arr.shape, arr.dtype, "const", array=arr)

    def mark_bad(self, arr, reason):
        return self._bind(arr, Value(self._fresh("untraced"), arr.shape, arr.dtype, "bad",
                                     reason=reason))

    def forget(self, arr, reason):
        """`arr` was written in place: its Value no longer describes it."""
        if isinstance(arr, np.ndarray) and self.lookup(arr) is not None:
            if isinstance(arr, TracedArray):
                self.memory.pop(_memory_key(arr), None)
            self.mark_bad(arr, f"an in-place change ({reason})")

    def _convert(self, x):
        """Operands of a record: arrays and tensors become Values, containers recursively."""
        if isinstance(x, (Tensor, np.ndarray)):
            return self.value_of(x)
        if isinstance(x, (tuple, list)):
            return type(x)(self._convert(i) for i in x)
        return x

    # --- records --------------------------------------------------------------------------
    def numpy_op(self, name, inputs, kwargs, result):
        """Record a NumPy operation of traced operands; returns its result, traced."""
        out = result.view(TracedArray)
        rec = Record(name, [self._convert(x) for x in inputs],
                     {k: self._convert(v) for k, v in kwargs.items()}, None, current_module_path())
        rec.out = self._bind(out, Value(self._fresh(name), out.shape, out.dtype, "node",
                                        array=out, record=rec))
        self.records.append(rec)
        return out

    def _on_apply(self, cls, args, kwargs, out):
        """The apply hook: record op `cls`; its output's array becomes a traced view, so what
        is computed from it afterwards (in NumPy or by further ops) is traced too."""
        if current() is not self:  # an op of another thread: not part of this model's call
            return
        inner = self.lookup(out._array)  # what the forward's own NumPy operations computed
        if inner is not None and inner.kind not in ("node", "bad"):
            inner = None  # an input passed through unchanged: no operations of its own
        rec = Record(cls, [self._convert(a) for a in args],
                     {k: self._convert(v) for k, v in kwargs.items()}, None,
                     current_module_path(), inner)
        out._array = out._array.view(TracedArray)
        rec.out = self._bind(out._array, Value(self._fresh(cls.__name__), out.shape, out.dtype,
                                               "node", array=out._array, record=rec))
        self.records.append(rec)


def values_in(x):
    """The Values inside an operand of a record (tuples and lists of them too)."""
    if isinstance(x, Value):
        yield x
    elif isinstance(x, (tuple, list)):
        for i in x:
            yield from values_in(i)


def _memory_key(arr):
    return (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype.str)
