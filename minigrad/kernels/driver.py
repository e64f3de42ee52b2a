"""The entry points of the one parallel kernel of .driver_blocks, and its compiling.

Each entry point takes a kernel's own arguments (layer norm's x, weight, bias and eps, say),
puts them in the places of the kernel's arguments (.driver_blocks lists them), and runs
the kernel, `run` in Numba's threads (one share per thread) or `run_serial` in the calling
thread.

On an empty cache the first call for a dtype compiles the two block functions in two
processes: a worker (.compile_worker) compiles _fast_block into Numba's cache while this one
compiles _block and the kernel, then loads _fast_block from there (the same machine code).
"""
import numba
import numpy as np
from numba import types

from . import compile_worker
from .adam import adam_flat, adam_signature
from .driver_blocks import (ADAM, AMSGRAD, BACKWARD, CROSS_ENTROPY, DROP, ELEMENTWISE, GEMM, L2,
                            LAYER_NORM, LAYER_NORM_BACKWARD, MASKED, MASKED_SOFTMAX, MOVE,
                            RESIDUAL, _UNIT, _block, _fast_block, run, run_serial)
from .dropout_kernels import _BLOCK
from .layernorm import sum_chunks
from .policy import collector_paused, num_threads
from .softmax_kernels import _BLOCK_ELEMENTS

_compiled = {}   # dtype -> what _call needs (see _compile)
_adam = {}       # dtype -> adam_flat's address
_NO_KEY = np.uint64(0)


def _signature(dtype):
    """The block functions' signature for dtype (the kernel's too: its arguments are theirs)."""
    t = numba.from_dtype(dtype)
    return types.none(*(types.int64,) * 5, *(types.Array(t, 2, "C"),) * 7,
                      types.Array(types.boolean, 2, "C"), types.Array(types.int64, 1, "C"),
                      types.Array(types.float64, 1, "C"), types.uint64, types.uint64, t,
                      types.float64)


def _address(fn, sig):
    res = fn.get_compile_result(sig)
    return res.library.get_pointer_to_function(res.fndesc.llvm_func_name)


def compile_fast_block(dtype):
    """_fast_block compiled for the dtype named, into Numba's cache: a compile worker's part."""
    _fast_block.get_compile_result(_signature(np.dtype(dtype)))


def _compile(dtype, kernel):
    """(addresses of _block and _fast_block compiled for dtype, empty arrays for the unused
    places: the 2-D array tuples of each length that fill a.. g up, a mask, ints, vec; and 1
    in dtype, the scale of no dropout). On an empty cache a worker process compiles
    _fast_block meanwhile (.compile_worker), and this one _block and `kernel` (run or
    run_serial, which the first call will use)."""
    sig = _signature(dtype)
    with collector_paused():
        worker = None
        if not (compile_worker.cached(_fast_block, sig)
                or compile_worker.cached(_block, sig)):
            # (the kernels import nothing else from minigrad: the worker skips minigrad's
            # __init__)
            worker = compile_worker.start(__name__, "compile_fast_block", np.dtype(dtype).name,
                                          bare=__name__.partition(".")[0])
        try:
            block = _address(_block, sig)
            if worker is not None:
                kernel.compile(sig.args)
        except BaseException:   # (an interrupt, say: the worker's part is no longer wanted)
            compile_worker.stop(worker)
            raise
        compile_worker.finish(worker)
        fast = _address(_fast_block, sig)   # from the worker's cache entry, if it made one
    empty = np.empty((0, 0), dtype)
    return (block, fast, tuple((empty,) * (7 - n) for n in range(8)),
            np.empty((0, 0), np.bool_), np.empty(0, np.int64), np.empty(0, np.float64),
            dtype.type(1))


def _call(parallel, op, flags, nblk, dtype, arrays, allowed=None, ints=None, vec=None,
          key=_NO_KEY, threshold=_NO_KEY, scale=None, eps=0.0, fast=False, to=None):
    """run (or run_serial) of op, by _fast_block alone if `fast`, with `arrays` in places a..
    and empty arrays in the others; `to`: the address _block hands the op to, if not
    _fast_block's."""
    kernel = run if parallel else run_serial
    c = _compiled.get(dtype)
    if c is None:
        c = _compiled[dtype] = _compile(dtype, kernel)
    a, b, cc, d, e, f, g = arrays + c[2][len(arrays)]
    kernel(c[1] if fast else c[0], c[1] if to is None else to, op, flags, nblk, a, b, cc, d, e,
           f, g, c[3] if allowed is None else allowed, c[4] if ints is None else ints,
           c[5] if vec is None else vec, key, threshold, c[6] if scale is None else scale, eps)


def _shares(parallel, units):
    """How many calls of the block functions for work of `units` blocks: one per thread (the
    prange loop gives each thread an equal run of calls anyway, and each call has a cost),
    or one in the calling thread."""
    return min(num_threads(), units) if parallel and units > 1 else 1


def masked_softmax_dropout(parallel, backward, a, b, allowed, masked, key, threshold, scale,
                           drop, out1, out2):
    """Forward: out1 = softmax of a's rows masked to -inf where not `allowed` (if masked),
    out2 = its dropout (if drop; b unused). Backward: a = y, b = the gradient, out1 = dx."""
    rows = max(1, _BLOCK_ELEMENTS // max(a.shape[1], 1))   # as _block_rows
    flags = BACKWARD * backward | MASKED * masked | DROP * drop
    _call(parallel, MASKED_SOFTMAX, flags, _shares(parallel, -(-a.shape[0] // rows)), a.dtype,
          (a, b, out1, out2), allowed=allowed, key=key, threshold=threshold, scale=scale)


def dropout_add_layer_norm_numba(x, s, key, threshold, scale, weight, bias, eps, parallel=True):
    """layer_norm_numba(x + dropout(s)) for x, s (N, D); dropout by (key, threshold, scale)
    of .dropout_kernels over the flat index of s. Returns (y, x_hat, rstd (N, 1))."""
    x, s = np.ascontiguousarray(x), np.ascontiguousarray(s)
    return _layer_norm(x, s, RESIDUAL, key, threshold, scale, weight, bias, eps, parallel)


def layer_norm_numba(x, weight, bias, eps, parallel=True):
    """x (N, D) -> (y, x_hat, rstd (N, 1)); weight and bias (D,) or None.

    parallel=False runs the rows in the calling thread (for small inputs)."""
    x = np.ascontiguousarray(x)
    return _layer_norm(x, x, 0, _NO_KEY, _NO_KEY, None, weight, bias, eps, parallel)


def _layer_norm(x, s, flags, key, threshold, scale, weight, bias, eps, parallel):
    n, d = x.shape
    w = np.ones(d, x.dtype) if weight is None else np.ascontiguousarray(weight, dtype=x.dtype)
    b = np.zeros(d, x.dtype) if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    y = np.empty((n, d), x.dtype)   # (x is C-contiguous: empty_like's layout, less work)
    xhat = np.empty((n, d), x.dtype)
    rstd = np.empty((n, 1), x.dtype)
    _call(parallel, LAYER_NORM, flags, _shares(parallel, -(-n // _BLOCK)), x.dtype,
          (x, s, w.reshape(1, d), b.reshape(1, d), y, xhat, rstd), key=key,
          threshold=threshold, scale=scale, eps=float(eps), fast=not flags)
    return y, xhat, rstd


def layer_norm_backward_numba(g, xhat, rstd, weight, parallel=True, chunks=None):
    """(dx, dweight, dbias) for g, x_hat (N, D), rstd (N, 1), weight (D,) or None.

    The weight and bias gradients are summed in `chunks` partial sums of as many shares of
    the rows (by default .layernorm's sum_chunks(N), whatever the threads), then added in
    order; parallel=False runs in the calling thread."""
    dx, _, dw, db = _layer_norm_backward(g, xhat, rstd, weight, parallel, chunks, None)
    return dx, dw, db


def layer_norm_dropout_backward_numba(g, xhat, rstd, weight, key, threshold, scale,
                                      parallel=True):
    """(dx, dropout(dx), dweight, dbias): layer_norm_backward_numba's, and dx dropped by
    (key, threshold, scale) of .dropout_kernels over its flat index, in the same pass over
    the rows. The bits of the two kernels one after the other."""
    return _layer_norm_backward(g, xhat, rstd, weight, parallel, None,
                                (key, threshold, scale))


def _layer_norm_backward(g, xhat, rstd, weight, parallel, chunks, mask):
    g = np.ascontiguousarray(g, dtype=xhat.dtype)
    n, d = g.shape
    w = np.ones(d, g.dtype) if weight is None else np.ascontiguousarray(weight, dtype=g.dtype)
    chunks = max(1, min(sum_chunks(n) if chunks is None else chunks, n))
    sums = np.zeros((chunks, 2, d), g.dtype)   # each share's weight and bias gradients
    dx = np.empty((n, d), g.dtype)
    arrays = (g, np.ascontiguousarray(xhat), np.ascontiguousarray(rstd), w.reshape(1, d), dx,
              sums.reshape(2 * chunks, d))
    if mask is None:
        ds = None
        _call(parallel, LAYER_NORM_BACKWARD, 0, chunks, g.dtype, arrays, fast=True)
    else:
        ds = np.empty((n, d), g.dtype)
        _call(parallel, LAYER_NORM_BACKWARD, DROP, chunks, g.dtype, arrays + (ds,),
              key=mask[0], threshold=mask[1], scale=mask[2])
    if chunks == 1:   # nothing to add up: skip the two reductions and their temporaries
        return dx, ds, sums[0, 0], sums[0, 1]
    # (ndarray.sum's own reduction, without its Python wrapper: the same bits)
    return dx, ds, np.add.reduce(sums[:, 0], axis=0), np.add.reduce(sums[:, 1], axis=0)


def cross_entropy(parallel, backward, x, target, eps, stats, vec, dx):
    """The rows of .crossentropy: forward, losses into vec (dx unused); backward, dx from the
    row weights vec."""
    _call(parallel, CROSS_ENTROPY, BACKWARD * backward, _shares(parallel, x.shape[0]), x.dtype,
          (x, stats, dx), ints=target, vec=vec, eps=eps, fast=True)


def elementwise(parallel, kind, a, b, out, key, threshold, scale):
    """.dropout_kernels's element-wise op `kind` on flat arrays a, b into out."""
    n = out.size
    _call(parallel, ELEMENTWISE, kind, _shares(parallel, -(-n // _UNIT)), out.dtype,
          (a.reshape(1, n), b.reshape(1, n), out.reshape(1, n)), key=key, threshold=threshold,
          scale=scale)


def adam_parallel(p, g, m, v, vmax, decay, l2, wd, c1, beta2, c2, eps_c, inv_step, move,
                  amsgrad):
    """.adam's adam_flat on 1-D arrays, chunks of the elements shared among Numba's threads
    (vmax has p's size even without amsgrad: the caller passes v). Each element's arithmetic
    is adam_flat's, so are the bits."""
    n = p.size
    flags = L2 * bool(l2) | MOVE * bool(move) | AMSGRAD * bool(amsgrad)
    vec = np.array((decay, wd, c1, beta2, c2, eps_c, inv_step), np.float64)
    address = _adam.get(p.dtype)
    if address is None:
        with collector_paused():
            address = _adam[p.dtype] = _address(adam_flat, adam_signature(p.dtype))
    _call(True, ADAM, flags, _shares(True, -(-n // _UNIT)), p.dtype,
          tuple(x.reshape(1, n) for x in (p, g, m, v, vmax)), vec=vec, to=address)


def gemm_blocks(nblk, C, bias, rows, sums, ints):
    """.blas's 2-D product in nblk blocks shared among Numba's threads (see .blas)."""
    _call(True, GEMM, 0, nblk, C.dtype, (C, bias, rows, sums), ints=ints)
