"""Matrix products: the one place that decides how a product is computed.

`route(a, b)` picks one of five routes from the operands' dtype, the backend, the work (M K N
multiply-adds, times the batch) and the policy's thresholds (.policy):

    operands  backend  work (multiply-adds)                 route
    --------  -------  -----------------------------------  -----------------------------------
    integer   any      any                                  "reference": np.matmul, exact
    float     numpy    any                                  "reference": .reference.matmul
    float     numba    < PARALLEL_MIN_WORK                  "reference": waking the pool costs more
    float     numba    a batch of matrices (both operands   "batched": the whole batch in one
                       3-D or more) of <= _OWN_THREAD       compiled call in this thread
                       each, below the serial limit         (.batched; B's rows not contiguous,
                       (next row), USE_BLAS,                as in Q K^T: np.matmul)
                       BATCHED_KERNEL
    float     numba    the same without BATCHED_KERNEL, or  "reference": np.matmul, one gemm
                       two matrices of <= _OWN_THREAD,      call per matrix in this thread
                       below the serial limit, USE_BLAS
    float     numba    < SERIAL_MATMUL_MAX_WORK (times      "blas_serial": one OpenBLAS call in
                       SERIAL_BATCH_FACTOR for a batch of   this thread, OpenBLAS held at one
                       matrices), USE_BLAS                  thread (.blas.matmul_serial)
    float     numba    larger, USE_BLAS                     "blas_blocks": OpenBLAS in blocks in
                                                            Numba's pool (.blas.matmul)
    float     numba    >= PARALLEL_MIN_WORK, no USE_BLAS    "tiled": the register-tiled kernel
                                                            (.tiled_matmul), the tutorial's lesson

The route depends on the sizes, never on the thread count: the numbers are the same for any
thread count (a single gemm call and blocks of calls may round differently).

A batch of small matrices (attention's 256 products of 20 x 32 by 32 x 20) is one gemm call
per matrix in NumPy's matmul. On OpenBLAS's AVX-512 kernels that is as fast as it gets here
(.batched's register tile took 1.1-1.2x their time, one thread, busy machine); on its AVX2
ones (OPENBLAS_CORETYPE=Haswell, or an AVX2 machine) .batched, the whole batch in one
compiled call, took 0.6x (policy.BATCHED_KERNEL says which). Either runs in this thread:
Numba's pool would add its wake-up and the marshalling of the batch (15-40 us a product
here, up to a third of its time on one thread), and on a busy machine a 2-thread launch can
stall for milliseconds; hence the larger serial limit for batches. OpenBLAS runs a gemm of
at most 65,536 x 4 multiply-adds on the calling thread whatever its own thread count (its
threshold; this machine's first threaded one had twice that), so one such matrix, or NumPy's
batch of them (_OWN_THREAD), needs no hold of that count either. Setting it to one and back
cost more than the products at 2 threads (attention's QK^T forward and backward: 0.40
against 0.31 ms); in the small GPT's sampling loop it is 1-2 us on each of the projection's,
the lm head's and the shorter contexts' MLP products, whose gemm takes 4-8 us.

`matmul`, `addmm` and `matmul_and_sum` check their operands and follow the route; in the
"blas_blocks" route the gemm of each block also adds addmm's bias, and matmul_and_sum sums
a's rows as the gemm reads them. `product` is matmul for operands whose caller has already
checked the dtypes (the matmul op): small products go straight to np.matmul, which reports
bad shapes itself, and only the larger ones pay for the checks. `product_add` and
`product_and_sum` are addmm and matmul_and_sum likewise, for the linear op.
"""
import math

import numpy as np

from . import batched as _batch
from . import blas as _blas
from . import tiled_matmul as _tiled
from . import naive as _naive
from . import policy
from . import reference as _ref
from .checks import FLOATS, as_array, check_float, check_matmul_dtypes, check_matmul_shapes


# A batch of matrices stays in this thread up to this many times SERIAL_MATMUL_MAX_WORK (see
# above; 0 there sends every product to the pool, batches included)
SERIAL_BATCH_FACTOR = 4
_OWN_THREAD = 1 << 18   # multiply-adds per matrix that OpenBLAS never threads


# route's answers: (dtype, shapes, the thresholds) -> route. A plain dict: an lru_cache
# in front of the same lookup cost twice its 0.33 us a product (its key and recency list)
_routes = {}
_ROUTES_MAX = 4096   # shapes a program meets; past this (shapes varying without end) start over


def route(a, b):
    """The route of a @ b: "reference", "batched", "blas_serial", "blas_blocks" or "tiled"
    (see above)."""
    if policy.numpy_backend():
        return "reference"
    # Every product asks (three per matmul op), and working the route out from the sizes
    # took 0.8 us of CPU where the NumPy backend's answer above takes 0.1: remembered per
    # dtype, pair of shapes and thresholds (which tests change), it is one lookup
    key = (a.dtype, a.shape, b.shape, policy.PARALLEL_MIN_WORK,
           policy.SERIAL_MATMUL_MAX_WORK, policy.USE_BLAS, SERIAL_BATCH_FACTOR, _OWN_THREAD,
           policy.BATCHED_KERNEL)
    r = _routes.get(key)
    if r is None:
        if len(_routes) >= _ROUTES_MAX:
            _routes.clear()
        r = _routes[key] = _sized_route(*key)
    return r


def _sized_route(dtype, sa, sb, min_work, serial_max, use_blas, batch_factor, own_thread,
                 batched):
    """route() on the numba backend of operands of `dtype` and shapes sa, sb, given the
    thresholds. (The dtype itself, not its letter: a byte-swapped float32 is 'f' too, and
    goes to NumPy, which reads it.)"""
    if dtype not in FLOATS:
        return "reference"
    matrix = sa[-2] * sa[-1] * sb[-1]
    work, batch = matrix, len(sa) > 2 and len(sb) > 2
    if len(sa) > 2 or len(sb) > 2:
        work *= max(math.prod(sa[:-2]), math.prod(sb[:-2]))
        if batch:
            serial_max *= batch_factor
    if work < min_work or work == 0:
        return "reference"
    if not use_blas:
        return "tiled"
    if work >= serial_max:
        return "blas_blocks"
    if matrix > own_thread:
        return "blas_serial"
    if batch and batched:
        return "batched"
    # one matrix, or a batch of them, that OpenBLAS computes in this thread anyway: NumPy's
    # own call, without holding OpenBLAS's thread count (3-D times 2-D stays one flat call)
    return "reference" if batch or (len(sa) == 2 and len(sb) == 2) else "blas_serial"


def matmul(a, b, out=None):
    """np.matmul for a.ndim >= 2 and b.ndim >= 2, batch dims broadcast.

    `out`, if given, receives the result: an array of its shape and dtype, with any strides,
    sharing no memory with a or b. Where its matrices have contiguous rows or columns, the
    products are written through its strides (no copy): that is how a caller chooses the
    result's memory layout."""
    a, b = _check(a, b, out)
    return _run(route(a, b), a, b, out)


def _check(a, b, out):
    a, b = check_matmul_shapes("matmul", a, b)
    if a.ndim > 2 or b.ndim > 2:  # (not np.broadcast_shapes: 10 us, more than a small product)
        try:
            _blas.broadcast_batch(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: batch "
                             f"dimensions {a.shape[:-2]} and {b.shape[:-2]} do not "
                             f"broadcast") from None
    check_matmul_dtypes("matmul", a, b)
    if out is not None:
        _check_out("matmul", a, b, out)
    return a, b


def product(a, b, out=None):
    """matmul(a, b, out) for operands of one dtype (float or integer, as the caller has
    checked): np.matmul, which checks shapes itself, on the "reference" and "blas_serial"
    routes; matmul's checks, then the route, otherwise."""
    r = route(a, b)
    if r == "reference":
        return _ref.matmul(a, b, out)
    if r == "batched":
        return _batched(a, b, out)
    if r != "blas_serial":
        a, b = _check(a, b, out)
    return _run(r, a, b, out)


def _batched(a, b, out=None):
    """a @ b for float operands with batch dims (the "batched" route): .batched where B's
    rows are contiguous (or A's columns, for a C written by columns), NumPy's matmul
    otherwise (Q K^T, whose B is a transposed view: OpenBLAS's kernels for that form were
    faster than the tile of .batched, or of a dot-product variant of it, on this machine).
    The kernel reads and writes through the strides it is given, so the shapes are checked
    here (cheaply where they match: equal batch dims, `out` of the product's shape and
    dtype), and matmul's checks raise otherwise."""
    sa, sb = a.shape[:-2], b.shape[:-2]
    batch = sa
    if sa != sb or a.shape[-1] != b.shape[-2] or b.dtype != a.dtype:
        a, b = _check(a, b, out)   # raises, unless the batch dims broadcast
        batch = _blas.broadcast_batch(sa, sb)
    shape = batch + (a.shape[-2], b.shape[-1])
    if out is None:
        out = np.empty(shape, a.dtype)
    elif out.shape != shape or out.dtype != a.dtype or not out.flags.writeable:
        _check_out("matmul", a, b, out)
    known = _batch.plan(a, b, out, batch)
    if known is None:
        return _ref.matmul(a, b, out)
    return _batch.matmul(a, b, out, known)


def _run(r, a, b, out=None):
    if r == "reference":
        return _ref.matmul(a, b, out)
    if r == "batched":
        return _batched(a, b, out)
    if r == "blas_serial":
        return _blas.matmul_serial(a, b, out)
    if r == "blas_blocks":
        return _blas.matmul(a, b, out)
    c = _tiled.matmul(a, b)  # the tiled kernel writes C order only
    if out is None:
        return c
    out[...] = c
    return out


def _check_out(op, a, b, out):
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{op}: out must be a NumPy array, got {type(out).__name__}")
    shape = _blas.broadcast_batch(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    if out.shape != shape or out.dtype != a.dtype:
        raise ValueError(f"{op}: out has shape {out.shape} and dtype {out.dtype}; the product "
                         f"of {a.shape} by {b.shape} needs {shape} and {a.dtype}")
    if not out.flags.writeable:
        raise ValueError(f"{op}: out (shape {out.shape}) is read-only")
    if np.may_share_memory(out, a) or np.may_share_memory(out, b):
        raise ValueError(f"{op}: out (shape {out.shape}) shares memory with an operand")


def _check_2d(op, a, b):
    a, b = check_matmul_shapes(op, a, b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"{op}: expected 2-D operands, got shapes {a.shape} and {b.shape}")
    check_matmul_dtypes(op, a, b)
    return a, b


def addmm(bias, a, b):
    """bias + a @ b for a (M, K), b (K, N) and bias (N,) added to every row: PyTorch's addmm
    with beta = alpha = 1. In OpenBLAS's blocks the gemm adds the product to the bias."""
    a, b = _check_2d("addmm", a, b)
    bias = as_array(bias, "addmm", "bias")
    if bias.shape != (b.shape[1],):
        raise ValueError(f"addmm: bias of shape {bias.shape} does not match a product of "
                         f"{b.shape[1]} columns ({a.shape} @ {b.shape})")
    if bias.dtype != a.dtype:
        raise TypeError(f"addmm: bias dtype {bias.dtype} differs from the operands' {a.dtype}")
    r = route(a, b)
    if r == "blas_blocks":
        return _blas.addmm(bias, a, b)
    out = _run(r, a, b)
    out += bias
    return out


def product_add(bias, a, b, out=None):
    """addmm(bias, a, b) for operands whose caller has checked them (the linear op: 2-D, one
    dtype, a bias of the product's columns): the route without addmm's checks, which would
    repeat the op's (a small product's bias is added in place, the bits of addmm's). `out`:
    as product's, a C-contiguous array of the result's shape and dtype."""
    r = route(a, b)
    if r == "blas_blocks":
        return _blas.addmm(bias, a, b, out)
    out = _run(r, a, b, out)
    out += bias
    return out


def product_and_sum(a, b):
    """matmul_and_sum(a, b) for operands whose caller has checked them, as `product_add`."""
    r = route(a, b)
    if r == "blas_blocks":
        return _blas.matmul_and_sum(a, b)
    return _run(r, a, b), a.sum(axis=0)


def matmul_and_sum(a, b):
    """(a @ b, a.sum(axis=0)) for a (M, K), b (K, N): a linear layer's input gradient g W and
    bias gradient (the column sums of g). In OpenBLAS's blocks each block of a's rows is
    summed right after its gemm has read it."""
    a, b = _check_2d("matmul_and_sum", a, b)
    r = route(a, b)
    if r == "blas_blocks":
        return _blas.matmul_and_sum(a, b)
    return _run(r, a, b), a.sum(axis=0)


def matmul_naive(a, b, loop_order="ijk"):
    """a (M, K) @ b (K, N) by the plain Numba loops of .naive: the first step towards .tiled_matmul.

    loop_order "ijk" is the textbook loop (a dot product per output), "ikj" the same with the
    inner loops swapped (rows of b added to rows of the output). Always runs in Numba, for
    teaching and for the tests; `matmul` is the one to use.
    """
    a, b = check_matmul_shapes("matmul_naive", a, b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"matmul_naive: expected 2-D operands, got shapes {a.shape} and "
                         f"{b.shape}")
    check_float("matmul_naive", a, b)
    kernel = {"ijk": _naive.matmul_ijk, "ikj": _naive.matmul_ikj}.get(loop_order)
    if kernel is None:
        raise ValueError(f"matmul_naive: loop_order must be 'ijk' or 'ikj', got {loop_order!r}")
    c = np.empty((a.shape[0], b.shape[1]), a.dtype)
    kernel(np.ascontiguousarray(a), np.ascontiguousarray(b), c)
    return c
