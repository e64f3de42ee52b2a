"""The OpenBLAS NumPy has loaded, and one block of a 2-D product by its gemm, for .blas.

The library is the one NumPy has loaded (found in /proc/self/maps); elsewhere (MKL or
Accelerate, no /proc, symbols missing) `available()` is False and .tiled_matmul does every
product. The block function is compiled into .driver_blocks' kernel, which .blas runs through .driver: it is here,
not in .blas, because .blas calls .driver, and .driver_blocks imports this module (as does
.policy, which asks `available()`).
"""
import ctypes
import os

from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from .views import flat

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
BY_ROWS, BY_COLUMNS, BY_K = 0, 1, 2   # how a 2-D product is cut


def _find_openblas():
    """(sgemm, dgemm, set_num_threads, get_num_threads, the gemms' addresses, whether their
    integers are 64-bit, the name of the core whose kernels it runs) of the OpenBLAS NumPy
    has loaded, or None. The gemms take their
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
            core = getattr(lib, f"{pre}openblas_get_corename{suf}", None)
            if core is not None:
                core.argtypes, core.restype = [], ctypes.c_char_p
                core = (core() or b"").decode("ascii", "replace")
            return (typed[0], typed[1], set_n, get_n, addresses, int_t is ctypes.c_int64,
                    core or "")
    return None


_found = None if os.environ.get("MINIGRAD_NO_BLAS") == "1" else _find_openblas()


def available():
    """Whether products go to OpenBLAS (False: MINIGRAD_NO_BLAS=1, or no OpenBLAS found)."""
    return _found is not None


# OpenBLAS's kernel sets for AVX-512 cores: their small-matrix kernels compute a batch of
# attention-sized products as fast as .batched's register tile, or faster
AVX512_CORES = ("skylakex", "cooperlake", "sapphirerapids")


def avx512_kernels():
    """Whether the OpenBLAS found runs its AVX-512 kernels (on an AVX-512 machine, unless
    OPENBLAS_CORETYPE names an older core, as Haswell); False without OpenBLAS."""
    return _found is not None and _found[6].lower() in AVX512_CORES


@intrinsic
def _gemm_call(typingctx, gemm, wide, ints, alpha, beta):
    """cblas_?gemm at `gemm` (data, not a constant of the code, which could then not be
    cached): C (pc) = alpha A (pa) B (pb) + beta C, row-major, with ints = (ta, tb, m, n, k,
    pa, lda, pb, ldb, pc, ldc); the sizes go as 64-bit integers if `wide`, else as C ints.
    (The conversions are LLVM truncations here, not Numba casts of two tuples, one per width:
    less for Numba to type and lower.)"""
    if (not isinstance(gemm, types.Integer) or not isinstance(ints, types.BaseTuple)
            or len(ints) != 11 or not all(isinstance(t, types.Integer) for t in ints.types)):
        return None

    def codegen(context, builder, sig, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        ta, tb, m, n, k, pa, lda, pb, ldb, pc, ldc = [
            context.cast(builder, builder.extract_value(args[2], i), t, types.int64)
            for i, t in enumerate(sig.args[2].types)]
        is_wide = context.cast(builder, args[1], sig.args[1], types.boolean)
        with builder.if_else(is_wide) as (then, otherwise):
            for branch, size in ((then, i64), (otherwise, i32)):
                with branch:
                    def sz(v):
                        return v if size is i64 else builder.trunc(v, i32)
                    values = [i32(ROW_MAJOR), builder.trunc(ta, i32), builder.trunc(tb, i32),
                              sz(m), sz(n), sz(k), args[3], pa, sz(lda), pb, sz(ldb), args[4],
                              pc, sz(ldc)]
                    fnty = ir.FunctionType(ir.VoidType(), [v.type for v in values])
                    builder.call(builder.inttoptr(args[0], fnty.as_pointer()), values)
        return context.get_dummy_value()
    return types.none(gemm, wide, ints, alpha, beta), codegen


# The integers of a 2-D product cut in blocks (.blas's _blocks), in .driver_blocks' `ints`: a
# header, then each block's own
GEMM, WIDE, TA, TB, LDA, LDB, LDC, HEADER = 0, 1, 2, 3, 4, 5, 6, 7
M, N, K, PA, PB, PC, BETA, ROW0, ROW1, COL0, COL1, SUM_ROW0, SUM_ROW1, SUM_COL0, EACH = range(15)


# Inlined into .driver_blocks' block function (.policy's INLINE options: .policy imports this module)
@njit(cache=True, inline="always")
def gemm_block(w, ints, C, bias, rows, sums):
    """Block w of .blas's 2-D product into C (M, N): the bias filled into its part of C, its
    gemm call, and the sums of the rows of A it read, by the integers .blas computed."""
    b = HEADER + w * EACH
    if ints[b + M] <= 0:
        return
    if len(bias) and ints[b + ROW1] > ints[b + ROW0]:   # C[r0:r1, c0:c1] = bias[c0:c1]
        n, c0, c1 = C.shape[1], ints[b + COL0], ints[b + COL1]
        bb = flat(bias, c0, c1)
        for i in range(ints[b + ROW0], ints[b + ROW1]):
            ci = flat(C, i * n + c0, i * n + c1)
            for j in range(len(ci)):
                ci[j] = bb[j]
    _gemm_call(ints[GEMM], ints[WIDE] != 0,
               (ints[TA], ints[TB], ints[b + M], ints[b + N], ints[b + K], ints[b + PA],
                ints[LDA], ints[b + PB], ints[LDB], ints[b + PC], ints[LDC]),
               C.dtype.type(1), C.dtype.type(ints[b + BETA]))
    if sums.shape[0]:  # the sums of the rows of A the block read (whole rows, or columns
        # j0.. of every row for the K cut), while they are still in cache
        k, j0, lda = ints[b + K], ints[b + SUM_COL0], ints[LDA]
        s = flat(sums, w * sums.shape[1] + j0, w * sums.shape[1] + j0 + k)
        for i in range(ints[b + SUM_ROW0], ints[b + SUM_ROW1]):
            r = flat(rows, i * lda + j0, i * lda + j0 + k)  # (a row view: its loop vectorises)
            for j in range(k):
                s[j] += r[j]
