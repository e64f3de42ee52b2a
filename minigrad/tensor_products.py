"""Products of whole tensors beside matmul and einsum: `tensordot` (sums over chosen pairs of
dims), `kron` (the Kronecker product: every element of one input times the whole other) and
`cross` / `linalg.cross` (the cross product of 3-vectors along a dim).

Each is a composition of permute, reshape, matmul, multiplication and indexing, ops with
backward, double-backward and forward-mode rules, so their gradients of every order follow.
"""
from __future__ import annotations

import warnings

import numpy as np

from .ops._util import normalize_dim

__all__ = ["cross", "kron", "linalg_cross", "tensordot"]


def _contracted(dims, a, b):
    """The two lists of dims tensordot sums over: `dims` an int n (a's last n with b's first
    n), a pair of lists, or a tensor holding either."""
    from .tensor import Tensor
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    dims_a, dims_b = ([d] if isinstance(d, (int, np.integer)) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    return ([normalize_dim(d, a.ndim, "tensordot") for d in dims_a],
            [normalize_dim(d, b.ndim, "tensordot") for d in dims_b])


def tensordot(a, b, dims=2):
    """The sum over pairs of dims of a and b of their products: for dims=([i..], [j..]), the
    result has a's other dims, then b's; an int n pairs a's last n dims with b's first n."""
    if a.dtype != b.dtype:
        raise RuntimeError(f"both inputs should have same dtype (tensordot of {a.dtype} and "
                           f"{b.dtype})")
    dims_a, dims_b = _contracted(dims, a, b)
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            named = da - a.ndim if isinstance(dims, (int, np.integer)) else da  # as PyTorch
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {named} and second has size "
                               f"{b.shape[db]} in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    def size(t, dims):
        return int(np.prod([t.shape[d] for d in dims], dtype=np.int64))
    left = a.permute(*free_a, *dims_a).reshape(size(a, free_a), size(a, dims_a))
    right = b.permute(*dims_b, *free_b).reshape(size(b, dims_b), size(b, free_b))
    return (left @ right).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])


def kron(input, other):
    """The Kronecker product: for inputs of shapes (a0, a1, ...) and (b0, b1, ...) (the one of
    fewer dims padded with leading 1s), shape (a0 b0, a1 b1, ...) with block (i0, i1, ...)
    equal to input[i0, i1, ...] * other."""
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    spread_a = [s for d in sa for s in (d, 1)]   # (a0, 1, a1, 1, ...)
    spread_b = [s for d in sb for s in (1, d)]   # (1, b0, 1, b1, ...)
    product = input.reshape(*spread_a) * other.reshape(*spread_b)
    return product.reshape(*[x * y for x, y in zip(sa, sb)])


def _cross_along(input, other, d, op):
    """The cross product of the 3-vectors along dim d of the broadcast inputs (of equal
    ndim)."""
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise RuntimeError(f"{op}: inputs must be broadcastable, got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}") from None
    if input.dtype != other.dtype:
        raise RuntimeError(f"{op}: expected scalar type {input.dtype} but found {other.dtype}")
    a = [input.narrow(d, i, 1) for i in range(3)]
    b = [other.narrow(d, i, 1) for i in range(3)]
    from .functional import cat
    out = cat([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
               a[0] * b[1] - a[1] * b[0]], d)
    return out if tuple(out.shape) == shape else out.expand(*shape)


def linalg_cross(input, other, *, dim=-1):
    """`torch.linalg.cross`: the cross product along `dim` (of size 3 in both inputs), the
    other dims broadcast."""
    op = "linalg.cross"
    if input.ndim != other.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions. (Got "
                           f"shapes {tuple(input.shape)} and {tuple(other.shape)})")
    d = normalize_dim(dim, max(input.ndim, 1), op)
    if input.ndim == 0 or input.shape[d] != 3 or other.shape[d] != 3:
        sizes = [t.shape[d] if t.ndim else 0 for t in (input, other)]
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3. Got {sizes[0]} "
                           f"and {sizes[1]}")
    return _cross_along(input, other, d, op)


def cross(input, other, dim=None):
    """`torch.cross`: as `linalg.cross`, but without `dim` along the first dim of size 3 (with
    PyTorch's deprecation warning)."""
    if dim is None:
        sizes = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        found = [i for i, n in enumerate(sizes) if n == 3]
        if not found:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {tuple(input.shape)} "
                               f"and {tuple(other.shape)})")
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in "
                      "a future release.", UserWarning, stacklevel=2)
        dim = found[0]
    return linalg_cross(input, other, dim=dim)
