"""Sampling an image at arbitrary points, as a Spatial Transformer Network does:
`affine_grid` turns a batch of affine matrices into a grid of sampling points in [-1, 1]
coordinates, and `grid_sample` reads an image (N, C, H, W) at those points, bilinearly or at
the nearest pixel, with PyTorch's three rules for points outside the image (volumes and
bicubic sampling: `grid_sample_taps.py`).

grid_sample is one op (`GridSample2d`) whose backward gives gradients to both the image and
the grid, computed with PyTorch's formulas in the input's dtype so that the numbers agree.
"""
from __future__ import annotations

import warnings

import numpy as np

from minigrad.autograd.op import Op
from minigrad.graph_rules import constant, rule, saved_input
from minigrad.jvp_rules import jvp_rule
from minigrad.tensor import Tensor

from .grid_points import gather, scatter, scatter_tensor, source_index
from .grid_sample_taps import GridSampleTaps

_DEFAULT_CHANGED = ("Default grid_sample and affine_grid behavior has changed to "
                    "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                    "old behavior is desired. See the documentation of grid_sample for details.")


def _base_coordinates(steps, align_corners, dtype):
    """The `steps` pixel centres of one axis in [-1, 1] coordinates (the corner pixels' centres
    at -1 and 1 with align_corners, else their outer edges); one pixel sits at 0. Computed as
    PyTorch's linspace is, in the dtype, from the nearer end, so the grids agree bit for bit."""
    if steps <= 1:
        return np.zeros(steps, dtype)
    i = np.arange(steps)
    # a fused multiply-add, as PyTorch's kernel: the product exact in a wider float, the sum
    # rounded once to the dtype
    wide = np.float64 if dtype == np.float32 else np.longdouble
    step, one = wide(dtype.type(2) / dtype.type(steps - 1)), wide(1)
    line = np.where(i < steps // 2, -one + step * i, one - step * (steps - 1 - i)).astype(dtype)
    return line if align_corners else line * dtype.type(steps - 1) / dtype.type(steps)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of affine maps: theta (N, 2, 3) and size (N, C, H, W) give
    (N, H, W, 2), the (x, y) each output pixel reads from; theta (N, 3, 4) and a 5-D size
    (N, C, D, H, W) give (N, D, H, W, 3). Differentiable in theta."""
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, UserWarning, stacklevel=2)
        align_corners = False
    if theta.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {list(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {list(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta holds {theta.shape[0]} matrices for a batch of "
                           f"{size[0]} (size {size})")
    dtype = np.dtype(theta.dtype)
    axes = [_base_coordinates(s, align_corners, dtype) for s in reversed(spatial)]  # x, y(, z)
    points = np.meshgrid(*reversed(axes), indexing="ij")[::-1]  # x, y(, z), each (H, W)
    # each coordinate as x t0 + y t1 (+ z t2) + t_last, rounded after every product and sum
    # in that order, as PyTorch's product of the base grid with theta's transpose does
    grid = None
    for k, point in enumerate(points):  # (pixels, 1) times (N, 1, 2 or 3)
        term = Tensor._wrap(point.reshape(-1, 1)) * theta[:, :, k].unsqueeze(1)
        grid = term if grid is None else grid + term
    grid = grid + theta[:, :, -1].unsqueeze(1)
    return grid.reshape(size[0], *spatial, len(axes))


def _corners(ix, iy, h, w):
    """The four pixels around each point, nw, ne, sw, se, each as (flat index (N, P), mask
    (N, P) of the ones inside the image); the first is the pixel at (floor x, floor y)."""
    x0, y0 = np.floor(ix).astype(np.int64), np.floor(iy).astype(np.int64)
    out = []
    for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
        x, y = x0 + dx, y0 + dy
        ok = (x >= 0) & (x < w) & (y >= 0) & (y < h)
        out.append((np.where(ok, y * w + x, 0), ok))
    return out


class GridSample2d(Op):
    """input (N, C, H, W) read at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo)."""

    @staticmethod
    def forward(ctx, input, grid, mode, padding_mode, align_corners):
        n, c, h, w = input.shape
        pts = grid.reshape(n, grid.shape[1] * grid.shape[2], 2)
        ix, sx = source_index(pts[..., 0], w, padding_mode, align_corners)
        iy, sy = source_index(pts[..., 1], h, padding_mode, align_corners)
        flat = input.reshape(n, c, h * w)
        ctx.save_for_backward(flat, grid, ix, iy, sx, sy)
        ctx.mode, ctx.shape, ctx.out_hw = mode, input.shape, grid.shape[1:3]
        if mode == "nearest":
            (index, ok), = _corners(np.rint(ix), np.rint(iy), h, w)[:1]
            out = gather(flat, index, ok)
        else:
            out = sum(gather(flat, index, ok) * wt[:, None, :]
                      for (index, ok), wt in zip(_corners(ix, iy, h, w), _weights(ix, iy)))
        return out.reshape(n, c, *grid.shape[1:3]).astype(input.dtype, copy=False)

    @staticmethod
    def to_onnx(g, rec):
        """ONNX export (minigrad.onnx calls it with its graph and this op's record): ONNX's
        GridSample (opset 16+) has PyTorch's modes, padding modes and align_corners."""
        kw = rec.kwargs
        return g.node("GridSample", [g.name(rec.inputs[0]), g.name(rec.inputs[1])],
                      mode=kw["mode"], padding_mode=kw["padding_mode"],
                      align_corners=int(kw["align_corners"]))

    @staticmethod
    def backward(ctx, g):
        flat, _, ix, iy, sx, sy = ctx.saved
        n, c, h, w = ctx.shape
        go = g.reshape(n, c, ix.shape[1])
        need = ctx.needs_input_grad
        if ctx.mode == "nearest":
            (index, ok), = _corners(np.rint(ix), np.rint(iy), h, w)[:1]
            g_in = scatter(go, index, ok, flat.shape) if need[0] else None
            g_grid = np.zeros(ix.shape + (2,), flat.dtype) if need[1] else None
        else:
            corners, weights = _corners(ix, iy, h, w), _weights(ix, iy)
            g_in = None
            if need[0]:
                g_in = sum(scatter(go * wt[:, None, :], index, ok, flat.shape)
                           for (index, ok), wt in zip(corners, weights))
            g_grid = None
            if need[1]:
                nw, ne, sw, se = (gather(flat, index, ok) for index, ok in corners)
                wx, wy = ix - np.floor(ix), iy - np.floor(iy)
                gx = ((se - sw) * wy[:, None] + (ne - nw) * (1 - wy)[:, None]) * go
                gy = ((se - ne) * wx[:, None] + (sw - nw) * (1 - wx)[:, None]) * go
                g_grid = np.stack([gx.sum(1) * sx, gy.sum(1) * sy], axis=-1)
        if g_in is not None:
            g_in = g_in.reshape(ctx.shape).astype(flat.dtype, copy=False)
        if g_grid is not None:
            g_grid = g_grid.reshape(n, *ctx.out_hw, 2).astype(flat.dtype, copy=False)
        return g_in, g_grid


@rule(GridSample2d)
def _grid_sample_rule(ctx, g):
    """The backward above on Tensors, so that its gradients can be differentiated again: the
    indices and masks are constants, the bilinear weights functions of the grid (each source
    index is the grid coordinate times its slope, the padding rules being piecewise linear)."""
    flat, grid, ix, iy, sx, sy = ctx.saved
    n, c, h, w = ctx.shape
    need = ctx.needs_input_grad
    image = saved_input(ctx, 0, flat.reshape(ctx.shape)).reshape(n, c, h * w)
    points = saved_input(ctx, 1, grid).reshape(n, ix.shape[1], 2)
    go = g.reshape(n, c, ix.shape[1])
    if ctx.mode == "nearest":
        (index, ok), = _corners(np.rint(ix), np.rint(iy), h, w)[:1]
        g_in = scatter_tensor(go * constant(ok[:, None, :].astype(flat.dtype)), index,
                               flat.shape).reshape(ctx.shape) if need[0] else None
        return g_in, constant(np.zeros(grid.shape, flat.dtype)) if need[1] else None
    ix_t = constant(ix) + (points[..., 0] - constant(grid[..., 0].reshape(ix.shape))) * \
        constant(sx)
    iy_t = constant(iy) + (points[..., 1] - constant(grid[..., 1].reshape(iy.shape))) * \
        constant(sy)
    wx, wy = ix_t - constant(np.floor(ix)), iy_t - constant(np.floor(iy))
    weights = ((1 - wy) * (1 - wx), (1 - wy) * wx, wy * (1 - wx), wy * wx)
    corners = _corners(ix, iy, h, w)
    g_in = g_grid = None
    if need[0]:
        for (index, ok), wt in zip(corners, weights):
            part = scatter_tensor(go * (wt * constant(ok.astype(flat.dtype))).unsqueeze(1),
                                   index, flat.shape)
            g_in = part if g_in is None else g_in + part
    if need[1]:
        nw, ne, sw, se = (image.gather(2, np.broadcast_to(index[:, None, :], go.shape)) *
                          constant(ok[:, None, :].astype(flat.dtype)) for index, ok in corners)
        wx_c, wy_c = wx.unsqueeze(1), wy.unsqueeze(1)
        gx = (((se - sw) * wy_c + (ne - nw) * (1 - wy_c)) * go).sum(1) * constant(sx)
        gy = (((se - ne) * wx_c + (sw - nw) * (1 - wx_c)) * go).sum(1) * constant(sy)
        from minigrad.functional import stack
        g_grid = stack([gx, gy], -1).reshape(grid.shape)
    return (None if g_in is None else g_in.reshape(ctx.shape)), g_grid


@jvp_rule(GridSample2d)
def _grid_sample_jvp(ctx, out, tangents):
    raise NotImplementedError("Trying to use forward AD with grid_sampler_2d that does not "
                              "support it because it has not been implemented yet (as in "
                              "PyTorch).")


def _weights(ix, iy):
    """The bilinear weights of the nw, ne, sw, se neighbours."""
    wx, wy = ix - np.floor(ix), iy - np.floor(iy)
    ex, sy = 1 - wx, 1 - wy
    return sy * ex, sy * wx, wy * ex, wy * wx


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) read at the points of grid (N, Ho, Wo, 2), whose (x, y) run over
    [-1, 1] across the image (the corner pixels' centres with align_corners=True, their outer
    edges without): (N, C, Ho, Wo); a volume (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3) of
    (x, y, z): (N, C, Do, Ho, Wo). mode 'bilinear' (trilinear for volumes), 'nearest' or
    'bicubic' (images only); a point outside the input reads zeros, the border pixel
    ('border') or its mirror image ('reflection')."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, UserWarning, stacklevel=2)
        align_corners = False
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    want = 4 if input.ndim == 4 else 5  # any other input is taken for a volume
    if input.ndim != want or grid.ndim != want:
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number "
                           f"of dimensions, but got {sizes}")
    if input.dtype != grid.dtype:
        names = {"float16": "Half", "float32": "Float", "float64": "Double"}
        raise RuntimeError(f"expected scalar type {names.get(str(input.dtype), input.dtype)} "
                           f"but found {names.get(str(grid.dtype), grid.dtype)} "
                           f"(grid_sample: the grid must have the input's dtype)")
    if input.ndim == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.ndim == 5 or mode == "bicubic":
        return GridSampleTaps.apply(input, grid, mode=mode, padding_mode=padding_mode,
                                    align_corners=bool(align_corners))
    return GridSample2d.apply(input, grid, mode=mode, padding_mode=padding_mode,
                              align_corners=bool(align_corners))
