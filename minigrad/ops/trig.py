"""Trigonometric ops (sinusoidal position tables and rotary embeddings use them)."""
from __future__ import annotations

import numpy as np

from ._util import Pointwise


class Sin(Pointwise):
    fn, derivative = np.sin, np.cos  # d sin(a) / da = cos(a)


class Cos(Pointwise):
    fn = np.cos
    derivative = staticmethod(lambda a: -np.sin(a))  # d cos(a) / da = -sin(a)
