"""ONNX nodes for minigrad's ops (the `Op` classes of `minigrad.ops`), one converter each.

An op missing here is exported as the NumPy operations its forward ran (see `trace.py`); the
fused kernels (softmax, layer norm, the products) are compiled code, so they are here.
"""
from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..error_functions import Erf
from ..ops._util import normalize_dim, normalize_dims
from .errors import UnsupportedOperatorError
from .graph import onnx_type
from .lowering import (elementwise, expand, floor_divide, getitem, operand, reduce, reshape,
                       softmax)
from .trace import Value


def _x(g, rec, dtype=None):
    return g.name(rec.inputs[0], dtype)


def _ndim(rec):
    return len(rec.inputs[0].shape)


def _no_dropout(rec):
    """Dropout runs only when training; exported in training mode it cannot be reproduced."""
    if rec.kwargs.get("p", 0.0) > 0.0:
        raise UnsupportedOperatorError(
            f"dropout with p={rec.kwargs['p']} (a model in training mode) cannot be exported; "
            f"export in eval mode (training=TrainingMode.EVAL, the default)")


def _linear(g, rec):
    x, w = rec.inputs[:2]
    b = rec.inputs[2] if len(rec.inputs) > 2 else None
    if len(x.shape) == 2 and b is not None:
        return g.node("Gemm", [g.name(x), g.name(w), g.name(b)], transB=1)
    y = g.node("MatMul", [g.name(x), g.node("Transpose", [g.name(w)], perm=[1, 0])])
    return y if b is None else g.node("Add", [y, g.name(b)])


def _layer_norm(g, rec):
    x = rec.inputs[0]
    w, b = (rec.inputs + [None, None])[1:3]
    ndims = rec.kwargs.get("ndims", 1)
    scale = g.name(w) if w is not None else g.const(np.ones(x.shape[-ndims:], x.dtype))
    inputs = [g.name(x), scale] + ([g.name(b)] if b is not None else [])
    return g.node("LayerNormalization", inputs, axis=-ndims,
                  epsilon=float(rec.kwargs.get("eps", 1e-5)))


def _gelu(g, rec):
    """x Phi(x) written out (ONNX's Gelu op needs opset 20)."""
    x, t = _x(g, rec), rec.out.dtype
    c = lambda v: g.const(np.asarray(v, t))  # noqa: E731
    if rec.kwargs.get("approximate", "none") == "tanh":
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Mul", [c(math.sqrt(2 / math.pi)),
                               g.node("Add", [x, g.node("Mul", [c(0.044715), cube])])])
        phi2 = g.node("Add", [c(1.0), g.node("Tanh", [inner])])
    else:
        phi2 = g.node("Add", [c(1.0), g.node("Erf", [g.node("Div", [x, c(math.sqrt(2))])])])
    return g.node("Mul", [g.node("Mul", [c(0.5), x]), phi2])


def _clamp(g, rec):
    t, lo, hi = rec.out.dtype, rec.kwargs.get("min"), rec.kwargs.get("max")
    return g.node("Clip", [_x(g, rec, t), "" if lo is None else operand(g, lo, t),
                           "" if hi is None else operand(g, hi, t)])


def _where(g, rec):
    c, a, b = rec.inputs
    t = rec.out.dtype
    return g.node("Where", [operand(g, c, np.bool_), operand(g, a, t), operand(g, b, t)])


def _masked_fill(g, rec):
    t = rec.out.dtype
    return g.node("Where", [operand(g, rec.inputs[1], np.bool_),
                            operand(g, rec.kwargs.get("value", 0.0), t), _x(g, rec, t)])


def _reduction(op_type):
    def convert(g, rec):
        x = rec.inputs[0]
        axes = normalize_dims(rec.kwargs.get("dim"), len(x.shape), rec.op_name.lower())
        return reduce(g, op_type, g.name(x, rec.out.dtype), axes, rec.kwargs.get("keepdim", False))
    return convert


def _var(g, rec):
    x = rec.inputs[0]
    axes = normalize_dims(rec.kwargs.get("dim"), len(x.shape), "var")
    n = math.prod(x.shape[a] for a in axes)
    denom = max(n - rec.kwargs.get("correction", 1), 0)
    xn = g.name(x)
    d = g.node("Sub", [xn, reduce(g, "ReduceMean", xn, axes, True)])
    s = reduce(g, "ReduceSum", g.node("Mul", [d, d]), axes, rec.kwargs.get("keepdim", False))
    return g.node("Div", [s, g.const(np.asarray(denom, x.dtype))])


def _std(g, rec):
    return g.node("Sqrt", [_var(g, rec)])


def _softmax(op_type):
    def convert(g, rec):
        axis = normalize_dim(rec.kwargs.get("dim", -1), _ndim(rec), op_type.lower())
        return softmax(g, _x(g, rec), axis, rec.out.dtype, op_type)
    return convert


def _masked_softmax_dropout(g, rec):
    _no_dropout(rec)
    x, allowed = _x(g, rec), rec.kwargs.get("allowed")
    if allowed is not None:
        x = g.node("Where", [g.name(allowed, np.bool_), x,
                             g.const(np.asarray(-np.inf, rec.out.dtype))])
    return softmax(g, x, _ndim(rec) - 1, rec.out.dtype)


def _identity_when_eval(g, rec):
    _no_dropout(rec)
    return g.node("Identity", [_x(g, rec)])


def _relu_dropout(g, rec):
    _no_dropout(rec)
    return g.node("Relu", [_x(g, rec)])


def _dropout_add(g, rec):
    _no_dropout(rec)
    return g.node("Add", [g.name(rec.inputs[0]), g.name(rec.inputs[1])])


def _dropout_add_layer_norm(g, rec):
    _no_dropout(rec)
    x, s, w, b = (rec.inputs + [None, None])[:4]
    h = g.node("Add", [g.name(x), g.name(s)])
    scale = g.name(w) if w is not None else g.const(np.ones(x.shape[-1:], x.dtype))
    return g.node("LayerNormalization", [h, scale] + ([g.name(b)] if b is not None else []),
                  axis=-1, epsilon=float(rec.kwargs.get("eps", 1e-5)))


def _uniform_block(g, v, ref, axis, dtype):
    """A constant block of one repeated value (constant padding's) beside a traced value
    `ref`: its shape is taken from ref's on every dim but `axis`, so a dynamic batch dim
    stays dynamic."""
    shape, nd = g.node("Shape", [g.name(ref)]), len(v.shape)
    dims = [g.node("Slice", [shape, g.ints([0]), g.ints([axis])])] if axis else []
    dims.append(g.ints([v.shape[axis]]))
    if axis < nd - 1:
        dims.append(g.node("Slice", [shape, g.ints([axis + 1]), g.ints([nd])]))
    return g.node("Expand", [g.const(np.asarray(v.array.flat[0], dtype)),
                             g.node("Concat", dims, axis=0)])


def _cat_part(g, v, ref, axis, dtype):
    if (ref is not None and isinstance(v, Value) and v.kind == "const" and v.array.size
            and (v.array == v.array.flat[0]).all()):
        return _uniform_block(g, v, ref, axis, dtype)
    return g.name(v, dtype)


def _cat(stack):
    def convert(g, rec):
        axis = normalize_dim(rec.kwargs.get("dim", 0), len(rec.out.shape), "cat")
        ref = None if stack else next((v for v in rec.inputs if v.kind != "const"), None)
        parts = [_cat_part(g, v, ref, axis, rec.out.dtype) for v in rec.inputs]
        if stack:
            parts = [g.node("Unsqueeze", [p, g.ints([axis])]) for p in parts]
        return g.node("Concat", parts, axis=axis)
    return convert


def _gather(g, rec):
    axis = normalize_dim(rec.kwargs.get("dim", 0), _ndim(rec), "gather")
    return g.node("GatherElements", [_x(g, rec), operand(g, rec.kwargs["index"], np.int64)],
                  axis=axis)


def _index_select(g, rec):
    axis = normalize_dim(rec.kwargs.get("dim", 0), _ndim(rec), "index_select")
    return g.node("Gather", [_x(g, rec), operand(g, rec.kwargs["index"], np.int64)], axis=axis)


def _embedding(g, rec):
    return g.node("Gather", [_x(g, rec), operand(g, rec.kwargs["ids"], np.int64)], axis=0)


def _shape_op(fn):
    def convert(g, rec):
        return fn(g, _x(g, rec), rec.inputs[0].shape, rec.out.shape)
    return convert


def _reshape(g, rec):
    """A dim the model wrote as -1 stays -1: it takes up whatever a dynamic dim brings."""
    return reshape(g, _x(g, rec), rec.inputs[0].shape, rec.out.shape,
                   rec.kwargs.get("shape"))


OPS = {
    ops.Add: elementwise("Add"), ops.Sub: elementwise("Sub"), ops.Mul: elementwise("Mul"),
    ops.Div: elementwise("Div"), ops.Pow: elementwise("Pow"), ops.Maximum: elementwise("Max"),
    ops.Minimum: elementwise("Min"), ops.Neg: elementwise("Neg"), ops.Exp: elementwise("Exp"),
    ops.Log: elementwise("Log"), ops.Sqrt: elementwise("Sqrt"), ops.Abs: elementwise("Abs"),
    ops.Tanh: elementwise("Tanh"), ops.Sigmoid: elementwise("Sigmoid"),
    ops.Relu: elementwise("Relu"), ops.Floor: elementwise("Floor"),
    ops.Ceil: elementwise("Ceil"), ops.Sign: elementwise("Sign"), ops.Round: elementwise("Round"),
    ops.Sin: elementwise("Sin"), ops.Cos: elementwise("Cos"),
    ops.FloorDivide: floor_divide(), ops.Remainder: floor_divide(True),
    ops.LeakyRelu: lambda g, rec: g.node("LeakyRelu", [_x(g, rec)],
                                         alpha=float(rec.kwargs.get("negative_slope", 0.01))),
    ops.Gelu: _gelu, ops.Clamp: _clamp, ops.Where: _where, ops.MaskedFill: _masked_fill,
    ops.Cast: lambda g, rec: g.node("Cast", [_x(g, rec)], to=onnx_type(rec.out.dtype)),
    ops.Reshape: _reshape, ops.Expand: _shape_op(expand),
    ops.Contiguous: lambda g, rec: g.node("Identity", [_x(g, rec)]),  # a layout change only
    ops.Permute: lambda g, rec: g.node("Transpose", [_x(g, rec)], perm=[
        normalize_dim(d, _ndim(rec), "permute") for d in rec.kwargs["dims"]]),
    ops.Cat: _cat(False), ops.Stack: _cat(True),
    ops.GetItem: lambda g, rec: getitem(g, _x(g, rec), rec.inputs[0].shape, rec.kwargs["index"],
                                        "GetItem"),
    ops.Gather: _gather, ops.IndexSelect: _index_select, ops.Embedding: _embedding,
    ops.MatMul: elementwise("MatMul"),
    ops.Sum: _reduction("ReduceSum"), ops.Mean: _reduction("ReduceMean"),
    ops.Amax: _reduction("ReduceMax"), ops.Amin: _reduction("ReduceMin"),
    ops.LogSumExp: _reduction("ReduceLogSumExp"), ops.Var: _var, ops.Std: _std,
    ops.Softmax: _softmax("Softmax"), ops.LogSoftmax: _softmax("LogSoftmax"),
    ops.Dropout: _identity_when_eval, ops.ReluDropout: _relu_dropout,
    ops.DropoutAdd: _dropout_add, ops.MaskedSoftmaxDropout: _masked_softmax_dropout,
    ops.DropoutAddLayerNorm: _dropout_add_layer_norm,
    ops.Linear: _linear, ops.LayerNorm: _layer_norm,
    Erf: elementwise("Erf"),  # exact GELU written out (x / 2 (1 + erf(x / sqrt 2))) uses it
}

from .conv_ops import CONV_OPS  # noqa: E402  (convolution and pooling, in their own module)
OPS.update(CONV_OPS)
from .layer_ops import LAYER_OPS  # noqa: E402  (the newer layers' ops)
OPS.update(LAYER_OPS)
