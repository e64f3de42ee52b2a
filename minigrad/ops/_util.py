"""Helpers shared by the ops: validating `dim` arguments, spreading a reduction's gradient, the
base of ops that apply one function elementwise."""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..errors import ShapeError


class Pointwise(Op):
    """`fn` applied elementwise, whose gradient is g * derivative(a): subclasses set the two
    (a NumPy ufunc needs no `staticmethod`, a Python function does). One whose gradient is
    better computed from the output y (exp, sqrt) sets `from_output` and its own backward.
    One marked `complex_aware` is holomorphic: on complex input its gradient is
    g * conj(derivative), PyTorch's convention (complex_tensors.py)."""
    from_output = False

    @staticmethod
    def forward(ctx, a):
        out = ctx.fn(a)
        ctx.save_for_backward(out if ctx.from_output else a)
        return out

    @staticmethod
    def backward(ctx, g):
        s = ctx.derivative(ctx.saved[0])
        return g * (conj_slope(s) if ctx.complex_aware else s)  # abs's sgn(z) is not conjugated


def conj_slope(s):
    """The factor a holomorphic op's gradient is multiplied by: its derivative `s`, conjugated
    where complex (the gradient of a real loss is g * conj(f'(z)), see complex_tensors.py)."""
    return np.conj(s) if getattr(s, "dtype", None) is not None and s.dtype.kind == "c" else s


def normalize_dim(dim: int, ndim: int, op: str) -> int:
    """A dim in [-ndim, ndim) as a non-negative int, or an IndexError naming the op."""
    if dim.__class__ is int and -ndim <= dim < ndim:  # the usual case, checked first: shape
        return dim % ndim                             # methods call this several times each
    n = max(ndim, 1)
    if not isinstance(dim, (int, np.integer)) or not -n <= dim < n:
        raise IndexError(f"{op}: dim {dim} is out of range for a tensor with {ndim} dims "
                         f"(expected a value in [{-n}, {n - 1}]). Dimension out of range "
                         f"(expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return int(dim) % n


def normalize_dims(dim, ndim: int, op: str):
    """`None` (all dims), an int, or a tuple of ints, as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = tuple(sorted({normalize_dim(d, ndim, op) for d in dims}))
    if len(out) != len(dims):
        raise ShapeError(f"{op}: dim {dim} names the same dimension twice (a dim appears "
                         f"multiple times in the list of dims)")
    return out if ndim else ()  # a 0-d tensor accepts dim 0 or -1, as in PyTorch


def expand_reduced(grad: np.ndarray, shape: tuple, dims: tuple, keepdim: bool) -> np.ndarray:
    """Put back the reduced axes of `grad` (as size 1) so it broadcasts against `shape`."""
    if not keepdim:
        grad = np.expand_dims(grad, dims) if dims else grad
    return np.broadcast_to(grad, shape)
