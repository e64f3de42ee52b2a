"""The OpenBLAS NumPy has loaded, and one block of a 2-D product by its gemm, for .blas.

The library is the one NumPy has loaded (found in /proc/self/maps); elsewhere (MKL or
Accelerate, no /proc, symbols missing) `available()` is False and .tiled_matmul does every
product. The block function is compiled into .driver's kernel, which .blas runs: it is here,
not in .blas, because .blas calls .driver, and .driver (through .policy, which asks
`available()`) imports this module.
"""
import ctypes
import os

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
BY_ROWS, BY_COLUMNS, BY_K = 0, 1, 2   # how a 2-D product is cut


def _find_openblas():
    """(sgemm, dgemm, set_num_threads, get_num_threads, the gemms' addresses, whether their
    integers are 64-bit) of the OpenBLAS NumPy has loaded, or None. The gemms take their
    matrices as addresses (signed integers, so that a kernel may step backwards through a
    reversed batch)."""
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
            ptr, c_int = ctypes.c_ssize_t, ctypes.c_int
            typed, addresses = [], []
            for fn, real in zip(gemms, (ctypes.c_float, ctypes.c_double)):
                proto = ctypes.CFUNCTYPE(None, c_int, c_int, c_int, int_t, int_t, int_t, real,
                                         ptr, int_t, ptr, int_t, real, ptr, int_t)
                addresses.append(ctypes.cast(fn, ctypes.c_void_p).value)
                typed.append(proto(addresses[-1]))
            return typed[0], typed[1], set_n, get_n, addresses, int_t is ctypes.c_int64
    return None


_found = None if os.environ.get("MINIGRAD_NO_BLAS") == "1" else _find_openblas()


def available():
    """Whether products go to OpenBLAS (False: MINIGRAD_NO_BLAS=1, or no OpenBLAS found)."""
    return _found is not None


@intrinsic
def _c_call(typingctx, address, args):
    """Call the C function at `address` (returning nothing) with the scalars of the tuple
    `args`: the address is data, not a constant of the code (which could then not be cached)."""
    if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
        return None

    def codegen(context, builder, sig, llargs):
        values = [builder.extract_value(llargs[1], i) for i in range(len(args))]
        fnty = ir.FunctionType(ir.VoidType(), [v.type for v in values])
        builder.call(builder.inttoptr(llargs[0], fnty.as_pointer()), values)
        return context.get_dummy_value()
    return types.none(address, args), codegen


# Inlined into .driver's block function (.policy's INLINE options: .policy imports this module)
@njit(cache=True, inline="always")
def _call_gemm(gemm, wide, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc):
    """cblas_?gemm at `gemm`: C (pc) = alpha A (pa) B (pb) + beta C, row-major, its integers
    64-bit if `wide` (the enums are C ints either way)."""
    i32, i64 = np.int32, np.int64
    if wide:
        _c_call(gemm, (i32(ROW_MAJOR), i32(ta), i32(tb), i64(m), i64(n), i64(k), alpha, i64(pa),
                       i64(lda), i64(pb), i64(ldb), beta, i64(pc), i64(ldc)))
    else:
        _c_call(gemm, (i32(ROW_MAJOR), i32(ta), i32(tb), i32(m), i32(n), i32(k), alpha, i64(pa),
                       i32(lda), i64(pb), i32(ldb), beta, i64(pc), i32(ldc)))


@njit(cache=True, inline="always")
def _fill(C, bias, r0, r1, c0, c1):
    """C[r0:r1, c0:c1] = bias[c0:c1], row by row."""
    b = bias[c0:c1]
    for i in range(r0, r1):
        c = C[i, c0:c1]
        for j in range(c1 - c0):
            c[j] = b[j]


@njit(cache=True, inline="always")
def gemm_block(w, gemm, wide, pa, ta, lda, pb, tb, ldb, C, M, N, K, cut, size, bias, rows, sums,
               pp):
    """Block w of .blas's 2-D product C (M, N) = A @ B, cut `cut` in blocks of `size`: its
    gemm call (with the bias filled first) and its row sums (see .blas._matmul_2d)."""
    isz, pc = C.itemsize, np.int64(C.ctypes.data)
    dim = M if cut == BY_ROWS else (N if cut == BY_COLUMNS else K)
    lo = w * size
    n = size if size < dim - lo else dim - lo   # (not min(): a compilation of its own)
    if n <= 0:
        return
    zero = np.int64(0)
    beta = C.dtype.type(1) if len(bias) else C.dtype.type(0)
    # the block's gemm, (m, k) @ (k, nn) from A + a and B + b into pc, and the part of C it
    # writes, rows r0..r1-1 and columns c0..c1-1
    m, nn, k, a, b = M, N, K, zero, zero
    r0, r1, c0, c1 = zero, M, zero, N
    if cut == BY_ROWS:  # rows lo.. of A: a row offset, or a column offset if A is transposed
        m, a, pc, r0, r1 = n, (lo * lda if ta == NO_TRANS else lo), pc + lo * N * isz, lo, lo + n
    elif cut == BY_COLUMNS:  # columns lo.. of B and of C
        nn, b, pc, c0, c1 = n, (lo if tb == NO_TRANS else lo * ldb), pc + lo * isz, lo, lo + n
    else:  # columns lo.. of A and rows lo.. of B: a partial sum over K (w > 0: into scratch)
        k, a, b = n, (lo if ta == NO_TRANS else lo * lda), (lo * ldb if tb == NO_TRANS else lo)
        if w > 0:
            pc, beta = pp + (w - 1) * M * N * isz, C.dtype.type(0)
    if len(bias) and (cut != BY_K or w == 0):
        _fill(C, bias, r0, r1, c0, c1)
    _call_gemm(gemm, wide, ta, tb, m, nn, k, C.dtype.type(1), pa + a * isz, lda, pb + b * isz,
               ldb, beta, pc, N)
    if sums.shape[0]:  # the sums of the rows of A the block read (whole rows, or columns
        # lo.. of every row for the K cut), while they are still in cache
        i0, i1, j0 = (lo, lo + n, zero) if cut == BY_ROWS else (zero, M, lo)
        s = sums[w, j0:j0 + k]
        for i in range(i0, i1):
            r = rows[i * lda + j0:i * lda + j0 + k]  # (a row view: its loop vectorises)
            for j in range(k):
                s[j] += r[j]
