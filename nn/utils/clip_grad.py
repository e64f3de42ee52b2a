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


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale gradients in place so their joint norm is at most max_norm; return the norm."""
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return Tensor._wrap(np.array(0.0, np.float32))
    dtype = grads[0]._array.dtype
    if norm_type == math.inf:
        total = max(float(np.max(np.abs(g._array))) if g._array.size else 0.0 for g in grads)
    elif norm_type > 0:
        # norm of the per-tensor norms == norm of everything concatenated, without the copy
        norms = np.array([_norm(g._array, norm_type) for g in grads], np.float64)
        total = float(np.sum(norms ** norm_type) ** (1.0 / norm_type))
    else:
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type}")
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is {total}, so they cannot be clipped; pass "
                           f"error_if_nonfinite=False to clip anyway")
    coef = max_norm / (total + 1e-6)
    if coef < 1 or math.isnan(coef):  # NaN spreads to the grads, as in PyTorch
        for g in grads:
            np.multiply(g._array, coef, out=g._array, casting="unsafe")
            autograd.bump_version(g)
    return Tensor._wrap(np.array(total, dtype))


def _norm(a, p):
    a = a.reshape(-1) if a.flags.c_contiguous else a.ravel()
    if p == 2.0:
        a64 = a.astype(np.float64) if a.dtype == np.float16 else a
        return math.sqrt(float(np.dot(a64, a64)))  # one BLAS pass, no |a|**2 temporary
    if p == 1.0:
        return float(np.sum(np.abs(a), dtype=np.float64))
    return float(np.sum(np.abs(a, dtype=np.float64) ** p) ** (1.0 / p))


def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    c = float(clip_value)
    for g in _grads(parameters):
        np.clip(g._array, -c, c, out=g._array)
        autograd.bump_version(g)
