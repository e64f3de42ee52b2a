"""The short-time Fourier transform and its inverse, as `torch.stft` and `torch.istft`.

`stft` cuts a signal (L) or a batch of them (B, L) into frames of `n_fft` samples, `hop_length`
apart (after padding `n_fft // 2` samples at each end when `center`), multiplies each by the
window (padded with zeros to `n_fft` at both sides if shorter) and transforms it: the result
is (B, n_freq, n_frames) complex, n_freq = n_fft // 2 + 1 when `onesided`. `istft` inverts it
by overlap-add: each frame's inverse transform times the window, added where the frame was
read, divided by the sum of the squared windows there (which must not vanish: the window and
hop must overlap, the NOLA condition). Both are compositions of differentiable ops (padding,
`Tensor.unfold`, the transforms of fft_ops.py and its adjoint `FoldDim`), so gradients flow.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import fft as _fft
from .autograd.op import Op
from .complex_tensors import view_as_complex, view_as_real
from .dtypes import real_of
from .functional import cat
from .ops.dim_windows import FoldDim
from .ops.windows import pad, unpad
from .tensor import Tensor

__all__ = ["istft", "stft"]

_PAD_MODES = {"constant": "zeros", "reflect": "reflect", "replicate": "replicate",
              "circular": "circular"}


class PadEnds(Op):
    """(B, L) padded by `n` samples at each end of the last dim, by torch's padding `mode`."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, n=0, mode="zeros"):
        ctx.shape, ctx.n, ctx.mode = a.shape, n, mode
        return pad(a[None], [(n, n)], mode)[0]

    @staticmethod
    def backward(ctx, g):
        return unpad(g[None], (1,) + ctx.shape, [(ctx.n, ctx.n)], ctx.mode)[0]


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """(L) or (B, L) -> (n_freq, n_frames) or (B, n_freq, n_frames) complex.

    A window shorter than n_fft sits in the middle of each n_fft frame; with
    `align_to_window=True` (center=False only) a frame starts where its window starts instead,
    so frame t reads the signal from t * hop_length."""
    if return_complex is None and not (input.is_complex() or (
            window is not None and window.is_complex())):
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, got shape {tuple(input.shape)}")
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    hop, win = _hop_and_window(x, n_fft, hop_length, win_length, window, "stft")
    if align_to_window and win_length is not None and win_length < n_fft:
        # shifting the signal right by the window's left padding puts each window's first
        # sample at t * hop; the zeros added at the ends fall under the window's zeros
        left = (n_fft - win_length) // 2
        def zeros(n):
            return Tensor._wrap(np.zeros((x.shape[0], n), x.dtype))
        x = cat([zeros(left), x, zeros(n_fft - win_length - left)], -1)
    if center:
        if pad_mode not in _PAD_MODES:
            raise ValueError(f"stft: pad_mode must be one of {sorted(_PAD_MODES)}, got "
                             f"{pad_mode!r}")
        if pad_mode == "reflect" and n_fft // 2 >= x.shape[-1]:
            raise RuntimeError(f"stft: reflect padding of {n_fft // 2} needs a signal longer "
                               f"than that, got length {x.shape[-1]}")
        x = PadEnds.apply(x, n=n_fft // 2, mode=_PAD_MODES[pad_mode])
    if not 0 < n_fft <= x.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {x.shape[-1]}, but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop)  # (B, n_frames, n_fft)
    frames = frames * win
    complex_case = frames.is_complex()
    if onesided is None:
        onesided = not complex_case
    if onesided and complex_case:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(frames, norm=norm) if onesided else _fft.fft(frames, norm=norm)
    spec = spec.transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.reshape(spec.shape[1:])
    return spec if return_complex else view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """(n_freq, n_frames) or (B, n_freq, n_frames) complex -> (L) or (B, L), the signal
    whose `stft` (with the same arguments) it is."""
    if not input.is_complex():
        if input.ndim and input.shape[-1] == 2:
            warnings.warn("istft: a real input with a last dim of 2 is read as "
                          "view_as_complex's (deprecated in PyTorch)", UserWarning)
            input = view_as_complex(input)
        else:
            raise RuntimeError("istft requires a complex-valued input tensor")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"dtype, got shape {tuple(input.shape)}")
    spec = input if input.ndim == 3 else input.reshape((1,) + tuple(input.shape))
    n_frames = spec.shape[-1]
    hop, win = _hop_and_window(spec, n_fft, hop_length, win_length, window, "istft")
    if onesided is None:
        onesided = spec.shape[-2] != n_fft
    expected = n_fft // 2 + 1 if onesided else n_fft
    if spec.shape[-2] != expected:
        raise RuntimeError(f"istft: expected the frequency dim to have size {expected} "
                           f"(onesided={onesided}, n_fft={n_fft}), got {spec.shape[-2]}")
    if return_complex and onesided:
        raise RuntimeError("istft: cannot have onesided output if return_complex is True")
    norm = "ortho" if normalized else "backward"
    spec = spec.transpose(-1, -2)  # (B, n_frames, n_freq)
    if return_complex:
        frames = _fft.ifft(spec, n=n_fft, norm=norm)
    else:
        # a real signal: the first half of a full spectrum is read as a half spectrum (the
        # rest is taken to be its conjugate), as PyTorch does, gradients included
        if win.is_complex():
            raise RuntimeError("istft: Complex windows are incompatible with "
                               "return_complex=False")
        frames = _fft.irfft(spec[..., :n_fft // 2 + 1], n=n_fft, norm=norm)
    frames = frames * win
    total = n_fft + hop * (n_frames - 1)
    batch = spec.shape[0]
    y = FoldDim.apply(frames, shape=(batch, total), dimension=1, size=n_fft, step=hop)
    envelope = _overlap_add_squares(np.abs(win._array) ** 2, hop, n_frames, total)
    start = n_fft // 2 if center else 0
    end = total if length is None and not center else (
        total - n_fft // 2 if length is None else start + length)
    end = min(end, total)
    if end > start and np.abs(envelope[start:end]).min() < 1e-11:
        raise RuntimeError("istft: window overlap add min: the sum of the squared windows "
                           "vanishes somewhere (check the window and hop_length: NOLA)")
    y = y[:, start:end] / Tensor._wrap(envelope[start:end].astype(real_of(y.dtype)))
    if length is not None and y.shape[-1] < length:
        y = _pad_end(y, length - y.shape[-1])
    return y.reshape(y.shape[1:]) if input.ndim == 2 else y


def _overlap_add_squares(w2, hop, n_frames, total):
    out = np.zeros(total, w2.dtype)
    for t in range(n_frames):
        out[t * hop:t * hop + len(w2)] += w2
    return out


def _pad_end(y, n):
    zeros = Tensor._wrap(np.zeros(y.shape[:-1] + (n,), y.dtype))
    return cat([y, zeros], dim=-1)


def _hop_and_window(x, n_fft, hop_length, win_length, window, op):
    """(hop, window padded to n_fft; the rectangular one if None), checked."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"{op}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is None:
        if op == "stft":
            warnings.warn(f"A window was not provided. A rectangular window will be applied, "
                          f"which is known to cause spectral leakage. Other windows such as "
                          f"hann_window may be better suited for {op}.", UserWarning)
        window = Tensor._wrap(np.ones(win_length, real_of(x.dtype)))
    if window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{op}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{tuple(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _pad_window(window, left, n_fft - win_length - left)
    return hop, window


def _pad_window(window, left, right):
    z = np.zeros
    return cat([Tensor._wrap(z(left, window.dtype)), window,
                Tensor._wrap(z(right, window.dtype))])
