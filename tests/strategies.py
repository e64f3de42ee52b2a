"""Hypothesis strategies shared by the tests: shapes, broadcastable shape pairs, float64 arrays.

Differentiable ops are checked with central differences, so some strategies keep values away
from the points where a gradient is undefined:

* `arrays(shape)`: smooth values in [-2, 2].
* `grid_arrays(shape)`: values in {..., -0.75, -0.25, 0.25, 0.75, ...}, never 0 and at least
  0.25 away from any multiple of 0.5 (use `bounds` drawn on the 0.5 grid for clamp, maximum...).
* `distinct_arrays(shape)`: all elements different (0.5 apart), for max/min/var/std.
* `positive_arrays(shape)`: values in [0.5, 3], for log, sqrt, pow with a tensor exponent.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MAX_DIMS = 3
MAX_SIDE = 4


def shapes(min_dims=0, max_dims=MAX_DIMS, min_side=1, max_side=MAX_SIDE):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def broadcastable_pairs(min_dims=0, max_dims=MAX_DIMS, max_side=MAX_SIDE):
    """Two shapes that broadcast together (either may have fewer dims or size-1 dims)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=min_dims, max_dims=max_dims,
                                             min_side=1, max_side=max_side).map(
        lambda r: r.input_shapes)


def arrays(shape, lo=-2.0, hi=2.0):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi, allow_nan=False,
                                                            allow_infinity=False))


def positive_arrays(shape):
    return arrays(shape, 0.5, 3.0)


def grid_arrays(shape):
    """Odd multiples of 0.25 in [-2.75, 2.75]: never 0, never a multiple of 0.5."""
    return hnp.arrays(np.float64, shape, elements=st.integers(-6, 5).map(lambda k: k * 0.5 + 0.25))


def grid_values():
    """Multiples of 0.5 in [-3, 3]: at least 0.25 away from every `grid_arrays` element."""
    return st.integers(-6, 6).map(lambda k: k * 0.5)


def on_grid_arrays(shape):
    return hnp.arrays(np.float64, shape, elements=grid_values())


@st.composite
def distinct_arrays(draw, shape):
    """All elements distinct and 0.5 apart (and never 0), in a random order."""
    n = int(np.prod(shape, dtype=np.int64))
    perm = draw(st.permutations(range(n))) if n else []
    vals = (np.asarray(perm, dtype=np.float64) - n / 2) * 0.5 + 0.125
    return vals.reshape(shape)


@st.composite
def shape_and_dim(draw, min_dims=1, max_dims=MAX_DIMS):
    """A shape and one valid dim of it (possibly negative)."""
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return shape, dim


@st.composite
def shape_and_dims(draw, min_dims=0, max_dims=MAX_DIMS):
    """A shape and a reduction `dim` argument: None, an int, or a tuple of distinct ints."""
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims))
    nd = len(shape)
    if nd == 0:
        return shape, None
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return shape, None
    if kind == "int":
        return shape, draw(st.integers(-nd, nd - 1))
    axes = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    # write some axes as negative numbers
    return shape, tuple(a - nd if draw(st.booleans()) else a for a in axes)


def np_dims(dim, ndim):
    """The NumPy `axis` argument matching a minigrad `dim`."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (dim % ndim,)
    return tuple(sorted(d % ndim for d in dim))
