"""Numba scatter-add of rows: the backward pass of an embedding lookup.

The forward pass copies row ids[i] of a (V, D) table to output row i. Its gradient adds output
row i back into row ids[i]; ids repeat (every sentence has several "the"), so the rows must be
added, not assigned. NumPy's ways of doing that either add one element at a time (`np.add.at`)
or sort the ids first (argsort, unique, reduceat: several passes and temporaries). The compiled
loop reads each gradient row once and adds it into its table row, in the order of the ids.

It runs in the calling thread: a thread per chunk of ids would need its own (V, D) partial
table, more memory than the whole sum costs, and the order of the additions would then depend
on the number of threads. In this order the result equals `np.add.at` bit for bit.
"""
from numba import njit

from .policy import NO_COUNTING


@njit(cache=True, **NO_COUNTING)
def add_rows(ids, g, out):
    """out[ids[i]] += g[i] for i in order; ids (N,) int64, g (N, D), out (V, D) contiguous."""
    for i in range(ids.shape[0]):
        gi, oi = g[i], out[ids[i]]
        for j in range(gi.shape[0]):
            oi[j] += gi[j]
