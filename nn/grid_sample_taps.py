"""grid_sample of volumes (N, C, D, H, W) (trilinearly, mode 'bilinear', or at the nearest
voxel) and of images (N, C, H, W) by bicubic convolution, as PyTorch's grid_sampler_3d and
bicubic grid_sampler_2d compute them.

Each point reads a fixed set of taps around it: per axis, its floor (the linear modes), its
rounding (nearest) or four pixels from floor - 1 (bicubic), each with a weight polynomial in
the point's fractional position; a tap's weight is the product over the axes. The forward,
both gradients and the backward's own gradient (as Tensors) are sums over those taps, so one
op (`GridSampleTaps`) serves every mode and dimension here.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from minigrad.autograd.op import Op
from minigrad.graph_rules import constant, rule, saved_input
from minigrad.jvp_rules import jvp_rule

from .grid_points import gather, reflect, scatter, scatter_tensor, source_index

_A = -0.75  # PyTorch's bicubic convolution constant (Keys's kernel)

# per mode: the taps' offsets from the base index, their weights and the weights' slopes as
# polynomials in the fraction f in [0, 1) (plain arithmetic, so that they take arrays and
# Tensors alike)
_LINEAR = ((0, lambda f: 1 - f, lambda f: -1 + 0 * f), (1, lambda f: f, lambda f: 1 + 0 * f))
_NEAREST = ((0, lambda f: 1 + 0 * f, lambda f: 0 * f),)
_CUBIC = (
    (-1, lambda f: ((_A * (f + 1) - 5 * _A) * (f + 1) + 8 * _A) * (f + 1) - 4 * _A,
     lambda f: (3 * _A * (f + 1) - 10 * _A) * (f + 1) + 8 * _A),
    (0, lambda f: ((_A + 2) * f - (_A + 3)) * f * f + 1,
     lambda f: (3 * (_A + 2) * f - 2 * (_A + 3)) * f),
    (1, lambda f: ((_A + 2) * (1 - f) - (_A + 3)) * (1 - f) * (1 - f) + 1,
     lambda f: -(3 * (_A + 2) * (1 - f) - 2 * (_A + 3)) * (1 - f)),
    (2, lambda f: ((_A * (2 - f) - 5 * _A) * (2 - f) + 8 * _A) * (2 - f) - 4 * _A,
     lambda f: -((3 * _A * (2 - f) - 10 * _A) * (2 - f) + 8 * _A)))
_TAPS = {"bilinear": _LINEAR, "nearest": _NEAREST, "bicubic": _CUBIC}


def _pad_position(pos, size, padding_mode, align_corners):
    """A bicubic tap's integer position after the padding rule (PyTorch pads each tap, not
    the point): clamped into the axis, or reflected into it and then clamped."""
    if padding_mode == "reflection":
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        pos = reflect(pos, low, high)[0]
    if padding_mode in ("border", "reflection"):
        pos = np.clip(pos, 0, size - 1)
    return np.trunc(pos)


class _Axis:
    """One spatial axis of the points (N, P): the source index, its slope by the grid
    coordinate, the base pixel and the fraction the weights are polynomials in."""

    def __init__(self, coord, size, mode, padding_mode, align_corners):
        # bicubic reads unpadded coordinates and pads its taps instead
        self.index, self.slope = source_index(
            coord, size, "zeros" if mode == "bicubic" else padding_mode, align_corners)
        self.base = np.rint(self.index) if mode == "nearest" else np.floor(self.index)
        self.frac = self.index - self.base
        self.taps, self.size = _TAPS[mode], size
        self.positions = []
        for offset, _, _ in self.taps:
            pos = self.base + offset
            if mode == "bicubic":
                pos = _pad_position(pos, size, padding_mode, align_corners)
            self.positions.append(pos)


def _axes(grid, spatial, mode, padding_mode, align_corners):
    """The _Axis of every spatial dim (grid's last dim holds x, y(, z): the reverse order)."""
    n, k = grid.shape[0], grid.shape[-1]
    pts = grid.reshape(n, math.prod(grid.shape[1:-1]), k)
    return [_Axis(pts[..., k - 1 - d], spatial[d], mode, padding_mode, align_corners)
            for d in range(k)]


def _taps(axes, fracs):
    """Every tap as (flat index (N, P), inside mask (N, P), weight, [slope of the weight by
    each axis's fraction]) with weights from `fracs` (arrays or Tensors, one per axis)."""
    strides = [math.prod(a.size for a in axes[d + 1:]) for d in range(len(axes))]
    for choice in itertools.product(*(range(len(a.taps)) for a in axes)):
        index, ok, ws, dws = 0, True, [], []
        for a, j, f, stride in zip(axes, choice, fracs, strides):
            pos = a.positions[j]
            ok = ok & (pos >= 0) & (pos < a.size)
            index = index + pos.astype(np.int64) * stride
            ws.append(a.taps[j][1](f))
            dws.append(a.taps[j][2](f))
        weight = math.prod(ws)
        slopes = [math.prod(ws[:d] + [dws[d]] + ws[d + 1:]) for d in range(len(axes))]
        yield np.where(ok, index, 0), ok, weight, slopes


class GridSampleTaps(Op):
    """input (N, C, *S) read at grid (N, *So, len(S)) -> (N, C, *So): volumes in mode
    'bilinear' or 'nearest', images in mode 'bicubic'."""

    @staticmethod
    def forward(ctx, input, grid, mode, padding_mode, align_corners):
        n, c = input.shape[:2]
        axes = _axes(grid, input.shape[2:], mode, padding_mode, align_corners)
        flat = input.reshape(n, c, math.prod(input.shape[2:]))
        ctx.save_for_backward(flat, grid)
        ctx.axes, ctx.shape = axes, input.shape
        out = sum(gather(flat, index, ok) * w[:, None, :]
                  for index, ok, w, _ in _taps(axes, [a.frac for a in axes]))
        return out.reshape(n, c, *grid.shape[1:-1]).astype(input.dtype, copy=False)

    @staticmethod
    def to_onnx(g, rec):
        """ONNX export: GridSample (opset 16+) samples images bicubically as PyTorch does;
        volumes need opset 20's GridSample, above the opset 18 minigrad writes."""
        kw = rec.kwargs
        if len(rec.inputs[0].shape) == 5:
            from minigrad.onnx.errors import UnsupportedOperatorError
            raise UnsupportedOperatorError(
                f"onnx.export: grid_sample of a 5-D input (volume, size "
                f"{list(rec.inputs[0].shape)}) cannot be expressed in ONNX opset {g.opset}: "
                f"GridSample takes volumes from opset 20")
        return g.node("GridSample", [g.name(rec.inputs[0]), g.name(rec.inputs[1])],
                      mode=kw["mode"], padding_mode=kw["padding_mode"],
                      align_corners=int(kw["align_corners"]))

    @staticmethod
    def backward(ctx, g):
        flat, grid = ctx.saved
        axes, need = ctx.axes, ctx.needs_input_grad
        go = g.reshape(flat.shape[0], flat.shape[1], axes[0].index.shape[1])
        g_in = np.zeros(flat.shape, flat.dtype) if need[0] else None
        g_axes = [np.zeros(go.shape[::2], flat.dtype) for _ in axes]
        for index, ok, w, slopes in _taps(axes, [a.frac for a in axes]):
            if need[0]:
                g_in += scatter(go * w[:, None, :], index, ok, flat.shape)
            if need[1]:
                read = (gather(flat, index, ok) * go).sum(1)
                for acc, s in zip(g_axes, slopes):
                    acc += read * s
        g_grid = None
        if need[1]:  # x, y(, z): the axes reversed, each times its index's slope
            g_grid = np.stack([g_axes[d] * axes[d].slope for d in reversed(range(len(axes)))],
                              axis=-1).reshape(grid.shape).astype(flat.dtype, copy=False)
        return (None if g_in is None else g_in.reshape(ctx.shape).astype(flat.dtype)), g_grid


@rule(GridSampleTaps)
def _grid_sample_taps_rule(ctx, g):
    """The backward above on Tensors, so that its gradients can be differentiated again: the
    tap indices and masks are constants, the weights polynomials of the grid (each source
    index being the grid coordinate times its slope, the padding rules piecewise linear)."""
    flat, grid = ctx.saved
    axes, need = ctx.axes, ctx.needs_input_grad
    n, c, k = flat.shape[0], flat.shape[1], len(axes)
    image = saved_input(ctx, 0, flat.reshape(ctx.shape)).reshape(flat.shape)
    pts_shape = (n, axes[0].index.shape[1], k)
    points = saved_input(ctx, 1, grid).reshape(pts_shape)
    const_pts = grid.reshape(pts_shape)
    fracs = [constant(a.frac) + (points[..., k - 1 - d] - constant(const_pts[..., k - 1 - d]))
             * constant(a.slope) for d, a in enumerate(axes)]
    go = g.reshape(n, c, axes[0].index.shape[1])
    g_in, g_axes = None, [None] * k
    for index, ok, w, slopes in _taps(axes, fracs):
        mask = constant(ok.astype(flat.dtype))
        if need[0]:
            part = scatter_tensor(go * (w * mask).unsqueeze(1), index, flat.shape)
            g_in = part if g_in is None else g_in + part
        if need[1]:
            read = (image.gather(2, np.broadcast_to(index[:, None, :], go.shape)) * go).sum(1)
            for d, s in enumerate(slopes):
                term = read * s * mask
                g_axes[d] = term if g_axes[d] is None else g_axes[d] + term
    g_grid = None
    if need[1]:
        from minigrad.functional import stack
        g_grid = stack([g_axes[d] * constant(axes[d].slope) for d in reversed(range(k))],
                       -1).reshape(grid.shape)
    return (None if g_in is None else g_in.reshape(ctx.shape)), g_grid


@jvp_rule(GridSampleTaps)
def _grid_sample_taps_jvp(ctx, out, tangents):
    name = "grid_sampler_3d" if len(ctx.axes) == 3 else "grid_sampler_2d"
    raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it "
                              f"because it has not been implemented yet (as in PyTorch).")
