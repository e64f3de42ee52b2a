"""Numba cross entropy with label smoothing, forward and backward, one pass per row each way.

The loss of a row of logits x (C,) against class t, with smoothing e, is
    (1 - e) * -log p_t  +  e * mean_c(-log p_c),      log p_c = (x_c - m) - log(s)
where m is the row's maximum and s = sum_c exp(x_c - m). Written with NumPy that is a full
(N, C) array of log-probabilities, a gather and a row sum, and the backward pass three more
passes over the (N, C) array (exp, subtract, scale). Here the forward pass reads each row once
(its max, then exp and the sum of x in one loop) and keeps only two numbers per row, m and
log(s); it writes no (N, C) array at all. The backward pass reads the row of logits again and
writes the gradient
    w * (p_c - e / C - (1 - e) [c == t])
in one pass, w being what the row counts for (the upstream gradient, divided by the number of
counted rows for a mean; 0 for an ignored row).

exp is the vectorisable float32 polynomial of .softmax (float64 keeps np.exp), and the row
max its SIMD max, so a NaN in a row makes that row's loss and gradient NaN as in NumPy.
"""
import numpy as np
from numba import njit

from .policy import FASTMATH
from .softmax_kernels import _row_max, fast_exp


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _forward_row(xi, t, eps, stats_i):
    """The loss of one row; stores (m, log s) into stats_i for the backward pass."""
    zero = xi.dtype.type(0)
    c = len(xi)
    m = _row_max(xi)
    if m == -np.inf:      # all -inf: log p = -inf everywhere, not NaN
        m = zero
    s = zero
    sx = zero
    for j in range(c):    # a loop that only reads (see .softmax_kernels, "sums")
        d = xi[j] - m
        s += fast_exp(d)
        sx += d
    ls = np.log(s) if s != 0 else zero
    stats_i[0] = m
    stats_i[1] = ls
    picked = (xi[t] - m) - ls
    loss = -(1.0 - eps) * picked
    if eps != 0.0:        # sum_c log p_c = sum_c (x_c - m) - C log s
        loss -= eps / c * (sx - c * ls)
    return loss


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _backward_row(xi, t, m, ls, w, eps, di):
    c = len(xi)
    a = xi.dtype.type(w)
    b = xi.dtype.type(w * eps / c)
    for j in range(c):
        di[j] = a * fast_exp((xi[j] - m) - ls) - b
    di[t] -= xi.dtype.type(w * (1.0 - eps))


# x (N, C) and dx C-contiguous of one dtype; target (N,) int64 in [0, C); stats (N, 2) of x's
# dtype; `vec` (N,) float64: the loss the forward pass writes, or the row weights w the backward
# pass reads. Rows lo..hi-1 of either pass (`backward` picks; the forward pass leaves dx
# alone); .driver's kernel runs the blocks of rows, so both passes share its one parallel
# kernel (a parallel kernel costs Numba most of a second to compile).
@njit(cache=True, fastmath=FASTMATH, inline="always")
def _rows(backward, x, target, eps, stats, vec, dx, lo, hi):
    for i in range(lo, hi):
        if backward:
            _backward_row(x[i], target[i], stats[i, 0], stats[i, 1], vec[i], eps, dx[i])
        else:
            vec[i] = _forward_row(x[i], target[i], eps, stats[i])
