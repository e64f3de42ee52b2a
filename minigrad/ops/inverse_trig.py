"""The inverse trigonometric functions asin, acos and atan (PyTorch's arcsin, arccos and
arctan are the same functions), elementwise. Outside [-1, 1] asin and acos are NaN, and their
slopes are infinite at +-1, as in PyTorch."""
from __future__ import annotations

import numpy as np

from ._sloped import Sloped, call, unary


class Asin(Sloped):
    complex_aware = True  # holomorphic: complex input takes the slopes' conjugates
    fn = np.arcsin
    slopes = staticmethod(lambda out, a: (1 / call("sqrt", 1 - a * a),))


class Acos(Sloped):
    complex_aware = True
    fn = np.arccos
    slopes = staticmethod(lambda out, a: (-1 / call("sqrt", 1 - a * a),))


class Atan(Sloped):
    complex_aware = True
    fn = np.arctan
    slopes = staticmethod(lambda out, a: (1 / (1 + a * a),))


def asin(input):
    """The angle in [-pi/2, pi/2] whose sine is x, elementwise (NaN outside [-1, 1])."""
    return unary(Asin, "asin", input)


def acos(input):
    """The angle in [0, pi] whose cosine is x, elementwise (NaN outside [-1, 1])."""
    return unary(Acos, "acos", input)


def atan(input):
    """The angle in (-pi/2, pi/2) whose tangent is x, elementwise."""
    return unary(Atan, "atan", input)


arcsin, arccos, arctan = asin, acos, atan
