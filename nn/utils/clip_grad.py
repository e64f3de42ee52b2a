"""Gradient clipping, as in `torch.nn.utils.clip_grad`.

Clipping by norm treats all gradients as one long vector and, if its length exceeds
`max_norm`, shrinks every gradient by the same factor. The update keeps its direction but
cannot be arbitrarily large, which stops one unlucky batch (an exploding RNN or a Transformer
early in training) from throwing the weights far away. Clipping by value instead caps every
element on its own, which can change the direction.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import autograd
from minigrad.tensor import Tensor

from .convert_parameters import _params


def _grads(parameters):
    return [p.grad for p in _params(parameters) if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale gradients in place so their joint norm is at most max_norm; return the norm.
    (`foreach` picks PyTorch's implementation; minigrad has one, with the same numbers.)"""
    grads = _grads(parameters)
    if not grads:
        return Tensor._wrap(np.array(0.0, np.float32))
    total = _total_norm(grads, norm_type, error_if_nonfinite, "clip_grad_norm_")
    _scale(grads, max_norm, total)
    return Tensor._wrap(np.array(total, grads[0]._array.dtype))


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of all the `tensors` (gradients, usually) taken as one vector."""
    tensors = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    if not tensors:
        return Tensor._wrap(np.array(0.0, np.float32))
    total = _total_norm(tensors, norm_type, error_if_nonfinite, "get_total_norm")
    return Tensor._wrap(np.array(total, tensors[0]._array.dtype))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale gradients in place by max_norm / total_norm when that is below 1: the second
    half of `clip_grad_norm_`, for a norm computed by `get_total_norm`."""
    grads = _grads(parameters)
    if grads:
        _scale(grads, max_norm, float(np.asarray(getattr(total_norm, "_array", total_norm))))


def _total_norm(tensors, norm_type, error_if_nonfinite, op):
    norm_type = float(norm_type)
    if norm_type == math.inf:
        total = max(float(np.max(np.abs(g._array))) if g._array.size else 0.0 for g in tensors)
    elif norm_type > 0:
        # norm of the per-tensor norms == norm of everything concatenated, without the copy
        norms = np.array([_norm(g._array, norm_type) for g in tensors], np.float64)
        total = float(np.sum(norms ** norm_type) ** (1.0 / norm_type))
    else:
        raise ValueError(f"{op}: norm_type must be positive or inf, got {norm_type}")
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"{op}: the total norm of order {norm_type} of the "
                           f"gradients is {total}, so they cannot be clipped; pass "
                           f"error_if_nonfinite=False to clip anyway")
    return total


def _scale(grads, max_norm, total):
    coef = max_norm / (total + 1e-6)
    if coef < 1 or math.isnan(coef):  # NaN spreads to the grads, as in PyTorch
        for g in grads:
            np.multiply(g._array, coef, out=g._array, casting="unsafe")
            autograd.bump_version(g)


def _norm(a, p):
    a = a.reshape(-1) if a.flags.c_contiguous else a.ravel()
    if p == 2.0:
        a64 = a.astype(np.float64) if a.dtype == np.float16 else a
        return math.sqrt(float(np.dot(a64, a64)))  # one BLAS pass, no |a|**2 temporary
    if p == 1.0:
        return float(np.sum(np.abs(a), dtype=np.float64))
    return float(np.sum(np.abs(a, dtype=np.float64) ** p) ** (1.0 / p))


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    c = float(clip_value)
    for g in _grads(parameters):
        np.clip(g._array, -c, c, out=g._array)
        autograd.bump_version(g)
