"""Sampling from distributions given as tensors: `multinomial` (categories by probability,
how language models pick the next token), `bernoulli`, `normal` and `poisson`. Results carry no
gradient.
"""
from __future__ import annotations

import numpy as np

from .dtypes import resolve
from .errors import InvalidValueError, ShapeError
from .linalg_checks import torch_dtype_name
from . import random_draws as _draws
from .random import engine as _engine, generator as _rng
from .tensor import Tensor, array_of

_min, _max = np.minimum.reduce, np.maximum.reduce


def multinomial(input, num_samples, replacement=False, generator=None):
    """Category indices drawn in proportion to the weights in each row of input (C,) or (N, C).

    Weights need not sum to 1. With replacement every draw is independent (inverse CDF);
    without, a category is drawn at most once: each gets the key w / q for an exponential q
    and the largest keys win, which draws in proportion to w one after another (the
    exponential race). Both take PyTorch's draws, so the samples are PyTorch's.
    """
    # the weights in their own float dtype (the draws' dtype), or else in float64; the checks'
    # totals in float64 whatever the dtype
    p = np.asarray(array_of(input))
    if p.dtype.kind != "f":
        p = p.astype(np.float64)
    if p.ndim not in (1, 2):
        raise ShapeError(f"multinomial: input must be 1-D or 2-D, got shape {p.shape}")
    rows = p.reshape(1, -1) if p.ndim == 1 else p  # (N, C)
    n = rows.shape[1]
    totals = rows.sum(axis=1, dtype=np.float64)
    # one look at the totals and the minimum clears the usual input (a language model draws
    # a token per call); anything else gets the checks that name what is wrong. A NaN makes
    # every comparison below False, and an inf total fails the last one (the ufuncs' own
    # reductions: the methods' Python wrappers cost more than these small arrays)
    usual = (rows.size > 0 and _min(rows, axis=None) >= 0 and _min(totals) > 0
             and _max(totals) < np.inf)
    if not usual:
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise InvalidValueError("multinomial: the weights must be finite and non-negative "
                                    "(found inf, NaN or a negative value): probability tensor "
                                    "contains either `inf`, `nan` or element < 0")
        if np.any(totals <= 0):
            raise InvalidValueError("multinomial: every row needs a positive total weight (a row "
                                    "sums to zero)")
    if not isinstance(num_samples, (int, np.integer)) or num_samples <= 0:
        raise InvalidValueError(f"multinomial: num_samples must be a positive int, got "
                                f"{num_samples!r}")
    if not replacement and num_samples > n:
        raise InvalidValueError(f"multinomial: cannot draw {num_samples} samples without "
                                f"replacement from {n} categories (cannot sample n_sample > "
                                f"prob_dist.size(-1) samples without replacement)")
    if not replacement and num_samples > 1 and np.any((rows > 0).sum(axis=1) < num_samples):
        raise InvalidValueError(f"multinomial: a row has fewer than {num_samples} categories "
                                f"of nonzero weight, so {num_samples} cannot be drawn without "
                                f"replacement")
    gen = _engine(generator)
    if replacement and num_samples > 1:
        # PyTorch's: the running sum in the input's dtype, divided by the total, the last
        # set to 1; per draw a float64 uniform, and the first category it does not exceed
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        cdf[:, -1] = 1
        u = _draws.unit(gen, rows.shape[0] * num_samples, np.float64).reshape(
            rows.shape[0], num_samples)
        out = np.stack([np.searchsorted(c, r, side="left") for c, r in zip(cdf, u)])
    else:
        # PyTorch's: the largest weight / q of exponential draws q (a Gumbel-max in disguise)
        q = _draws.exponential(gen, rows.size, 1.0).astype(rows.dtype).reshape(rows.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = rows / q
        out = (keys.argmax(axis=1)[:, None] if num_samples == 1  # (the method skips a wrapper)
               else np.argsort(-keys, axis=1, kind="stable")[:, :num_samples])
    return Tensor._wrap(out.astype(np.int64).reshape(p.shape[:-1] + (num_samples,)))


def bernoulli(input, p=None, generator=None):
    """1 with probability input (or p), else 0, in input's dtype."""
    probs = np.asarray(array_of(input)) if p is None else np.full(np.shape(array_of(input)), p)
    if np.any((probs < 0) | (probs > 1)):
        raise InvalidValueError("bernoulli: probabilities must be in [0, 1]")
    if probs.dtype != np.float64:
        probs = probs.astype(np.float32)  # against float32 uniforms, as PyTorch
    draw = _draws.bernoulli(_engine(generator), probs.reshape(-1)).reshape(probs.shape)
    return Tensor._wrap(draw.astype(np.asarray(array_of(input)).dtype))


def normal(mean=0.0, std=1.0, size=None, generator=None, dtype=None):
    """Samples of N(mean, std^2): numbers with `size=`, or tensors of means and/or stds."""
    m, s = np.asarray(array_of(mean)), np.asarray(array_of(std))
    if np.any(s < 0):
        raise InvalidValueError("normal: std must be non-negative")
    shape = tuple(size) if size is not None else np.broadcast_shapes(m.shape, s.shape)
    like = m if isinstance(mean, Tensor) else s if isinstance(std, Tensor) else None
    dtype = resolve(dtype, like.dtype if like is not None else None)
    # PyTorch draws N(0, 1) (or N(0, std) for a number std) and scales and shifts after
    out = np.empty(shape, dtype)
    gen = _engine(generator)
    if size is not None or (m.ndim == 0 and s.ndim == 0):
        return Tensor._wrap(_draws.fill_normal(gen, out, float(m), float(s)))
    if isinstance(std, Tensor):
        _draws.fill_normal(gen, out, 0.0, 1.0)
        out = (out * s.astype(dtype, copy=False)).astype(dtype)
    else:
        _draws.fill_normal(gen, out, 0.0, float(s))
    return Tensor._wrap((out + m.astype(dtype, copy=False)).astype(dtype))


def poisson(input, generator=None):
    """Counts drawn from Poisson distributions of rates input (float, non-negative), in
    input's dtype, without gradient."""
    rates = input._array
    if rates.dtype.kind != "f":
        raise NotImplementedError(f'"poisson_cpu" not implemented for '
                                  f"'{torch_dtype_name(rates.dtype)}'")
    if np.any(rates < 0) or np.any(np.isnan(rates)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # a 0-d rate gives a Python int, hence the asarray
    return Tensor._wrap(np.asarray(_rng(generator).poisson(rates)).astype(rates.dtype))
