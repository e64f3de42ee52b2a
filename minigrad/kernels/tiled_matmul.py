"""Numba matrix multiply: a register-tiled micro-kernel on packed panels.

When it runs: only where OpenBLAS is not used (`policy.USE_BLAS` False: no OpenBLAS found
beside NumPy, MINIGRAD_NO_BLAS=1, or a test), for float products of at least
PARALLEL_MIN_WORK multiply-adds (`products.route`, "tiled"). With OpenBLAS, .blas does those
products. This module is the lesson: how a fast matrix product is built, step by step, in
the language of the rest of the kernels (the tutorial "Inside the kernels" follows it).

This is the last of a sequence of steps; .naive holds the first two. Times
for (1280, 128) @ (128, 512) in float32 on one thread (a busy 2-core
machine, best of several runs; np.matmul took 1.3 ms):

  1. The textbook loop, one dot product per output (naive.matmul_ijk):
     96 ms, 2 GFLOP/s. The inner loop strides down a column of B.
  2. The inner loops swapped (naive.matmul_ikj): row i of C += A[i, k] *
     row k of B. Contiguous, independent iterations, so LLVM vectorises
     them: 7.6 ms, 22 GFLOP/s. Still one multiply-add per value loaded,
     and C's row goes back and forth to memory for every k.
  3. Register tiling (this module): 1.5 ms, 115 GFLOP/s, the steps below.

Register tiling. Each output tile C[i:i+MR, j:j+NR] (8 x 32 float32) lives
in 16 vector registers while we walk down K: per step we load a row of B's
panel as two vectors, broadcast MR values of A, and do 16 vector
multiply-adds. Every value loaded is reused 8 or 16 times, so the loop runs
at the speed of the FMA units rather than of memory: the idea behind every
fast BLAS. What it takes, one refinement at a time:

* Explicit SIMD vectors. LLVM's auto-vectoriser will not keep a 2-D tile
  of accumulators in registers (and on Intel it prefers 256-bit vectors),
  so the tiny `vload_first`/`vfma`/... functions of .simd hand it 64-byte
  vectors (16 float32 or 8 float64) directly: AVX-512 zmm registers where
  available; elsewhere LLVM splits them into smaller ones.
* Packing. B is copied into column panels (NR columns, row after row), A
  into row panels if its rows are not contiguous (e.g. the transposed view
  in a weight gradient), at most PACK_A_BYTES of it at a time. Then the
  micro-kernel reads memory sequentially: a strided operand would touch a
  new cache line and page on every k, and B rows of a wide matrix all map
  to the same few L1 sets. Packing reads through strides, so ANY input
  layout works. Operands that are already
  fine (row-major A, a B no wider than one panel) are used in place.
* Ragged edges. The last column panel is read and written with masked
  vector loads/stores; rows past M re-read the last row and are dropped.
  Odd sizes need no zero padding.
* K-blocking: K is walked in chunks of KC, so the B chunk (KC x NR) stays
  in L1 while a group of row panels streams past it.
* Parallel work items are (batch, column panel, group of row panels): the
  batched attention products (256 x (20x32 @ 32x20)) are parallel over the
  batch, large 2-D products over tiles.

Like the OpenBLAS blocks of .blas, it runs in Numba's thread pool, so a
training step wakes only that pool: had the products run on OpenBLAS's own
threads, the two pools would take turns on the cores, and the idle pool's
spinning threads cost milliseconds at every switch (measured on 2 cores:
docs/performance.md, section 1).
"""
import math
import threading

import numpy as np
from numba import njit, prange

from .simd import VBYTES, vadd, vbroadcast, vfma, vload_first, vstore_first, vzero

MR = 8        # rows of the micro-tile
NV = 2        # vectors per micro-tile row, so NR = NV * (VBYTES // itemsize)
GROUP = 16    # row panels per work item (they share one B chunk in L1)
KC_BYTES = 24576  # KC * NR * itemsize: the B chunk that should stay in L1
# Most memory a packed copy of A may take; a larger A is packed and multiplied in blocks of
# rows, so the scratch kept between calls stays bounded (tests lower it to exercise blocks).
PACK_A_BYTES = 8 << 20


# ------------------------------------------------------------- packing ----
@njit(parallel=True, cache=True)
def _pack(X, st, sk, sv, nv, K, P, Xp):
    """Copy X into panels: Xp[t, p, k, c] = X[t*st + k*sk + (p*P + c)*sv].

    For B, v runs along N (P = NR); for A, along M (P = MR). The last panel
    may be ragged: its missing lanes are never read (masked loads, clamped
    rows), so we do not zero them. Work items are (batch, block of 32 k)
    and loop over all panels inside: the 32 source rows, and their memory
    pages, stay hot while we visit them (a transposed source would
    otherwise touch a new page on every k).
    """
    npan = (nv + P - 1) // P
    nkb = (K + 31) // 32
    nb = len(Xp) // (npan * K * P)
    for w in prange(nb * nkb):
        t = w // nkb
        k0 = (w % nkb) * 32
        for p in range(npan):
            n = min(P, nv - p * P)
            for k in range(k0, min(K, k0 + 32)):
                src = t * st + k * sk + p * P * sv
                dst = ((t * npan + p) * K + k) * P
                # copy through views: no negative-index checks, and a
                # contiguous view (sv == 1) lets LLVM vectorise the copy
                to = Xp[dst:dst + n]
                if sv == 1:
                    run = X[src:src + n]
                    for c in range(n):
                        to[c] = run[c]
                else:
                    run = X[src:src + (n - 1) * sv + 1:sv]
                    for c in range(n):
                        to[c] = run[c]


# ------------------------------------------------------- micro-kernel ----
@njit(cache=True)
def _store_row(C, off, cols, W, v0, v1, first):
    # The first K chunk writes C, later ones add to it. Masked loads/stores
    # touch only the valid columns of a ragged last panel (all lanes otherwise).
    n0, n1 = min(cols, W), max(cols - W, 0)
    if not first:
        v0 = vadd(v0, vload_first(C, off, n0))
        v1 = vadd(v1, vload_first(C, off + W, n1))
    vstore_first(C, off, v0, n0)
    vstore_first(C, off + W, v1, n1)


@njit(cache=True, inline="always")
def _fma4(A, a, offsets, b0, b1, acc):
    """One k step of four rows of the micro-tile: acc holds their accumulators, two vectors
    a row (row i's are acc[2i], acc[2i+1]); A[a + offsets[i]] is row i's value of A."""
    x0, x1 = vbroadcast(A, a + offsets[0]), vbroadcast(A, a + offsets[1])
    x2, x3 = vbroadcast(A, a + offsets[2]), vbroadcast(A, a + offsets[3])
    return (vfma(x0, b0, acc[0]), vfma(x0, b1, acc[1]), vfma(x1, b0, acc[2]),
            vfma(x1, b1, acc[3]), vfma(x2, b0, acc[4]), vfma(x2, b1, acc[5]),
            vfma(x3, b0, acc[6]), vfma(x3, b1, acc[7]))


@njit(cache=True, inline="always")
def _store4(C, off, N, cols, W, acc, rows, first):
    """The first `rows` (at most 4) of four accumulated rows to C at off, N apart."""
    for i in range(min(rows, 4)):
        _store_row(C, off + i * N, cols, W, acc[2 * i], acc[2 * i + 1], first)


@njit(parallel=True, cache=True)
def _gemm(A, sa, B, sb, C, ia, ib, M, N, K):
    """C[t] = A[ia[t]] @ B[ib[t]] for every t.

    A, B and C are flat arrays. Row r of row panel p, column k of A is at
    t*sa[0] + p*sa[1] + k*sa[2] + r*sa[3]; column c of column panel p,
    row k of B at t*sb[0] + p*sb[1] + k*sb[2] + c. These cover both the
    packed buffers and arrays used in place. C is C-ordered (len(ia), M, N).
    """
    W = VBYTES // C.itemsize
    NR = NV * W
    KC = max(1, KC_BYTES // (NR * C.itemsize))
    npi = (M + MR - 1) // MR
    npj = (N + NR - 1) // NR
    ngroups = (npi + GROUP - 1) // GROUP
    for w in prange(len(ia) * npj * ngroups):
        t = w // (npj * ngroups)
        jp = (w // ngroups) % npj
        g = w % ngroups
        cols = min(NR, N - jp * NR)
        # a ragged last column panel loads only its valid lanes
        n0 = min(cols, W)
        n1 = max(cols - W, 0)
        for k0 in range(0, K, KC):
            kc = min(KC, K - k0)
            first = k0 == 0
            for ip in range(g * GROUP, min(npi, (g + 1) * GROUP)):
                rows = min(MR, M - ip * MR)
                # rows past M re-read the last row; their results are dropped
                last, s3 = rows - 1, sa[3]
                top = (0, min(1, last) * s3, min(2, last) * s3, min(3, last) * s3)
                bottom = (min(4, last) * s3, min(5, last) * s3, min(6, last) * s3,
                          min(7, last) * s3)
                a = ia[t] * sa[0] + ip * sa[1] + k0 * sa[2]
                b = ib[t] * sb[0] + jp * sb[1] + k0 * sb[2]
                z = vzero(C)
                upper = lower = (z, z, z, z, z, z, z, z)   # rows 0-3 and 4-7, 2 vectors each
                for _ in range(kc):   # the hot loop: 2 loads, 8 broadcasts, 16 FMAs
                    b0, b1 = vload_first(B, b, n0), vload_first(B, b + W, n1)
                    upper = _fma4(A, a, top, b0, b1, upper)
                    lower = _fma4(A, a, bottom, b0, b1, lower)
                    a += sa[2]
                    b += sb[2]
                off = (t * M + ip * MR) * N + jp * NR
                _store4(C, off, N, cols, W, upper, rows, first)
                _store4(C, off + 4 * N, N, cols, W, lower, rows - 4, first)


# ------------------------------------------------------------- driver ----
_local = threading.local()


def _scratch(name, size, dtype):
    """A reusable packing buffer of `size` elements, private to the calling thread.

    Reuse saves a fresh multi-MB allocation (and its page faults) per call. The buffers are
    per thread because holding the GIL inside each kernel is not enough: _pack fills a buffer
    and _gemm reads it in a second call, and between the two another Python thread may run
    a matmul of its own. A shared buffer would then be overwritten under us.
    """
    workspace = _local.__dict__.setdefault("workspace", {})
    key = (name, np.dtype(dtype))
    buf = workspace.get(key)
    if buf is None or buf.size < size:
        buf = workspace[key] = np.empty(max(size, 4096), dtype)
    return buf[:size]


def _flat(x):
    """x's memory as one read-only 1-D array, and x's strides in elements.

    One array type for every input keeps Numba to one compiled kernel per
    dtype instead of one per combination of memory layouts.
    """
    if x.flags.c_contiguous:
        flat = x.reshape(-1).view()
        flat.flags.writeable = False
    else:
        if any(s < 0 or s % x.itemsize or (s == 0 and n > 1)
               for n, s in zip(x.shape, x.strides)):
            x = np.ascontiguousarray(x)
            return _flat(x)
        extent = 1 + sum((n - 1) * s for n, s in zip(x.shape, x.strides)) // x.itemsize
        flat = np.lib.stride_tricks.as_strided(x, (extent,), (x.itemsize,), writeable=False)
    return flat, tuple(s // x.itemsize for s in x.strides)


def _pack_rows(A3, M, K, dtype):
    """A3 (na, M, K) packed into MR-row panels in scratch: (flat buffer, strides for _gemm)."""
    A, (a0, a1, a2) = _flat(A3)
    npi = -(-M // MR)
    Ap = _scratch("a", len(A3) * npi * K * MR, dtype)
    _pack(A, a0, a2, a1, M, K, MR, Ap)
    return _flat(Ap)[0], (npi * K * MR, K * MR, MR, 1)


def matmul_batched(A3, B3, ia, ib):
    """C[t] = A3[ia[t]] @ B3[ib[t]] for t in range(len(ia)); any strides."""
    na, M, K = A3.shape
    nb, _, N = B3.shape
    dtype = A3.dtype
    NR = NV * (VBYTES // dtype.itemsize)
    B, (b0, b1, b2) = _flat(B3)
    if b2 == 1 and N <= NR:  # one contiguous panel: read B in place
        sb = (b0, 0, b1)
    else:  # pack, so a panel's K x NR chunk is contiguous (no cache conflicts)
        npj = -(-N // NR)
        Bp = _scratch("b", nb * npj * K * NR, dtype)
        _pack(B, b0, b1, b2, N, K, NR, Bp)
        B, sb = _flat(Bp)[0], (npj * K * NR, K * NR, NR)
    C = np.empty((len(ia), M, N), dtype)
    A, (a0, a1, a2) = _flat(A3)
    if a2 == 1:  # rows of A are contiguous: read A in place
        _gemm(A, (a0, MR * a1, 1, a1), B, sb, C.reshape(-1), ia, ib, M, N, K)
    elif na * -(-M // MR) * MR * K * dtype.itemsize <= PACK_A_BYTES:
        # e.g. a transposed view: pack into MR-row panels
        A, sa = _pack_rows(A3, M, K, dtype)
        _gemm(A, sa, B, sb, C.reshape(-1), ia, ib, M, N, K)
    else:
        # packed whole, A would take as much memory again as itself (a weight gradient
        # dW = g^T x over a large vocabulary: 150 MB), so pack and multiply blocks of rows
        rows = max(MR * GROUP, PACK_A_BYTES // (K * dtype.itemsize) // MR * MR)
        one = np.zeros(1, ia.dtype)
        for t in range(len(ia)):
            for m0 in range(0, M, rows):
                m = min(rows, M - m0)
                A, sa = _pack_rows(A3[ia[t]:ia[t] + 1, m0:m0 + m], m, K, dtype)
                _gemm(A, sa, B, sb, C[t, m0:m0 + m].reshape(-1), one, ib[t:t + 1], m, N, K)
    return C


def matmul(a, b):
    """np.matmul semantics for a.ndim >= 2, b.ndim >= 2 (inputs pre-checked)."""
    M, K = a.shape[-2:]
    N = b.shape[-1]
    if b.ndim == 2 and a.ndim > 2:
        # one big (rows, K) @ (K, N) instead of one small product per batch entry
        return matmul(a.reshape(-1, K), b).reshape(a.shape[:-1] + (N,))
    same = a.shape[:-2] == b.shape[:-2]
    batch = a.shape[:-2] if same else np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    nbatch = math.prod(batch)
    if M * N * nbatch == 0 or K == 0:
        return np.zeros(batch + (M, N), a.dtype)
    A3 = a.reshape((-1, M, K))
    B3 = b.reshape((-1, K, N))
    if same:
        ia = ib = np.arange(nbatch)
    else:  # broadcast batch dims: map each output batch to its operands
        ia = np.broadcast_to(np.arange(len(A3)).reshape(a.shape[:-2]), batch).ravel()
        ib = np.broadcast_to(np.arange(len(B3)).reshape(b.shape[:-2]), batch).ravel()
    return matmul_batched(A3, B3, ia, ib).reshape(batch + (M, N))
