"""`torch` functions that are compositions of other ops: `addmm` and `baddbmm` (a product
added to a scaled input), `addcmul` and `addcdiv` (an elementwise product or quotient added,
the moment updates of optimizers), `lerp` (linear interpolation), `cdist` (all pairwise
p-distances) and `pdist` (the distances between the rows of one matrix).

They are built from ops that have backward, double-backward and forward-mode rules, so their
gradients of every order come for free; each checks its arguments first and names itself in
its errors, as PyTorch's do.
"""
from __future__ import annotations

import math

import numpy as np

from .tensor import Tensor

__all__ = ["addcdiv", "addcmul", "addmm", "baddbmm", "cdist", "lerp", "pdist"]


def _as_tensor(x, like):
    return x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x, dtype=like.dtype))


def _scaled_sum(input, product, beta, alpha):
    """beta * input + alpha * product, where beta=0 ignores the input (NaN and inf in it are
    not propagated) and alpha=1, beta=1 multiply nothing, as in PyTorch."""
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        return out
    return out + (input if beta == 1 else input * beta)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2): mat1 (n, m), mat2 (m, p), input broadcast to
    (n, p)."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"addmm: {name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1.shape[0]}x{mat1.shape[1]} and {mat2.shape[0]}x"
                           f"{mat2.shape[1]})")
    _check_broadcast(input, (mat1.shape[0], mat2.shape[1]), "addmm")
    return _scaled_sum(_as_tensor(input, mat1), mat1 @ mat2, beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2) per batch: batch1 (b, n, m), batch2 (b, m, p),
    input broadcast to (b, n, p)."""
    for name, m in (("batch1", batch1), ("batch2", batch2)):
        if m.ndim != 3:
            raise RuntimeError(f"baddbmm: {name} must be a 3D tensor, got {m.ndim}-D")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"baddbmm: batch1 of shape {batch1.shape} and batch2 of shape "
                           f"{batch2.shape} cannot be multiplied batch by batch")
    _check_broadcast(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]), "baddbmm")
    return _scaled_sum(_as_tensor(input, batch1), batch1 @ batch2, beta, alpha)


def _check_broadcast(input, shape, op):
    try:
        ok = np.broadcast_shapes(np.shape(input), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"{op}: input of shape {tuple(np.shape(input))} does not broadcast "
                           f"to the product's shape {shape}")


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, broadcast, in the dtype PyTorch promotes to."""
    product = tensor1 * tensor2
    return input + (product if value == 1 else product * value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, broadcast; integer tensors are refused, as PyTorch
    no longer divides them here."""
    if all(np.dtype(t.dtype).kind in "iub" for t in (tensor1, tensor2)):
        raise RuntimeError(f"addcdiv: integer division with addcdiv is no longer supported "
                           f"(tensor1 {tensor1.dtype}, tensor2 {tensor2.dtype}); write "
                           f"input + value * tensor1 / tensor2 for a true division")
    quotient = tensor1 / tensor2
    return input + (quotient if value == 1 else quotient * value)


def lerp(input, end, weight):
    """input + weight * (end - input), broadcast; `weight` a number or a tensor. Where the
    weight is at least 0.5 it is computed as end - (1 - weight) * (end - input), as PyTorch
    does, so that weight 1 gives `end` exactly."""
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp: end must be a Tensor, got {type(end).__name__}")
    if end.dtype != input.dtype:
        raise RuntimeError(f"lerp: expected dtype {input.dtype} for `end` but got dtype "
                           f"{end.dtype}")
    if input.dtype.kind not in "fc":   # as PyTorch, whose lerp kernels are floating only
        raise NotImplementedError(f"lerp: not implemented for {input.dtype} tensors (a "
                                  f"floating point input is needed)")
    if isinstance(weight, Tensor) and weight.dtype != input.dtype:
        raise RuntimeError(f"lerp: expected dtype {input.dtype} for `weight` but got dtype "
                           f"{weight.dtype}")
    from .functional import where
    diff = end - input
    if not isinstance(weight, Tensor):
        return input + diff * weight if abs(weight) < 0.5 else end - diff * (1 - weight)
    return where(weight.abs() < 0.5, input + diff * weight, end - diff * (1 - weight))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-distance of every row of x1 to every row of x2: (B..., P, M), (B..., R, M) ->
    (B..., P, R), the batch dims broadcast. p=0 counts the coordinates that differ and p=inf
    takes the largest difference. The distances are always computed from the differences
    (never through a matrix product, whatever `compute_mode` says), so they are exact at 0,
    where the gradient is 0, as in PyTorch."""
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"cdist: {compute_mode} is not a valid value for compute_mode")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist: only supports at least 2D tensors, X1 got: {x1.ndim}D, "
                           f"X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if not p >= 0:
        raise RuntimeError(f"cdist: only supports non-negative p values, got {p}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not np.issubdtype(x.dtype, np.floating):
            raise RuntimeError(f"cdist: only supports floating-point dtypes, {name} got: "
                               f"{x.dtype}")
    return _p_distance(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)  # (B..., P, R, M) -> (B..., P, R)


def pdist(input, p=2.0):
    """The p-distance of every pair of rows i < j of input (N, M), in row-major order of the
    pairs: (N, M) -> (N (N - 1) / 2,), the upper triangle of cdist(input, input) without its
    diagonal. p=0 and p=inf as in cdist; a zero distance has a zero gradient."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not np.issubdtype(input.dtype, np.floating):
        raise RuntimeError(f"pdist only supports floating-point dtypes, got: {input.dtype}")
    if not p >= 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    rows, cols = np.triu_indices(input.shape[0], 1)
    return _p_distance(input[rows] - input[cols], p)  # (pairs, M) -> (pairs,)


def _p_distance(diff, p):
    """The p-norm of differences (..., M) over their last dim."""
    if p == 0:  # |sign| is 1 where a coordinate differs; its gradient is 0, as PyTorch's
        return diff.sign().abs().sum(-1)
    if diff.shape[-1] == 0:  # no coordinates: every distance is 0
        return diff.sum(-1)
    return diff.norm(math.inf if p == math.inf else float(p), dim=-1)
