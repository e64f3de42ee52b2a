"""PyTorch's CPU dropout in one pass over the generator's own words: the mask drawn, compared,
scaled and applied (and a residual added), with the mt19937 words drawn a chunk at a time
(mt19937.draw): the draws of every dropout under random.use_pytorch_dropout, the default.

The plain loop, for x flat (n,) in the order its elements are drawn (PyTorch's: x's memory
order), keep = 1 - p and scale = 1 / keep rounded in x's dtype:

    w = the next 2n words of the generator (the state moves on by 2n)
    for i < n:
        u = ((w[2i] << 32 | w[2i + 1]) & (2**53 - 1)) * 2**-53     a float64 uniform
        m = scale if u < keep else 0                                 bernoulli_(keep), div_(keep)
        mask[i] = m                                                  (if a mask is wanted)
        out[i] = (max(x[i], 0) if relu else x[i]) * m                x * noise
        out[i] = out[i] + res[i]                                     (if a residual is given)

The comparison is made on the 53-bit integer instead, with the same outcome: u < keep exactly
when w & (2**53 - 1) < ceil(keep * 2**53) (u is that integer times 2**-53, both exact). An
integer compare vectorises where the conversion to float64 does not (a uint64 or int64 to
float64 conversion has no vector instruction before AVX-512): the pass after the draws took
1.1 ns an element, as long as drawing its two words.

Its reference is random_draws.dropout_mask (the Bernoulli draws, then np.where) and a NumPy
multiply (and add). The optimisation is fusion alone: the words, the uniforms and the
Bernoulli booleans are never arrays, and the mask and the output are written in the same pass,
so the pass reads x (and the residual) once and writes out (and the mask) once. With a
residual it is a residual connection's `res + dropout(x)`: the multiply and the add are two
loops over the chunk, so that LLVM cannot contract them into one multiply-add with a single
rounding, and the sum is bit for bit that of the dropout then the add.
"""
import numpy as np
from numba import njit

from .mt19937 import draw

_HALF = 512   # elements per chunk: 1024 words, 4 KB of uint32
_HIGH21 = np.uint32(2 ** 21 - 1)   # the high word's bits in the 53
_TWO53 = 2.0 ** 53
_SHIFT = np.int64(32)


@njit(cache=True)
def dropout(state, x, keep, scale, relu, out, mask, res):
    """out = x (or relu(x)) times PyTorch's dropout mask, drawn from `state` (uint32 (625,),
    the generator's, updated in place), plus res; x, out (n,) C-contiguous of one float dtype,
    scale of it; mask (n,) of that dtype is written too, or left alone when its size is 0;
    res (n,) of that dtype is added, or nothing when its size is 0."""
    buf = np.empty(2 * _HALF, np.uint32)
    scratch = np.empty(_HALF, out.dtype)
    n = out.size
    zero = out.dtype.type(0)
    with_mask = mask.size == n
    with_res = res.size == n
    # u < keep with u = w * 2**-53 (exact) and w an integer: w < keep * 2**53 (exact), that
    # is w < its ceiling
    limit = np.int64(np.ceil(keep * _TWO53))
    for s in range(0, n, _HALF):
        c = min(_HALF, n - s)
        draw(state, buf, 2 * c)
        # views from 0 (an index Numba cannot prove non-negative keeps a loop scalar), and
        # each step its own loop without branches, which LLVM vectorises
        xs, os = x[s:s + c], out[s:s + c]
        ms = mask[s:s + c] if with_mask else scratch[:c]
        for k in range(c):
            w = (np.int64(buf[2 * k] & _HIGH21) << _SHIFT) | np.int64(buf[2 * k + 1])
            ms[k] = scale if w < limit else zero
        if relu:
            for k in range(c):
                v = xs[k]
                os[k] = (zero if v < zero else v) * ms[k]
        else:
            for k in range(c):
                os[k] = xs[k] * ms[k]
        if with_res:
            rs = res[s:s + c]
            for k in range(c):
                os[k] += rs[k]
