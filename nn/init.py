"""Weight initialisers (`minigrad.nn.init`), PyTorch's formulas, drawing from minigrad's seeded
generator (or the `generator=` given). Each fills a tensor in place and returns it.

Xavier/Glorot keeps the variance of activations and gradients alike across a layer by using
both fans: std = gain * sqrt(2 / (fan_in + fan_out)). Kaiming/He uses one fan and the ReLU gain
sqrt(2), since ReLU zeroes half of its inputs.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from minigrad.autograd import bump_version
from minigrad.random import engine as _engine
from minigrad.random_draws import fill_normal, fill_uniform


def _fill(tensor, values):
    tensor._array[...] = values
    bump_version(tensor)
    return tensor


def calculate_fans(tensor):
    """(fan_in, fan_out) of a weight (out, in, *kernel), as PyTorch computes them."""
    shape = tensor.shape
    if len(shape) < 2:
        raise ValueError(f"init: fans need a tensor with at least 2 dims, got shape {shape}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    gains = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0),
             "selu": 0.75}
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity not in gains:
        raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}")
    return gains[nonlinearity]


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    fill_uniform(_engine(generator), tensor._array, a, b)
    bump_version(tensor)
    return tensor


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    fill_normal(_engine(generator), tensor._array, mean, std)
    bump_version(tensor)
    return tensor


def constant_(tensor, val):
    return _fill(tensor, val)


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = calculate_fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = calculate_fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan_in, fan_out = calculate_fans(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std) restricted to [a, b] (absolute bounds), PyTorch's way: the inverse CDF of
    uniforms between the bounds' CDFs (u in [2 cdf(a) - 1, 2 cdf(b) - 1), then
    mean + std sqrt(2) erfinv(u), clamped to [a, b]), so the numbers are PyTorch's."""
    if not a < b:
        raise ValueError(f"trunc_normal_: a must be below b, got a={a}, b={b}")
    dist = NormalDist(mean, std)
    lo, hi = dist.cdf(a), dist.cdf(b)
    if hi - lo < 1e-6:
        raise ValueError(f"trunc_normal_: [{a}, {b}] is too far into the tail of "
                         f"N({mean}, {std}) to sample (probability {hi - lo:.1e})")
    from minigrad.error_functions import erfinv
    uniform_(tensor, 2 * lo - 1, 2 * hi - 1, generator)
    vals = erfinv(tensor.detach()).numpy() * np.asarray(std * math.sqrt(2.0), tensor.dtype)
    vals = np.clip(vals + np.asarray(mean, tensor.dtype), a, b)
    return _fill(tensor, vals)


def orthogonal_(tensor, gain=1.0, generator=None):
    """A (semi-)orthogonal matrix, Q of the QR decomposition of a Gaussian matrix with the
    signs of R's diagonal taken out (so Q is uniform over orthogonal matrices); a tensor of
    more than 2 dims is seen as (shape[0], the product of the rest), as in PyTorch."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"got shape {tensor.shape}")
    rows = tensor.shape[0]
    cols = int(np.prod(tensor.shape)) // rows if rows else 0
    if rows * cols == 0:
        return tensor
    flat = fill_normal(_engine(generator), np.empty((rows, cols), tensor.dtype))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


def eye_(tensor):
    """The identity in a 2-D tensor (ones on the diagonal of a rectangular one)."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tensor.shape}")
    return _fill(tensor, np.eye(*tensor.shape))
