"""Flat views built by the compiler without checks, for the kernels: `flat` (a run of a
C-contiguous array) and `span` (the memory from an array's first element on).

The kernels of .driver work on runs of elements: a share of the rows of a (rows, n) array is
the flat run lo * n .. hi * n - 1. Written with NumPy's operations, `x.reshape(-1)[lo:hi]`,
Numba compiles a reshape (a call into its runtime, with the error it may raise) and a slice
(the bounds clipped, negative indices wrapped, the step handled) at every such place: code
that LLVM then optimises away, but that Numba's front end types, inlines and lowers first,
and that was a tenth of a second of compile time per place. `flat(x, lo, hi)` is the view's
three fields, computed in a few LLVM instructions.

The caller guarantees 0 <= lo <= hi <= x.size (the checks are Python's, in .checks).
"""
from numba import types
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed
from numba.np.arrayobj import populate_array


@intrinsic
def flat(typingctx, x, lo, hi):
    """Elements lo..hi-1 of the C-contiguous array x, in memory order, as a 1-D view."""
    if (not isinstance(x, types.Array) or x.layout != "C" or not isinstance(lo, types.Integer)
            or not isinstance(hi, types.Integer)):
        return None
    view = types.Array(x.dtype, 1, "C", readonly=not x.mutable, aligned=x.aligned)

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        start = context.cast(builder, args[1], sig.args[1], types.intp)
        stop = context.cast(builder, args[2], sig.args[2], types.intp)
        out = context.make_array(sig.return_type)(context, builder)
        populate_array(out, data=builder.gep(src.data, [start]),
                       shape=[builder.sub(stop, start)], strides=[src.itemsize],
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, sig.return_type, out._getvalue())
    return view(x, lo, hi), codegen


@intrinsic
def span(typingctx, x, n):
    """The n elements of memory from x's first one on, as a 1-D C-contiguous view (x any
    array; the caller guarantees that those n elements lie within x's buffer)."""
    if not isinstance(x, types.Array) or not isinstance(n, types.Integer):
        return None
    view = types.Array(x.dtype, 1, "C", readonly=not x.mutable, aligned=x.aligned)

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        out = context.make_array(sig.return_type)(context, builder)
        populate_array(out, data=src.data,
                       shape=[context.cast(builder, args[1], sig.args[1], types.intp)],
                       strides=[src.itemsize], itemsize=src.itemsize, meminfo=src.meminfo,
                       parent=src.parent)
        return impl_ret_borrowed(context, builder, sig.return_type, out._getvalue())
    return view(x, n), codegen
