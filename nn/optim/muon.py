"""Muon (Keller Jordan et al.), as `torch.optim.Muon`: momentum SGD for 2-d weight matrices
whose update is orthogonalised, every singular value pushed towards 1.

The momentum buffer B (B = lerp(B, g, 1 - momentum); Nesterov: the update is lerp(g, B,
momentum)) is replaced by about U V^T (B = U S V^T), computed without an SVD by `ns_steps`
iterations of a quintic Newton-Schulz polynomial X <- a X + (b A + c A A) X, A = X X^T, on
X = B / |B|_F; its coefficients trade exactness for speed, leaving singular values roughly in
(0.5, 1.5). A step moves every direction of the matrix by about the same amount, whatever the
gradient's conditioning. Then decoupled weight decay p *= 1 - lr * weight_decay and
p -= lr * ratio * O, ratio = sqrt(max(1, rows / cols)) ("original") or 0.2 sqrt(max(rows,
cols)) ("match_rms_adamw", to reuse AdamW's rate).

PyTorch runs the iteration in bfloat16; so does this (float32 arithmetic with every result
rounded to bfloat16's 8-bit mantissa, as PyTorch's CPU kernels round theirs), so the update
agrees to about bfloat16's precision (its last bit may differ where the libraries sum in
another order). Biases, embeddings and other non-2-d parameters belong to another optimizer
(AdamW), as in PyTorch, which refuses them.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer, lerp_

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def bfloat16_round(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & 1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """About U V^T for grad = U S V^T (2-d), in bfloat16 precision."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = bfloat16_round(grad.astype(np.float32))
    tall = grad.shape[0] > grad.shape[1]
    if tall:  # iterate on the wide orientation: the Gram matrix is the smaller one
        x = x.T
    norm = bfloat16_round(np.float32(np.sqrt((x * x).sum(dtype=np.float32))))
    x = bfloat16_round(x / max(norm, np.float32(eps)))
    for _ in range(ns_steps):
        gram = bfloat16_round(x @ x.T)
        gram_update = bfloat16_round(b * gram + c * (gram @ gram))  # addmm(beta=b, alpha=c)
        x = bfloat16_round(a * x + gram_update @ x)  # addmm(beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon as `torch.optim.Muon` (2-d parameters only); state: momentum_buffer."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)

    def _check_group(self, group):
        for key, what in (("lr", "learning rate"), ("momentum", "momentum"),
                          ("weight_decay", "weight decay")):
            if not group[key] >= 0:
                raise ValueError(f"Muon: {what} should be >= 0 but is: {group[key]}")
        if group["adjust_lr_fn"] not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Muon: adjust learning rate function {group['adjust_lr_fn']} is "
                             f"not supported")
        for p in group["params"]:
            if p._array.ndim != 2:
                raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                 f"parameter with size: {p._array.shape}")
        super()._check_group(group)

    def _update(self, p, grad, state, group):
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = Tensor._wrap(np.zeros(grad.shape, grad.dtype))
        buf, momentum = state["momentum_buffer"]._array, group["momentum"]
        lerp_(buf, grad, 1 - momentum, np.empty_like(buf))
        if group["nesterov"]:
            update = grad.copy()
            lerp_(update, buf, momentum, np.empty_like(update))
        else:
            update = buf
        ortho = zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                           group["eps"])
        lr = group["lr"]
        p._array *= 1 - lr * group["weight_decay"]
        p._array += (ortho * -_adjust_lr(lr, group["adjust_lr_fn"], p._array.shape)
                     ).astype(p._array.dtype)


__all__ = ["Muon", "zeropower_via_newtonschulz"]
