"""Arithmetic on .simd's vectors, for rows too short for LLVM's own vector loops.

LLVM vectorises a loop 16 float32 lanes at a time, four vectors per iteration, so a loop of
fewer than 64 iterations (a softmax row of attention: as long as the sequence, 20 say) runs
as scalar code, one element at a time. softmax's short rows are therefore written with
explicit vectors: a row of 20 is one full vector and one masked one. These are the
operations that needs beside .simd's, each one LLVM instruction or intrinsic:

    vsplat(arr, x)       every lane = x, a scalar of arr's dtype
    vsub(a, b), vmul(a, b)
    vhsum(v)             the sum of the lanes, in the order LLVM picks (a tree of halves):
                         the caller's sums are reordered anyway (FASTMATH)

Numba's on-disk cache is keyed on the source file of the cached function only: after editing
this module, delete the `__pycache__` folder next to it.
"""
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from .simd import Vec, _suffix


@intrinsic
def vsplat(typingctx, arr, x):
    """Every lane = x (of arr's dtype; arr only gives the type)."""
    if not isinstance(arr, types.Array) or x != arr.dtype:
        return None

    def codegen(context, builder, sig, args):
        vt = context.get_value_type(sig.return_type)
        one = builder.insert_element(ir.Constant(vt, ir.Undefined), args[1], ir.IntType(32)(0))
        return builder.shuffle_vector(one, ir.Constant(vt, ir.Undefined),
                                      ir.Constant(ir.VectorType(ir.IntType(32), vt.count),
                                                  [0] * vt.count))
    return Vec(arr.dtype)(arr, x), codegen


@intrinsic
def vsub(typingctx, a, b):
    def codegen(context, builder, sig, args):
        return builder.fsub(*args)
    return a(a, b), codegen


@intrinsic
def vmul(typingctx, a, b):
    def codegen(context, builder, sig, args):
        return builder.fmul(*args)
    return a(a, b), codegen


@intrinsic
def vhsum(typingctx, v):
    """The sum of v's lanes (reassociated: a tree of halves, not lane after lane)."""
    def codegen(context, builder, sig, args):
        vt = args[0].type
        fnty = ir.FunctionType(vt.element, [vt.element, vt])
        fn = builder.module.declare_intrinsic(f"llvm.vector.reduce.fadd.{_suffix(vt)}",
                                              fnty=fnty)
        return builder.call(fn, [ir.Constant(vt.element, -0.0), args[0]], fastmath=("reassoc",))
    return v.dtype(v), codegen
