"""Matrix products by NumPy's own BLAS, called one thread per block from Numba's pool.

The register-tiled kernel of .tiled_matmul reaches 80-90 % of OpenBLAS's speed on one core of an
AMD machine but only 60-90 % on an AVX-512 Xeon, where OpenBLAS's hand-written kernels win
(a weight gradient dW = g^T x, with its packing, took 9.7 ms in .tiled_matmul and 5.9 ms in
OpenBLAS on one core). NumPy's matmul itself is no answer: it runs on OpenBLAS's own
threads, and a training step that alternates them with Numba's threads loses milliseconds
at every switch (docs/performance.md, section 1).

So we call OpenBLAS's single-threaded `cblas_?gemm` from inside a Numba `prange`. A 2-D
product is cut into blocks and each block is one gemm call; the blocks are shared among
Numba's threads. The cut follows the shape:
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
heads needs no copies. Operands reach the kernels as addresses
(integers): nothing is reshaped or re-viewed per call in Python.

While they run, OpenBLAS's thread count is 1 (restored after), so OpenBLAS never wakes a
pool of its own and Numba's pool is still the only one a training step uses. (OpenBLAS's
per-thread setting, `openblas_set_num_threads_local`, would leave the global count alone,
but made each call 1.8x slower here.) A NumPy matmul that another Python thread runs
meanwhile gets one thread too: the same numbers, a little later.

Results are deterministic: the blocks, calls and the order of the added partial sums
depend on the shapes only (never on the number of threads), and inside a block OpenBLAS
sums each entry in a fixed order.

The library is the OpenBLAS NumPy has loaded (found in /proc/self/maps). Elsewhere (NumPy
built on MKL or Accelerate, no /proc, symbols missing) `available()` is False and the tiled
kernel of .tiled_matmul does every product.
"""
import ctypes
import os
import threading

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core.extending import intrinsic

from .reference import matmul as _np_matmul

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
BLOCK = 2048  # rows (or columns) per pair of blocks
BY_ROWS, BY_COLUMNS, BY_K = 0, 1, 2   # how a 2-D product is cut
# K is cut only while the longer side of C is at most this: halves of 640 rows of the output
# layer's dX (1280 x 2000 @ 2000 x 128) were 13 % faster than halves of K on one thread here,
# halves of K 15 % faster than 64-row halves of a (128, 128) weight gradient over 1,280 rows
SPLIT_K_MAX = 512


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
    `args`, each passed as its own C type: a gemm whose address is data, not a constant of the
    compiled code (which could then not be cached on disk)."""
    if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
        return None

    def codegen(context, builder, sig, llargs):
        values = [builder.extract_value(llargs[1], i) for i in range(len(args))]
        fnty = ir.FunctionType(ir.VoidType(), [v.type for v in values])
        builder.call(builder.inttoptr(llargs[0], fnty.as_pointer()), values)
        return context.get_dummy_value()
    return types.none(address, args), codegen


# The functions below are inlined into .driver's block function (.policy's INLINE options,
# spelled out: .policy imports this module).
@njit(cache=True, inline="always")
def _call_gemm(gemm, wide, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc):
    """cblas_?gemm at address `gemm` (row-major): C (pc) = alpha A (pa) B (pb) + beta C, its
    integers 64-bit if `wide` (the enums are C ints either way)."""
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
def _block(w, gemm, wide, pa, ta, lda, pb, tb, ldb, C, M, N, K, cut, size, bias, rows, sums, pp):
    """Block w of _matmul_2d's product: its gemm call (with the bias filled first) and its row
    sums (see _matmul_2d)."""
    isz = C.itemsize
    pc = np.int64(C.ctypes.data)
    dim = M if cut == BY_ROWS else (N if cut == BY_COLUMNS else K)
    lo = w * size
    n = size if size < dim - lo else dim - lo   # (not min(): a compilation of its own)
    if n <= 0:
        return
    zero = np.int64(0)
    one = C.dtype.type(1)
    beta = one if len(bias) else C.dtype.type(0)
    if cut == BY_ROWS:  # rows lo.. of A: a row offset, or a column offset if A is transposed
        if len(bias):
            _fill(C, bias, lo, lo + n, zero, N)
        a = lo * lda if ta == NO_TRANS else lo
        _call_gemm(gemm, wide, ta, tb, n, N, K, one, pa + a * isz, lda, pb, ldb, beta,
              pc + lo * N * isz, N)
        if sums.shape[0]:  # while block w's rows of A are still in cache
            s = sums[w]
            for i in range(lo, lo + n):
                r = rows[i * lda:i * lda + K]  # (a row view: its loop vectorises)
                for j in range(K):
                    s[j] += r[j]
    elif cut == BY_COLUMNS:  # columns lo.. of B and of C
        if len(bias):
            _fill(C, bias, zero, M, lo, lo + n)
        b = lo if tb == NO_TRANS else lo * ldb
        _call_gemm(gemm, wide, ta, tb, M, n, K, one, pa, lda, pb + b * isz, ldb, beta,
              pc + lo * isz, N)
    else:               # columns lo.. of A and rows lo.. of B: a partial sum over K
        a = lo if ta == NO_TRANS else lo * lda
        b = lo * ldb if tb == NO_TRANS else lo
        if w == 0:
            if len(bias):
                _fill(C, bias, zero, M, zero, N)
            _call_gemm(gemm, wide, ta, tb, M, N, n, one, pa + a * isz, lda, pb + b * isz, ldb,
                  beta, pc, N)
        else:
            _call_gemm(gemm, wide, ta, tb, M, N, n, one, pa + a * isz, lda, pb + b * isz, ldb,
                  C.dtype.type(0), pp + (w - 1) * M * N * isz, N)
        if sums.shape[0]:  # block w read columns lo.. of A: their sums, whole
            s = sums[w, lo:lo + n]
            for i in range(M):
                r = rows[i * lda + lo:i * lda + lo + n]
                for j in range(n):
                    s[j] += r[j]


@njit(parallel=True, cache=True)
def _batch(gemm, pa, ta, lda, pb, tb, ldb, pc, ldc, M, N, K, shape, sa, sb, sc, one):
    """C[t] (M, N) = A[t] @ B[t] for each index t of the batch `shape`, one gemm call each.

    Matrix t of A starts at pa + sum_d index_d(t) * sa[d] (byte strides, 0 where the batch
    dim is broadcast), and likewise for B and for C (rows of C contiguous, ldc apart). `one`
    is 1 in the operands' dtype."""
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
_driver = None
_gemm = {} if _found is None else {np.dtype(np.float32): _found[0],
                                   np.dtype(np.float64): _found[1]}
_empty = {}  # dtype -> (empty bias, empty rows, empty sums): "none given" without an allocation


def _nothing(dtype):
    if dtype not in _empty:
        _empty[dtype] = (np.empty(0, dtype), np.empty(0, dtype), np.zeros((0, 1), dtype))
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

    For small products (a small model's layers, attention over short sequences) waking Numba's
    pool and cutting the product in blocks cost about as much as the product. On one thread
    here: (512, 64) @ (64, 16) took 19 us through the pool and 14 us in one NumPy call; a
    batch of sixteen (32, 16) @ (16, 32) products 28 us against 7.5. (NumPy too writes `out`
    through its strides when its rows or columns are contiguous.)"""
    return _single_threaded(_np_matmul, a, b, out)


def _cut(M, N, K):
    """(how, number of blocks) for C (M, N) = A (M, K) @ B (K, N); from the shape alone."""
    if K > max(M, N) and max(M, N) <= SPLIT_K_MAX:
        return BY_K, 2
    if M >= N or M >= 1024:  # (1280, 128) @ (128, 2000): rows 4 % faster than columns
        return BY_ROWS, 2 * -(-M // BLOCK)
    return BY_COLUMNS, 2 * -(-N // BLOCK)


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
    no_bias, no_rows, no_sums = _nothing(dt)
    rows, sums = no_rows, no_sums
    fused_sums = row_sums and cut != BY_COLUMNS and ta == NO_TRANS
    if fused_sums:
        rows, sums = a.reshape(-1), np.zeros((nblk, K), dt)
    bias = no_bias if bias is None else np.ascontiguousarray(bias, dt)
    part = np.empty((nblk - 1) * M * N, dt) if cut == BY_K else no_rows
    dim = M if cut == BY_ROWS else (N if cut == BY_COLUMNS else K)
    ints = np.array((_found[4][dt == np.float64], _found[5], pa, ta, lda, pb, tb, ldb, M, N, K,
                     cut, -(-dim // nblk)), np.int64)
    global _driver
    if _driver is None:   # (.driver imports this module, through .policy)
        from . import driver as _driver
    _single_threaded(_driver.gemm_blocks, nblk, C, bias.reshape(1, -1), rows.reshape(1, -1),
                     sums, part.reshape(1, -1), ints)
    # BY_K: the later partial sums added in block order (a fixed order, whatever the threads)
    for w in range(nblk - 1 if cut == BY_K else 0):
        C += part[w * M * N:(w + 1) * M * N].reshape(M, N)
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


def addmm(bias, a, b):
    """bias + a @ b for 2-D float a (M, K), b (K, N) and bias (N,) of their dtype (inputs
    pre-checked, no empty dimension): the gemm adds the product to C pre-filled with bias."""
    return _matmul_2d(a, b, bias=bias)


def matmul_and_sum(a, b):
    """(a @ b, a.sum(axis=0)) for 2-D float a (M, K), b (K, N) (inputs pre-checked, no empty
    dimension): a's rows summed block by block as the product reads them."""
    return _matmul_2d(a, b, row_sums=True)
