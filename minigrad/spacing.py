"""`linspace`'s and `arange`'s float values as PyTorch's CPU kernels compute them, to the last
bit.

PyTorch computes element i of `linspace(start, end, steps)` in the tensor's dtype: with
step = (end - start) / (steps - 1), the first half counts up from start and the second half
down from end,

    for i in range(steps):
        out[i] = start + step * i if i < steps // 2 else end - step * (steps - i - 1)

and its builds (x86 with AVX2 or AVX-512, ARM) compile `start + step * i` into one fused
multiply-add, rounded once. NumPy's linspace rounds differently (it computes in float64 and
rounds at the end), which gives a float32 linspace that differs from PyTorch's in about a
tenth of its elements by one unit in the last place; a program that builds its inputs from
`linspace` then computes other numbers.

The float32 fused multiply-add is exact here: the product of two float32 numbers is exact in
float64, and their sum with the addend, rounded to odd in float64 (53 bits, more than
24 + 2), rounds to float32 as the single rounding of the exact value would. In float64 the
product is split exactly (Dekker's two-product) and summed with the addend from its parts
(Knuth's two-sum), which agrees with a fused multiply-add but in the rare case of a tie
between the last two roundings.

A float `arange` PyTorch computes in float64, start + step * i rounded to the dtype, but in
blocks: its vectorised loop takes 2 x 8 float32 (2 x 4 float64) elements at a time while that
many remain, each block of 8 (4) from its first element rounded to the dtype, b, as
b + j * step (in float64, then rounded); the elements after the last whole pair of blocks are
computed one by one. Every multiply-add there is fused too. (Beyond 32768 elements PyTorch
splits the range among its threads, each part starting its own blocks; this is the one-thread
split.)
"""
import numpy as np

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitter for float64


def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    """(p, e) with p = fl(a * b) and p + e = a * b exactly (Dekker)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ahi, bhi = ca - (ca - a), cb - (cb - b)
    alo, blo = a - ahi, b - bhi
    return p, ((ahi * bhi - p) + ahi * blo + alo * bhi) + alo * blo


def fma32(a, b, c):
    """fl32(a * b + c) rounded once, for float32 arrays (or scalars) a, b, c."""
    product = np.float64(a) * np.asarray(b, np.float64)  # exact: 24 + 24 bits < 53
    total, error = _two_sum(product, np.broadcast_to(np.float64(c), product.shape))
    # Round to odd: an inexact sum whose last bit is even moves one step towards the exact
    # value, so that the rounding to float32 below cannot land on a false tie.
    even = (total.view(np.int64) & 1) == 0
    total = np.where((error != 0) & even, np.nextafter(total, np.copysign(np.inf, error)), total)
    return total.astype(np.float32)


def fma64(a, b, c):
    """a * b + c in float64 with one rounding (but in rare ties of the last two roundings)."""
    product, product_error = _two_product(np.float64(a), np.asarray(b, np.float64))
    total, sum_error = _two_sum(product, np.broadcast_to(np.float64(c), product.shape))
    return total + (sum_error + product_error)


def linspace_values(start, end, steps, dtype):
    """The (steps,) array of PyTorch's linspace in `dtype`: float32, float64 or an integer
    type (whose steps PyTorch computes in float64 from start and end cast to the integer
    type, truncating each value towards zero)."""
    dtype = np.dtype(dtype)
    work = np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)
    fma = fma32 if work == np.float32 else fma64
    if dtype.kind in "iu":  # wrapped into the integer type first, as a C++ cast does
        start, end = (int(np.array(int(v)).astype(dtype)) for v in (start, end))
    start, end = work.type(start), work.type(end)
    if steps == 1:
        return np.full(1, start).astype(dtype)
    step = work.type(end - start) / work.type(steps - 1)
    index = np.arange(steps)
    half = steps // 2
    rising = fma(step, index[:half].astype(work), start)
    falling = fma(-step, (steps - 1 - index[half:]).astype(work), end)
    return np.concatenate([rising, falling]).astype(dtype, copy=False)


def arange_values(start, step, size, dtype):
    """The (size,) array of PyTorch's float32 or float64 arange from start by step."""
    dtype = np.dtype(dtype)
    width = 32 // dtype.itemsize  # the elements of one vector of PyTorch's loop
    start, step = float(start), float(step)
    out = np.empty(size, dtype)
    blocks = (size // (2 * width)) * 2 * width
    firsts = fma64(step, np.arange(0, blocks, width, dtype=np.float64), start).astype(dtype)
    offsets = np.tile(np.arange(width, dtype=np.float64), (len(firsts), 1))
    out[:blocks] = fma64(step, offsets, firsts.astype(np.float64)[:, None]).astype(dtype).ravel()
    out[blocks:] = fma64(step, np.arange(blocks, size, dtype=np.float64), start).astype(dtype)
    return out
