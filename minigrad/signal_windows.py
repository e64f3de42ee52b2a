"""Window functions as in PyTorch: `hann_window`, `hamming_window`, `blackman_window`,
`bartlett_window`, `kaiser_window`.

A window of length N tapers a frame before its Fourier transform (see spectral.py's `stft`).
`periodic=True` (the default) gives the first N points of the symmetric window of N + 1
points, the form whose overlapped copies add up evenly, the one spectral analysis wants;
`periodic=False` the symmetric window itself, the one filter design wants. Values are computed
in float64 and rounded to `dtype` (the default float dtype unless given).
"""
from __future__ import annotations

import numpy as np

from .dtypes import resolve
from .platform.device import check_device
from .tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """0.5 - 0.5 cos(2 pi n / (N - 1)): the raised cosine, zero at both ends."""
    return hamming_window(window_length, periodic, alpha=0.5, beta=0.5, dtype=dtype,
                          device=device, requires_grad=requires_grad, _op="hann_window")


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False, _op="hamming_window"):
    """alpha - beta cos(2 pi n / (N - 1))."""
    return _window(_op, window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: alpha - beta * np.cos(2 * np.pi * n / m))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: 0.42 - 0.5 * np.cos(2 * np.pi * n / m)
                   + 0.08 * np.cos(4 * np.pi * n / m))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """1 - |2 n / (N - 1) - 1|: the triangle."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: 1 - np.abs(2 * n / m - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta), I0 the modified Bessel function
    of order 0: `beta` trades the main lobe's width for the side lobes' height."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / m - 1) ** 2, 0, 1)))
                   / np.i0(beta))


def _window(op, length, periodic, dtype, device, requires_grad, formula):
    """The window of `length` points from `formula(n, N - 1)` (n = 0 .. N - 1), with N one
    more than `length` when `periodic` and the last point dropped."""
    check_device(device, op)
    dt = resolve(dtype)
    if dt.kind != "f":
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dt}")
    if not isinstance(length, (int, np.integer)) or isinstance(length, bool):
        raise TypeError(f"{op}(): argument 'window_length' must be int, not "
                        f"{type(length).__name__}")
    if length < 0:
        raise RuntimeError(f"{op} requires non-negative window length, got "
                           f"window_length={length}")
    if length <= 1:
        values = np.ones(length)
    else:
        m = length if periodic else length - 1
        values = formula(np.arange(length, dtype=np.float64), m)
    t = Tensor.__new__(Tensor)
    t._init(values.astype(dt), requires_grad)
    return t
