"""`torch.fft`: discrete Fourier transforms, their sample frequencies and shifts.

    X = minigrad.fft.rfft(signal)                 # (..., n) real -> (..., n // 2 + 1) complex
    y = minigrad.fft.irfft(X * lowpass, n=n)      # back to (..., n) real; differentiable

Every transform takes PyTorch's arguments: the signal size (`n` for one dim, `s` for several;
each dim is cut or zero-padded at its end to it), the dims (`dim`) and the normalization
(`norm`): "backward" (the default) scales the inverse by 1/n, "forward" the forward one,
"ortho" both by 1/sqrt(n). Real inputs of the complex transforms become complex, integers the
default complex dtype (float32 gives complex64, float64 complex128), as in PyTorch. The ops and
their gradients are in fft_ops.py.
"""
import numpy as np

from . import out_arg as _out_arg
from .out_names import OUT_NAMES as _OUT_NAMES
from . import fft_ops as _ops
from .dtypes import complex_of as _complex_of, get_default_dtype as _default_float
from .dtypes import resolve as _resolve
from . import errors as _errors
from .platform.device import check_device as _check_device
from .tensor import Tensor as _Tensor

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

_NORMS = ("backward", "forward", "ortho")
_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# --- complex to complex -------------------------------------------------------------------

def fft(input, n=None, dim=-1, norm=None):
    """The 1-d discrete Fourier transform along `dim`, of `n` points."""
    return _c2c("fft", input, _one(n), (dim,), norm, False)


def ifft(input, n=None, dim=-1, norm=None):
    """The inverse of `fft`."""
    return _c2c("ifft", input, _one(n), (dim,), norm, True)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """The 2-d transform over `dim` (the last two dims)."""
    return _c2c("fft2", input, s, dim, norm, False)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of `fft2`."""
    return _c2c("ifft2", input, s, dim, norm, True)


def fftn(input, s=None, dim=None, norm=None):
    """The transform over `dim`: all dims, or the last len(s) ones when only `s` is given."""
    return _c2c("fftn", input, s, dim, norm, False)


def ifftn(input, s=None, dim=None, norm=None):
    """The inverse of `fftn`."""
    return _c2c("ifftn", input, s, dim, norm, True)


def _c2c(op, input, s, dim, norm, inverse):
    x = _complex_input(op, input)
    dims, sizes = _signal(op, x, s, dim)
    return _ops.C2C.apply(x, dims=dims, sizes=sizes, norm=_norm(op, norm), inverse=inverse)


# --- real signals and their half spectra --------------------------------------------------

def rfft(input, n=None, dim=-1, norm=None):
    """The transform of a real signal: its n // 2 + 1 first frequencies (the others are
    their conjugates)."""
    return _r2c("rfft", input, _one(n), (dim,), norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c("rfft2", input, s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None):
    return _r2c("rfftn", input, s, dim, norm)


def irfft(input, n=None, dim=-1, norm=None):
    """The real signal of `n` points (2 * (m - 1) for m frequencies by default) whose
    `rfft` is `input`."""
    return _c2r("irfft", input, _one(n), (dim,), norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2r("irfft2", input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None):
    return _c2r("irfftn", input, s, dim, norm)


def hfft(input, n=None, dim=-1, norm=None):
    """The (real) transform of a signal with Hermitian symmetry given by its first half:
    irfft of the conjugate with the opposite normalization."""
    return _c2r("hfft", _conj(input), _one(n), (dim,), norm, swap=True)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2r("hfft2", _conj(input), s, dim, norm, swap=True)


def hfftn(input, s=None, dim=None, norm=None):
    return _c2r("hfftn", _conj(input), s, dim, norm, swap=True)


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of `hfft`: the conjugate of rfft with the opposite normalization."""
    return _r2c("ihfft", input, _one(n), (dim,), norm, swap=True).conj()


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c("ihfft2", input, s, dim, norm, swap=True).conj()


def ihfftn(input, s=None, dim=None, norm=None):
    return _r2c("ihfftn", input, s, dim, norm, swap=True).conj()


def _r2c(op, input, s, dim, norm, swap=False):
    _check_tensor(op, input)
    if input.dtype.kind == "c":
        raise RuntimeError(f"{op} expects a real input tensor, but got {input.dtype}")
    x = _float_input(op, input)
    dims, sizes = _signal(op, x, s, dim)
    norm = _norm(op, norm)
    return _ops.R2C.apply(x, dims=dims, sizes=sizes, norm=_SWAPPED[norm] if swap else norm)


def _c2r(op, input, s, dim, norm, swap=False):
    x = _complex_input(op, input)
    dims, sizes = _signal(op, x, s, dim, half=True)
    norm = _norm(op, norm)
    return _ops.C2R.apply(x, dims=dims, sizes=sizes, norm=_SWAPPED[norm] if swap else norm)


def _conj(input):
    _check_tensor("hfft", input)
    return input.conj()


# --- arguments ----------------------------------------------------------------------------

def _check_tensor(op, input):
    if not isinstance(input, _Tensor):
        raise TypeError(f"fft_{op}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")


def _float_input(op, input):
    """A real input as float32 or float64 (integers and bools as the default float)."""
    kind, dtype = input.dtype.kind, input.dtype
    if kind in "biu":
        return input.to(_default_float())
    if dtype == np.float16:
        raise RuntimeError(f"{op}: Unsupported dtype Half (use float32 or float64)")
    return input


def _complex_input(op, input):
    _check_tensor(op, input)
    if input.dtype.kind == "c":
        return input
    x = _float_input(op, input)
    return x.to(_complex_of(x.dtype))


def _one(n):
    return None if n is None else (n,)


def _norm(op, norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise _errors.InvalidValueError(f"{op}: Invalid normalization mode: {norm!r} (expected "
                                        f"\"backward\", \"forward\" or \"ortho\")")
    return norm


def _signal(op, x, s, dim, half=False):
    """(dims, sizes): the dims transformed, as non-negative ints, and each one's signal size.
    With `half`, the last dim holds a half spectrum and its default size is 2 * (m - 1)."""
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None:
        s = tuple(int(n) for n in s)
    if dim is None:
        dim = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    dims = []
    for d in dim:
        if x.ndim == 0:
            raise IndexError(f"{op}: Dimension specified as {d} but tensor has no dimensions")
        if not -x.ndim <= d < x.ndim:
            raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                             f"[{-x.ndim}, {x.ndim - 1}], but got {d})")
        dims.append(d % x.ndim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dims must be unique, got {tuple(dim)}")
    if s is not None and len(s) != len(dims):
        raise RuntimeError(f"{op}: When given, dim and shape arguments must have the same "
                           f"length (got s={s}, dim={tuple(dim)})")
    if s is None or any(n == -1 for n in s):
        default = [x.shape[d] for d in dims]
        if half and dims:
            default[-1] = 2 * (default[-1] - 1)
        s = tuple(m if s is None or s[i] == -1 else s[i] for i, m in enumerate(default))
    for n in s:
        if n < 1:
            raise RuntimeError(f"{op}: Invalid number of data points ({n}) specified")
    return tuple(dims), s


# --- frequencies and shifts ---------------------------------------------------------------

def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point transform with sample spacing `d`:
    [0, 1, ..., n//2 - 1 or so, -n//2, ..., -1] / (d n)."""
    _check_device(device, "fftfreq")
    return _freq(np.fft.fftfreq(n, d), dtype, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The n // 2 + 1 non-negative sample frequencies of `rfft`."""
    _check_device(device, "rfftfreq")
    return _freq(np.fft.rfftfreq(n, d), dtype, requires_grad)


def _freq(values, dtype, requires_grad):
    t = _Tensor.__new__(_Tensor)
    t._init(values.astype(_resolve(dtype)), requires_grad)
    return t


def fftshift(input, dim=None):
    """The spectrum rolled so that frequency 0 is in the middle (of `dim`, or every dim)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of `fftshift`."""
    return _shift(input, dim, -1)


def _shift(input, dim, sign):
    dims = tuple(range(input.ndim)) if dim is None else (
        (dim,) if isinstance(dim, int) else tuple(dim))
    if not dims:
        return input
    shifts = tuple(sign * (input.shape[d] // 2) for d in dims)
    return input.roll(shifts, dims)

# PyTorch's out= on every function here whose PyTorch counterpart takes it (out_arg.py)
globals().update(_out_arg.accept_out(globals(), _OUT_NAMES['fft'], 'fft_'))
