"""The sequential shuffles behind randperm, compiled: each swap depends on the ones before, so
the loop cannot be vectorised; its random offsets are drawn beforehand, as a whole array.

    swap_forward(steps, n)   start from 0 .. n-1; for i < n - 1 swap r[i] with r[i + steps[i]]
    inside_out(picks)        for each i: r[i] = r[picks[i]], r[picks[i]] = i (picks[i] <= i)
"""
import numpy as np
from numba import njit


@njit(cache=True)
def _swap_forward(steps, out):
    for i in range(steps.size):
        j = i + steps[i]
        out[i], out[j] = out[j], out[i]


@njit(cache=True)
def _inside_out(picks, out):
    for i in range(picks.size):
        z = picks[i]
        out[i] = out[z]
        out[z] = i


def swap_forward(steps, n):
    """The permutation of 0 .. n-1 that the swaps of offsets `steps` (int64, n - 1) make."""
    out = np.arange(n, dtype=np.int64)
    if steps.size:
        _swap_forward(np.ascontiguousarray(steps, dtype=np.int64), out)
    return out


def inside_out(picks):
    """The permutation the inside-out shuffle makes from `picks` (int64, picks[i] <= i)."""
    out = np.zeros(picks.size, dtype=np.int64)
    if picks.size:
        _inside_out(np.ascontiguousarray(picks, dtype=np.int64), out)
    return out
