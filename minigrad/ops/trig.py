"""Trigonometric ops (sinusoidal position tables and rotary embeddings use them)."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Function


class Sin(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(a)

    @staticmethod
    def backward(ctx, g):
        return g * np.cos(ctx.saved[0])  # d sin(a) / da = cos(a)


class Cos(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.cos(a)

    @staticmethod
    def backward(ctx, g):
        return -g * np.sin(ctx.saved[0])  # d cos(a) / da = -sin(a)
