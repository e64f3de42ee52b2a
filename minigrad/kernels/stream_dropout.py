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
_MASK53 = np.uint64(2 ** 53 - 1)
_UNIT64 = 2.0 ** -53
_SHIFT = np.uint64(32)


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
    for s in range(0, n, _HALF):
        c = min(_HALF, n - s)
        draw(state, buf, 2 * c)
        # views from 0 (an index Numba cannot prove non-negative keeps a loop scalar), and
        # each step its own loop without branches, which LLVM vectorises
        xs, os = x[s:s + c], out[s:s + c]
        ms = mask[s:s + c] if with_mask else scratch[:c]
        for k in range(c):
            w = (np.uint64(buf[2 * k]) << _SHIFT) | np.uint64(buf[2 * k + 1])
            ms[k] = scale if np.float64(w & _MASK53) * _UNIT64 < keep else zero
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
