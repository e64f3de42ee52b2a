"""The hyperbolic functions sinh and cosh and their inverses asinh, acosh and atanh (PyTorch's
arcsinh, arccosh and arctanh are the same), elementwise. acosh is NaN below 1 and atanh
outside [-1, 1] (+-inf at +-1), as in PyTorch; tanh is in elementwise.py."""
from __future__ import annotations

import numpy as np

from ._sloped import Sloped, call, unary


class Sinh(Sloped):
    complex_aware = True  # holomorphic: complex input takes the slopes' conjugates
    fn = np.sinh
    slopes = staticmethod(lambda out, a: (call("cosh", a),))


class Cosh(Sloped):
    complex_aware = True
    fn = np.cosh
    slopes = staticmethod(lambda out, a: (call("sinh", a),))


class Asinh(Sloped):
    complex_aware = True
    fn = np.arcsinh
    slopes = staticmethod(lambda out, a: (1 / call("sqrt", a * a + 1),))


class Acosh(Sloped):
    complex_aware = True
    fn = np.arccosh
    slopes = staticmethod(lambda out, a: (1 / _acosh_root(a),))


def _acosh_root(a):
    """sqrt(a^2 - 1), as PyTorch takes it: for complex a the product sqrt(a + 1) sqrt(a - 1),
    whose branch is acosh's (the two differ in sign where Re a < 0)."""
    if a.dtype.kind == "c":
        return call("sqrt", a + 1) * call("sqrt", a - 1)
    return call("sqrt", a * a - 1)


class Atanh(Sloped):
    complex_aware = True
    fn = np.arctanh
    slopes = staticmethod(lambda out, a: (1 / (1 - a * a),))


def sinh(input):
    """(e^x - e^-x) / 2, elementwise."""
    return unary(Sinh, "sinh", input)


def cosh(input):
    """(e^x + e^-x) / 2, elementwise."""
    return unary(Cosh, "cosh", input)


def asinh(input):
    """The inverse of sinh, elementwise."""
    return unary(Asinh, "asinh", input)


def acosh(input):
    """The inverse of cosh on [1, inf), elementwise (NaN below 1)."""
    return unary(Acosh, "acosh", input)


def atanh(input):
    """The inverse of tanh, elementwise (+-inf at +-1, NaN outside [-1, 1])."""
    return unary(Atanh, "atanh", input)


arcsinh, arccosh, arctanh = asinh, acosh, atanh
