"""ONNX nodes for the ops of the newer layers and functions whose forward is compiled code or
NumPy the tracer cannot follow: adaptive max pooling, SiLU, `Tensor.unfold`'s windows along
a dim, `nn.Unfold`'s blocks (im2col) and `nn.Fold` (col2im), scatter and scatter_add,
running sums and products (a Scan), products, einsum, log1p and the inverse trigonometric and
hyperbolic functions.

Windows and blocks are gathers with constant index arrays (each element read, never
multiplied), so they are exact for every value, inf and NaN included.
"""
from __future__ import annotations

import math

import numpy as np
from onnx import helper

from .. import ops
from ..ops._util import normalize_dim, normalize_dims
from ..ops.diagonal import Diagonal
from ..ops.dim_windows import UnfoldDim
from ..ops.einsum import Einsum, parse
from ..ops.hyperbolic import Acosh, Asinh, Atanh, Cosh, Sinh
from ..ops.inverse_trig import Acos, Asin, Atan
from ..ops.product_reductions import Cumprod, Prod
from ..ops.unfold import Fold, Unfold
from ..precise import Log1p
from .graph import onnx_type
from .lowering import elementwise, operand, reduce
from .trace import Value


def _silu(g, rec):
    x = g.name(rec.inputs[0], rec.out.dtype)
    return g.node("Mul", [x, g.node("Sigmoid", [x])])


def _windows(n, size, step, dilation=1):
    """(n, size) int64: the positions that window i reads, i * step + k * dilation."""
    return (np.arange(n)[:, None] * step + np.arange(size) * dilation).astype(np.int64)


def _unfold_dim(g, rec):
    """(..., L, ...) -> (..., W, ..., size): a Gather of the (W, size) window positions along
    the dim, then the size dim moved to the end."""
    x, out = rec.inputs[0], rec.out.shape
    nd = len(x.shape)
    if nd == 0:  # one element, seen as a window of its own (size 0 or 1)
        return g.node("Reshape", [g.name(x), g.ints(list(out))])
    d = normalize_dim(rec.kwargs.get("dimension", 0), nd, "unfold")
    idx = _windows(out[d], rec.kwargs.get("size", 1), rec.kwargs.get("step", 1))
    y = g.node("Gather", [g.name(x), g.const(idx)], axis=d)  # (..., W, size, ...)
    perm = list(range(d + 1)) + list(range(d + 2, nd + 1)) + [d + 1]
    return g.node("Transpose", [y], perm=perm)


def _diagonal(g, rec):
    """(..., n, ..., m, ...) -> (..., L): the two dims moved last and flattened, then a Gather
    of the diagonal's flat positions r * m + c (the other dims, a batch too, keep their size)."""
    x, out = rec.inputs[0], rec.out.shape
    nd = len(x.shape)
    d1 = normalize_dim(rec.kwargs.get("dim1", 0), nd, "diagonal")
    d2 = normalize_dim(rec.kwargs.get("dim2", 1), nd, "diagonal")
    offset, m = rec.kwargs.get("offset", 0), x.shape[d2]
    rest = [d for d in range(nd) if d not in (d1, d2)]
    y = g.node("Transpose", [g.name(x)], perm=rest + [d1, d2])
    y = g.node("Reshape", [y, g.ints([0] * len(rest) + [x.shape[d1] * m])])  # 0: as it is
    steps = np.arange(out[-1])
    flat = (steps + max(0, -offset)) * m + steps + max(0, offset)
    return g.node("Gather", [y, g.const(flat.astype(np.int64))], axis=len(rest))


def _unfold_blocks(g, rec):
    """im2col: (N, C, *S) -> (N, C * prod(kernel), prod(out)). The zero-padded input gathered
    along each spatial dim with its (out, kernel) positions gives (N, C, o1, k1, o2, k2, ...),
    transposed to (N, C, k1, k2, ..., o1, o2, ...) and flattened: PyTorch's order."""
    x, kernel, conf = rec.inputs[0], rec.kwargs["kernel"], rec.kwargs["conf"]
    nd, c = len(kernel), x.shape[1]
    y = g.name(x)
    if any(lo or hi for lo, hi in conf.padding):
        pads = [0, 0] + [lo for lo, _ in conf.padding] + [0, 0] + [hi for _, hi in conf.padding]
        y = g.node("Pad", [y, g.ints(pads)], mode="constant")
    for i in range(nd):
        idx = _windows(conf.out[i], kernel[i], conf.stride[i], conf.dilation[i])
        y = g.node("Gather", [y, g.const(idx)], axis=2 + 2 * i)
    perm = [0, 1] + [3 + 2 * i for i in range(nd)] + [2 + 2 * i for i in range(nd)]
    y = g.node("Transpose", [y], perm=perm)
    return g.node("Reshape", [y, g.ints([0, c * math.prod(kernel), math.prod(conf.out)])])


def _bin_max(g, y, spatial, bins):
    """The max of each bin of y (N, C, *S): max is separable, so each spatial dim in turn is
    cut into its bins [floor(i n / o), ceil((i + 1) n / o)) (PyTorch's, overlapping where o
    does not divide n), each bin's max kept, and the bins concatenated."""
    for i, (n, o) in enumerate(zip(spatial, bins)):
        axis = g.ints([2 + i])
        parts = [g.node("ReduceMax", [g.node("Slice", [y, g.ints([j * n // o]),
                                                       g.ints([-(-(j + 1) * n // o)]), axis]),
                                      axis], keepdims=1) for j in range(o)]
        y = g.node("Concat", parts, axis=2 + i) if o != 1 else parts[0]
    return y


def _adaptive_max(g, rec):
    """Adaptive max pooling from (N, C, prod(S)). onnxruntime's ReduceMax may skip a NaN, so
    the bins holding one (the max of the NaN mask) are NaN, as PyTorch's are."""
    spatial, bins, t = rec.kwargs["spatial"], rec.kwargs["bins"], rec.out.dtype
    x = g.node("Reshape", [g.name(rec.inputs[0]), g.ints([0, 0, *spatial])])
    y = _bin_max(g, x, spatial, bins)
    nan = _bin_max(g, g.node("Cast", [g.node("IsNaN", [x])], to=onnx_type(t)), spatial, bins)
    y = g.node("Where", [g.node("Greater", [nan, g.const(np.asarray(0, t))]),
                         g.const(np.asarray(np.nan, t)), y])
    return g.node("Reshape", [y, g.ints([0, 0, math.prod(bins)])])


def _block_positions(kernel, conf, padded):
    """(prod(kernel) * prod(out),) int64: where in the flattened padded image each column
    element of col2im goes, kernel offsets first, then block positions (the columns' order)."""
    nd = len(kernel)
    flat = np.zeros(tuple(kernel) + tuple(conf.out), np.int64)
    for i in range(nd):
        coord = _windows(conf.out[i], kernel[i], conf.stride[i], conf.dilation[i]).T
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = kernel[i], conf.out[i]
        flat = flat * padded[i] + coord.reshape(shape)
    return flat.reshape(-1)


def _fold_blocks(g, rec):
    """col2im, nn.Fold: (N, C * prod(kernel), L) -> (N, C, *S). Every column element added
    (ScatterElements, reduction "add") at its place in the flattened zero-padded image, then
    the padding cut off. (ONNX's Col2Im would do, but onnxruntime has it for float32 only.)"""
    conf, kernel, size = rec.kwargs["conf"], rec.kwargs["kernel"], rec.kwargs["x_shape"][2:]
    c, t = rec.kwargs["x_shape"][1], rec.out.dtype
    padded = [n + lo + hi for n, (lo, hi) in zip(size, conf.padding)]
    idx = _block_positions(kernel, conf, padded)
    upd = g.node("Reshape", [g.name(rec.inputs[0]), g.ints([0, c, idx.size])])
    shape = g.node("Shape", [upd])
    index = g.node("Expand", [g.const(idx.reshape(1, 1, -1)), shape])
    zeros = g.node("Expand", [g.const(np.zeros((), t)), g.node("Concat", [
        g.node("Slice", [shape, g.ints([0]), g.ints([2])]), g.ints([math.prod(padded)])],
        axis=0)])
    y = g.node("ScatterElements", [zeros, index, upd], axis=2, reduction="add")
    y = g.node("Reshape", [y, g.ints([0, 0, *padded])])
    return g.node("Slice", [y, g.ints([lo for lo, _ in conf.padding]),
                            g.ints([lo + n for n, (lo, _) in zip(size, conf.padding)]),
                            g.ints(list(range(2, 2 + len(size))))])


def _scatter(g, rec):
    """scatter and scatter_add as ScatterElements; only the leading
    index-shaped block of a larger `src` is written, a number is written everywhere."""
    a, src = rec.inputs[:2]
    t, index = rec.out.dtype, rec.kwargs["index"]
    d = normalize_dim(rec.kwargs.get("dim", 0), len(a.shape), "scatter")
    idx = operand(g, index, np.int64)
    if isinstance(src, Value) and src.shape:
        upd = g.name(src, t)
        cut = [i for i, (m, n) in enumerate(zip(src.shape, index.shape)) if m != n]
        if cut:  # only the dims that differ, so that a dynamic batch dim stays dynamic
            upd = g.node("Slice", [upd, g.ints([0] * len(cut)),
                                   g.ints([index.shape[i] for i in cut]), g.ints(cut)])
    else:
        upd = g.node("Expand", [operand(g, src, t), g.node("Shape", [idx])])
    add = {"reduction": "add"} if rec.kwargs.get("add", False) else {}
    return g.node("ScatterElements", [g.name(a, t), idx, upd], axis=d, **add)


def _accumulator(t):
    """The type a running sum or product of dtype `t` is accumulated in, as the ops (and
    PyTorch's CPU kernels) accumulate: float32 in double, float16 in float32."""
    return {np.float32: np.dtype(np.float64), np.float16: np.dtype(np.float32)}.get(t.type, t)


def _cumsum(g, rec):
    t = rec.out.dtype
    if len(rec.inputs[0].shape) == 0:
        return g.node("Identity", [g.name(rec.inputs[0], t)])
    acc = _accumulator(t)
    axis = normalize_dim(rec.kwargs.get("dim", 0), len(rec.inputs[0].shape), "cumsum")
    out = g.node("CumSum", [g.name(rec.inputs[0], acc), g.const(np.asarray(axis, np.int64))])
    return out if acc == t else g.node("Cast", [out], to=onnx_type(t))


def _cumprod(g, rec):
    """A Scan along the dim whose state is the running product: state_i = state_{i-1} * x_i,
    each state also the i-th output, in the accumulator type (rounded once per element)."""
    x, t = rec.inputs[0], rec.out.dtype  # x has a dim: cumprod of a 0-d tensor is Prod
    axis = normalize_dim(rec.kwargs.get("dim", 0), len(x.shape), "cumprod")
    acc = _accumulator(t)
    xa = g.name(x, acc)
    others = g.ints([i for i in range(len(x.shape)) if i != axis])
    start_shape = g.node("Gather", [g.node("Shape", [xa]), others], axis=0)
    kind = onnx_type(acc)
    start = g.node("ConstantOfShape", [start_shape],
                   value=helper.make_tensor("one", kind, [1], [1]))
    body = helper.make_graph(
        [helper.make_node("Mul", ["state", "x_i"], ["next"]),
         helper.make_node("Identity", ["next"], ["out_i"])], g.fresh("cumprod_step"),
        [helper.make_tensor_value_info("state", kind, None),
         helper.make_tensor_value_info("x_i", kind, None)],
        [helper.make_tensor_value_info("next", kind, None),
         helper.make_tensor_value_info("out_i", kind, None)])
    _, scanned = g.node("Scan", [start, xa], outputs=2, body=body, num_scan_inputs=1,
                        scan_input_axes=[axis], scan_output_axes=[axis])
    return scanned if acc == t else g.node("Cast", [scanned], to=onnx_type(t))


def _prod(g, rec):
    x = rec.inputs[0]
    dim = rec.kwargs.get("dim")
    axes = None if dim is None else normalize_dims(dim, len(x.shape), "prod")
    return reduce(g, "ReduceProd", g.name(x, rec.out.dtype), axes,
                  rec.kwargs.get("keepdim", False))


def _einsum(g, rec):
    ins, out = parse(rec.kwargs.get("equation", ""), [len(v.shape) for v in rec.inputs])
    return g.node("Einsum", [g.name(v, rec.out.dtype) for v in rec.inputs],
                  equation=f"{','.join(ins)}->{out}")


def _log1p(g, rec):
    """log1p without log(1 + x)'s loss for small x (Goldberg's form): with u = 1 + x rounded,
    x log(u) / (u - 1), and x itself where u is 1."""
    t = rec.out.dtype
    x = g.name(rec.inputs[0], t)
    u = g.node("Add", [x, g.const(np.asarray(1, t))])
    um1 = g.node("Sub", [u, g.const(np.asarray(1, t))])
    scaled = g.node("Div", [g.node("Mul", [x, g.node("Log", [u])]), um1])
    return g.node("Where", [g.node("Equal", [um1, g.const(np.asarray(0, t))]), x, scaled])


# keyword operands a converter does not read: adaptive max pooling's positions are found
# again in the graph, so they are neither computed in the file nor compared between traces
UNREAD = {ops.AdaptiveMaxGather: frozenset({"index"})}

LAYER_OPS = {
    ops.AdaptiveMaxGather: _adaptive_max, ops.Silu: _silu, UnfoldDim: _unfold_dim,
    Diagonal: _diagonal,
    Unfold: _unfold_blocks, Fold: _fold_blocks, ops.Cumsum: _cumsum,
    Cumprod: _cumprod, Prod: _prod, Einsum: _einsum, Log1p: _log1p, ops.Scatter: _scatter,
    Asin: elementwise("Asin"), Acos: elementwise("Acos"), Atan: elementwise("Atan"),
    Sinh: elementwise("Sinh"), Cosh: elementwise("Cosh"), Asinh: elementwise("Asinh"),
    Acosh: elementwise("Acosh"), Atanh: elementwise("Atanh"),
}
