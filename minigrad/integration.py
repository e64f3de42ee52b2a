"""Integration by the trapezoidal rule: `trapezoid` (with its older name `trapz`) and
`cumulative_trapezoid`, along one dim, with a constant spacing `dx` or sample points `x`
(one per sample: a (n,) vector, or a tensor broadcast against y). Composed of slicing,
differences, products and sums, so the gradients (to y and to x) are theirs; integer
samples give the default float dtype, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

__all__ = ["cumulative_trapezoid", "trapezoid", "trapz"]


def _areas(op, y, x, dx, dim):
    """The trapezoids' areas (..., n - 1, ...) along `dim` of y (..., n, ...)."""
    if x is not None and dx is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: x and dx "
                        f"cannot both be given")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions ({op})")
    dim = dim % y.ndim
    n = y.shape[dim]
    head = (slice(None),) * dim
    pairs = y[head + (slice(1, None),)] + y[head + (slice(0, max(n - 1, 0)),)]
    if x is None:
        return pairs * ((1 if dx is None else dx) / 2)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point (x of "
                               f"shape {tuple(x.shape)}, y of shape {tuple(y.shape)}, dim={dim})")
        shape = [1] * y.ndim
        shape[dim] = max(n - 1, 0)
        spacing = x.diff().reshape(*shape) if n > 1 else x[:0].reshape(*shape)
    else:
        try:
            np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
        except ValueError:
            raise RuntimeError(f"{op}: x of shape {tuple(x.shape)} does not broadcast to y of "
                               f"shape {tuple(y.shape)}") from None
        spacing = x.expand(*np.broadcast_shapes(tuple(x.shape), tuple(y.shape))).diff(dim=dim)
    return pairs * spacing / 2


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of the samples y along `dim` (that dim removed): spacing `dx` (1 by
    default) or sample points `x`."""
    return _areas("trapezoid", y, x, dx, dim).sum(dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    """`trapezoid`'s older name."""
    return _areas("trapz", y, x, dx, dim).sum(dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integrals of y along `dim`: n - 1 values, from the first sample."""
    return _areas("cumulative_trapezoid", y, x, dx, dim).cumsum(dim)
