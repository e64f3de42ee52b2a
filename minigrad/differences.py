"""`diff` and `gradient`. `diff`: the n-th forward difference along a dim, out[i] = x[i + 1] - x[i] applied n times
(after joining `prepend` and `append` to the input), as `torch.diff`; for bools the
difference is `!=`. Built from narrow, subtraction and cat, so its gradients of every order
come from those ops. `gradient`: the derivative estimated by central differences inside
and one-sided ones at the ends, as `torch.gradient` (NumPy's `gradient`), for uniform
spacing or given coordinates; each estimate is a fixed weighting of neighbouring elements,
written with narrow, products and cat, so it is differentiable too.
"""
from __future__ import annotations

import numbers

import numpy as np

from .ops._util import normalize_dim

__all__ = ["diff", "gradient"]


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th difference along `dim`: size L + (prepend and append sizes) - n there (0 when
    n exceeds it)."""
    from .functional import cat
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, input.ndim, "diff")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        later, earlier = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = later != earlier if x.dtype.kind == "b" else later - earlier
    return x


def _coordinates(spacing, dims, sizes):
    """Per dim, the coordinates of its points (a float64 array): from one number (the step
    of every dim), one number per dim, or one 1-D tensor of coordinates per dim."""
    if isinstance(spacing, numbers.Real) or getattr(spacing, "ndim", 1) == 0:
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got "
                           f"a spacing argument of length {len(spacing)} and a dim argument "
                           f"of length {len(dims)}.")
    coords = []
    for s, n in zip(spacing, sizes):
        c = np.asarray(getattr(s, "_array", s), dtype=np.float64)
        if c.ndim == 0:
            c = np.arange(n) * float(c)
        elif c.shape != (n,):
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device "
                               f"and of the dimension's size {n}, got coordinates of shape "
                               f"{c.shape}")
        coords.append(c)
    return coords


def _along(t, d, weights):
    """weights (a 1-D array, one per position along dim d) shaped to broadcast against t."""
    shape = [1] * t.ndim
    shape[d] = -1
    return np.asarray(weights).reshape(shape).astype(t.dtype)


def _derivative(f, d, x, edge_order):
    """The estimate along dim d of f, whose points there are at coordinates x (NumPy's
    formulas for unevenly spaced points, which reduce to the usual ones for even spacing)."""
    from .functional import cat
    n = f.shape[d]
    h = np.diff(x)
    h1, h2 = h[:-1], h[1:]  # the steps before and after each inner point
    lo, mid, hi = f.narrow(d, 0, n - 2), f.narrow(d, 1, n - 2), f.narrow(d, 2, n - 2)
    inner = (lo * _along(f, d, -h2 / (h1 * (h1 + h2))) + mid * _along(f, d, (h2 - h1) / (h1 * h2))
             + hi * _along(f, d, h1 / (h2 * (h1 + h2))))
    first = [f.narrow(d, i, 1) for i in range(edge_order + 1)]  # the first points
    last = [f.narrow(d, n - 1 - edge_order + i, 1) for i in range(edge_order + 1)]
    if edge_order == 1:
        start = (first[1] - first[0]) * _along(f, d, [1 / h[0]])
        end = (last[1] - last[0]) * _along(f, d, [1 / h[-1]])
    else:
        a, b = h[0], h[1]
        start = (first[0] * _along(f, d, [-(2 * a + b) / (a * (a + b))])
                 + first[1] * _along(f, d, [(a + b) / (a * b)])
                 + first[2] * _along(f, d, [-a / (b * (a + b))]))
        a, b = h[-2], h[-1]
        end = (last[0] * _along(f, d, [b / (a * (a + b))])
               + last[1] * _along(f, d, [-(a + b) / (a * b)])
               + last[2] * _along(f, d, [(2 * b + a) / (b * (a + b))]))
    return cat([start, inner, end], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """A tuple with, per dim (all dims, or those of `dim`), the estimated derivative of input
    along it, of input's shape (integers give the default float dtype)."""
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got "
                           f"{edge_order}")
    dims = (list(range(input.ndim)) if dim is None
            else [normalize_dim(d, input.ndim, "gradient")
                  for d in ([dim] if isinstance(dim, int) else dim)])
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")
    f = input if input.dtype.kind in "fc" else input.float()
    coords = _coordinates(spacing, dims, [input.shape[d] for d in dims])
    return tuple(_derivative(f, d, x, edge_order) for d, x in zip(dims, coords))
