"""One parallel kernel, and its serial twin, for the row and element kernels of a training step.

Numba compiles a `parallel=True` kernel at a fixed cost of 0.5-0.8 CPU seconds, however short
its loop: the loop body becomes a second compiled function, with a gufunc wrapper and C and
CPython entry points, and LLVM optimises and emits each. A training step used seven such
kernels. So the row and element kernels share this one: each is a function of a block of
rows or elements (in .softmax_kernels, .layernorm, .crossentropy, .dropout_kernels, .adam),
and the kernel is the loop

    for k in prange(nblk):
        block k of op

with one signature for every op, so that it is compiled once per dtype. `run_serial` is the
same loop in the calling thread (for inputs too small to wake the thread pool): the same
compiled blocks, so the same bits. The arguments, those an op does not use being empty:

    op, flags       which kernel (the constants below), and its options as bits
    nblk            the number of blocks
    a .. g          C-contiguous 2-D arrays of the dtype (a 1-D array goes as a (1, n) view)
    allowed         attention's mask, (rows, n) bool
    ints            int64 (N,): cross entropy's targets
    vec             float64: cross entropy's losses or row weights; Adam's scalars
    key, threshold  uint64: the dropout mask (.dropout_kernels)
    scale           of the dtype: the dropout scale
    eps             float64: layer norm's or label smoothing's epsilon

The entry points below take the kernels' own arguments and put them in these places.
"""
import numba
import numpy as np
from numba import njit, prange, types
from numba.core import errors
from numba.core.extending import intrinsic

from .adam import _CHUNK as _ADAM_CHUNK
from .adam import adam_flat
from .crossentropy import _rows as _cross_entropy_rows
from .dropout_kernels import _BLOCK, _CHUNK, _chunk
from .layernorm import _backward_chunk, _forward_block
from .policy import HELPER, INLINE, twins
from .softmax_kernels import _BLOCK_ELEMENTS, _block_rows, _masked_block

MASKED_SOFTMAX, LAYER_NORM, LAYER_NORM_BACKWARD, CROSS_ENTROPY, ELEMENTWISE, ADAM = range(6)
BACKWARD, MASKED, DROP, RESIDUAL = 1, 2, 4, 8          # flags
L2, MOVE, AMSGRAD = 1, 2, 4                            # Adam's flags
#   MASKED_SOFTMAX       forward: softmax of a's rows (-inf where not allowed, if MASKED) into c,
#                        dropped (if DROP) into d. BACKWARD: a = y, b = its gradient, dx into c.
#                        Blocks of _block_rows(n) rows.
#   LAYER_NORM           a's rows (a + dropout(b), if RESIDUAL) normalised: weight c[0], bias
#                        d[0], y into e, x_hat into f, rstd into g (N, 1). Blocks of 16 rows.
#   LAYER_NORM_BACKWARD  gradient a, x_hat b, rstd c, weight d[0]: dx into e; block k's rows
#                        (nblk blocks of rows) add their weight and bias gradients into f[k]
#                        and g[k].
#   CROSS_ENTROPY        logits a, stats b (N, 2); forward: losses into vec; BACKWARD: row
#                        weights vec, dx into c. One row per block.
#   ELEMENTWISE          .dropout_kernels's op `flags` on a[0], b[0] into c[0]. Blocks of
#                        _CHUNK elements.
#   ADAM                 .adam's adam_flat on p a[0], g b[0], m c[0], v d[0], vmax e[0] with
#                        vec's scalars. Blocks of _ADAM_CHUNK elements.


@njit(**INLINE)
def _end(lo, size, n):
    hi = lo + size
    return hi if hi < n else n


@njit(**HELPER)
def _block(op, flags, k, nblk, a, b, c, d, e, f, g, allowed, ints, vec, key, threshold, scale,
           eps):
    if op == MASKED_SOFTMAX:
        rows = _block_rows(a.shape[1])
        lo = k * rows
        _masked_block((flags & BACKWARD) != 0, a, b, allowed, (flags & MASKED) != 0, key,
                          threshold, scale, (flags & DROP) != 0, c, d, lo,
                          _end(lo, rows, a.shape[0]))
    elif op == LAYER_NORM:
        lo = k * _BLOCK
        _forward_block(a, b, (flags & RESIDUAL) != 0, key, threshold, scale, c[0], d[0],
                           a.dtype.type(eps), e, f, g, lo, _end(lo, _BLOCK, a.shape[0]))
    elif op == LAYER_NORM_BACKWARD:
        _backward_chunk(a, b, c, d[0], e, f, g, k, (a.shape[0] + nblk - 1) // nblk)
    elif op == CROSS_ENTROPY:
        _cross_entropy_rows((flags & BACKWARD) != 0, a, ints, eps, b, vec, c, k, k + 1)
    elif op == ELEMENTWISE:
        lo = k * _CHUNK
        _chunk(flags, a[0], b[0], c[0], key, threshold, scale, lo,
                   _end(lo, _CHUNK, c.shape[1]))
    else:
        lo = k * _ADAM_CHUNK
        hi = _end(lo, _ADAM_CHUNK, a.shape[1])
        adam_flat(a[0, lo:hi], b[0, lo:hi], c[0, lo:hi], d[0, lo:hi], e[0, lo:hi], vec[0],
                        (flags & L2) != 0, vec[1], vec[2], vec[3], vec[4], vec[5], vec[6],
                        (flags & MOVE) != 0, (flags & AMSGRAD) != 0)


@intrinsic
def _call_at(typingctx, address, args):
    """Call the function compiled by Numba (its own calling convention, returning nothing) at
    `address` with the members of the tuple `args`: a call the compiler cannot see into, so
    the callee is not linked into the caller (see the module's docstring). The arrays must be
    C-contiguous, as the callee was compiled for them; what the callee raises is lost (the
    blocks raise nothing: the checks are Python's)."""
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


def _loop(block, op, flags, nblk, a, b, c, d, e, f, g, allowed, ints, vec, key, threshold,
          scale, eps):
    for k in prange(nblk):
        # (k signed in both twins: prange counts unsigned)
        _call_at(block, (op, flags, np.int64(k), nblk, a, b, c, d, e, f, g, allowed, ints, vec, key,
                         threshold, scale, eps))


run, run_serial = twins(_loop, "run")

_none = {}   # dtype -> (the address of _block, the empty arrays of the unused places)


def _compiled(dtype):
    """(the address of _block compiled for dtype, and empty arrays of each kind)."""
    t = numba.from_dtype(dtype)
    sig = types.none(*(types.int64,) * 4, *(types.Array(t, 2, "C"),) * 7,
                     types.Array(types.boolean, 2, "C"), types.Array(types.int64, 1, "C"),
                     types.Array(types.float64, 1, "C"), types.uint64, types.uint64, t,
                     types.float64)
    res = _block.get_compile_result(sig)
    return (res.library.get_pointer_to_function(res.fndesc.llvm_func_name),
            np.empty((0, 0), dtype), np.empty((0, 0), np.bool_), np.empty(0, np.int64),
            np.empty(0, np.float64))


def _call(parallel, op, flags, nblk, dtype, arrays, allowed=None, ints=None, vec=None,
          key=np.uint64(0), threshold=np.uint64(0), scale=None, eps=0.0):
    """run (or run_serial) with `arrays` in places a.. and empty arrays in the others."""
    if dtype not in _none:
        _none[dtype] = _compiled(dtype)
    block, empty, no_mask, no_ints, no_vec = _none[dtype]
    a = arrays + (empty,) * (7 - len(arrays))
    (run if parallel else run_serial)(
        block, op, flags, nblk, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
        no_mask if allowed is None else allowed, no_ints if ints is None else ints,
        no_vec if vec is None else vec, key, threshold,
        dtype.type(1) if scale is None else scale, eps)


def masked_softmax_dropout(parallel, backward, a, b, allowed, masked, key, threshold, scale,
                           drop, out1, out2):
    """Forward: out1 = softmax of a's rows masked to -inf where not `allowed` (if masked),
    out2 = its dropout (if drop; b unused). Backward: a = y, b = the gradient, out1 = dx."""
    rows = max(1, _BLOCK_ELEMENTS // max(a.shape[1], 1))   # as _block_rows
    flags = BACKWARD * backward | MASKED * masked | DROP * drop
    _call(parallel, MASKED_SOFTMAX, flags, -(-a.shape[0] // rows), a.dtype,
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
    y = np.empty_like(x)
    xhat = np.empty_like(x)
    rstd = np.empty((n, 1), x.dtype)
    _call(parallel, LAYER_NORM, flags, -(-n // _BLOCK), x.dtype,
          (x, s, w.reshape(1, d), b.reshape(1, d), y, xhat, rstd), key=key,
          threshold=threshold, scale=scale, eps=float(eps))
    return y, xhat, rstd


def layer_norm_backward_numba(g, xhat, rstd, weight, parallel=True, chunks=None):
    """(dx, dweight, dbias) for g, x_hat (N, D), rstd (N, 1), weight (D,) or None.

    The weight and bias gradients are summed in `chunks` partial sums (by default one per
    thread when parallel, else one), then added; parallel=False runs in the calling thread."""
    g = np.ascontiguousarray(g, dtype=xhat.dtype)
    n, d = g.shape
    w = np.ones(d, g.dtype) if weight is None else np.ascontiguousarray(weight, dtype=g.dtype)
    if chunks is None:
        chunks = numba.get_num_threads() if parallel else 1
    chunks = max(1, min(chunks, n))
    pw = np.zeros((chunks, d), g.dtype)
    pb = np.zeros((chunks, d), g.dtype)
    dx = np.empty_like(g)
    _call(parallel, LAYER_NORM_BACKWARD, 0, chunks, g.dtype,
          (g, np.ascontiguousarray(xhat), np.ascontiguousarray(rstd), w.reshape(1, d), dx, pw,
           pb))
    if chunks == 1:   # nothing to add up: skip the two reductions and their temporaries
        return dx, pw[0], pb[0]
    return dx, pw.sum(axis=0), pb.sum(axis=0)


def cross_entropy(parallel, backward, x, target, eps, stats, vec, dx):
    """The rows of .crossentropy: forward, losses into vec (dx unused); backward, dx from the
    row weights vec."""
    _call(parallel, CROSS_ENTROPY, BACKWARD * backward, x.shape[0], x.dtype, (x, stats, dx),
          ints=target, vec=vec, eps=eps)


def elementwise(parallel, kind, a, b, out, key, threshold, scale):
    """.dropout_kernels's element-wise op `kind` on flat arrays a, b into out."""
    n = out.size
    _call(parallel, ELEMENTWISE, kind, -(-n // _CHUNK), out.dtype,
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
    _call(True, ADAM, flags, -(-n // _ADAM_CHUNK), p.dtype,
          tuple(x.reshape(1, n) for x in (p, g, m, v, vmax)), vec=vec)
