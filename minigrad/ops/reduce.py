"""Reductions over `dim` (an int, a tuple, or None for all) with `keepdim`.

The gradient of a reduction is spread back over the reduced axes: `expand_reduced` reinserts
them as size-1 axes and broadcasts, which is the one place every reduction shares.
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ._util import expand_reduced, normalize_dims
from ..errors import ShapeError


def _saved_with_output(ctx, a, out, keepdim):
    """Keep the input and the output (with size-1 reduced axes) for backward; return the
    output as `keepdim` asks."""
    ctx.save_for_backward(a, out)
    ctx.keepdim = keepdim
    return out if keepdim else np.squeeze(out, axis=ctx.dims)


def _with_reduced_axes(ctx, g):
    """The output's gradient with the reduced axes back as size 1, like the saved output."""
    return g if ctx.keepdim else np.expand_dims(g, ctx.dims)


class Sum(Op):
    complex_aware = True
    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.dims = normalize_dims(dim, a.ndim, "sum")
        ctx.shape, ctx.keepdim = a.shape, keepdim
        wide = np.int64 if a.dtype.kind in "biu" else None  # integer sums are int64, as PyTorch's
        return np.asarray(a.sum(axis=ctx.dims, keepdims=keepdim, dtype=wide))

    @staticmethod
    def backward(ctx, g):
        return expand_reduced(g, ctx.shape, ctx.dims, ctx.keepdim)


class Mean(Op):
    complex_aware = True
    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.dims = normalize_dims(dim, a.ndim, "mean")
        ctx.shape, ctx.keepdim = a.shape, keepdim
        ctx.count = int(np.prod([a.shape[d] for d in ctx.dims]))
        return np.asarray(a.mean(axis=ctx.dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        return expand_reduced(g / ctx.count, ctx.shape, ctx.dims, ctx.keepdim)


class Amax(Op):
    """Largest value over dims; tied maxima share the gradient equally (PyTorch's amax rule)."""

    sign = 1

    @classmethod
    def forward(cls, ctx, a, dim=None, keepdim=False):
        name = "amax" if cls.sign > 0 else "amin"
        ctx.dims = normalize_dims(dim, a.ndim, name)
        if any(a.shape[d] == 0 for d in ctx.dims) or (a.size == 0 and not ctx.dims):
            raise ShapeError(f"{name}: cannot reduce an empty tensor of shape {a.shape}")
        out = (a.max if cls.sign > 0 else a.min)(axis=ctx.dims, keepdims=True)
        return _saved_with_output(ctx, a, out, keepdim)

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved
        hit = a == out
        g = _with_reduced_axes(ctx, g)
        return g * hit / hit.sum(axis=ctx.dims, keepdims=True, dtype=g.dtype)


class Amin(Amax):
    sign = -1


class Var(Op):
    """Variance with `correction` (1 = unbiased, PyTorch's default; 0 = biased). Of complex
    input it is the mean squared modulus |z - mean|^2, real; the gradient of |c|^2 is 2c in
    PyTorch's convention, so the one backward serves both."""

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, correction=1):
        return Var.wide(ctx, a, dim, keepdim, correction).astype(
            a.real.dtype if a.dtype.kind == "c" else a.dtype, copy=False)

    @staticmethod
    def wide(ctx, a, dim, keepdim, correction):
        """The variance, float32 and float16 computed in float64 and not yet rounded back
        (PyTorch's CPU var and std accumulate in double: std rounds once, after its sqrt)."""
        ctx.dims = normalize_dims(dim, a.ndim, "var")
        n = int(np.prod([a.shape[d] for d in ctx.dims]))
        ctx.denom = max(n - correction, 0)
        x = a.astype(np.float64) if a.dtype in (np.float32, np.float16) else a
        centered = x - x.mean(axis=ctx.dims, keepdims=True)
        ctx.save_for_backward(centered.astype(a.dtype, copy=False))
        ctx.keepdim = keepdim
        square = centered * centered if a.dtype.kind != "c" else (
            centered * np.conj(centered)).real
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(square.sum(axis=ctx.dims, keepdims=keepdim)
                              / square.dtype.type(ctx.denom))

    @staticmethod
    def backward(ctx, g):
        centered = ctx.saved[0]
        g = expand_reduced(g, centered.shape, ctx.dims, ctx.keepdim)
        return g * 2 * centered / g.dtype.type(ctx.denom)


class Std(Var):
    """The square root of `Var`; its gradient is 0 where the deviation is 0 (a constant row),
    as PyTorch's, instead of 0 * inf = nan through a separate sqrt."""

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, correction=1):
        out = np.sqrt(Var.wide(ctx, a, dim, keepdim, correction)).astype(
            a.real.dtype if a.dtype.kind == "c" else a.dtype, copy=False)
        ctx.std = out
        return out

    @staticmethod
    def backward(ctx, g):
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(ctx.std == 0, 0, g / (2 * ctx.std)).astype(ctx.std.dtype, copy=False)
        return Var.backward(ctx, g)


class LogSumExp(Op):
    """log(sum(exp(a))) computed around the maximum, so large inputs do not overflow."""

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.dims = normalize_dims(dim, a.ndim, "logsumexp")
        m = a.max(axis=ctx.dims, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)  # an all -inf slice gives -inf, not NaN
        with np.errstate(divide="ignore"):
            out = np.log(np.exp(a - m).sum(axis=ctx.dims, keepdims=True)) + m
        return _saved_with_output(ctx, a, out, keepdim)

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved
        with np.errstate(invalid="ignore"):
            p = np.exp(a - out)
        return _with_reduced_axes(ctx, g) * np.nan_to_num(p)


def dim_aliases(fn):
    """`fn` also taking NumPy's names `axis=` for `dim=` and `keepdims=` for `keepdim=`, as
    PyTorch's reductions do (`x.sum(axis=0, keepdims=True)`)."""
    def with_aliases(*args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:
            for alias, name in (("axis", "dim"), ("keepdims", "keepdim")):
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}: got both {name}= and its alias "
                                        f"{alias}=; pass one")
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    with_aliases.__name__, with_aliases.__qualname__ = fn.__name__, fn.__qualname__
    with_aliases.__doc__, with_aliases.__wrapped__ = fn.__doc__, fn
    return with_aliases


# the reductions PyTorch gives the aliases (as Tensor methods and torch.* functions)
ALIASED = ("sum", "mean", "amax", "amin", "logsumexp", "var", "std", "max", "min", "argmax",
           "argmin", "any", "all")
