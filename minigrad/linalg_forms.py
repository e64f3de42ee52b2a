"""The few operations of the linear-algebra gradients that differ between NumPy arrays and
Tensors, so that each gradient formula is written once: `backward` runs it on arrays
(`OnArrays`), and the tensor-level rule that lets the gradient be differentiated again runs
it on Tensors (`OnTensors`). Each op's own formula may need more operations; its module adds
them in subclasses.
"""
from __future__ import annotations

import numpy as np

from .graph_rules import constant

__all__ = ["OnArrays", "OnTensors", "flat_matrices", "mH", "mT", "pack_eigen", "split_eigen"]


def flat_matrices(a):
    """(*, m, n) as (*, m n), also for an empty batch (where reshape cannot infer a -1)."""
    return a.reshape(a.shape[:-2] + (a.shape[-2] * a.shape[-1],))


def pack_eigen(values, vectors):
    """An eigendecomposition as the one array an Op returns: L (*, n) and V (*, n, n)
    side by side, (*, n + n n)."""
    return np.concatenate([values, flat_matrices(vectors)], -1)


def split_eigen(packed, n):
    """(L, V) from `pack_eigen`'s form (an output or its gradient, array or Tensor)."""
    return packed[..., :n], packed[..., n:].reshape(tuple(packed.shape[:-1]) + (n, n))


def mT(a):
    """The matrix transpose of a (*, m, n) array: (*, n, m)."""
    return np.swapaxes(a, -1, -2)


def mH(a):
    """The conjugate transpose of a (*, m, n) array, the transpose of a real one. A gradient
    formula written with it serves complex matrices in PyTorch's convention (complex_tensors.py)
    where the real formula has transposes, for the holomorphic ops (inv, solve, det)."""
    return np.conj(mT(a)) if a.dtype.kind == "c" else mT(a)


class OnArrays:
    """The operations on NumPy arrays (in `backward`)."""
    mT, mH = staticmethod(mT), staticmethod(mH)
    constant = staticmethod(lambda a: a)


class OnTensors:
    """The same operations on Tensors (in the tensor-level rule, recorded in the graph)."""
    mT = staticmethod(lambda t: t.transpose(-2, -1))
    mH = staticmethod(lambda t: t.transpose(-2, -1).conj())
    constant = staticmethod(constant)
