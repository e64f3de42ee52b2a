"""`batch_norm` and `instance_norm` of `torch.nn.functional`: normalisation by statistics that
can be kept from batch to batch (running estimates, updated in place while training).

Batch norm takes each channel's mean and biased variance over the batch and every position
(N, *S) of input (N, C, *S); instance norm takes them per example, over the positions alone
(a style-transfer and CycleGAN choice: one image's contrast does not depend on the others').
The running estimates move towards the batch's mean and unbiased variance by `momentum`;
instance norm moves them towards the average over the examples of the per-example values.
Everything differentiable is composed from tensor ops, so gradients (of every order) flow
through the statistics as in PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd import bump_version, no_grad
from minigrad.linalg_checks import torch_dtype_name


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """input (N, C, *S) normalised per channel C, then scaled by weight (C,) and shifted by
    bias (C,). training=True uses the batch's statistics and moves running_mean and
    running_var (C,), if given, towards them in place; training=False uses the running
    statistics."""
    c = _channels(input, "batch_norm")
    if training:
        count = input.numel() // max(c, 1)
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {tuple(input.shape)}")
        if eps <= 0.0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    _check_stats(input, running_mean, running_var, weight, bias, c, 1)
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    shape = (1, c) + (1,) * (input.ndim - 2)
    if training:
        axes = (0,) + tuple(range(2, input.ndim))
        mean, var = _batch_stats(input, axes)
        if running_mean is not None:
            _update(running_mean, running_var, mean._array.reshape(c),
                    var._array.reshape(c), input.numel() // max(c, 1), momentum)
    else:
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    return _affine((input - mean) / (var + eps).sqrt(), weight, bias, shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """input (N, C, *S) normalised per example and channel over *S, then scaled by weight (C,)
    and shifted by bias (C,). use_input_stats=True moves running_mean and running_var (C,), if
    given, towards the examples' average statistics in place; False normalises by them."""
    c = _channels(input, "instance_norm")
    n = input.shape[0]
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{tuple(input.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    # PyTorch runs batch norm on (1, N * C, *S) with everything per channel repeated N times,
    # which is what its size messages count
    _check_stats(input, running_mean, running_var, weight, bias, c, n)
    shape = (1, c) + (1,) * (input.ndim - 2)
    if use_input_stats:
        mean, var = _batch_stats(input, tuple(range(2, input.ndim)))
        if running_mean is not None and n:
            _update(running_mean, running_var, mean._array.reshape(n, c).mean(0),
                    var._array.reshape(n, c), math.prod(input.shape[2:]), momentum)
    else:
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    return _affine((input - mean) / (var + eps).sqrt(), weight, bias, shape)


def _channels(input, op):
    if input.ndim < 2:
        raise RuntimeError(f"{op}: expected an input (N, C, *) of at least 2 dims, got shape "
                           f"{list(input.shape)}")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"batch_norm\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}' ({op} takes floating "
                                  f"inputs)")
    return input.shape[1]


def _check_stats(input, running_mean, running_var, weight, bias, c, repeats):
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither "
                         "be None")
    for t, name in ((weight, "weight"), (bias, "bias"), (running_mean, "running_mean"),
                    (running_var, "running_var")):
        if t is None:
            continue
        if t.numel() != c:
            raise RuntimeError(f"{name} should contain {c * repeats} elements not "
                               f"{t.numel() * repeats}")
        if t.dtype != input.dtype and t.dtype.kind == "f":
            raise RuntimeError(f"mixed dtype (CPU): all inputs must share same datatype. "
                               f"(input {input.dtype}, {name} {t.dtype})")


def _batch_stats(input, axes):
    """(mean, biased variance) over `axes`, kept as dims; zeros for an empty input."""
    if input.numel() == 0:
        from minigrad.creation import zeros
        shape = tuple(1 if i in axes else n for i, n in enumerate(input.shape))
        return zeros(shape, dtype=input.dtype), zeros(shape, dtype=input.dtype)
    return input.mean(axes, keepdim=True), input.var(axes, keepdim=True, correction=0)


def _update(running_mean, running_var, mean, var, count, momentum):
    """running = (1 - momentum) * running + momentum * batch, in place: the mean's, and the
    unbiased variance's (`var` biased over `count` values, averaged over any leading dim)."""
    if count == 0:  # an empty batch says nothing: the estimates stay (PyTorch's)
        return
    unbiased = var * (count / max(count - 1, 1))
    if unbiased.ndim == 2:
        unbiased = unbiased.mean(0)
    with no_grad():
        for t, new in ((running_mean, mean), (running_var, unbiased)):
            t._array[...] = (1 - momentum) * t._array + momentum * np.asarray(new, t.dtype)
            bump_version(t)


def _affine(out, weight, bias, shape):
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out
