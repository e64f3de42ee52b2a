"""ONNX nodes for the building blocks that ops and NumPy operations share: elementwise math with
its dtype rules, reshapes that keep dynamic dims, indexing, reductions, and the NumPy table.

A converter is `fn(g, rec) -> name`: it adds nodes to graph `g` computing record `rec`'s output
and returns that output's ONNX name.
"""
from __future__ import annotations

import numpy as np

from .errors import UnsupportedOperatorError
from .graph import INT64_MAX, onnx_type
from .trace import Value


def operand(g, x, dtype):
    """The ONNX name of operand x (a Value or a Python number) in `dtype`."""
    if isinstance(x, Value):
        return g.name(x, dtype)
    return g.const(np.asarray(x, dtype=dtype))


def elementwise(op_type, **attrs):
    """Every operand cast to the output's dtype (NumPy's and PyTorch's promotion already chose
    it; ONNX wants one type), then `op_type`."""
    def convert(g, rec):
        args = [operand(g, x, rec.out.dtype) for x in rec.inputs if x is not None]
        return g.node(op_type, args, **attrs)
    return convert


def compare(op_type, negate=False):
    """A comparison in the operands' common dtype; bool out."""
    def convert(g, rec):
        a, b = rec.inputs[:2]
        dtypes = [x.dtype for x in (a, b) if isinstance(x, Value) and x.kind != "const"]
        common = np.result_type(*dtypes) if dtypes else np.result_type(a.dtype, b.dtype)
        out = g.node(op_type, [operand(g, a, common), operand(g, b, common)])
        return g.node("Not", [out]) if negate else out
    return convert


def reshape(g, x, in_shape, out_shape, spelled=None):
    """Reshape to `out_shape`; dims equal to the input's, in the leading run where they agree,
    are written 0 ("copy the input's"), so a dynamic batch dim stays dynamic; a dim that
    `spelled` (the shape as the model wrote it) gives as -1 stays -1 (the rest's size)."""
    target = list(out_shape)
    for i in range(min(len(in_shape), len(out_shape))):
        if in_shape[i] != out_shape[i]:
            break
        target[i] = 0
    if spelled is not None and len(spelled) == len(target) and np.prod(out_shape) > 0:
        target = [-1 if s == -1 and t != 0 else t for s, t in zip(spelled, target)]
    return g.node("Reshape", [x, g.ints(target)])


def expand(g, x, in_shape, out_shape):
    """Broadcast to `out_shape`; dims the input already has are written 1 (ONNX's Expand
    broadcasts them), so they stay dynamic."""
    lead = len(out_shape) - len(in_shape)
    target = [1 if i >= lead and in_shape[i - lead] == n else n for i, n in enumerate(out_shape)]
    return g.node("Expand", [x, g.ints(target)])


def reduce(g, op_type, x, axes, keepdims):
    """ReduceSum/ReduceMean/... over `axes` (None: all), axes given as an input (opset 18)."""
    inputs = [x] if axes is None else [x, g.ints(list(axes))]
    return g.node(op_type, inputs, keepdims=int(bool(keepdims)))


def _consumed(item):
    """How many input dims an index item uses."""
    if item is None:
        return 0
    if isinstance(item, Value) and item.dtype == np.bool_:
        return max(len(item.shape), 1)
    return 1


def getitem(g, x, shape, index, op="getitem"):
    """x[index] for ints, slices, None, Ellipsis and one integer (or 1-D bool) array."""
    items = list(index) if isinstance(index, tuple) else [index]
    ell = [i for i, it in enumerate(items) if it is Ellipsis]
    rest = len(shape) - sum(_consumed(it) for it in items if it is not Ellipsis)
    if ell:
        items[ell[0]:ell[0] + 1] = [slice(None)] * rest
    else:
        items += [slice(None)] * rest
    arrays = [it for it in items if isinstance(it, Value)]
    if len(arrays) > 1 or (arrays and any(isinstance(it, (int, np.integer)) for it in items)):
        raise UnsupportedOperatorError(
            f"{op}: an index combining an array with further arrays or integers (NumPy's "
            f"broadcasting advanced indexing) is not supported by onnx.export")
    starts, ends, axes, steps, picks, nones = [], [], [], [], [], []
    dim = pos = 0
    for it in items:
        if it is None:
            nones.append(pos)
            pos += 1
        elif isinstance(it, slice):
            step = 1 if it.step is None else int(it.step)
            if (it.start, it.stop, step) != (None, None, 1):
                starts.append(int(it.start) if it.start is not None else (0 if step > 0 else -1))
                ends.append(int(it.stop) if it.stop is not None else
                            (INT64_MAX if step > 0 else -INT64_MAX - 1))
                axes.append(dim)
                steps.append(step)
            dim, pos = dim + 1, pos + 1
        elif isinstance(it, (int, np.integer)):
            picks.append((dim, int(it)))
            dim += 1
        elif isinstance(it, Value):
            picks.append((dim, it))
            pos += 1 if it.dtype == np.bool_ else len(it.shape)
            dim += _consumed(it)
        else:
            raise UnsupportedOperatorError(f"{op}: index item {it!r} is not supported by "
                                           f"onnx.export")
    if axes:
        x = g.node("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    for d, it in reversed(picks):  # from the last axis, so the earlier axes keep their numbers
        if isinstance(it, int):
            x = g.node("Gather", [x, g.const(np.asarray(it, np.int64))], axis=d)
        elif it.dtype == np.bool_:
            if len(it.shape) != 1:
                raise UnsupportedOperatorError(f"{op}: a boolean mask index of more than one "
                                               f"dim is not supported by onnx.export")
            x = g.node("Compress", [x, g.name(it)], axis=d)
        else:
            x = g.node("Gather", [x, g.name(it, np.int64)], axis=d)
    if nones:
        x = g.node("Unsqueeze", [x, g.ints(nones)])
    return x


def softmax(g, x, axis, dtype, op_type="Softmax"):
    """Softmax (or LogSoftmax) whose all -inf rows give 0 (-inf), as minigrad's kernels do;
    ONNX gives NaN there."""
    y = g.node(op_type, [x], axis=axis)
    fill = 0.0 if op_type == "Softmax" else -np.inf
    return g.node("Where", [g.node("IsNaN", [y]), g.const(np.asarray(fill, dtype)), y])


def floor_divide(remainder=False):
    """a // b (or a % b, = a - (a // b) b), rounding toward -inf as NumPy and PyTorch do;
    ONNX's Div of integers truncates toward 0, so an inexact quotient of mixed signs is
    moved down by one."""
    def convert(g, rec):
        t = rec.out.dtype
        a, b = (operand(g, x, t) for x in rec.inputs[:2])
        if t.kind == "f":
            q = g.node("Floor", [g.node("Div", [a, b])])
        else:
            q, zero = g.node("Div", [a, b]), g.const(np.zeros((), t))
            inexact = g.node("Not", [g.node("Equal", [
                g.node("Sub", [a, g.node("Mul", [q, b])]), zero])])
            signs = g.node("Xor", [g.node("Less", [a, zero]), g.node("Less", [b, zero])])
            q = g.node("Sub", [q, g.node("Cast", [g.node("And", [inexact, signs])],
                                         to=onnx_type(t))])
        return g.node("Sub", [a, g.node("Mul", [q, b])]) if remainder else q
    return convert


# --- NumPy operations, by name ---------------------------------------------------------------

def _arg(rec, i, name, default=None):
    return rec.inputs[i] if len(rec.inputs) > i else rec.kwargs.get(name, default)


def _numpy_reduce(op_type):
    def convert(g, rec):
        axis = _arg(rec, 1, "axis")
        keepdims = _arg(rec, 4, "keepdims", False)
        x = rec.inputs[0]
        axes = None if axis is None else tuple(
            a % len(x.shape) for a in (axis if isinstance(axis, tuple) else (axis,)))
        return reduce(g, op_type, g.name(x, rec.out.dtype), axes, keepdims is True)
    return convert


def _invert(g, rec):
    x = rec.inputs[0]
    return g.node("Not" if x.dtype == np.bool_ else "BitwiseNot", [g.name(x)])


def _logical(op_type):
    def convert(g, rec):
        a, b = rec.inputs[:2]
        if rec.out.dtype != np.bool_:
            raise UnsupportedOperatorError(f"{rec.op_name} of integers is not supported by "
                                           f"onnx.export")
        return g.node(op_type, [operand(g, a, np.bool_), operand(g, b, np.bool_)])
    return convert


def _where(g, rec):
    if len(rec.inputs) != 3:
        raise UnsupportedOperatorError("where with one argument (the indices of nonzero "
                                       "elements) is not supported by onnx.export")
    c, a, b = rec.inputs
    return g.node("Where", [operand(g, c, np.bool_), operand(g, a, rec.out.dtype),
                            operand(g, b, rec.out.dtype)])


def _join(stack):
    def convert(g, rec):
        seq, axis = rec.inputs[0], _arg(rec, 1, "axis", 0)
        parts = [operand(g, x, rec.out.dtype) for x in seq]
        axis = axis % len(rec.out.shape)
        if stack:
            parts = [g.node("Unsqueeze", [p, g.ints([axis])]) for p in parts]
        return g.node("Concat", parts, axis=axis)
    return convert


def _trilu(upper):
    def convert(g, rec):
        k = int(_arg(rec, 1, "k", 0))
        return g.node("Trilu", [g.name(rec.inputs[0]), g.const(np.asarray(k, np.int64))],
                      upper=int(upper))
    return convert


def _arg_extreme(op_type):
    """np.argmax / np.argmin: over one axis, or over the flattened array (axis None)."""
    def convert(g, rec):
        x, axis = rec.inputs[0], _arg(rec, 1, "axis")
        keepdims = rec.kwargs.get("keepdims", False) is True
        name = g.name(x)
        if axis is None:
            name, axis = g.node("Reshape", [name, g.ints([-1])]), 0
        return g.node(op_type, [name], axis=int(axis) % max(len(x.shape), 1),
                      keepdims=int(keepdims), select_last_index=0)
    return convert


def _argsort(g, rec):
    """np.argsort along an axis as the indices of TopK of every element, smallest first
    (ONNX's TopK puts the lower index first among equal values: NumPy's stable order)."""
    x, axis = rec.inputs[0], _arg(rec, 1, "axis", -1)
    if axis is None or _arg(rec, 3, "order") is not None:
        raise UnsupportedOperatorError("numpy.argsort of a flattened array or by fields is "
                                       "not supported by onnx.export")
    axis = int(axis) % len(x.shape)
    name = g.name(x, np.int64 if x.dtype == np.bool_ else None)
    _, idx = g.node("TopK", [name, g.ints([x.shape[axis]])], outputs=2, axis=axis,
                    largest=0, sorted=1)
    return idx


def _take(g, rec):
    """np.take: a Gather along an axis (of the flattened array for axis None)."""
    x, axis = rec.inputs[0], _arg(rec, 2, "axis")
    name = g.name(x)
    if axis is None:
        name, axis = g.node("Reshape", [name, g.ints([-1])]), 0
    if _arg(rec, 4, "mode", "raise") != "raise":
        raise UnsupportedOperatorError("numpy.take with mode='wrap' or 'clip' is not "
                                       "supported by onnx.export")
    return g.node("Gather", [name, operand(g, _arg(rec, 1, "indices"), np.int64)],
                  axis=int(axis) % max(len(x.shape), 1))


def _clip(g, rec):
    x, lo, hi = rec.inputs[0], _arg(rec, 1, "a_min"), _arg(rec, 2, "a_max")
    t = rec.out.dtype
    return g.node("Clip", [g.name(x, t), "" if lo is None else operand(g, lo, t),
                           "" if hi is None else operand(g, hi, t)])


def _same_shape(fn):
    """A NumPy method that only changes the shape: a reshape to the output's shape."""
    def convert(g, rec):
        x = rec.inputs[0]
        return fn(g, g.name(x), x.shape, rec.out.shape)
    return convert


_UFUNCS = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "true_divide": "Div",
           "divide": "Div", "negative": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
           "tanh": "Tanh", "absolute": "Abs", "maximum": "Max", "minimum": "Min",
           "power": "Pow", "sin": "Sin", "cos": "Cos", "floor": "Floor", "ceil": "Ceil",
           "sign": "Sign", "matmul": "MatMul", "reciprocal": "Reciprocal", "positive": "Identity"}

NUMPY = {name: elementwise(op) for name, op in _UFUNCS.items()}
NUMPY.update({
    "equal": compare("Equal"), "not_equal": compare("Equal", negate=True),
    "less": compare("Less"), "less_equal": compare("LessOrEqual"),
    "greater": compare("Greater"), "greater_equal": compare("GreaterOrEqual"),
    "logical_and": _logical("And"), "logical_or": _logical("Or"), "logical_xor": _logical("Xor"),
    "bitwise_and": _logical("And"), "bitwise_or": _logical("Or"),
    "logical_not": lambda g, rec: g.node("Not", [g.name(rec.inputs[0], np.bool_)]),
    "invert": _invert, "floor_divide": floor_divide(), "remainder": floor_divide(True),
    "add.reduce": _numpy_reduce("ReduceSum"), "maximum.reduce": _numpy_reduce("ReduceMax"),
    "minimum.reduce": _numpy_reduce("ReduceMin"),
    "where": _where, "concatenate": _join(False), "stack": _join(True),
    "tril": _trilu(False), "triu": _trilu(True), "clip": _clip,
    "argsort": _argsort, "take": _take,
    "isnan": lambda g, rec: g.node("IsNaN", [g.name(rec.inputs[0])]),
    "argmax": _arg_extreme("ArgMax"), "argmin": _arg_extreme("ArgMin"),
    "getitem": lambda g, rec: getitem(g, g.name(rec.inputs[0]), rec.inputs[0].shape,
                                      rec.kwargs["index"]),
    "reshape": _same_shape(reshape), "expand_dims": _same_shape(reshape),
    "broadcast_to": _same_shape(expand),
    "transpose": lambda g, rec: g.node("Transpose", [g.name(rec.inputs[0])],
                                       perm=list(rec.kwargs["axes"])),
    "astype": lambda g, rec: g.name(rec.inputs[0], rec.out.dtype),  # a Cast if dtypes differ
    "copy": lambda g, rec: g.node("Identity", [g.name(rec.inputs[0])]),
})
