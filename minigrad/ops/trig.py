"""Trigonometric ops (sinusoidal position tables and rotary embeddings use them), on real and
complex tensors (holomorphic: `Pointwise` conjugates their derivatives on complex input)."""
from __future__ import annotations

import numpy as np

from ._util import Pointwise, conj_slope


class Sin(Pointwise):
    fn, derivative, complex_aware = np.sin, np.cos, True  # d sin(a) / da = cos(a)


class Cos(Pointwise):
    fn, complex_aware = np.cos, True
    derivative = staticmethod(lambda a: -np.sin(a))  # d cos(a) / da = -sin(a)


class Tan(Pointwise):
    fn, from_output, complex_aware = np.tan, True, True

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved[0]  # d tan(a) / da = 1 + tan(a)^2, from the saved output
        return g * conj_slope(1 + y * y)
