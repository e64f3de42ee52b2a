"""Numba softmax and log-softmax, forward and backward, one fused pass per row.

Why fused: the NumPy version makes a temporary array for every step
(x - max, exp, sum, divide), each a full trip through memory. Here a row
(24 or 2000 floats) is loaded into L1 once and every step works on it
there; rows are independent, so they are spread over threads (`prange`).

Why our own exp (.mathfn's fast_exp): this Numba build has no SVML, so
`np.exp` inside a loop is a scalar libm call and blocks vectorisation. For
float32, exp(x) = 2^n * exp(r) with n = round(x / ln 2), exp(r) by a
polynomial and 2^n built from its bits: plain arithmetic, so LLVM
vectorises the loop. float64 keeps np.exp (exact, slower). Log-softmax's
arguments x - max are never positive, so it takes fast_exp_no_overflow,
which skips the overflow handling; its backward too, where its y
(log-probabilities) allows; so does softmax on rows longer than half a
block (vocabulary rows).

The row maximum uses explicit SIMD vectors (from .simd): LLVM will not
vectorise a max reduction without fast-math flags that would also drop
NaN/inf semantics. Log-softmax's long rows take it in four independent
chains (_long_row_max), as one chain waits on each vector maximum's latency.

Edge cases (as in .reference): -inf entries get probability 0; an all -inf
row gives softmax 0, log_softmax -inf and a zero log_softmax gradient; a
NaN anywhere in a row makes the whole row NaN.
"""
import numpy as np
from numba import njit, prange, types
from numba.core.extending import overload

from .mathfn import fast_exp, fast_exp_no_overflow
from .policy import FASTMATH, twins
from .simd import VBYTES, vhmax, vload_first, vmax
from .views import flat


# ------------------------------------------------------------ row max ----
# inlined into its callers: a max needs no rounding, so their FASTMATH changes nothing
@njit(cache=True, inline="always")
def _row_max(row):
    n = len(row)
    W = VBYTES // row.itemsize
    m = row[0]
    if n >= W:
        v = vload_first(row, 0, W)
        for j in range(W, n - W + 1, W):
            v = vmax(v, vload_first(row, j, W))
        if n % W:   # the last W elements, overlapping the vectors before (max is exact)
            v = vmax(v, vload_first(row, n - W, W))
        m = vhmax(v)
    for j in range(0 if n < W else n, n):
        if row[j] > m or np.isnan(row[j]):   # NaN wins, as in np.max
            m = row[j]
    return m


# _row_max's value in four independent chains of vector maxima, for log-softmax's long rows.
# A vmax (llvm.maximum: NaN wins, -0 < +0) is several instructions on x86, and one chain
# waits on their latency at every vector: 1280 rows of 2000 float32, one thread, 0.57 ms
# with one chain, from L1 as from memory (so it was latency, not memory), 0.24 ms with four.
# The max of a set does not depend on the order it is taken in, so the values are the same.
# Log-softmax's rows and cross-entropy's forward rows (vocabulary-wide) take it; softmax's block
# keeps _row_max: .driver_blocks' block functions, which the first training step compiles, inline
# every call, and each kernel with the four chains took 0.05-0.15 s (CPU) longer to compile.
# Short rows take their own scalar loop rather than a call of _row_max, which would be
# inlined as a second copy to compile (0.3-0.5 s more on an empty cache).
@njit(cache=True, inline="always")
def _long_row_max(row):
    n = len(row)
    W = VBYTES // row.itemsize
    m = row[0]
    if n < W:
        for j in range(1, n):
            if row[j] > m or np.isnan(row[j]):   # NaN wins, as in np.max
                m = row[j]
        return m
    # the first and the last W elements (overlapping when n < 2W: a max is exact), then the
    # vectors between in four chains
    v0 = vload_first(row, 0, W)
    v1 = vload_first(row, n - W, W)
    v2, v3 = v0, v1
    j = W
    while j + 4 * W <= n:
        v0 = vmax(v0, vload_first(row, j, W))
        v1 = vmax(v1, vload_first(row, j + W, W))
        v2 = vmax(v2, vload_first(row, j + 2 * W, W))
        v3 = vmax(v3, vload_first(row, j + 3 * W, W))
        j += 4 * W
    while j + W <= n:
        v0 = vmax(v0, vload_first(row, j, W))
        j += W
    return vhmax(vmax(vmax(v0, v1), vmax(v2, v3)))


# --------------------------------------------------------------- sums ----
# Every sum runs in a loop that only reads. A loop that also stores is vectorised behind a
# run-time check that the arrays do not overlap, with a scalar loop as the fallback, and the
# two add in different orders: the last bit of a result could then depend on where its
# arrays happen to lie in memory.
@njit(cache=True, fastmath=FASTMATH, inline="always")
def _row_sum(row):
    s = row.dtype.type(0)
    for j in range(len(row)):
        s += row[j]
    return s


# ------------------------------------------------------------ kernels ----
# x, y, g, dx are C-contiguous (rows, n) arrays of one dtype. Sums start from
# `zero` of that dtype: float32 data is summed in float32 (in 16 partial sums
# once vectorised), so nothing is converted to float64 and back.
#
# Each kernel is one row function and two loops over the rows that call it: a `prange` loop
# for big inputs and a plain loop for small ones (`*_serial`), where waking the thread pool
# costs more than the work. Both run the same compiled row code, so they agree bit for bit.
@njit(cache=True, fastmath=FASTMATH, inline="always")
def _softmax_backward_row(yi, gi, di):
    dot = yi.dtype.type(0)
    for j in range(len(yi)):
        dot += gi[j] * yi[j]
    for j in range(len(yi)):
        di[j] = yi[j] * (gi[j] - dot)


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _log_softmax_row(xi, yi):
    zero = xi.dtype.type(0)
    m = _long_row_max(xi)
    if m == -np.inf:
        m = zero
    s = zero
    for j in range(len(xi)):
        s += fast_exp_no_overflow(xi[j] - m)
    # (x - m) - log(s), not x - (m + log(s)): m + log(s) would round away log(s) when
    # |m| is large (1e4 in float32 has an ulp of 1e-3); an all -inf row stays -inf
    ls = np.log(s) if s != 0 else zero
    for j in range(len(xi)):
        yi[j] = (xi[j] - m) - ls


def _bits_of(row):
    """(row's elements as signed integers of their width (a view), the integers of 88.0 and of
    -inf in that width)."""


@overload(_bits_of, inline="always")
def _bits_of_impl(row):
    f = np.float32 if row.dtype == types.float32 else np.float64
    i = np.int32 if f is np.float32 else np.int64
    high, neg_inf = (int(v) for v in np.array([88.0, -np.inf], f).view(i))

    def bits_of(row):
        return row.view(i), i(high), i(neg_inf)
    return bits_of


# The backward's exp(y) takes the no-overflow exp when no y is 88 or more (always, for
# log-probabilities), and an all -inf row gets a zero gradient. Both are told in the
# gradient's own pass, from the largest and smallest of y's bits read as signed integers
# (an integer max and min, one vector instruction each, and exact in any order, so they may
# ride in a loop that stores; see "sums" above): a y of 88 or more, +inf or a NaN
# with its sign bit clear is an integer at least 88.0's, any other y is below it (a negative
# float is a negative integer); the row is all -inf when both equal -inf's. Such rows are
# done again by the checked row function. This replaced a pass for the row's max of y
# before the gradient's, which waited on memory with no arithmetic to overlap: 1.11-1.26 ->
# 0.86-0.88 ms for 1280 x 2000 float32 (fastest of 200 calls, one thread, busy). The values
# are the checked function's, but in a row with a NaN whose sign bit is set (x86's default
# NaN) the other entries take the no-overflow exp, not fast_exp: the last bit may differ.
@njit(cache=True, fastmath=FASTMATH, inline="always")
def _log_softmax_backward_row(yi, gi, di):
    sg = _row_sum(gi)
    yb, high, neg_inf = _bits_of(yi)
    hi = lo = yb[0]
    for j in range(len(yi)):
        b = yb[j]
        hi = b if b > hi else hi
        lo = b if b < lo else lo
        di[j] = gi[j] - fast_exp_no_overflow(yi[j]) * sg
    if hi >= high or (hi == neg_inf and lo == neg_inf):
        _log_softmax_backward_row_checked(yi, gi, di)


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _log_softmax_backward_row_checked(yi, gi, di):
    m = _long_row_max(yi)
    if m == -np.inf:   # an all -inf row: zero gradient
        di[:] = 0
        return
    sg = _row_sum(gi)
    if m < 88:   # any y keeps fast_exp's values
        for j in range(len(yi)):
            di[j] = gi[j] - fast_exp_no_overflow(yi[j]) * sg
    else:
        for j in range(len(yi)):
            di[j] = gi[j] - fast_exp(yi[j]) * sg


# Softmax runs in blocks of rows (attention's rows are as long as the sentence, 20 keys say):
# LLVM vectorises a loop with 16 float32 lanes, 4 vectors at a time, so a loop of fewer than
# 64 iterations runs as scalar code, and exp is most of softmax's work. A block subtracts each
# row's max row by row, takes exp of the whole block in one long flat loop, then sums and
# scales row by row: the exp polynomial rounds alike in vector and scalar code, so a row's
# values do not depend on its block.
_BLOCK_ELEMENTS = 2048


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _softmax_block(x, y, lo, hi):
    """Rows lo..hi-1: y = softmax(x) row by row."""
    zero = x.dtype.type(0)
    n = x.shape[1]
    for i in range(lo, hi):
        xi, yi = x[i], y[i]
        m = _row_max(xi)
        if m == -np.inf:      # all -inf: exp(x - 0) = 0 everywhere, not NaN
            m = zero
        for j in range(n):
            yi[j] = xi[j] - m
    # a view indexed from 0: an index Numba cannot prove non-negative (lo * n + k) gets a
    # wrap-around check that keeps the loop scalar (0.29 against 0.035 ms for 102,400 exps)
    yb = flat(y, lo * n, hi * n)
    for k in range(len(yb)):
        # (fast_exp, not fast_exp_no_overflow, though x - m <= 0: this block is compiled in
        # .driver_blocks' blocks, which the first training step compiles, and the second exp
        # compiled there cost 0.25 s of that step's compile time)
        yb[k] = fast_exp(yb[k])
    for i in range(lo, hi):
        yi = y[i]
        s = _row_sum(yi)
        inv = x.dtype.type(1) / s if s != 0 else zero   # s is NaN if the row has one
        for j in range(n):
            yi[j] *= inv


# A row too long to share a block with another (vocabulary-wide rows, the output layer's):
# _softmax_block's steps for a block of one row, but with the subtraction of the max done in
# the exp's loop, not in a pass of its own that stored x - m for the exp to read back, and
# with the cheaper fast_exp_no_overflow (x - m is never above 0; this kernel is not among
# .driver_blocks' blocks, which keep fast_exp). The exp is most of the forward's time: 1280 rows of
# 2000 float32, one thread, fastest calls 3.9-4.1 ms before, 3.2-3.4 with the fused loop
# alone, 2.7-3.2 with the cheaper exp (busy). Its polynomial is one degree lower (the same
# error, not the same bits): 1-4 % of the probabilities differ from fast_exp's by an ulp or
# so, and an x - m in [-87.98, -87.34] gives a denormal, not 0. (The row max stays
# _row_max's one chain: _long_row_max's four were no faster here, where these rows come from
# memory, and would be another inlined copy to compile.)
@njit(cache=True, fastmath=FASTMATH, inline="always")
def _softmax_long_row(xi, yi):
    zero = xi.dtype.type(0)
    m = _row_max(xi)
    if m == -np.inf:      # all -inf: exp(x - 0) = 0 everywhere, not NaN
        m = zero
    n = len(xi)
    for j in range(n):
        yi[j] = fast_exp_no_overflow(xi[j] - m)
    s = _row_sum(yi)
    inv = xi.dtype.type(1) / s if s != 0 else zero   # s is NaN if the row has one
    for j in range(n):
        yi[j] *= inv


@njit(cache=True, inline="always")
def _block_rows(n):
    # (comparisons, not max(): Numba's max of two integers is a compilation of its own)
    b = _BLOCK_ELEMENTS // n if n > 0 else _BLOCK_ELEMENTS
    return b if b > 0 else 1


def _softmax_loop(x, y):
    rows, n = x.shape
    b = _block_rows(n)
    for k in prange((rows + b - 1) // b):
        if b == 1:
            _softmax_long_row(x[k], y[k])
        else:
            hi = (k + 1) * b
            _softmax_block(x, y, k * b, hi if hi < rows else rows)


def _softmax_backward_loop(y, g, dx):
    for i in prange(y.shape[0]):
        _softmax_backward_row(y[i], g[i], dx[i])


def _log_softmax_loop(x, y):
    for i in prange(x.shape[0]):
        _log_softmax_row(x[i], y[i])


def _log_softmax_backward_loop(y, g, dx):
    for i in prange(y.shape[0]):
        _log_softmax_backward_row(y[i], g[i], dx[i])


softmax_2d, softmax_2d_serial = twins(_softmax_loop, "softmax_2d", fastmath=FASTMATH)
softmax_backward_2d, softmax_backward_2d_serial = twins(
    _softmax_backward_loop, "softmax_backward_2d", fastmath=FASTMATH)
log_softmax_2d, log_softmax_2d_serial = twins(_log_softmax_loop, "log_softmax_2d",
                                              fastmath=FASTMATH)
log_softmax_backward_2d, log_softmax_backward_2d_serial = twins(
    _log_softmax_backward_loop, "log_softmax_backward_2d", fastmath=FASTMATH)


# ------------------------------------------- attention: mask, softmax, dropout ----
# Attention's weights are softmax(scores masked to -inf where a key is not allowed), then
# dropout. As three ops that is four (B, H, L, S) arrays (the masked scores, the weights, the
# dropped weights, and the mask's broadcast) and three passes each way. These kernels do a
# block of rows at a time, in cache: forward writes the weights y (kept for the backward pass)
# and the dropped weights; backward regenerates the dropout mask from the seed. The numbers
# are those of the separate kernels bit for bit: the rows go through _softmax_block and
# _softmax_backward_row themselves (compiled with FASTMATH), and the mask and the multiplies
# by the dropout mask are element passes of .dropout_kernels (FILL_MASKED, DROPOUT,
# ZERO_MASKED), compiled without it (so that LLVM cannot fuse a multiply with a neighbouring
# add), in .driver_blocks' blocks.
