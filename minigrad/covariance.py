"""Covariance and correlation: `cov` (of the variables in the rows of a (vars, obs) tensor,
with frequency and importance weights and the correction of its degrees of freedom, as
numpy.cov and PyTorch) and `corrcoef` (Pearson's coefficients, clipped to [-1, 1]). Composed
of means, products and sums, so their gradients are those ops'; integer inputs compute in
the default float dtype, as in PyTorch.
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["corrcoef", "cov"]


def _check_weights(name, w, n, integral):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if integral and np.dtype(w.dtype).kind not in "iu":
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                           f"fweights with {w.dtype} dtype")
    if (w._array < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix (vars, vars) of the variables in the rows of input (vars, obs)
    (a 1-D input is one variable: a 0-d result)."""
    from .dtypes import get_default_dtype
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if np.dtype(x.dtype).kind in "biu":
        x = x.to(get_default_dtype())
    n = x.shape[1]
    weights = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        weights = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        total = n
        mean = x.mean(1, keepdim=True)
        scale = total - correction
    else:
        weights = weights.to(x.dtype)
        total = weights.sum()
        mean = (x * weights).sum(1, keepdim=True) / total
        scale = total - (correction if aweights is None else
                         correction * (weights * aweights.to(x.dtype)).sum() / total)
    if float(np.asarray(getattr(scale, "_array", scale))) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        scale = scale * 0 if not isinstance(scale, (int, float)) else 0
    centered = x - mean
    weighted = centered if weights is None else centered * weights
    with np.errstate(divide="ignore", invalid="ignore"):
        out = weighted @ centered.transpose(0, 1) / scale
    return out.reshape(()) if input.ndim < 2 else out


def corrcoef(input):
    """Pearson's correlation coefficients (vars, vars) of the rows of input (vars, obs),
    clipped to [-1, 1]."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = c / d.sqrt().unsqueeze(1) / d.sqrt().unsqueeze(0)
    return scaled.clamp(-1, 1)
