"""Weight initialisers (`minigrad.nn.init`), PyTorch's formulas, drawing from minigrad's seeded
generator (or the `generator=` given). Each fills a tensor in place and returns it.

Xavier/Glorot keeps the variance of activations and gradients alike across a layer by using
both fans: std = gain * sqrt(2 / (fan_in + fan_out)). Kaiming/He uses one fan and the ReLU gain
sqrt(2), since ReLU zeroes half of its inputs.
"""
from __future__ import annotations

import math
import warnings

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
    """N(mean, std) restricted to [a, b] (absolute bounds), by rejection as PyTorch draws it,
    so that the numbers, and the stream left after them, are PyTorch's.

    Where [a, b] holds more than 0.3 of the normal's mass, every element is drawn from
    N(mean, std); while any lies outside [a, b], a whole new tensor of normals is drawn and
    those outside take theirs. Otherwise the proposals are uniform on [a, b], each accepted
    where log(u) <= log(pdf(x) / pdf(mode)) for a uniform u; while any is pending, a whole new
    tensor of proposals and one of u are drawn. The log-density ratio is computed in the
    tensor's dtype, step by step as PyTorch's in-place chain computes it."""
    if not a < b:
        raise ValueError(f"trunc_normal_: a must be below b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    engine, like = _engine(generator), tensor._array
    kind = like.dtype.type

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
        lo, hi = kind(a), kind(b)
        result = fill_normal(engine, np.empty_like(like), mean, std)
        while True:
            outside = (result < lo) | (result > hi)
            if not outside.any():
                break
            result = np.where(outside, fill_normal(engine, np.empty_like(like), mean, std),
                              result)
        return _fill(tensor, result)
    mode = max(a, min(mean, b))
    log_peak = kind(-0.5 * ((mode - mean) / std) ** 2)

    def log_ratio(x):
        return ((x - kind(mean)) / kind(std)) ** 2 * kind(-0.5) - log_peak

    def rejected(x):
        return np.log(fill_uniform(engine, np.empty_like(like))) > log_ratio(x)

    result = fill_uniform(engine, np.empty_like(like), a, b)
    pending = rejected(result)
    while pending.any():
        candidates = fill_uniform(engine, np.empty_like(like), a, b)
        result = np.where(pending, candidates, result)
        pending = np.where(pending, rejected(candidates), pending)
    return _fill(tensor, result)


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


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D (rows, cols) weight of N(0, std) draws with ceil(sparsity * rows) zeros in each
    column (Martens' Hessian-free initialisation), drawn as PyTorch draws it: the normals from
    `generator`, then one permutation of the rows per column from the global generator (as
    PyTorch's own `sparse_` does, whatever the `generator`)."""
    from minigrad.creation import randperm
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = math.ceil(sparsity * rows)
    values = fill_normal(_engine(generator), np.empty_like(tensor._array), 0.0, std)
    for col in range(cols):
        values[randperm(rows).numpy()[:zeros], col] = 0
    return _fill(tensor, values)


def eye_(tensor):
    """The identity in a 2-D tensor (ones on the diagonal of a rectangular one)."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tensor.shape}")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """A convolution weight (out, in, *kernel) of 3, 4 or 5 dims that passes its input through:
    in each of `groups` groups of out // groups filters, filter d is 1 at input channel d and
    the kernel's centre, 0 elsewhere (channels beyond min(out // groups, in) stay 0)."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only tensors with 3, 4, or 5 dimensions are supported, got "
                         f"shape {tensor.shape}")
    out = tensor.shape[0]
    if out % groups != 0:
        raise ValueError(f"dirac_: dim 0 ({out}) must be divisible by groups ({groups})")
    per_group = out // groups
    centre = tuple(k // 2 for k in tensor.shape[2:])
    values = np.zeros(tensor.shape, dtype=tensor._array.dtype)
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, values)
