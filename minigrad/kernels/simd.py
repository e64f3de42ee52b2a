"""SIMD vectors for Numba kernels: a register type and the handful of LLVM operations on it.

Numba compiles loops through LLVM, whose auto-vectoriser turns simple loops into vector code
on its own. It gives up on two patterns the kernels need: keeping a 2-D tile of accumulators
in registers (the matmul micro-kernel) and a max reduction that must keep NaN (softmax's row
max). So these few functions hand LLVM vector values directly. `Vec(dtype)` is one register
of VBYTES = 64 bytes (16 float32 or 8 float64 lanes: an AVX-512 zmm register; on a CPU with
narrower registers LLVM splits each operation into several), and each function below is one
LLVM instruction or intrinsic on it:

    vzero(arr)                     all lanes 0, of arr's dtype
    vload(arr, i)                  all lanes from arr[i:]
    vload_first(arr, i, n)         lanes 0..n-1 from arr[i:], the rest 0 (masked: reads no further)
    vstore_first(arr, i, v, n)     lanes 0..n-1 of v to arr[i:]
    vbroadcast(arr, i)             every lane = arr[i]
    vfma(a, b, c)                  a * b + c, each lane one fused multiply-add
    vadd(a, b)                     a + b
    vmax(a, b), vhmax(v)           lane-wise max and largest lane, NaN propagating

Numba's on-disk cache (`cache=True`) is keyed on the source file of the cached function only:
after editing this module, delete the `__pycache__` folder next to it, or the kernels that
use these functions keep their old compiled code.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic, models, register_model

VBYTES = 64   # one AVX-512 register


class Vec(types.Type):
    """A register of VBYTES bytes holding `dtype` lanes (an LLVM vector)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.width = VBYTES // (dtype.bitwidth // 8)
        super().__init__(name=f"Vec({dtype}x{self.width})")


@register_model(Vec)
class _VecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        lane = dmm.lookup(fe_type.dtype).get_value_type()
        super().__init__(dmm, fe_type, ir.VectorType(lane, fe_type.width))


def _vptr(context, builder, sig, args):
    """(pointer to element args[1] of the 1-D array args[0] as a vector*, vector type)"""
    data = context.make_array(sig.args[0])(context, builder, args[0]).data
    p = builder.gep(data, [context.cast(builder, args[1], sig.args[1], types.intp)])
    vt = ir.VectorType(data.type.pointee, VBYTES // (sig.args[0].dtype.bitwidth // 8))
    return builder.bitcast(p, vt.as_pointer()), vt


def _llvm(builder, name, ret, args):
    """Call LLVM's intrinsic `name`, e.g. llvm.fma.v16f32."""
    fnty = ir.FunctionType(ret, [a.type for a in args])
    return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), args)


def _first_lanes(context, builder, n, nty, width):
    """The mask (0 < n, 1 < n, ..., width-1 < n)."""
    n = context.cast(builder, n, nty, types.int64)
    i64s = ir.VectorType(ir.IntType(64), width)
    splat = builder.insert_element(ir.Constant(i64s, ir.Undefined), n, ir.IntType(32)(0))
    splat = builder.shuffle_vector(splat, ir.Constant(i64s, ir.Undefined),
                                   ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width))
    return builder.icmp_signed("<", ir.Constant(i64s, list(range(width))), splat)


def _suffix(vt):
    return f"v{vt.count}{vt.element.intrinsic_name}"   # e.g. v16f32


@intrinsic
def vzero(typingctx, arr):
    def codegen(context, builder, sig, args):
        return ir.Constant(context.get_value_type(sig.return_type), None)
    return Vec(arr.dtype)(arr), codegen


@intrinsic
def vload_first(typingctx, arr, idx, n):
    """Lanes 0..n-1 from arr[idx:], the others 0; memory past them is not read."""
    def codegen(context, builder, sig, args):
        ptr, vt = _vptr(context, builder, sig, args)
        mask = _first_lanes(context, builder, args[2], sig.args[2], vt.count)
        align = ir.IntType(32)(arr.dtype.bitwidth // 8)
        return _llvm(builder, f"llvm.masked.load.{_suffix(vt)}.p0", vt,
                     [ptr, align, mask, ir.Constant(vt, None)])
    return Vec(arr.dtype)(arr, idx, n), codegen


@intrinsic
def vload(typingctx, arr, idx):
    """All lanes from arr[idx:] (an unmasked load: every lane must lie in arr)."""
    def codegen(context, builder, sig, args):
        ptr, vt = _vptr(context, builder, sig, args)
        return builder.load(ptr, align=arr.dtype.bitwidth // 8)
    return Vec(arr.dtype)(arr, idx), codegen


@intrinsic
def vstore(typingctx, arr, idx, v):
    """Store all lanes of v to arr[idx:] (unmasked: every lane must lie in arr)."""
    def codegen(context, builder, sig, args):
        ptr, vt = _vptr(context, builder, sig, args)
        builder.store(args[2], ptr, align=arr.dtype.bitwidth // 8)
    return types.none(arr, idx, v), codegen


@intrinsic
def vstore_first(typingctx, arr, idx, v, n):
    """Store lanes 0..n-1 of v to arr[idx:] (all of them when n >= width)."""
    def codegen(context, builder, sig, args):
        ptr, vt = _vptr(context, builder, sig, args)
        mask = _first_lanes(context, builder, args[3], sig.args[3], vt.count)
        align = ir.IntType(32)(arr.dtype.bitwidth // 8)
        _llvm(builder, f"llvm.masked.store.{_suffix(vt)}.p0", ir.VoidType(),
              [args[2], ptr, align, mask])
    return types.none(arr, idx, v, n), codegen


@intrinsic
def vbroadcast(typingctx, arr, idx):
    """All lanes = arr[idx] (on AVX-512 it folds into the FMA as `{1to16}`)."""
    def codegen(context, builder, sig, args):
        ptr, vt = _vptr(context, builder, sig, args)
        x = builder.load(builder.bitcast(ptr, vt.element.as_pointer()))
        one = builder.insert_element(ir.Constant(vt, ir.Undefined), x, ir.IntType(32)(0))
        return builder.shuffle_vector(one, ir.Constant(vt, ir.Undefined),
                                      ir.Constant(ir.VectorType(ir.IntType(32), vt.count),
                                                  [0] * vt.count))
    return Vec(arr.dtype)(arr, idx), codegen


@intrinsic
def vfma(typingctx, a, b, c):
    """a * b + c, lane by lane, each one fused multiply-add."""
    def codegen(context, builder, sig, args):
        return _llvm(builder, f"llvm.fma.{_suffix(args[0].type)}", args[0].type, args)
    return c(a, b, c), codegen


@intrinsic
def vadd(typingctx, a, b):
    def codegen(context, builder, sig, args):
        return builder.fadd(*args)
    return a(a, b), codegen


@intrinsic
def vmax(typingctx, a, b):
    """Lane-wise max that propagates NaN (llvm.maximum)."""
    def codegen(context, builder, sig, args):
        return _llvm(builder, f"llvm.maximum.{_suffix(args[0].type)}", args[0].type, args)
    return a(a, b), codegen


@intrinsic
def vhmax(typingctx, v):
    """The largest lane of v (NaN if any lane is NaN)."""
    def codegen(context, builder, sig, args):
        vt = args[0].type
        return _llvm(builder, f"llvm.vector.reduce.fmaximum.{_suffix(vt)}", vt.element, args)
    return v.dtype(v), codegen
