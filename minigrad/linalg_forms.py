"""The few operations of the linear-algebra gradients that differ between NumPy arrays and
Tensors, so that each gradient formula is written once: `backward` runs it on arrays
(`OnArrays`), and the tensor-level rule that lets the gradient be differentiated again runs
it on Tensors (`OnTensors`). Each op's own formula may need more operations; its module adds
them in subclasses.
"""
from __future__ import annotations

import numpy as np

from .graph_rules import constant

__all__ = ["OnArrays", "OnTensors", "mT"]


def mT(a):
    """The matrix transpose of a (*, m, n) array: (*, n, m)."""
    return np.swapaxes(a, -1, -2)


class OnArrays:
    """The operations on NumPy arrays (in `backward`)."""
    mT = staticmethod(mT)
    constant = staticmethod(lambda a: a)


class OnTensors:
    """The same operations on Tensors (in the tensor-level rule, recorded in the graph)."""
    mT = staticmethod(lambda t: t.transpose(-2, -1))
    constant = staticmethod(constant)
