"""Matrix products by NumPy's own BLAS, called one thread per block from Numba's pool.

The register-tiled kernel of .matmul reaches 80-90 % of OpenBLAS's speed on one core of an
AMD machine but only 60-90 % on an AVX-512 Xeon, where OpenBLAS's hand-written kernels win
(a weight gradient dW = g^T x, with its packing, took 9.7 ms in .matmul and 5.9 ms in
OpenBLAS on one core). NumPy's matmul itself is no answer: it runs on OpenBLAS's own
threads, and a training step that alternates them with Numba's threads loses milliseconds
at every switch (docs/performance.md, section 1).

So we call OpenBLAS's single-threaded `cblas_?gemm` from inside a Numba `prange`: a 2-D C
is cut into blocks of rows (or columns), each block is one gemm call, and the blocks are
shared among Numba's threads; a batch of small products (attention's 256 products of
20 x 32 by 32 x 20) is one call per product, shared the same way. While they run,
OpenBLAS's thread count is 1 (restored after), so OpenBLAS never wakes a pool of its own
and Numba's pool is still the only one a training step uses. (OpenBLAS's per-thread
setting, `openblas_set_num_threads_local`, would leave the global count alone, but made
each call 1.8x slower here.) A NumPy matmul that another Python thread runs meanwhile gets
one thread too: the same numbers, a little later.

Results are deterministic: the blocks and calls depend on the shapes only (never on the
number of threads), and inside a block OpenBLAS sums each entry in a fixed order.

The library is the OpenBLAS NumPy has loaded (found in /proc/self/maps). Elsewhere (NumPy
built on MKL or Accelerate, no /proc, symbols missing) `available()` is False and the tiled
kernel of .matmul does every product.
"""
import ctypes
import os
import threading

import numpy as np
from numba import njit, prange

from .matmul import _flat
from .reference import matmul as _np_matmul

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
BLOCK = 2048  # rows (or columns) per pair of blocks


def _find_openblas():
    """(sgemm, dgemm, set_num_threads, get_num_threads) of the OpenBLAS NumPy has loaded,
    or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()
                     and line.rstrip().split()[-1].startswith("/")}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        # NumPy's wheels rename the symbols (scipy_ prefix, 64_ suffix for 64-bit integers)
        for pre, suf, int_t in (("scipy_", "64_", ctypes.c_int64), ("", "64_", ctypes.c_int64),
                                ("", "", ctypes.c_int)):
            try:
                gemms = [getattr(lib, f"{pre}cblas_{t}gemm{suf}") for t in "sd"]
                set_n = getattr(lib, f"{pre}openblas_set_num_threads{suf}")
                get_n = getattr(lib, f"{pre}openblas_get_num_threads{suf}")
            except AttributeError:
                continue
            set_n.argtypes, set_n.restype = [ctypes.c_int], None
            get_n.argtypes, get_n.restype = [], ctypes.c_int
            for fn, real in zip(gemms, (ctypes.c_float, ctypes.c_double)):
                fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, int_t, int_t, int_t,
                               real, ctypes.c_void_p, int_t, ctypes.c_void_p, int_t, real,
                               ctypes.c_void_p, int_t]
                fn.restype = None
            return gemms[0], gemms[1], set_n, get_n
    return None


_found = None if os.environ.get("MINIGRAD_NO_BLAS") == "1" else _find_openblas()


def available():
    """Whether products go to OpenBLAS (False: MINIGRAD_NO_BLAS=1, or no OpenBLAS found)."""
    return _found is not None


@njit(parallel=True, cache=True)
def _blocks(gemm, A, ta, lda, B, tb, ldb, C, M, N, K, by_rows, nblk):
    """C (M, N) = A @ B in nblk blocks of rows (by_rows) or of columns of C.

    gemm is the ctypes function, passed as an argument (not read as a global) so that the
    compiled code holds no address and can be cached on disk."""
    dim = M if by_rows else N
    size = (dim + nblk - 1) // nblk
    one, zero = C.dtype.type(1), C.dtype.type(0)
    for w in prange(nblk):
        lo = w * size
        n = min(size, dim - lo)
        if n <= 0:
            continue
        if by_rows:  # rows lo.. of A: a row offset, or a column offset if A is transposed
            a = lo * lda if ta == NO_TRANS else lo
            gemm(ROW_MAJOR, ta, tb, n, N, K, one, A[a:].ctypes.data, lda,
                 B.ctypes.data, ldb, zero, C[lo * N:].ctypes.data, N)
        else:        # columns lo.. of B and of C
            b = lo if tb == NO_TRANS else lo * ldb
            gemm(ROW_MAJOR, ta, tb, M, n, K, one, A.ctypes.data, lda,
                 B[b:].ctypes.data, ldb, zero, C[lo:].ctypes.data, N)


@njit(parallel=True, cache=True)
def _batch(gemm, A, ta, lda, oa, B, tb, ldb, ob, C, M, N, K):
    """C[t] (M, N) = (matrix at element oa[t] of A) @ (matrix at element ob[t] of B), one gemm
    call per t."""
    one, zero = C.dtype.type(1), C.dtype.type(0)
    for t in prange(len(oa)):
        gemm(ROW_MAJOR, ta, tb, M, N, K, one, A[oa[t]:].ctypes.data, lda,
             B[ob[t]:].ctypes.data, ldb, zero, C[t * M * N:].ctypes.data, N)


_lock = threading.Lock()
_gemm = {} if _found is None else {np.dtype(np.float32): _found[0],
                                   np.dtype(np.float64): _found[1]}


def _operand(x):
    """x (2-D) as (flat memory, NO_TRANS or TRANS, leading dimension), copying only a layout
    BLAS cannot read (neither rows nor columns contiguous)."""
    if x.flags.c_contiguous:
        return x.reshape(-1), NO_TRANS, max(1, x.shape[1])
    if x.flags.f_contiguous:  # a transposed view, as in a weight gradient g^T x
        return x.T.reshape(-1), TRANS, max(1, x.shape[0])
    x = np.ascontiguousarray(x)
    return x.reshape(-1), NO_TRANS, max(1, x.shape[1])


def _stack(x, batch):
    """The matrices of x (..., R, C), its batch dims broadcast to `batch`, as (flat memory,
    NO_TRANS or TRANS, leading dimension, element offset of each matrix). Any batch strides
    are read in place (attention's heads are a permuted view); a copy is made only where
    neither the rows nor the columns of a matrix are contiguous."""
    R, Cc = x.shape[-2:]
    flat, st = _flat(x)
    s1, s2 = st[-2:]
    if s2 == 1 and (R == 1 or s1 >= Cc):
        trans, ld = NO_TRANS, max(1, Cc if R == 1 else s1)
    elif s1 == 1 and (Cc == 1 or s2 >= R):  # transposed matrices, as in attention's backward
        trans, ld = TRANS, max(1, R if Cc == 1 else s2)
    else:
        return _stack(np.ascontiguousarray(x), batch)
    off = np.zeros(x.shape[:-2], np.int64)
    for axis, (n, step) in enumerate(zip(x.shape[:-2], st[:-2])):
        off += (np.arange(n) * step).reshape((n,) + (1,) * (x.ndim - 3 - axis))
    return flat, trans, ld, np.broadcast_to(off, batch).ravel()


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


def matmul_serial(a, b):
    """matmul in the calling thread: NumPy's matmul while OpenBLAS is held at one thread.

    For small products (a small model's layers, attention over short sequences) waking Numba's
    pool and cutting the product in blocks cost about as much as the product. On one thread
    here: (512, 64) @ (64, 16) took 19 us through the pool and 14 us in one NumPy call; a
    batch of sixteen (32, 16) @ (16, 32) products 28 us against 7.5."""
    return _single_threaded(_np_matmul, a, b)


def _matmul_2d(a, b):
    """a (M, K) @ b (K, N) in blocks."""
    M, K = a.shape
    N = b.shape[1]
    A, ta, lda = _operand(a)
    B, tb, ldb = _operand(b)
    C = np.empty((M, N), a.dtype)
    by_rows = M >= N
    # an even number of blocks, 2 up to BLOCK rows or columns: both threads of a 2-core
    # machine get the same share, and the cut depends on the shape alone
    nblk = 2 * -(-(M if by_rows else N) // BLOCK)
    _single_threaded(_blocks, _gemm[a.dtype], A, ta, lda, B, tb, ldb, C.reshape(-1), M, N, K,
                     by_rows, nblk)
    return C


def matmul(a, b):
    """np.matmul for float32 or float64 a, b with ndim >= 2 and no empty dimension (inputs
    pre-checked); batch dimensions broadcast. A 2-D product, or (..., K) @ (K, N), is cut into
    blocks; a batch of products is one gemm call per product."""
    M, K = a.shape[-2:]
    N = b.shape[-1]
    if b.ndim == 2:  # one big (rows, K) @ (K, N) instead of one small product per batch entry
        return _matmul_2d(a.reshape(-1, K), b).reshape(a.shape[:-1] + (N,))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    A, ta, lda, oa = _stack(a, batch)
    B, tb, ldb, ob = _stack(b, batch)
    C = np.empty(batch + (M, N), a.dtype)
    _single_threaded(_batch, _gemm[a.dtype], A, ta, lda, oa, B, tb, ldb, ob, C.reshape(-1),
                     M, N, K)
    return C
