"""A batch of small matrix products in one compiled call: attention's, A V and Q K^T's gradients.

Attention multiplies batches of small matrices: the toy model's 256 heads give products of
(20, 20) @ (20, 32) (the output A V, and dQ = G K) and (32, 20) @ (20, 20) (dK, dV, written
transposed). NumPy's matmul calls BLAS once per product; on OpenBLAS's AVX2 kernels
(OPENBLAS_CORETYPE=Haswell, or an AVX2 machine) each call falls well short of the machine's
vector width, and this kernel took 0.6x their time (one thread, *busy*). On OpenBLAS's
AVX-512 kernels it took 1.1-1.2x theirs, which run near a core's FMA peak: there
`products.route` keeps NumPy's calls (policy.BATCHED_KERNEL). Each product is, by
definition, the plain loop

    for t in batch:                      # every batch index, broadcast dims repeated
        for i in range(M):
            for j in range(N):
                C[t][i, j] = sum(A[t][i, k] * B[t][k, j] for k in range(K))

computed with the register tiling of .tiled_matmul (without its packing and K-blocking, which
matrices that fit in L1 do not need):
  - C is written row by row: where `out`'s matrices have contiguous columns instead, the
    kernel computes C^T = B^T A^T, whose rows those are;
  - the inner loops become C[i, j:j+NR] += A[i, k] * B[k, j:j+NR] over k, for 8 rows of C
    at once (then 4 for the last rows): the 8 x NR tile (NR = two SIMD vectors, 32 float32
    or 16 float64) stays in 16 vector registers for the whole walk down k, each step two
    vector loads of B, eight broadcasts of A and sixteen fused multiply-adds;
  - B's rows must be contiguous; A is only read one element at a time (broadcast), so any
    strides do. A product whose B rows are not contiguous (Q K^T: B = K^T, a transposed
    view) is left to NumPy: copying B^T into rows first, or a tile of dot products along k
    with its lanes summed by shuffles, took 1.4-2.5x OpenBLAS's time with either kernel set;
  - a whole panel of NR columns is loaded and stored with plain vector operations, a ragged
    last panel with masked ones; the missing rows of a last row tile re-read the last row,
    and their results are dropped.

The sums over k run in order, one fused multiply-add per step, so each result is the same
whatever the batch, its size and the thread count (and differs from BLAS's by rounding only).
The kernel runs in the calling thread, as NumPy's per-product calls do: the batches are
small, and on a busy machine a launch of Numba's pool can stall for milliseconds.

Operands reach the kernel as 1-D views of their first element, with every stride in
elements: one compiled kernel per dtype whatever the layouts (permuted heads, transposed
views, broadcast batch dims) and the number of batch dims.
"""
import numpy as np
from numba import njit

from .simd import VBYTES, vload, vload_first, vstore, vzero
from .tiled_matmul import _fma4, _store4
from .views import span

MR = 4   # rows of C per half tile (a tile has 2 * MR, the last ones MR)
NV = 2   # SIMD vectors per row of a tile
_HEAD = 11   # the integers before the batch's shape and strides (see _products)


@njit(cache=True, inline="always")
def _store_rows(C, c, ldc, W, acc, rows, whole, cols):
    """The first `rows` (at most 4) rows of a tile's accumulators to C at c, ldc apart:
    plain vector stores for a whole panel, masked ones for a ragged one."""
    if whole:
        for i in range(rows):
            vstore(C, c + i * ldc, acc[2 * i])
            vstore(C, c + i * ldc + W, acc[2 * i + 1])
    else:
        _store4(C, c, ldc, cols, W, acc, rows, True)


@njit(cache=True, inline="always")
def _row_of_b(B, b, W, whole, n0, n1):
    """The two vectors of a tile's row of B at b: whole (plain loads), or lanes 0..n0-1 and
    0..n1-1 of them (masked loads, a ragged last panel)."""
    if whole:
        return vload(B, b), vload(B, b + W)
    return vload_first(B, b, n0), vload_first(B, b + W, n1)


@njit(cache=True)
def _tile_rows(A, a, sar, sac, B, b, ldb, C, c, ldc, M, N, K):
    """C[c + i*ldc + j] = sum_k A[a + i*sar + k*sac] * B[b + k*ldb + j] for i < M, j < N: one
    product, B's rows and C's rows contiguous, in register tiles of 8 (then 4) x NR."""
    W = VBYTES // C.itemsize
    NR = NV * W
    for j0 in range(0, N, NR):
        cols = min(NR, N - j0)
        n0, n1 = min(cols, W), max(cols - W, 0)
        whole = cols == NR   # unmasked loads and stores (masked ones cost more)
        i0 = 0
        while i0 < M:
            rows = min(2 * MR, M - i0)
            if rows < 2 * MR:   # the last rows, four at a time
                rows = min(MR, rows)
            last = rows - 1
            top = (0, min(1, last) * sar, min(2, last) * sar, min(3, last) * sar)
            bottom = (min(4, last) * sar, min(5, last) * sar, min(6, last) * sar,
                      min(7, last) * sar)
            z = vzero(C)
            upper = lower = (z, z, z, z, z, z, z, z)
            pa, pb = a + i0 * sar, b + j0
            if rows > MR:   # eight rows: 16 accumulators, two loads of B for 16 FMAs
                for _ in range(K):
                    b0, b1 = _row_of_b(B, pb, W, whole, n0, n1)
                    upper = _fma4(A, pa, top, b0, b1, upper)
                    lower = _fma4(A, pa, bottom, b0, b1, lower)
                    pa += sac
                    pb += ldb
            else:
                for _ in range(K):
                    b0, b1 = _row_of_b(B, pb, W, whole, n0, n1)
                    upper = _fma4(A, pa, top, b0, b1, upper)
                    pa += sac
                    pb += ldb
            off = c + i0 * ldc + j0
            _store_rows(C, off, ldc, W, upper, min(rows, MR), whole, cols)
            if rows > MR:
                _store_rows(C, off + MR * ldc, ldc, W, lower, rows - MR, whole, cols)
            i0 += rows


@njit(cache=True)
def _products(a0, b0, c0, ints):
    """C[t] = A[t] @ B[t] for every index t of the batch.

    a0, b0, c0: 1-D views of the first element of A, B and C. ints (int64), all in elements:
    M, N, K; A's row and column strides, B's row stride (its columns are contiguous), C's
    row stride (likewise); the extents of A, B and C (from the first element to the last,
    inclusive); the number of batch dims nd; then the batch's shape and A's, B's and C's
    batch strides (nd each, 0 where a dim is broadcast)."""
    M, N, K = ints[0], ints[1], ints[2]
    sar, sac, sbr, scr = ints[3], ints[4], ints[5], ints[6]
    A, B, C = span(a0, ints[7]), span(b0, ints[8]), span(c0, ints[9])
    nd = ints[10]
    shape = ints[_HEAD:_HEAD + nd]
    bsa, bsb = ints[_HEAD + nd:_HEAD + 2 * nd], ints[_HEAD + 2 * nd:_HEAD + 3 * nd]
    bsc = ints[_HEAD + 3 * nd:_HEAD + 4 * nd]
    total = 1
    for d in range(nd):
        total *= shape[d]
    for t in range(total):
        oa, ob, oc, step = 0, 0, 0, 1
        for d in range(nd - 1, -1, -1):
            i = (t // step) % shape[d]
            step *= shape[d]
            oa += i * bsa[d]
            ob += i * bsb[d]
            oc += i * bsc[d]
        _tile_rows(A, oa, sar, sac, B, ob, sbr, C, oc, scr, M, N, K)


def _operand(x, nd):
    """x (..., R, C) as the kernel reads it: ([row stride, column stride], extent, batch
    strides padded to nd dims, 0 where a dim is broadcast), in elements."""
    size = x.itemsize
    strides = [s // size for s in x.strides]
    extent = 1
    batch = [0] * (nd - (x.ndim - 2))
    for d, (n, s) in enumerate(zip(x.shape, strides)):
        extent += (n - 1) * s
        if d < x.ndim - 2:
            batch.append(0 if n == 1 else s)
    return strides[-2:], extent, batch


def _plan(a, b, out, batch):
    """The kernel's plan for these operands: (swap, ints), or None where the kernel cannot compute the product in place: C's
    matrices with neither rows nor columns contiguous, or B's rows not contiguous (with
    swap, the kernel computes C^T = B^T A^T, whose B is A^T: then A's columns)."""
    nd = len(batch)
    M, K = a.shape[-2:]
    N = b.shape[-1]
    (sar, sac), ea, ba = _operand(a, nd)
    (sbr, sbc), eb, bb = _operand(b, nd)
    (scr, scc), ec, bc = _operand(out, nd)
    swap = not (N == 1 or scc == 1)
    if swap:
        if not (M == 1 or scr == 1):
            return None
        ea, eb, ba, bb = eb, ea, bb, ba
        sar, sac, sbr, sbc = sbc, sbr, sac, sar
        M, N, scr = N, M, scc
    if not (N == 1 or sbc == 1):
        return None
    ints = np.array([M, N, K, sar, sac, sbr, scr, ea, eb, ec, nd, *batch, *ba, *bb, *bc],
                    np.int64)
    return swap, ints


# _plan's answers per dtype, shapes, strides and alignment: a training step meets a few
# layouts over and over, and working the integers out took longer than the rest of the call
_plans = {}
_PLANS_MAX = 1024


def _readable(x):
    """Whether the kernel can read x in place: aligned elements, no negative stride."""
    return x.flags.aligned and min(x.strides) >= 0


def plan(a, b, out, batch):
    """The plan of out[...] = a @ b for `matmul`, or None where this kernel does not compute
    the product (B's rows not contiguous, as in Q K^T; or a layout it cannot read or write
    in place: misaligned elements, negative strides, C's matrices with neither rows nor
    columns contiguous). a, b, out and batch: as `matmul` takes them."""
    key = (a.dtype, a.shape, a.strides, b.shape, b.strides, out.shape, out.strides,
           _readable(a) and _readable(b) and _readable(out))
    known = _plans.get(key, False)
    if known is False:
        if len(_plans) >= _PLANS_MAX:
            _plans.clear()
        known = _plans[key] = _plan(a, b, out, batch) if key[-1] else None
    return known


def matmul(a, b, out, known):
    """out[...] = a @ b for float a (..., M, K), b (..., K, N) of one dtype, no empty dim, and
    out (*batch, M, N) of their dtype, overlapping neither (the caller checks all this and
    broadcasts the batch dims), by the plan `known` (from `plan`, not None); returns out."""
    swap, ints = known
    if swap:
        a, b = b, a
    _products(_first(a), _first(b), _first(out), ints)
    return out


def _first(x):
    """x's first element as a 1-D array (C-contiguous: one compiled kernel for any layout)."""
    return x[(0,) * (x.ndim - 1)][:1]
