"""A fused multiply-add for the compiled kernels: fma(a, b, c) = a * b + c of float64 numbers,
rounded once (LLVM's llvm.fma, one instruction where the CPU has FMA, else the C library's
correctly rounded fma).

PyTorch's CPU kernels are compiled with FMA enabled, and the compiler fuses `x * y + z` in
their scalar loops (the uniform and normal fills of float64): matching their bits needs the
one rounding. Numba compiles without contraction (policy.py), so a kernel asks for it here,
at the places PyTorch's compiler fuses and nowhere else.
"""
import numpy as np
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once, each of float64 (another number type is converted first)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        vals = [context.cast(builder, v, t, types.float64)
                for v, t in zip(args, (a, b, c))]
        return builder.fma(*vals)

    return sig, codegen


@njit(cache=True)
def affine(x, scale, shift):
    """fma(x[i], scale, shift) for each element of the float64 array x (n,), a new array."""
    out = np.empty(x.size)
    for i in range(x.size):
        out[i] = fma(x[i], scale, shift)
    return out
