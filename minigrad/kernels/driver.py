"""One parallel kernel, and its serial twin, for the row and element kernels of a training step.

Numba compiles a `parallel=True` kernel at a fixed cost of 0.5-0.8 CPU seconds, however short
its loop: the loop body becomes a second compiled function, with a gufunc wrapper and C and
CPython entry points, and LLVM optimises and emits each. And a compiled function that calls
another has the callee's code linked into its own, where LLVM optimises it and emits machine
code for it again: a kernel calling a helper calling a helper paid for the innermost one three
times. A training step used seven parallel kernels, over helpers three deep.

So the row and element kernels (attention's masked softmax, layer norm, cross entropy, the
element-wise dropout ops, Adam on a large parameter) and the blocks of .blas's products are
functions of a share of the rows or elements (or of a block of a product), gathered in two
block functions: `_block`, compiled plainly, and `_fast_block`, compiled with FASTMATH (the
sums of softmax, layer norm and cross entropy, which may be reordered; the dropout multiplies
and Adam's arithmetic may not, see .policy).
Each has one signature for every op, so each is compiled once per dtype. The kernel is

    for k in prange(nblk):
        share k of op        (by _block, which calls _fast_block for its FASTMATH part;
                              or by _fast_block alone)

and it calls the block function through its address (`_call_at`), a call the compiler cannot
see into: the block's code is compiled once, on its own, not again inside the kernel.
`run_serial` is the same loop in the calling thread (for inputs too small to wake the thread
pool): the same compiled blocks, so the same bits. The arguments, those an op does not use
being empty arrays:

    block, fast     the addresses of the block function to run and of _fast_block (for
                    ADAM, of .adam's adam_flat, compiled on its own: Python calls it too)
    op, flags       which kernel (the constants below), and its options as bits
    nblk            the number of shares (blocks, for GEMM)
    a .. g          C-contiguous 2-D arrays of the dtype (a 1-D array goes as a (1, n) view)
    allowed         attention's mask, (rows, n) bool
    ints            int64: cross entropy's targets (N,); a product's gemm and integers
    vec             float64: cross entropy's losses or row weights; Adam's scalars
    key, threshold  uint64: the dropout mask (.dropout_kernels)
    scale           of the dtype: the dropout scale
    eps             float64: layer norm's or label smoothing's epsilon

The entry points below take the kernels' own arguments and put them in these places.

On an empty cache the first call for a dtype compiles the two block functions in two
processes: a worker (.compile_worker) compiles _fast_block into Numba's cache while this one
compiles _block and the kernel, then loads _fast_block from there (the same machine code).
"""
import numba
import numpy as np
from numba import njit, prange, types
from numba.core import errors
from numba.core.extending import intrinsic

from . import compile_worker
from .adam import adam_flat, adam_signature
from .crossentropy import _backward_row as _cross_entropy_backward
from .crossentropy import _forward_row as _cross_entropy_forward
from .dropout_kernels import (_BLOCK, COPY, DROPOUT, FILL_MASKED, ZERO_MASKED, _dropout_add_rows,
                              _elements)
from .layernorm import _backward_rows, _forward_rows, sum_chunks
from .openblas import gemm_block as _gemm_block
from .policy import (FASTMATH, HELPER, INLINE, NO_COUNTING, collector_paused, num_threads,
                     twins)
from .softmax_kernels import (_BLOCK_ELEMENTS, _block_rows, _softmax_backward_row,
                              _softmax_block)
from .views import flat

MASKED_SOFTMAX, LAYER_NORM, LAYER_NORM_BACKWARD, CROSS_ENTROPY, ELEMENTWISE, ADAM, GEMM = range(7)
BACKWARD, MASKED, DROP, RESIDUAL = 1, 2, 4, 8          # flags
L2, MOVE, AMSGRAD = 1, 2, 4                            # Adam's flags
_UNIT = 64   # shares of elements start at multiples of this (whole cache lines)
#   MASKED_SOFTMAX       forward: softmax of a's rows (-inf where not allowed, if MASKED) into c,
#                        dropped (if DROP) into d. BACKWARD: a = y, b = its gradient, dx into c
#                        (the softmax gradient of dropout(b), 0 where not allowed).
#   LAYER_NORM           a's rows (if RESIDUAL, a + dropout(b), written into e first: the
#                        post-norm residual connection in one pass over memory, bit for bit the
#                        separate dropout, add and layer norm) normalised: weight c[0], bias
#                        d[0], y into e, x_hat into f, rstd into g (N, 1).
#   LAYER_NORM_BACKWARD  gradient a, x_hat b, rstd c, weight d[0]: dx into e; share k's rows
#                        add their weight and bias gradients into f[2k] and f[2k + 1]. DROP:
#                        dropout(dx) into g too, each share's as soon as its dx is written
#                        (the gradient of a post-norm residual connection's branch).
#   CROSS_ENTROPY        logits a, stats b (N, 2); forward: losses into vec; BACKWARD: row
#                        weights vec, dx into c.
#   ELEMENTWISE          .dropout_kernels's op `flags` on a[0], b[0] into c[0].
#   ADAM                 .adam's adam_flat on p a[0], g b[0], m c[0], v d[0], vmax e[0] with
#                        vec's scalars.
#   GEMM                 block k of .blas's 2-D product into a: bias b[0], rows c[0], sums d;
#                        the gemm's and each block's integers in ints (.blas's _blocks).
# Each call but GEMM's does share k of nblk near-equal shares of the rows or elements, as one
# per thread (each call copies its arguments and counts references to the arrays), in the
# blocks of rows that keep the work in cache: _block_rows(n) rows of attention's scores,
# .dropout_kernels's _BLOCK rows of layer norm.


@intrinsic
def _call_at(typingctx, address, args):
    """Call the function compiled by Numba (its own calling convention, returning nothing) at
    `address` with the members of the tuple `args`. The arrays must be C-contiguous, as the
    callee was compiled for them; what the callee raises is lost (the blocks raise nothing:
    the checks are Python's)."""
    if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
        return None
    for t in args.types:
        if isinstance(t, types.Array) and t.layout != "C":
            raise errors.TypingError(f"driver: a {t} where the blocks take C-contiguous arrays")

    def codegen(context, builder, sig, llargs):
        argtys = sig.args[1].types
        values = [builder.extract_value(llargs[1], i) for i in range(len(argtys))]
        fnty = context.call_conv.get_function_type(types.none, argtys)
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        context.call_conv.call_function(builder, fn, types.none, argtys, values)
        return context.get_dummy_value()
    return types.none(address, args), codegen


@njit(**INLINE)
def _share(k, nblk, n, unit):
    """(lo, hi): the k-th of nblk near-equal shares of range(n), cut at multiples of unit."""
    per = ((n + unit - 1) // unit + nblk - 1) // nblk * unit
    lo, hi = k * per, (k + 1) * per
    return (lo if lo < n else n), (hi if hi < n else n)


@njit(fastmath=FASTMATH, **HELPER, **NO_COUNTING)
def _fast_block(fast, op, flags, k, nblk, a, b, c, d, e, f, g, allowed, ints, vec, key,
                threshold, scale, eps):
    """The FASTMATH part of share k of op (all of it for layer norm without RESIDUAL, its
    backward pass and cross entropy)."""
    # one share for every op: each place an inlined function is called from compiles a copy
    # of it (layer norm's backward pass, in shares of single rows, adds share k's rows into
    # its partial sums f[k] and g[k])
    rows = (_block_rows(a.shape[1]) if op == MASKED_SOFTMAX
            else _BLOCK if op == LAYER_NORM else 1)
    lo, hi = _share(k, nblk, a.shape[0], rows)
    if op == MASKED_SOFTMAX:
        if flags & BACKWARD:
            for i in range(lo, hi):
                _softmax_backward_row(a[i], c[i], c[i])
        else:
            for r in range(lo, hi, rows):
                _softmax_block(c, c, r, r + rows if r + rows < hi else hi)
    elif op == LAYER_NORM:
        # (with RESIDUAL, _block passes y (e) as a: it holds a + dropout(b), each row read
        # before its y is written)
        _forward_rows(a, c[0], d[0], a.dtype.type(eps), e, f, g, lo, hi)
    elif op == LAYER_NORM_BACKWARD:
        _backward_rows(a, b, c, d[0], e, f[2 * k], f[2 * k + 1], lo, hi)
    elif op == CROSS_ENTROPY:
        # (the row functions called from here, not from a function of rows inlined in turn:
        # each level of inlining copies all the code below it again)
        backward = (flags & BACKWARD) != 0
        for i in range(lo, hi):
            if backward:
                _cross_entropy_backward(a[i], ints[i], b[i, 0], b[i, 1], vec[i], eps, c[i])
            else:
                vec[i] = _cross_entropy_forward(a[i], ints[i], eps, b[i])


# The element passes of _block, around the FASTMATH part (FAST): kind * 100 + source * 10 +
# output, a kind of .dropout_kernels on the arrays numbered a = 0 .. g = 6 (x2 always b)
FAST, NONE = -1, -2


@njit(**HELPER, **NO_COUNTING)
def _block(fast, op, flags, k, nblk, a, b, c, d, e, f, g, allowed, ints, vec, key, threshold,
           scale, eps):
    """Share k of op (block k of a product): its plain loops, and _fast_block (at address
    `fast`) for the rest."""
    args = (fast, op, flags, k, nblk, a, b, c, d, e, f, g, allowed, ints, vec, key, threshold,
            scale, eps)
    if op == GEMM:
        _gemm_block(k, ints, a, b[0], c[0], d)
        return
    # one share for every op (see _fast_block): of elements, or of whole rows
    n = a.shape[1]
    flat_op = op == ELEMENTWISE or op == ADAM
    lo, hi = _share(k, nblk, c.shape[1] if flat_op else a.shape[0],
                    _UNIT if flat_op else _BLOCK if op == LAYER_NORM
                    else 1 if op == LAYER_NORM_BACKWARD else _block_rows(n))
    if (op == ELEMENTWISE or op == LAYER_NORM or op == MASKED_SOFTMAX
            or op == LAYER_NORM_BACKWARD):
        # the element passes of attention and of the element-wise ops go through one call of
        # _elements below, so that its loops are compiled once
        if op == ELEMENTWISE:
            passes = (flags * 100 + 2, NONE, NONE)
        else:   # shares of whole rows, as elements
            if op == LAYER_NORM:         # (RESIDUAL) e = a + dropout(b), then normalised
                _dropout_add_rows(a, b, e, key, threshold, scale, lo, hi)
                passes = (FAST, NONE, NONE)
            elif op == LAYER_NORM_BACKWARD:  # dx into e, then g = dropout(e) (DROP)
                passes = (FAST, DROPOUT * 100 + 46 if flags & DROP else NONE, NONE)
            elif flags & BACKWARD:       # c = dropout(b), its softmax gradient, 0 where masked
                passes = ((DROPOUT if flags & DROP else COPY) * 100 + 12, FAST,
                          ZERO_MASKED * 100 + 22 if flags & MASKED else NONE)
            else:                        # c = a masked, its softmax, d = dropout(c)
                passes = ((FILL_MASKED if flags & MASKED else COPY) * 100 + 2, FAST,
                          DROPOUT * 100 + 23 if flags & DROP else NONE)
            lo, hi = lo * n, hi * n
        arrays = (a, b, c, d, e, f, g)
        for p in passes:
            if p == FAST:
                if op == LAYER_NORM:   # normalise e (one loop in _fast_block, whatever the
                    # source; not x_hat (f) in place: a loop writing the array it reads, through
                    # an array LLVM cannot tell is the same, fails the overlap check that guards
                    # its vector code, and runs scalar)
                    _call_at(fast, (fast, op, flags, k, nblk, e, b, c, d, e, f, g, allowed,
                                    ints, vec, key, threshold, scale, eps))
                else:
                    _call_at(fast, args)
            elif p != NONE:
                _elements(p // 100, arrays[p // 10 % 10], b, arrays[p % 10], allowed, key,
                          threshold, scale, lo, hi)
    elif op == ADAM:   # (`fast`: adam_flat's address, for .adam's adam_signature)
        _call_at(fast, (flat(a, lo, hi), flat(b, lo, hi), flat(c, lo, hi), flat(d, lo, hi),
                        flat(e, lo, hi), vec[0], (flags & L2) != 0, vec[1], vec[2], vec[3],
                        vec[4], vec[5], vec[6], (flags & MOVE) != 0, (flags & AMSGRAD) != 0))
    else:
        _call_at(fast, args)


def _loop(block, fast, op, flags, nblk, a, b, c, d, e, f, g, allowed, ints, vec, key,
          threshold, scale, eps):
    for k in prange(nblk):
        # (k signed in both twins: prange counts unsigned)
        _call_at(block, (fast, op, flags, np.int64(k), nblk, a, b, c, d, e, f, g, allowed, ints,
                         vec, key, threshold, scale, eps))


run, run_serial = twins(_loop, "run", **NO_COUNTING)

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
    return _layer_norm(x, x, 0, np.uint64(0), np.uint64(0), None, weight, bias, eps, parallel)


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
