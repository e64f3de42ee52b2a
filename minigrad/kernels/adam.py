"""Adam's update as one compiled pass over a parameter.

The NumPy version (`reference.adam_step`) makes six to eight passes over memory per step: m,
then v, then the denominator, each a ufunc writing a scratch array that the next one reads.
This loop reads p, g, m and v once per element and writes p, m and v once, so a parameter's
update costs one trip through memory, and a small parameter costs one call instead of a
dozen. The arithmetic is the reference's, operation for operation and in the array's own
dtype (the scalar constants arrive already rounded to it, as NumPy rounds a Python float
it combines with a float32 array), and without fastmath nothing is reordered or fused, so
both give the same bits.
"""
import numba
import numpy as np
from numba import njit, types

from .policy import INLINE, NO_COUNTING


@njit(**INLINE)
def _in_dtype(p, decay, wd, c1, beta2, c2, eps_c, inv_step):
    """The scalars rounded to p's dtype, as NumPy rounds a Python float meeting the array."""
    cast = p.dtype.type
    return (cast(decay), cast(wd), cast(c1), cast(beta2), cast(c2), cast(eps_c),
            cast(inv_step))


@njit(cache=True, inline="always", error_model="numpy")
def _adam_element(i, p, g, m, v, vmax, decay, l2, wd, c1, beta2, c2, eps_c, inv_step, move,
                  amsgrad):
    """Element i of the update (scalars already in the arrays' dtype)."""
    pi = p[i] * decay
    gi = g[i]
    if l2:
        gi = pi * wd + gi
    mi = m[i]
    mi = mi + (gi - mi) * c1  # m = lerp(m, g, 1 - beta1)
    m[i] = mi
    vi = v[i] * beta2 + (gi * c2) * gi
    v[i] = vi
    if amsgrad:
        if vi > vmax[i] or vi != vi:  # np.maximum: a NaN on either side wins
            vmax[i] = vi
        vi = vmax[i]
    if move:
        pi = pi + mi / ((np.sqrt(vi) + eps_c) * inv_step)
    p[i] = pi


# x / 0 gives inf or NaN, as in NumPy, not an exception
@njit(cache=True, error_model="numpy", **NO_COUNTING)
def adam_flat(p, g, m, v, vmax, decay, l2, wd, c1, beta2, c2, eps_c, inv_step, move, amsgrad):
    """Step of Adam on 1-D arrays in place: p, m, v (and vmax, if amsgrad) change; g does not.

    The scalars are `reference.adam_constants`: decay multiplies p first (AdamW's decoupled
    decay; 1 for none); with l2 the gradient is g + wd * p (Adam's weight decay); c1 = 1 -
    beta1, c2 = 1 - beta2; when `move` (lr > 0) the step adds m / ((sqrt(v) + eps_c) *
    inv_step) to p. They are rounded to the arrays' dtype first, as NumPy rounds a Python
    float that meets a float32 array.
    """
    decay, wd, c1, beta2, c2, eps_c, inv_step = _in_dtype(p, decay, wd, c1, beta2, c2, eps_c,
                                                          inv_step)
    for i in range(p.size):
        _adam_element(i, p, g, m, v, vmax, decay, l2, wd, c1, beta2, c2, eps_c, inv_step,
                      move, amsgrad)


def adam_signature(dtype):
    """adam_flat's signature for dtype, as Python calls it (.fused_ops's adam_step: 1-D arrays,
    Python's floats and bools) and as .driver_blocks' block function calls it by its address."""
    vector = types.Array(numba.from_dtype(dtype), 1, "C")
    return types.none(*(vector,) * 5, types.float64, types.boolean, *(types.float64,) * 6,
                      types.boolean, types.boolean)
