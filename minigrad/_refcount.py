"""Whether an array can change hands without a copy: nothing else refers to its memory.

The engine hands each leaf its gradient; if no node, tuple, tensor or view still refers to
that array, the leaf can keep it as its `.grad` instead of a copy (PyTorch's AccumulateGrad
does the same when a gradient's use count is one). `sys.getrefcount` counts the references;
what it counts for an array nobody else holds depends on how the interpreter passes
arguments, so the baselines are measured once, here, with the same call structure.
"""
from __future__ import annotations

import sys

import numpy as np


def _refcount_in_callee(a):
    return sys.getrefcount(a)


def _base_refcount(view):
    base = view.base
    return sys.getrefcount(base)


def private_memory(a):
    """True if a's memory is reachable through a alone: a owns it, or a is a reshape (the
    same bytes, contiguous) of an array that nothing but a refers to."""
    base = a.base
    if base is None:
        return a.flags.owndata
    whole = (isinstance(base, np.ndarray) and base.base is None and base.flags.owndata
             and base.nbytes == a.nbytes and a.flags.writeable
             and (a.flags.c_contiguous or a.flags.f_contiguous))
    del base  # a reference of this frame would be counted
    return whole and _base_refcount(a) <= _SOLE_BASE


def _held_by_one_variable():
    a = np.empty(1)  # as the engine's loop holds the gradient it hands to `accumulate`
    return _refcount_in_callee(a)


# sys.getrefcount(a) inside a function whose caller holds a in one variable, nothing else
# referring to it; and the count `_base_refcount` gives for the base of a view that the
# view alone refers to
SOLE_REFCOUNT = _held_by_one_variable()
_SOLE_BASE = _base_refcount(np.empty(2).reshape(2))
