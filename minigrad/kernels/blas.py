"""Matrix products by NumPy's own BLAS, called one thread per block from Numba's pool.

The register-tiled kernel of .tiled_matmul reaches 80-90 % of OpenBLAS's speed on one core of an
AMD machine but only 60-90 % on an AVX-512 Xeon, where OpenBLAS's hand-written kernels win
(a weight gradient dW = g^T x, with its packing, took 9.7 ms in .tiled_matmul and 5.9 ms in
OpenBLAS on one core). NumPy's matmul itself is no answer: it runs on OpenBLAS's own
threads, and a training step that alternates them with Numba's threads loses milliseconds
at every switch (docs/performance.md, section 1).

So we call OpenBLAS's single-threaded `cblas_?gemm` from inside a Numba `prange` (.driver_blocks'
kernel). A 2-D product is cut into blocks, each one gemm call, shared among Numba's threads.
The cut follows the shape:
  - by rows of C (M >= N, or M >= 1024) or else by columns, an even number of blocks, 2 up
    to BLOCK rows or columns each, so that both threads of a 2-core machine get the same
    share;
  - by the inner dimension K when it is longer than both sides of a small C (a weight
    gradient dW = g^T x of a (128, 128) weight sums over 1,280 tokens): two half sums, one
    into C and one into a scratch array, added afterwards. Cutting the 128 rows of such a C
    in two left each call a (64, 128) corner, for which OpenBLAS packed all of x.
A bias is added by the gemm itself (each block of C is first filled with the bias, then
the gemm adds the product: beta = 1), not by a second pass over C; and the sum of A's rows
(a bias gradient, the column sums of g in dX = g W) is taken block by block right after
that block's gemm has read those rows.

A batch of small products (attention's 256 products of 20 x 32 by 32 x 20) is one call per
product, shared the same way; the kernel walks the batch through the operands' strides,
so a permuted or broadcast view is read in place, and through the result's strides too, so
a caller may choose the result's memory layout (`out`): attention's output and gradients
are written in the memory order of the views they belong to, so splitting and merging the
heads needs no copies. Operands reach the kernels as addresses (integers): nothing is
reshaped or re-viewed per call in Python.

While they run, OpenBLAS's thread count is 1 (restored after), so OpenBLAS never wakes a
pool of its own and Numba's pool is still the only one a training step uses. (OpenBLAS's
per-thread setting, `openblas_set_num_threads_local`, would leave the global count alone,
but made each call 1.8x slower here.) A NumPy matmul that another Python thread runs
meanwhile gets one thread too: the same numbers, a little later.

Results are deterministic: the blocks, calls and the order of the added partial sums depend
on the shapes only (not on the thread count); inside a block OpenBLAS sums in a fixed order.

The library is the OpenBLAS NumPy has loaded (.openblas, which also holds the compiled block
of a 2-D product). Without one, `available()` is False and .tiled_matmul does every product.
"""
import threading

import numpy as np
from numba import njit, prange

from . import driver as _driver
from . import openblas as _ob
from .openblas import BY_COLUMNS, BY_K, BY_ROWS, NO_TRANS, ROW_MAJOR, TRANS, _found
from .openblas import available  # noqa: F401  (this module's question too)
from .reference import matmul as _np_matmul

BLOCK = 2048  # rows (or columns) per pair of blocks
# K is cut only while the longer side of C is at most this: halves of 640 rows of the output
# layer's dX (1280 x 2000 @ 2000 x 128) were 13 % faster than halves of K on one thread here,
# halves of K 15 % faster than 64-row halves of a (128, 128) weight gradient over 1,280 rows
SPLIT_K_MAX = 512


@njit(parallel=True, cache=True)
def _batch(gemm, pa, ta, lda, pb, tb, ldb, pc, ldc, M, N, K, shape, sa, sb, sc, one):
    """C[t] (M, N) = A[t] @ B[t] for each index t of the batch `shape`, one gemm call each.

    Matrix t of A starts at pa + sum_d index_d(t) * sa[d] (byte strides, 0 where a batch dim
    is broadcast), B and C likewise (rows of C ldc apart); `one` is 1 in the operands' dtype."""
    zero = one - one
    total = 1
    for d in range(len(shape)):
        total *= shape[d]
    for t in prange(total):
        oa, ob, oc, step = 0, 0, 0, 1
        for d in range(len(shape) - 1, -1, -1):
            i = (t // step) % shape[d]
            step *= shape[d]
            oa += i * sa[d]
            ob += i * sb[d]
            oc += i * sc[d]
        gemm(ROW_MAJOR, ta, tb, M, N, K, one, pa + oa, lda, pb + ob, ldb, zero, pc + oc, ldc)


_lock = threading.Lock()
_gemm = {} if _found is None else {np.dtype(np.float32): _found[0],
                                   np.dtype(np.float64): _found[1]}
_empty = {}  # dtype -> (no bias, no rows, no sums), as the blocks take them, without allocating


def _nothing(dtype):
    if dtype not in _empty:
        none = np.empty((1, 0), dtype)
        _empty[dtype] = (none, none, np.zeros((0, 1), dtype))
    return _empty[dtype]


def _operand(x):
    """x (2-D) as (x or a copy, its address, NO_TRANS or TRANS, leading dimension), copying
    only a layout BLAS cannot read (neither rows nor columns contiguous)."""
    if not x.flags.aligned or not (x.flags.c_contiguous or x.flags.f_contiguous):
        x = np.ascontiguousarray(x)
    if x.flags.c_contiguous:
        return x, x.ctypes.data, NO_TRANS, max(1, x.shape[1])
    return x, x.ctypes.data, TRANS, max(1, x.shape[0])  # a transposed view, as g^T in dW


def _layout(x):
    """(NO_TRANS or TRANS, leading dimension) of the matrices of x (..., R, C) as BLAS reads or
    writes them in place, or None where neither their rows nor their columns are contiguous."""
    R, Cc = x.shape[-2:]
    s1, s2 = x.strides[-2:]
    size = x.itemsize
    if not x.flags.aligned:
        return None
    if R <= 1 and Cc <= 1:  # at most one element: its strides say nothing (NumPy may set any)
        return NO_TRANS, 1
    if s2 == size and (R == 1 or (s1 >= Cc * size and s1 % size == 0)):
        return NO_TRANS, max(1, Cc if R == 1 else s1 // size)
    if s1 == size and (Cc == 1 or (s2 >= R * size and s2 % size == 0)):
        return TRANS, max(1, R if Cc == 1 else s2 // size)  # transposed, as in attention's backward
    return None


def _batch_strides(x, nb):
    """Byte strides of x's batch dims, padded to nb dims, 0 where a dim has one entry."""
    pad = nb - (x.ndim - 2)
    return [0] * pad + [0 if n == 1 else s for n, s in zip(x.shape[:-2], x.strides[:-2])]


def _matrices(x, nb):
    """x (..., R, C) as the matrices of a batch of nb dims: (x or a copy, address, NO_TRANS
    or TRANS, leading dimension, byte strides of the batch dims, 0 where x is broadcast).
    Any batch strides are read in place (attention's heads are a permuted view); a copy is
    made only where neither the rows nor the columns of a matrix are contiguous."""
    layout = _layout(x)
    if layout is None:  # a fresh C-ordered copy: canonical strides, even for size-1 dims
        x = np.array(x, order="C")
        layout = _layout(x)
    return x, x.ctypes.data, layout[0], layout[1], _batch_strides(x, nb)


def _single_threaded(run, *args):
    """run(*args) while OpenBLAS's thread count is 1 (restored after); returns its result."""
    set_threads, get_threads = _found[2], _found[3]
    with _lock:  # the thread count is global: one product at a time changes and restores it
        before = get_threads()
        set_threads(1)
        try:
            return run(*args)
        finally:
            set_threads(before)


def matmul_serial(a, b, out=None):
    """matmul in the calling thread: NumPy's matmul while OpenBLAS is held at one thread.

    For small products, waking Numba's pool and cutting the product in blocks cost about as
    much as the product: on one thread, (512, 64) @ (64, 16) took 19 us through the pool and
    14 us in one NumPy call, sixteen (32, 16) @ (16, 32) 28 us against 7.5. (NumPy too writes
    `out` through its strides when its rows or columns are contiguous.)"""
    return _single_threaded(_np_matmul, a, b, out)


def _cut(M, N, K):
    """(how, number of blocks) for C (M, N) = A (M, K) @ B (K, N); from the shape alone."""
    if K > max(M, N) and max(M, N) <= SPLIT_K_MAX:
        return BY_K, 2
    if M >= N or M >= 1024:  # (1280, 128) @ (128, 2000): rows 4 % faster than columns
        return BY_ROWS, 2 * -(-M // BLOCK)
    return BY_COLUMNS, 2 * -(-N // BLOCK)


def _blocks(gemm, pa, ta, lda, pb, tb, ldb, C, M, N, K, cut, nblk, bias, part):
    """The integers of .openblas's gemm_block for C (M, N) = A (M, K) @ B (K, N) cut `cut` in
    nblk blocks: each block's gemm, (m, k) @ (k, n) from A + a and B + b elements into pc,
    and the part of C it fills with the bias first and the rows of A whose sums it adds."""
    ints = [0] * (_ob.HEADER + nblk * _ob.EACH)
    ints[:_ob.HEADER] = gemm, _found[5], ta, tb, lda, ldb, N
    isz, pc0 = C.itemsize, C.ctypes.data
    dim = M if cut == BY_ROWS else (N if cut == BY_COLUMNS else K)
    size = -(-dim // nblk)
    for w in range(nblk):
        lo = w * size
        n = min(size, dim - lo)
        if n <= 0:
            continue   # (m = 0: nothing to do)
        m, nn, k, a, b, pc, beta = M, N, K, 0, 0, pc0, 1 if bias else 0
        r0, r1, c0, c1 = 0, M, 0, N
        if cut == BY_ROWS:   # rows lo.. of A: a row offset, or a column offset if transposed
            m, a, r0, r1 = n, (lo * lda if ta == NO_TRANS else lo), lo, lo + n
            pc = pc0 + lo * N * isz
        elif cut == BY_COLUMNS:   # columns lo.. of B and of C
            nn, b, c0, c1 = n, (lo if tb == NO_TRANS else lo * ldb), lo, lo + n
            pc = pc0 + lo * isz
        else:   # columns lo.. of A and rows lo.. of B: a partial sum over K (w > 0: scratch)
            k = n
            a, b = (lo if ta == NO_TRANS else lo * lda), (lo * ldb if tb == NO_TRANS else lo)
            if w > 0:
                pc, beta, r1 = part.ctypes.data + (w - 1) * M * N * isz, 0, 0   # (no bias)
        rows = (lo, lo + n, 0) if cut == BY_ROWS else (0, M, lo)
        ints[_ob.HEADER + w * _ob.EACH:_ob.HEADER + (w + 1) * _ob.EACH] = (
            m, nn, k, pa + a * isz, pb + b * isz, pc, beta, r0, r1, c0, c1, *rows)
    return np.array(ints, np.int64)


def _matmul_2d(a, b, bias=None, row_sums=False, out=None):
    """a (M, K) @ b (K, N) (+ bias (N,)) in blocks, into `out` (C-contiguous) if given; with
    row_sums, also a.sum(axis=0)."""
    M, K = a.shape
    N = b.shape[1]
    dt = a.dtype
    a, pa, ta, lda = _operand(a)
    b, pb, tb, ldb = _operand(b)
    C = np.empty((M, N), dt) if out is None else out
    cut, nblk = _cut(M, N, K)
    bias_, rows, sums = _nothing(dt)
    fused_sums = row_sums and cut != BY_COLUMNS and ta == NO_TRANS
    if fused_sums:
        rows, sums = a.reshape(1, -1), np.zeros((nblk, K), dt)
    if bias is not None:
        bias_ = np.ascontiguousarray(bias, dt).reshape(1, -1)
    part = np.empty((1, (nblk - 1) * M * N), dt) if cut == BY_K else _nothing(dt)[1]
    ints = _blocks(_found[4][dt == np.float64], pa, ta, lda, pb, tb, ldb, C, M, N, K, cut,
                   nblk, bias is not None, part)
    _single_threaded(_driver.gemm_blocks, nblk, C, bias_, rows, sums, ints)
    for w in range(nblk - 1 if cut == BY_K else 0):   # in block order, whatever the threads
        C += part[0, w * M * N:(w + 1) * M * N].reshape(M, N)
    if not row_sums:
        return C
    # the blocks' sums added in block order (a fixed order, whatever the thread count)
    return C, (sums.sum(axis=0) if fused_sums else a.sum(axis=0))


def broadcast_batch(sa, sb):
    """np.broadcast_shapes(sa, sb) for two tuples, in a fraction of its time; or ValueError."""
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    if any(x != y and x != 1 and y != 1 for x, y in zip(sa, sb)):
        raise ValueError(f"batch dimensions {sa} and {sb} do not broadcast")
    return tuple(max(x, y) for x, y in zip(sa, sb))


def _flip(trans):
    return TRANS if trans == NO_TRANS else NO_TRANS


def matmul(a, b, out=None):
    """np.matmul(a, b, out=out) for float32 or float64 a, b with ndim >= 2 and no empty
    dimension (inputs pre-checked); batch dimensions broadcast. A 2-D product, or (..., K) @
    (K, N), is cut into blocks; a batch of products is one gemm call per product.

    `out` (the result's shape and dtype, not overlapping a or b) may have any strides. The
    gemm calls write through them wherever its matrices have contiguous rows, or contiguous
    columns (then each call writes C^T = B^T A^T, whose rows those are): attention's heads,
    for one, land in (B, L, H, d_k) memory under a (B, H, L, d_k) shape, so merging them
    afterwards needs no copy. Any other `out` (or a non-C-contiguous one for the blocks of
    a 2-D product) gets the product computed in C order and copied in."""
    M, K = a.shape[-2:]
    N = b.shape[-1]
    if b.ndim == 2:  # one big (rows, K) @ (K, N) instead of one small product per batch entry
        a2 = a.reshape(-1, K)
        if out is None:
            return _matmul_2d(a2, b).reshape(a.shape[:-1] + (N,))
        if out.flags.c_contiguous:
            _matmul_2d(a2, b, out=out.reshape(-1, N))
        elif out.ndim == 2 and out.flags.f_contiguous:  # C^T = B^T A^T, C-contiguous
            _matmul_2d(b.T, a.T, out=out.T)
        else:
            out[...] = _matmul_2d(a2, b).reshape(out.shape)
        return out
    batch = broadcast_batch(a.shape[:-2], b.shape[:-2])
    nb = len(batch)
    if out is None:
        out = np.empty(batch + (M, N), a.dtype)
    layout = _layout(out)
    if layout is None:
        out[...] = matmul(a, b)
        return out
    a, pa, ta, lda, sa = _matrices(a, nb)  # (a, b: any copies stay alive until the call)
    b, pb, tb, ldb, sb = _matrices(b, nb)
    tc, ldc = layout
    if tc == TRANS:  # out's columns are contiguous: C^T = B^T A^T has contiguous rows
        pa, ta, lda, sa, pb, tb, ldb, sb = pb, _flip(tb), ldb, sb, pa, _flip(ta), lda, sa
        M, N = N, M
    _single_threaded(_batch, _gemm[a.dtype], pa, ta, lda, pb, tb, ldb, out.ctypes.data, ldc,
                     M, N, K, np.array(batch, np.int64), np.array(sa, np.int64),
                     np.array(sb, np.int64), np.array(_batch_strides(out, nb), np.int64),
                     a.dtype.type(1))
    return out


def addmm(bias, a, b, out=None):
    """bias + a @ b for 2-D float a (M, K), b (K, N) and bias (N,) of their dtype (inputs
    pre-checked, no empty dimension): the gemm adds the product to C pre-filled with bias.
    `out`: C, if given (C-contiguous, the result's shape and dtype)."""
    return _matmul_2d(a, b, bias=bias, out=out)


def matmul_and_sum(a, b):
    """(a @ b, a.sum(axis=0)) for 2-D float a (M, K), b (K, N) (inputs pre-checked, no empty
    dimension): a's rows summed block by block as the product reads them."""
    return _matmul_2d(a, b, row_sums=True)
