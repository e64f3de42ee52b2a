"""Compatibility cases: complex tensors, torch.fft, window functions, stft and istft.

Complex results are returned through `view_as_real` (or their parts) where a gradient is
compared: the runner weights each output by a real random tensor, and PyTorch backpropagates
only from real scalars."""
import numpy as np

from compat_table import A, case, f32, f64

CASES = []
add = CASES.append

_rng = np.random.default_rng(2026)


def _name(dtype):
    return str(dtype).replace("torch.", "")


def _real(lib, spectra):
    """Complex results as real (..., 2) tensors (PyTorch's may be lazily conjugated)."""
    return [lib.view_as_real(o.resolve_conj()) for o in spectra]


def c64(*shape, grad=True):
    z = _rng.uniform(-2, 2, shape) + 1j * _rng.uniform(-2, 2, shape)
    return A(z.astype(np.complex64), grad)


def c128(*shape, grad=True):
    return A(_rng.uniform(-2, 2, shape) + 1j * _rng.uniform(-2, 2, shape), grad)


# --- complex tensors ---------------------------------------------------------------------------

@add
@case("minigrad.complex", "minigrad.view_as_real", "minigrad.real", "minigrad.imag",
      "Tensor.real", "Tensor.imag", inputs=(f32(2, 3), f32(3)))
def _(lib, re, im):
    z = lib.complex(re, im)
    return (lib.view_as_real(z * z), z.real * 2, z.imag, lib.real(z), lib.imag(z * 3),
            lib.real(re), _name(z.dtype), _name(lib.complex(re.double(), re.double()).dtype))


@add
@case("minigrad.polar", "minigrad.angle", "Tensor.angle", "minigrad.is_complex",
      "Tensor.is_complex", inputs=(f64(4, low=0.5), f64(4), c128(4)))
def _(lib, r, theta, z):
    w = lib.polar(r, theta)
    return (lib.view_as_real(w), lib.angle(z), z.angle(), lib.angle(r - 1),
            lib.angle(lib.tensor([-1, 0, 2])), lib.is_complex(w), w.is_complex(),
            r.is_complex())


@add
@case("minigrad.conj", "Tensor.conj", "minigrad.conj_physical", "Tensor.conj_physical",
      "minigrad.resolve_conj", "Tensor.resolve_conj", "minigrad.resolve_neg",
      "Tensor.resolve_neg", "Tensor.is_conj", "minigrad.view_as_complex", "Tensor.abs",
      inputs=(c64(2, 3), f32(2, 3, 2)))
def _(lib, z, pairs):
    v = lib.view_as_complex(pairs)
    return (lib.view_as_real(lib.conj(z) * v), lib.view_as_real(z.conj().resolve_conj()),
            lib.view_as_real(lib.conj_physical(v)), lib.view_as_real(z.conj_physical()),
            lib.view_as_real(lib.resolve_conj(z)), lib.view_as_real(lib.resolve_neg(z)),
            lib.view_as_real(z.resolve_neg()), z.abs(), lib.abs(v), lib.conj(pairs),
            z.is_conj())


@add
@case("Tensor.__add__", "Tensor.__sub__", "Tensor.__mul__", "Tensor.__truediv__",
      "Tensor.__matmul__", "Tensor.sum", "Tensor.mean", "Tensor.__neg__", "Tensor.exp",
      "Tensor.log", "minigrad.exp", inputs=(c64(3, 4), f32(3, 4), f64(4), c128(4, 2)))
def _(lib, z, x, y, w):
    # promotion as PyTorch: float32 with complex64 is complex64, float64 with it complex128,
    # a float tensor with a Python complex keeps its precision
    out = (z + x, z - y, x * z, z / (x + 3), z @ w.to(lib.complex64), (z * 1j).sum(0),
           (x * 2j).mean(1), z.sum(), z.mean(), y * (1 + 1j), -z, (z * z).T.reshape(-1),
           (z * 0.5).exp(), lib.exp(1j * x), z.log())
    dtypes = [_name(o.dtype) for o in out]
    return [lib.view_as_real(o) for o in out], dtypes, _name(lib.tensor([1 + 2j, 3]).dtype)


@add
@case("minigrad.zeros", "minigrad.ones", "minigrad.tensor", "minigrad.full",
      "minigrad.zeros_like", "Tensor.to", inputs=(c128(2, 2, grad=False),))
def _(lib, z):
    return (lib.zeros(2, dtype=lib.complex64), lib.ones(2, 3, dtype=lib.cdouble),
            lib.tensor(1j), lib.tensor([[1 + 1j, 2], [0, -1j]], dtype=lib.complex128),
            lib.full((2,), 1 + 2j), lib.zeros_like(z), lib.tensor([1.5, 2]).to(lib.complex64),
            z.to(lib.complex64))


@add
@case("minigrad.maximum", compare="raises", match="not implemented for complex",
      inputs=(c64(3, grad=False),))
def _(lib, z):
    return lib.maximum(z, z)


# --- torch.fft ---------------------------------------------------------------------------------

@add
@case("fft.fft", "fft.ifft", "fft.fft2", "fft.ifft2", "fft.fftn", "fft.ifftn",
      inputs=(c64(3, 8), f64(4, 6)))
def _(lib, z, x):
    f = lib.fft
    return _real(lib, (
        f.fft(z), f.fft(z, n=5, dim=0, norm="ortho"), f.ifft(z, n=11, norm="forward"),
        f.fft(x), f.ifft(x, dim=0), f.fft2(z), f.ifft2(x, s=(3, 8), norm="ortho"),
        f.fftn(z, s=(4,)), f.ifftn(x, dim=(1, 0), norm="forward"), f.fftn(z[0])))


@add
@case("fft.rfft", "fft.irfft", "fft.rfft2", "fft.irfft2", "fft.rfftn", "fft.irfftn",
      inputs=(f32(3, 8), c128(4, 5)))
def _(lib, x, z):
    f = lib.fft
    spectra = (f.rfft(x), f.rfft(x, n=7, norm="ortho"), f.rfft2(x, norm="forward"),
               f.rfftn(x, s=(2, 10)), f.rfft(x.double(), dim=0))
    signals = (f.irfft(z), f.irfft(z, n=9, norm="ortho"), f.irfft(z, n=12, dim=0),
               f.irfft2(z, norm="forward"), f.irfftn(z, s=(3, 6)), f.irfftn(z[:, :3]))
    return _real(lib, spectra), list(signals)


@add
@case("fft.hfft", "fft.ihfft", "fft.hfft2", "fft.ihfft2", "fft.hfftn", "fft.ihfftn",
      inputs=(c64(3, 5), f64(4, 6)))
def _(lib, z, x):
    f = lib.fft
    return (f.hfft(z), f.hfft(z, n=6, norm="ortho"), f.hfft2(z), f.hfftn(z, norm="forward"),
            _real(lib, (f.ihfft(x), f.ihfft2(x, norm="ortho"), f.ihfftn(x, s=(3, 4)))))


@add
@case("fft.fftfreq", "fft.rfftfreq", "fft.fftshift", "fft.ifftshift", inputs=(f32(4, 5),))
def _(lib, x):
    f = lib.fft
    return (f.fftfreq(5), f.fftfreq(8, d=0.1, dtype=lib.float64), f.rfftfreq(6),
            f.rfftfreq(7, 2.0), f.fftshift(x), f.ifftshift(x), f.fftshift(x, dim=1),
            f.ifftshift(x, dim=(0,)), f.fftshift(f.fftfreq(6)))


@add
@case("fft.fft", compare="raises", match="Invalid normalization", inputs=(f32(4),))
def _(lib, x):
    return lib.fft.fft(x, norm="unitary")


@add
@case("fft.rfft", compare="raises", match="expects a real input", inputs=(c64(4),))
def _(lib, z):
    return lib.fft.rfft(z)


# --- windows, stft, istft ----------------------------------------------------------------------

@add
@case("minigrad.hann_window", "minigrad.hamming_window", "minigrad.blackman_window",
      "minigrad.bartlett_window", "minigrad.kaiser_window")
def _(lib):
    out = []
    for n in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            out += [lib.hann_window(n, periodic), lib.hamming_window(n, periodic),
                    lib.blackman_window(n, periodic, dtype=lib.float64),
                    lib.bartlett_window(n, periodic), lib.kaiser_window(n, periodic),
                    lib.kaiser_window(n, periodic, beta=4.0, dtype=lib.float64)]
    return out + [lib.hamming_window(9, True, 0.5, 0.3)]


@add
@case("minigrad.stft", "Tensor.stft", inputs=(f32(2, 40), f64(33)))
def _(lib, x, y):
    w = lib.hann_window(16)
    specs = (lib.stft(x, 16, 4, window=w, return_complex=True),
             x.stft(16, hop_length=5, win_length=10, window=lib.hamming_window(10),
                    center=False, normalized=True, return_complex=True),
             lib.stft(y, 8, window=lib.hann_window(8, dtype=lib.float64), pad_mode="constant",
                      onesided=False, return_complex=True),
             lib.stft(x[0], 12, 3, window=lib.blackman_window(12), pad_mode="replicate",
                      return_complex=True))
    return _real(lib, specs)


@add
@case("minigrad.istft", "Tensor.istft", inputs=(c64(2, 9, 11), c128(16, 6)))
def _(lib, spec, full):
    w = lib.hann_window(16)
    return (lib.istft(spec, 16, 4, window=w), spec.istft(16, 4, window=w, length=50),
            lib.istft(spec[0], 16, 5, window=lib.hamming_window(16), center=False,
                      normalized=True),
            lib.istft(full, 16, 4, window=lib.hann_window(16, dtype=lib.float64),
                      onesided=False),
            lib.view_as_real(lib.istft(full, 16, 4, window=lib.hann_window(
                16, dtype=lib.float64), onesided=False, return_complex=True)))


@add
@case("minigrad.stft", "minigrad.istft", inputs=(f64(3, 64),))
def _(lib, x):
    w = lib.hann_window(32, dtype=lib.float64)
    spec = lib.stft(x, 32, 8, window=w, return_complex=True)
    return lib.istft(spec, 32, 8, window=w, length=64), spec.abs()
