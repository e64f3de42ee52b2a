"""Matrix multiply as plain loops in Numba: where the tiled kernel of .tiled_matmul starts from.

C = A @ B for A (M, K) and B (K, N) is, by definition, M * N dot products:

    for i in range(M):                # rows of C, spread over threads (prange)
        for j in range(N):
            C[i, j] = sum(A[i, k] * B[k, j] for k in range(K))

`matmul_ijk` is exactly that loop. It is correct and parallel, yet far from the machine's
speed, for two reasons that the next steps remove one at a time:

1. The inner loop walks down a column of B, one row (N numbers) apart per step: a new cache
   line on every k, and the running sum is one long chain of dependent additions, which LLVM
   may not reorder without changing the rounding. `matmul_ikj` swaps the two inner loops:
   for each A[i, k] it adds A[i, k] * B[k, :] to the row C[i, :]. The inner loop now reads and
   writes contiguous memory, its iterations are independent, and LLVM turns it into SIMD
   vector instructions by itself.
2. Both loops still fetch every operand from memory (or cache) for one multiply-add each:
   memory, not arithmetic, sets the speed. .tiled_matmul keeps a tile of C in registers so that
   every value loaded serves 8 or 16 multiply-adds, and adds packing, masked edges and
   K-blocking; its docstring continues the story with timings.

Inputs are C-contiguous 2-D arrays of one float dtype (the caller, `kernels.matmul_naive`,
checks and converts); C is written in place.
"""
from numba import njit, prange


@njit(parallel=True, cache=True)
def matmul_ijk(a, b, c):
    """c = a @ b by the textbook loop: one dot product per output, rows in parallel."""
    m, k = a.shape
    n = b.shape[1]
    for i in prange(m):
        for j in range(n):
            s = c.dtype.type(0)
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


@njit(parallel=True, cache=True)
def matmul_ikj(a, b, c):
    """c = a @ b with the inner loops swapped: row i of c += a[i, p] * row p of b."""
    m, k = a.shape
    n = b.shape[1]
    for i in prange(m):
        ci = c[i]
        ci[:] = 0
        for p in range(k):
            aip = a[i, p]
            bp = b[p]
            for j in range(n):
                ci[j] += aip * bp[j]
