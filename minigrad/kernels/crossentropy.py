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
max the four-chain SIMD max of log-softmax's long rows, so a NaN in a row makes that row's loss and gradient NaN as in NumPy.
"""
import numpy as np
from numba import njit

from .policy import FASTMATH
from .softmax_kernels import _long_row_max, fast_exp


# The rows of x (N, C), target (N,) int64 in [0, C), stats (N, 2) of x's dtype and the losses or
# row weights (N,) float64 are .driver_blocks', whose FASTMATH block function calls these two for a
# share of the rows (both passes share its one parallel kernel: a parallel kernel costs Numba
# most of a second to compile).
@njit(cache=True, fastmath=FASTMATH, inline="always")
def _forward_row(xi, t, eps, stats_i):
    """The loss of one row; stores (m, log s) into stats_i for the backward pass."""
    zero = xi.dtype.type(0)
    c = len(xi)
    m = _long_row_max(xi)
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
