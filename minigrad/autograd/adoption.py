"""Whether a gradient array is the engine's alone: a leaf can adopt it as its `.grad` instead
of a copy, and the engine can add a node's next gradient into it instead of into a new array.

The engine hands each leaf its gradient; if no node, tuple, tensor or view still refers to that
array, the leaf can keep it (PyTorch's AccumulateGrad does the same when a gradient's use count
is one), which saves a copy of every parameter's gradient per step. `sys.getrefcount` counts
the references. What it counts for an array nobody else holds depends on how the interpreter
passes arguments, so the baselines are measured once, here, through the same chain of calls the
engine makes: the backward loop holds the gradient in one variable (and drops every other
reference it had: the `in_grads = ig = None` at the end of each step), passes it to
`AccumulateGrad.accumulate`, which asks `adoptable`. A refactor that adds a reference on that
path turns the saving off; tests/test_autograd.py checks that the saving happens.
"""
from __future__ import annotations

import sys

import numpy as np


def adoptable(g):
    """True if nothing but the engine's loop variable and the calls down to here refer to the
    memory of `g`, so that a leaf may keep `g` itself as its gradient."""
    return sys.getrefcount(g) <= _SOLE_REFCOUNT and _private_memory(g)


def accumulable(g):
    """True if `g`, the gradient a node collects in the backward loop's table (looked up into
    one variable and passed here), is referred to by nothing else and its memory by nothing
    but `g`: another gradient can then be added into it in place (np.add's out=, the same
    bits as `g + other`), as PyTorch's engine adds into a buffer no one else uses. That saves
    a new array and a pass over memory per addition: a layer's input gets one gradient per
    projection that reads it (the small GPT: 26 additions of 128 kB a step). Only from
    ACCUMULATE_MIN_BYTES: below that, the allocator hands the memory just freed straight
    back, and `g + other` cost no more than the checks and the in-place add together."""
    return (g.__class__ is np.ndarray and g.nbytes >= ACCUMULATE_MIN_BYTES
            and sys.getrefcount(g) <= _SOLE_IN_TABLE and g.flags.writeable
            and _private_memory(g))


# (one thread, busy machine, float32: 1.0 against 2.3 us at 16 elements, 2.6 against 2.7 at
# 16,384, 4.4 against 3.7 at 32,768, 33 against 15 at 131,072: new array against in place)
ACCUMULATE_MIN_BYTES = 1 << 17


def _private_memory(a):
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


def _base_refcount(view):
    base = view.base
    return sys.getrefcount(base)


# the same chain of calls as the engine's: loop variable -> accumulate(g) -> adoptable(g)
def _as_the_loop():
    g = np.empty(1)
    return _as_accumulate(g)


def _as_accumulate(g):
    return _as_adoptable(g)


def _as_adoptable(g):
    return sys.getrefcount(g)


_SOLE_REFCOUNT = _as_the_loop()


# the same for `accumulable`: a table entry -> the loop's variable -> accumulable(g)
def _as_the_table():
    table = {0: np.empty(1)}
    g = table.get(0)
    return _as_adoptable(g)


_SOLE_IN_TABLE = _as_the_table()
# what `_base_refcount` gives for the base of a view that the view alone refers to
_SOLE_BASE = _base_refcount(np.empty(2).reshape(2))
