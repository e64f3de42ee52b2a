"""Norms as `torch.linalg` computes them: `vector_norm` (any order over any dims), `matrix_norm`
(Frobenius; the largest or smallest absolute column or row sum; the largest or smallest
singular value and their sum, the nuclear norm) and `norm`, which picks one of the two from
`ord` and `dim` as PyTorch's does.

They are built from ops that have backward, double-backward and forward-mode rules (the
p-norm op, abs, sum, amax, amin, the singular values), so gradients of every order follow;
the gradient at a zero vector is 0, as PyTorch's. The norms of complex tensors are those of
their moduli |z| (abs carries the gradient, PyTorch's sgn(z) convention).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import ops
from .linalg_checks import check_float, check_matrix, torch_dtype_name, with_zero_gradient
from .linalg_svd import svdvals
from .ops._util import normalize_dim, normalize_dims

__all__ = ["matrix_norm", "norm", "vector_norm"]


def _cast(x, dtype, op):
    if dtype is None:
        return x
    if np.dtype(dtype).kind != "f":
        raise RuntimeError(f"{op}: dtype should be floating point or complex, but got {dtype}")
    if np.dtype(dtype).itemsize < x.dtype.itemsize:
        raise RuntimeError(f"{op}: the dtype of the input ({torch_dtype_name(x.dtype)}) should "
                           f"be convertible without narrowing to the specified dtype "
                           f"({torch_dtype_name(dtype)})")
    return x.to(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """(sum |x|^ord)^(1/ord) over `dim` (an int, a tuple, or None for all elements); ord inf
    and -inf give the largest and smallest |x|, ord 0 the number of nonzero elements. `dtype`
    casts x first."""
    op = "linalg.vector_norm"
    if isinstance(ord, (bool, str)) or not isinstance(ord, numbers.Real):
        raise TypeError(f"{op}(): argument 'ord' must be Number, not {type(ord).__name__}")
    check_float(x._array, op, half=True, complex=True)  # half as PyTorch's norms (its
    x = _cast(x, dtype, op)                               # factorizations refuse it)
    if x.dtype.kind == "c":
        x = x.abs()
    ord = float(ord)
    dims = normalize_dims(dim, x.ndim, op)
    if math.isinf(ord) and any(x.shape[d] == 0 for d in dims):
        raise RuntimeError(f"{op} cannot compute the {'-' if ord < 0 else ''}inf norm on an "
                           f"empty tensor because the operation does not have an identity "
                           f"(input of shape {tuple(x.shape)}, dim {dim})")
    if ord == 0:  # the count of nonzeros, with PyTorch's zero gradient
        count = (x._array != 0).sum(dims, keepdims=keepdim).astype(x.dtype)
        return with_zero_gradient(count, x.sum(dims, keepdim=keepdim))
    if x.ndim == 0:  # a number's norm is its absolute value
        return x.abs()
    if ord == math.inf:
        return x.abs().amax(dims, keepdim=keepdim)
    if ord == -math.inf:
        return x.abs().amin(dims, keepdim=keepdim)
    if ord > 0:
        return ops.Norm.apply(x, p=ord, dim=dims, keepdim=keepdim)
    return (x.abs() ** ord).sum(dims, keepdim=keepdim) ** (1 / ord)


def _two_dims(dim, ndim, op):
    if isinstance(dim, (int, np.integer)) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (normalize_dim(d, ndim, op) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({d0}, {d1})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The norm of the matrices A (*, m, n) over the two dims `dim`: 'fro' (the square root of
    the sum of squares), 1 / -1 (the largest / smallest sum of |a| down a column), inf / -inf
    (the same along a row), 2 / -2 (the largest / smallest singular value), 'nuc' (the sum of
    the singular values)."""
    op = "linalg.matrix_norm"
    check_matrix(A._array, op, half=True, complex=True)
    d0, d1 = _two_dims(dim, A.ndim, op)
    A = _cast(A, dtype, op)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in (2, -2, "nuc"):  # from the singular values of the matrices moved last
        values = svdvals(A.movedim((d0, d1), (-2, -1)))
        out = {2: values.amax, -2: values.amin, "nuc": values.sum}[ord](-1)
        return out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1)) if keepdim else out
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    summed, picked = (d0, d1) if abs(ord) == 1 else (d1, d0)
    if A.shape[picked] == 0:
        raise RuntimeError(f"{op}: cannot take the {'max' if ord > 0 else 'min'} over dim "
                           f"{picked} of size 0 (input of shape {tuple(A.shape)}, ord {ord})")
    sums = A.abs().sum(summed, keepdim=True)
    out = sums.amax(picked, keepdim=True) if ord > 0 else sums.amin(picked, keepdim=True)
    return out if keepdim else out.squeeze(max(d0, d1)).squeeze(min(d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or a matrix norm: over one dim (an int or a 1-tuple) a vector norm, over two a
    matrix norm; without `dim`, the 2-norm of all elements when `ord` is None, else A's own
    norm (A must be 1-D or 2-D)."""
    op = "linalg.norm"
    if dim is not None:
        dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise RuntimeError(f"{op}: If dim is specified, it must be of length 1 or 2. Got {dim}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"{op}: If dim is not specified but ord is, the input must be 1D or "
                       f"2D. Got {A.ndim}D.")
