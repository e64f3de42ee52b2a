"""minigrad.fft, the window functions, stft and istft: values, dtypes and gradients against
PyTorch for every transform, norm and signal size, float64 central-difference gradients,
0-d, empty and non-contiguous inputs, and the errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

rng = np.random.default_rng(3)
NORMS = [None, "ortho", "forward"]


def _z(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


# name: (call, input kind); each call takes (lib, tensor, norm)
TRANSFORMS = {
    "fft": (lambda f, a, norm: f.fft(a, norm=norm), "c"),
    "fft_real_n": (lambda f, a, norm: f.fft(a, n=5, norm=norm), "r"),
    "ifft_pad_dim0": (lambda f, a, norm: f.ifft(a, n=11, dim=0, norm=norm), "c"),
    "rfft": (lambda f, a, norm: f.rfft(a, norm=norm), "r"),
    "rfft_odd_n": (lambda f, a, norm: f.rfft(a, n=7, norm=norm), "r"),
    "irfft": (lambda f, a, norm: f.irfft(a, norm=norm), "c"),
    "irfft_odd": (lambda f, a, norm: f.irfft(a, n=9, norm=norm), "c"),
    "irfft_padded": (lambda f, a, norm: f.irfft(a, n=20, norm=norm), "c"),
    "hfft": (lambda f, a, norm: f.hfft(a, norm=norm), "c"),
    "ihfft": (lambda f, a, norm: f.ihfft(a, norm=norm), "r"),
    "fft2_s": (lambda f, a, norm: f.fft2(a, s=(4, 6), norm=norm), "c"),
    "ifft2": (lambda f, a, norm: f.ifft2(a, norm=norm), "r"),
    "fftn": (lambda f, a, norm: f.fftn(a, norm=norm), "c"),
    "ifftn_dims": (lambda f, a, norm: f.ifftn(a, dim=(1, 0), norm=norm), "c"),
    "rfft2": (lambda f, a, norm: f.rfft2(a, norm=norm), "r"),
    "rfftn_s": (lambda f, a, norm: f.rfftn(a, s=(2, 9), norm=norm), "r"),
    "irfft2_s": (lambda f, a, norm: f.irfft2(a, s=(4, 7), norm=norm), "c"),
    "irfftn": (lambda f, a, norm: f.irfftn(a, norm=norm), "c"),
    "hfft2": (lambda f, a, norm: f.hfft2(a, norm=norm), "c"),
    "hfftn": (lambda f, a, norm: f.hfftn(a, s=(3, 8), norm=norm), "c"),
    "ihfft2": (lambda f, a, norm: f.ihfft2(a, norm=norm), "r"),
    "ihfftn": (lambda f, a, norm: f.ihfftn(a, norm=norm), "r"),
    "fftshift": (lambda f, a, norm: f.fftshift(a), "c"),
    "ifftshift_dim": (lambda f, a, norm: f.ifftshift(a, dim=1), "r"),
}


def _input(kind, dtype):
    a = _z(3, 8) if kind == "c" else rng.standard_normal((3, 8))
    if dtype == "single":
        return a.astype(np.complex64 if kind == "c" else np.float32)
    return a


def _run(lib, call, a, norm, transposed=False):
    """(values, dtype name, input gradient) of the weighted sum of call's real view."""
    x = lib.tensor(a, requires_grad=True)
    xin = x.T.T if not transposed else x.T.contiguous().T  # a non-contiguous view
    out = call(lib.fft, xin, norm)
    real = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out
    w = np.random.default_rng(5).standard_normal(tuple(real.shape))
    (real * lib.tensor(w.astype(str(real.dtype).replace("torch.", "")))).sum().backward()
    return (np.array(out.detach().resolve_conj().numpy()), str(out.dtype).replace("torch.", ""),
            x.grad.resolve_conj().numpy())


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("dtype", ["single", "double"])
def test_transform_as_pytorch(name, norm, dtype, torch):
    call, kind = TRANSFORMS[name]
    a = _input(kind, dtype)
    (v, dt, g), (tv, tdt, tg) = _run(mg, call, a, norm), _run(torch, call, a, norm)
    assert dt == tdt and v.shape == tv.shape
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "single" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(v, tv, **tol)
    np.testing.assert_allclose(g, tg, **tol)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft_odd", "fft2_s", "ihfft2"])
def test_non_contiguous_input(name, torch):
    call, kind = TRANSFORMS[name]
    a = _input(kind, "double")
    (v, _, g), (tv, _, tg) = _run(mg, call, a, "ortho", True), _run(torch, call, a, "ortho", True)
    np.testing.assert_allclose(v, tv, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_gradcheck(name, norm):
    """Central differences in float64 through the real and imaginary parts of the input."""
    call, kind = TRANSFORMS[name]
    a = _input(kind, "double")[:2, :6]

    def fn(*parts):
        x = mg.complex(*parts) if kind == "c" else parts[0]
        out = call(mg.fft, x, norm)
        return mg.view_as_real(out) if out.is_complex() else out

    parts = [a.real.copy(), a.imag.copy()] if kind == "c" else [a]
    assert gradcheck(fn, [mg.tensor(p, requires_grad=True) for p in parts])


def test_dtypes_as_pytorch(torch):
    for lib in (mg, torch):
        f = lib.fft
        got = [f.fft(lib.ones(4, dtype=lib.int64)).dtype, f.rfft(lib.ones(4, dtype=lib.float64)).dtype,
               f.irfft(lib.ones(3, dtype=lib.complex64)).dtype, f.fftfreq(4).dtype,
               f.rfftfreq(5, dtype=lib.float64).dtype, f.hfft(lib.ones(3, dtype=lib.complex128)).dtype]
        if lib is mg:
            mine = [str(d) for d in got]
        else:
            assert mine == [str(d).replace("torch.", "") for d in got]


def test_empty_batch_and_errors():
    out = mg.fft.fft(mg.zeros(0, 4))  # PyTorch's MKL backend refuses an empty batch
    assert out.shape == (0, 4) and out.dtype == mg.complex64
    with pytest.raises(IndexError, match="no dimensions"):
        mg.fft.fft(mg.tensor(1.0))
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        mg.fft.fft(mg.zeros(3, 0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        mg.fft.fft(mg.zeros(3, 4), dim=2)
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        mg.fft.rfft(mg.zeros(4), norm="unitary")
    with pytest.raises(RuntimeError, match="rfft expects a real input"):
        mg.fft.rfft(mg.zeros(4, dtype=mg.complex64))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        mg.fft.fft(mg.zeros(4, dtype=mg.float16))
    with pytest.raises(RuntimeError, match="same length"):
        mg.fft.fftn(mg.zeros(4, 4), s=(2, 2), dim=(0,))


# --- windows, stft, istft ----------------------------------------------------------------------

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_as_pytorch(name, torch):
    for n in (0, 1, 2, 5, 8, 33):
        for periodic in (True, False):
            for dt in ("float32", "float64"):
                want = getattr(torch, name)(n, periodic, dtype=getattr(torch, dt))
                got = getattr(mg, name)(n, periodic, dtype=getattr(mg, dt))
                assert str(got.dtype) == dt and got.shape == tuple(want.shape)
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(RuntimeError, match="non-negative window length"):
        getattr(mg, name)(-1)
    with pytest.raises(RuntimeError, match="floating point"):
        getattr(mg, name)(4, dtype=mg.int64)


def _both(torch, fn, *arrays):
    """fn(lib, *tensors) in both libraries: values, dtypes and gradients must agree."""
    results = []
    for lib in (mg, torch):
        ins = [lib.tensor(a, requires_grad=True) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, *ins)
        real = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out
        w = np.random.default_rng(9).standard_normal(tuple(real.shape))
        (real * lib.tensor(w.astype(str(real.dtype).replace("torch.", "")))).sum().backward()
        results.append((out.detach().resolve_conj().numpy(), str(out.dtype),
                        [t.grad.resolve_conj().numpy() for t in ins]))
    (v, dt, gs), (tv, tdt, tgs) = results
    assert dt == tdt.replace("torch.", "") and v.shape == tv.shape
    tol = dict(rtol=1e-4, atol=1e-5) if dt in ("float32", "complex64") else dict(rtol=1e-9,
                                                                                   atol=1e-10)
    np.testing.assert_allclose(v, tv, **tol)
    for g, tg in zip(gs, tgs):
        np.testing.assert_allclose(g, tg, **tol)


@pytest.mark.parametrize("pad_mode", ["reflect", "constant", "replicate", "circular"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stft_as_pytorch(pad_mode, dtype, torch):
    x = rng.standard_normal((2, 50)).astype(dtype)
    for center in (True, False):
        for normalized in (False, True):
            for onesided in (None, False):
                _both(torch, lambda lib, a: lib.stft(
                    a, 16, 4, window=lib.hann_window(16, dtype=a.dtype), center=center,
                    pad_mode=pad_mode, normalized=normalized, onesided=onesided,
                    return_complex=True), x)
    _both(torch, lambda lib, a, w: lib.stft(a, 8, hop_length=3, window=w, pad_mode=pad_mode,
                                            return_complex=True),
          x[0], rng.random(8).astype(dtype))


def test_stft_window_shorter_than_frame_and_defaults(torch):
    x = rng.standard_normal(40)
    _both(torch, lambda lib, a: lib.stft(a, 16, win_length=10, window=lib.hamming_window(
        10, dtype=a.dtype), return_complex=True), x)
    _both(torch, lambda lib, a: lib.stft(a, 16, return_complex=True), x)
    _both(torch, lambda lib, a: lib.view_as_complex(lib.stft(a, 16, return_complex=False)), x)


@pytest.mark.parametrize("win_length", [8, 10, 16, None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stft_align_to_window_as_pytorch(win_length, dtype, torch):
    """Frames start where their (shorter) window starts: more frames, other values."""
    x = rng.standard_normal((2, 100)).astype(dtype)
    _both(torch, lambda lib, a: lib.stft(a, 16, hop_length=4, win_length=win_length,
                                         window=lib.hann_window(win_length or 16, dtype=a.dtype),
                                         center=False, align_to_window=True,
                                         return_complex=True), x)
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="align_to_window should only be set when center"):
            lib.stft(lib.tensor(x), 16, center=True, align_to_window=False, return_complex=True)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_istft_as_pytorch(dtype, torch):
    real = np.float32 if dtype == np.complex64 else np.float64
    x = rng.standard_normal((2, 50)).astype(real)
    for center in (True, False):
        make = torch.hann_window if center else torch.hamming_window  # hann's ends are 0
        spec = torch.stft(torch.tensor(x), 16, 4, window=make(16, dtype=getattr(torch, np.dtype(
            real).name)), center=center, return_complex=True).numpy()
        for normalized in (False, True):
            for length in (None, 37, 60):
                def fn(lib, s):
                    w = (lib.hann_window if center else lib.hamming_window)(16, dtype=getattr(
                        lib, np.dtype(real).name))
                    return lib.istft(s, 16, 4, window=w, center=center, normalized=normalized,
                                     length=length)
                _both(torch, fn, spec)
                _both(torch, lambda lib, s: fn(lib, s[0]), spec)
    full = torch.stft(torch.tensor(x), 16, 4, window=torch.hann_window(16, dtype=getattr(
        torch, np.dtype(real).name)), onesided=False, return_complex=True).numpy()
    for complex_out in (False, True):
        _both(torch, lambda lib, s: lib.istft(s, 16, 4, window=lib.hann_window(
            16, dtype=getattr(lib, np.dtype(real).name)), onesided=False,
            return_complex=complex_out), full)


def test_stft_round_trip_and_gradcheck():
    x = mg.tensor(rng.standard_normal((2, 40)), requires_grad=True)
    w = mg.hann_window(16, dtype=mg.float64)
    spec = mg.stft(x, 16, 4, window=w, return_complex=True)
    back = mg.istft(spec, 16, 4, window=w, length=40)
    np.testing.assert_allclose(back.detach().numpy(), x.detach().numpy(), atol=1e-12)
    assert gradcheck(lambda a: mg.view_as_real(mg.stft(a, 8, 2, window=mg.hann_window(
        8, dtype=mg.float64), return_complex=True)), [mg.tensor(rng.standard_normal(20),
                                                                requires_grad=True)])
    parts = [mg.tensor(rng.standard_normal((5, 7)), requires_grad=True) for _ in range(2)]
    assert gradcheck(lambda re, im: mg.istft(mg.complex(re, im), 8, 2, window=mg.hann_window(
        8, dtype=mg.float64)), parts)


def test_stft_errors():
    x = mg.zeros(20)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        mg.stft(x, 8)
    with pytest.raises(RuntimeError, match="win_length"):
        mg.stft(x, 8, win_length=9, return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        mg.istft(mg.stft(x, 8, 2, window=mg.hann_window(8), center=False,
                         return_complex=True), 8, 2, window=mg.hann_window(8), center=False)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        mg.istft(mg.zeros(5, 3), 8)
