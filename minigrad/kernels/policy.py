"""The kernels' policy: which backend runs, from what size the thread pool is used, and the
one floating-point setting the Numba kernels compile with.

Backends. "numba" (the default; environment variable MINIGRAD_BACKEND) runs the Numba
kernels, "numpy" the plain NumPy references of .reference. Both give the same results up to
float rounding, and the identical dropout mask. `set_backend` switches for the process.

Thresholds (module attributes, read at every call, so a test may change them):

    PARALLEL_MIN_WORK       below this much work (multiply-adds for a product, elements
                            otherwise) the "numba" backend keeps out of the thread pool:
                            waking a parallel kernel's threads costs more than the work, and
                            on a loaded machine a 2-thread launch can stall for milliseconds.
                            Row and element kernels then run their serial compiled twin; so
                            they do at any size when Numba has one thread (`parallel`).
    SERIAL_MATMUL_MAX_WORK  float products below this many multiply-adds (and at least
                            PARALLEL_MIN_WORK) are one OpenBLAS call in the calling thread.
    USE_BLAS                float products go to NumPy's OpenBLAS (one thread per call, inside
                            Numba's pool: .blas); False (no OpenBLAS found, MINIGRAD_NO_BLAS=1,
                            or a test of the tiled kernel) sends them to the tiled kernel.
    BATCHED_KERNEL          batches of small float products go to .batched's compiled loop,
                            not to NumPy's matmul (one OpenBLAS call per product): True unless
                            OpenBLAS runs its AVX-512 kernels, which were as fast here.

How a product picks among these is `kernels.products.route`, with its table.

Floating point, for every kernel: no `fastmath=True`. It lets LLVM assume that no value is
NaN or infinite, and a kernel compiled that way may return a finite number where NumPy
returns NaN, or drop softmax's -inf masking. Kernels that sum along a row compile with
FASTMATH, which only allows reordering the additions (so LLVM can vectorise the sum, with
partial sums in SIMD lanes) and fusing a multiply with an add: results then differ from
NumPy by rounding alone, and NaN and infinity keep their meaning.
"""
import contextlib
import gc
import os
import types

import numba
from numba.np.ufunc import parallel as _pool

from . import openblas as _openblas

FASTMATH = {"reassoc", "contract"}   # a set, as Numba requires

# The options of a helper: a compiled function that only other compiled functions call, never
# Python. Numba would build a CPython entry point (and a C one) for each function it compiles;
# a helper needs neither, and compiles in about a third less time without them. (A kernel's
# cached machine code holds its helpers, so a warm cache never loads them on their own.)
# Python cannot call a helper: the call crashes the interpreter, so a function that a test
# calls directly keeps the plain options.
HELPER = dict(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)

# The options of a helper that its callers take in whole, at the level of Numba's own IR
# (`inline="always"`): it is then no compilation of its own at all, where even a HELPER costs
# a tenth of a second or more (typing, LLVM's passes and machine code, a cache file), and LLVM
# optimises and emits its code once, in the caller, rather than once for itself and again in
# every caller. Only for a helper whose floating-point flags are its caller's: the inlined code
# is compiled with the caller's (a helper without FASTMATH inlined into a FASTMATH caller could
# see its multiplies and adds fused), so a FASTMATH helper called from plain code, or the
# reverse, stays a HELPER.
INLINE = dict(cache=True, inline="always")

# The option of a compiled function that allocates no array and returns none, such as the
# blocks of .driver_blocks, its kernel, Adam's pass and the embedding's scatter-add: no reference
# counting (`_nrt`). Numba increments and decrements an array's count at each view taken and
# dropped: a quarter of the LLVM IR it lowers for these functions, which LLVM then mostly
# removes again. Every array they see is held by their Python caller for the whole call, so
# there is nothing to count; a function that allocates an array or returns one fails to
# compile without it, so this cannot go wrong silently. (NumPy's error model, which drops the
# check of each divisor, saved less than 1 % of the IR of the block functions and made
# attention's masked softmax 6 % slower: not used there.)
NO_COUNTING = dict(_nrt=False)



@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off inside the block, and as it was after.

    Compiling is Numba's Python code (its IR, type inference, lowering, the LLVM IR as text)
    allocating millions of objects, so the collector runs thousands of times during a compile
    and its older generations walk all of Numba's, NumPy's and the program's objects each time:
    about 1 of 8.5 CPU seconds of a cold first step. The compile's cycles are freed by the
    collector's next pass after the block instead."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

def twins(loop, name, **options):
    """(parallel, serial): `loop` compiled with its `prange` spread over Numba's threads, and
    compiled again as a plain loop in the calling thread (there prange is range), for work too
    small to wake the pool. One source, so the two run the same compiled row code and agree
    bit for bit. The copies are named `name` and `name + "_serial"`: Numba names its cache
    files after a function's qualified name and line, and two kernels sharing both would
    share a cache index."""
    pair = []
    for suffix, parallel_ in (("", True), ("_serial", False)):
        fn = types.FunctionType(loop.__code__, loop.__globals__, name + suffix,
                                loop.__defaults__, loop.__closure__)
        fn.__qualname__, fn.__doc__ = name + suffix, loop.__doc__
        pair.append(numba.njit(parallel=parallel_, cache=True, no_cfunc_wrapper=True,
                               **options)(fn))
    return tuple(pair)


BACKENDS = ("numba", "numpy")

PARALLEL_MIN_WORK = 32768
# 2^22, not 2^21: the small GPT's 64 -> 64 projections (512 x 64 x 64 = 2^21) are as fast in
# two blocks on two quiet threads as in one call, but on one thread the blocks' fixed cost
# (addresses, the blocks' integers, the pool's dispatch) made them 25 us slower (77 against
# 52 us), and on a busy machine the pool's launch stalled for milliseconds
SERIAL_MATMUL_MAX_WORK = 2**22
USE_BLAS = _openblas.available()
BATCHED_KERNEL = not _openblas.avx512_kernels()


def _check_backend(name, where):
    if name not in BACKENDS:
        raise ValueError(f"{where}: unknown kernel backend {name!r}; "
                         f"choose one of {', '.join(map(repr, BACKENDS))}")
    return name


_backend = _check_backend(os.environ.get("MINIGRAD_BACKEND", "numba"), "MINIGRAD_BACKEND")


def set_backend(name):
    """Use "numba" (Numba kernels) or "numpy" (the NumPy references)."""
    global _backend
    _backend = _check_backend(name, "set_backend")


def get_backend():
    """The backend in use: "numba" or "numpy"."""
    return _backend


def numpy_backend():
    """Whether the NumPy references run (the "numpy" backend)."""
    return _backend == "numpy"


def num_threads():
    """numba.get_num_threads(), read without its two locks once the pool is up.

    Numba's function takes a process lock and a thread lock at every call, to start the pool
    if it has not started: several times the cost of reading the count, and the kernels' entry
    points ask at every call. Once the pool is up, Numba keeps its reader as a module
    attribute (private: if a later Numba drops it, or it reports no threads, this is Numba's
    public function and its errors)."""
    read = getattr(_pool, "_get_num_threads", None)
    n = read() if read is not None else 0
    return n if n > 0 else numba.get_num_threads()


def parallel(size):
    """Whether work of `size` runs in the thread pool: at least PARALLEL_MIN_WORK, and more
    than one thread to share it (with one thread, launching the pool is pure overhead: 20 us
    more per batched product of attention's shapes). A threshold of 0 always uses the pool,
    whatever the thread count: the tests' way to run the parallel kernels."""
    if size < PARALLEL_MIN_WORK:
        return False
    return PARALLEL_MIN_WORK == 0 or num_threads() > 1


def pick(kernels, size):
    """The parallel kernel of a (parallel, serial) pair, or the serial one (see `parallel`)."""
    return kernels[0] if parallel(size) else kernels[1]
