"""2-D matrix products by NumPy's own BLAS, called one thread per block from Numba's pool.

The register-tiled kernel of .matmul reaches 80-90 % of OpenBLAS's speed on one core of an
AMD machine but only 60-90 % on an AVX-512 Xeon, where OpenBLAS's hand-written kernels win
(a weight gradient dW = g^T x, with its packing, took 9.7 ms in .matmul and 5.9 ms in
OpenBLAS on one core). NumPy's matmul itself is no answer: it runs on OpenBLAS's own
threads, and a training step that alternates them with Numba's threads loses milliseconds
at every switch (docs/performance.md, section 1).

So we call OpenBLAS's single-threaded `cblas_?gemm` from inside a Numba `prange`: C is cut
into blocks of rows, each block is one gemm call, and the blocks are shared among Numba's
threads. Each call is told to use one thread (`openblas_set_num_threads_local`, a per-thread
setting, restored after the call), so OpenBLAS never wakes a pool of its own and Numba's
pool is still the only one a training step uses.

Results are deterministic: the blocks depend on the shapes only (never on the number of
threads), and inside a block OpenBLAS sums each entry in a fixed order.

The library is the OpenBLAS NumPy has loaded (found in /proc/self/maps). Elsewhere (NumPy
built on MKL or Accelerate, no /proc, symbols missing) `available()` is False and the tiled
kernel of .matmul does every product.
"""
import ctypes
import os

import numpy as np
from numba import njit, prange

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
BLOCK = 512   # rows (or columns) per pair of blocks: a block is 1/2 of BLOCK at most


def _find_openblas():
    """(sgemm, dgemm, set_threads_local) of the OpenBLAS NumPy has loaded, or None."""
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
            except AttributeError:
                continue
            local = None
            for name in (f"{pre}openblas_set_num_threads_local{suf}",
                         "openblas_set_num_threads_local"):
                local = getattr(lib, name, None)
                if local is not None:
                    break
            if local is None:  # without it each call could start OpenBLAS's own threads
                return None
            local.argtypes, local.restype = [ctypes.c_int], ctypes.c_int
            for fn, real in zip(gemms, (ctypes.c_float, ctypes.c_double)):
                fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, int_t, int_t, int_t,
                               real, ctypes.c_void_p, int_t, ctypes.c_void_p, int_t, real,
                               ctypes.c_void_p, int_t]
                fn.restype = None
            return gemms[0], gemms[1], local
    return None


_found = None if os.environ.get("MINIGRAD_NO_BLAS") == "1" else _find_openblas()


def available():
    """Whether products go to OpenBLAS (False: MINIGRAD_NO_BLAS=1, or no OpenBLAS found)."""
    return _found is not None


@njit(parallel=True, cache=True)
def _blocks(gemm, set_local, A, ta, lda, B, tb, ldb, C, M, N, K, by_rows, nblk):
    """C (M, N) = A @ B in nblk blocks of rows (by_rows) or of columns of C.

    gemm and set_local are the ctypes functions, passed as arguments (not read as globals)
    so that the compiled code holds no address and can be cached on disk."""
    dim = M if by_rows else N
    size = (dim + nblk - 1) // nblk
    one, zero = C.dtype.type(1), C.dtype.type(0)
    for w in prange(nblk):
        lo = w * size
        n = min(size, dim - lo)
        if n <= 0:
            continue
        before = set_local(1)   # this call runs on this thread alone
        if by_rows:  # rows lo.. of A: a row offset, or a column offset if A is transposed
            a = lo * lda if ta == NO_TRANS else lo
            gemm(ROW_MAJOR, ta, tb, n, N, K, one, A[a:].ctypes.data, lda,
                 B.ctypes.data, ldb, zero, C[lo * N:].ctypes.data, N)
        else:        # columns lo.. of B and of C
            b = lo if tb == NO_TRANS else lo * ldb
            gemm(ROW_MAJOR, ta, tb, M, n, K, one, A.ctypes.data, lda,
                 B[b:].ctypes.data, ldb, zero, C[lo:].ctypes.data, N)
        set_local(before)


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


def matmul(a, b):
    """a (M, K) @ b (K, N), float32 or float64, M, N, K > 0 (inputs pre-checked)."""
    M, K = a.shape
    N = b.shape[1]
    A, ta, lda = _operand(a)
    B, tb, ldb = _operand(b)
    C = np.empty((M, N), a.dtype)
    by_rows = M >= N
    # an even number of blocks of at most BLOCK / 2 rows or columns: both threads of a
    # 2-core machine get the same share, and the cut depends on the shape alone
    nblk = 2 * -(-(M if by_rows else N) // BLOCK)
    _blocks(_gemm[a.dtype], _found[2], A, ta, lda, B, tb, ldb, C.reshape(-1), M, N, K, by_rows,
            nblk)
    return C
