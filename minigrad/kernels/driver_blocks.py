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

Compiling the blocks, and the entry points that fill these places from each kernel's own
arguments, are .driver's.
"""
import numpy as np
from numba import njit, prange, types
from numba.core import errors
from numba.core.extending import intrinsic

from .crossentropy import _backward_row as _cross_entropy_backward
from .crossentropy import _forward_row as _cross_entropy_forward
from .dropout_kernels import (_BLOCK, COPY, DROPOUT, FILL_MASKED, ZERO_MASKED, _dropout_add_rows,
                              _elements)
from .layernorm import _backward_rows, _forward_rows
from .openblas import gemm_block as _gemm_block
from .policy import FASTMATH, HELPER, INLINE, NO_COUNTING, twins
from .softmax_kernels import _block_rows, _softmax_backward_row, _softmax_block
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
