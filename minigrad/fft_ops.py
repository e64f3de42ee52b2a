"""The discrete Fourier transforms as ops: complex to complex (`C2C`), real to half spectrum
(`R2C`) and half spectrum to real (`C2R`), over any dims, computed by NumPy's pocketfft.

Each transform is linear, so its gradient is its adjoint applied to the output's gradient
(PyTorch's complex convention, see complex_tensors.py): the adjoint of a forward transform
normalized by `norm` is the inverse transform with the opposite normalization ("backward"
and "forward" swap, "ortho" stays). Before transforming, each signal dim is cut or zero-padded
to the size asked (`s`, `n`); the adjoint of that is to cut or pad the gradient back.
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .dtypes import complex_of, real_of

_ADJOINT_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def resize(a, dims, sizes):
    """`a` with each dim of `dims` cut or zero-padded at its end to the size in `sizes`."""
    if all(a.shape[d] == n for d, n in zip(dims, sizes)):
        return a
    cut = tuple(slice(None, n) if d in dims else slice(None)
                for d, n in zip(range(a.ndim), _full(a.shape, dims, sizes)))
    a = a[cut]
    pads = [(0, n - m) for m, n in zip(a.shape, _full(a.shape, dims, sizes))]
    return np.pad(a, pads) if any(hi for _, hi in pads) else a


def _full(shape, dims, sizes):
    out = list(shape)
    for d, n in zip(dims, sizes):
        out[d] = n
    return out


class C2C(Op):
    """fftn (or ifftn, `inverse`) of complex `a` over `dims`, each resized to `sizes`."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, dims=(-1,), sizes=None, norm="backward", inverse=False):
        ctx.in_sizes = tuple(a.shape[d] for d in dims)
        ctx.dims, ctx.norm, ctx.inverse = dims, norm, inverse
        fn = np.fft.ifftn if inverse else np.fft.fftn
        return fn(resize(a, dims, sizes), axes=dims, norm=norm).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        fn = np.fft.fftn if ctx.inverse else np.fft.ifftn
        out = fn(g, axes=ctx.dims, norm=_ADJOINT_NORM[ctx.norm]).astype(g.dtype, copy=False)
        return resize(out, ctx.dims, ctx.in_sizes)


class R2C(Op):
    """rfftn of real `a` over `dims`, each resized to `sizes`: the last dim's spectrum keeps
    its n // 2 + 1 first frequencies (the rest are their conjugates)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, dims=(-1,), sizes=None, norm="backward"):
        ctx.in_sizes = tuple(a.shape[d] for d in dims)
        ctx.dims, ctx.sizes, ctx.norm = dims, sizes, norm
        out = np.fft.rfftn(resize(a, dims, sizes), axes=dims, norm=norm)
        return out.astype(complex_of(a.dtype), copy=False)

    @staticmethod
    def backward(ctx, g):
        # the adjoint of keeping the first frequencies is zeros for the others, then the
        # adjoint of the full transform, whose real part is the real input's gradient
        g = resize(g, ctx.dims[-1:], ctx.sizes[-1:])
        out = np.fft.ifftn(g, axes=ctx.dims, norm=_ADJOINT_NORM[ctx.norm]).real
        return resize(out.astype(real_of(g.dtype), copy=False), ctx.dims, ctx.in_sizes)


class C2R(Op):
    """irfftn of a half spectrum `a` over `dims` to a real signal of `sizes` (the last dim's
    spectrum is first resized to sizes[-1] // 2 + 1 frequencies, the others to their
    sizes); the missing frequencies are the conjugates of those given."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, dims=(-1,), sizes=None, norm="backward"):
        ctx.in_sizes = tuple(a.shape[d] for d in dims)
        ctx.dims, ctx.norm = dims, norm
        half = sizes[:-1] + (sizes[-1] // 2 + 1,)
        out = np.fft.irfftn(resize(a, dims, half), s=sizes, axes=dims, norm=norm)
        return out.astype(real_of(a.dtype), copy=False)

    @staticmethod
    def backward(ctx, g):
        # each frequency between the first and the Nyquist one stands for itself and its
        # conjugate in the full spectrum, so its gradient counts twice (PyTorch's rule)
        dims = ctx.dims
        out = np.fft.rfftn(g, axes=dims, norm=_ADJOINT_NORM[ctx.norm])
        out = out.astype(complex_of(g.dtype), copy=False)
        n, kept = g.shape[dims[-1]], out.shape[dims[-1]]
        twice = [slice(None)] * g.ndim
        twice[dims[-1]] = slice(1, 1 + n - kept)
        out[tuple(twice)] *= 2
        return resize(out, dims, ctx.in_sizes)
