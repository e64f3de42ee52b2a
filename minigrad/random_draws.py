"""PyTorch's CPU samplers on the mt19937 words of random.Generator: the same words in the same
order, turned into numbers by the same arithmetic, so minigrad's draws equal PyTorch's after the
same seed (ATen's DistributionsHelper.h, TransformationHelper.h and the cpu kernels).

    uniform      float32 (and float16, computed in float32 and rounded to it): word &
                 (2**24 - 1), times 2**-24, times (to - from), plus from, in one fused
                 multiply-add; float64: the low 53 bits of a 64-bit word (two words, the
                 first the high half), the multiply-add fused as well
    normal       >= 16 contiguous elements: uniforms for all, then Box-Muller on blocks of 16
                 (float32: the AVX2 kernel's, normal_avx.py; float64: the C library's log,
                 cos and sin), the tail redone over the last 16 with 16 new uniforms; fewer,
                 or not contiguous: one float64 pair per two draws, the second kept in the
                 generator for the next draw; mean and std applied in a fused multiply-add
    integers     a word modulo the range plus the low end (a 64-bit word from a range of 2**32)
    randperm     n - 1 words, swap i with i + word % (n - i)
    bernoulli    a float64 uniform < p (a float32 one for float32 probabilities)
    dropout      bernoulli(1 - p) over the input's memory order, divided by 1 - p
    exponential  -log1p(-u) / lambda of a float64 uniform u

uniform, normal and bernoulli run compiled loops: kernels/stream_fill.py's, which draw the
words themselves from the generator's state, or kernels/uniform_fill.py's and normal_fill.py's
over an array of words drawn first (the `*_reference` functions here are their NumPy forms,
with the same bits in float32). All give the same numbers; what differs is the compile on a
fresh install, which a model's first step should not wait for. So a fill takes the stream
loop when it is at hand (compiled in this process, or in Numba's on-disk cache, where loading
it takes milliseconds) or the fill is long (STREAM_COMPILED_FROM words and up, where it saves
more than it costs); else the loop over words (a smaller compile, which model set-up has
paid already), and a float32 normal fill the NumPy form below NORMAL32_COMPILED_FROM
elements: compiling its loop takes about 2 CPU seconds, and the NumPy form fills even an
embedding table of a million weights in about 70 ms.

Every function returns a flat array of n numbers; the callers shape it.
"""
from __future__ import annotations

import math

import numpy as np

from . import normal_avx
from .kernels import fma as _fma
from .kernels import normal_fill as _normal_fill
from .kernels import stream_fill as _stream
from .kernels import uniform_fill as _uniform_fill

NORMAL32_COMPILED_FROM = 1 << 20
STREAM_COMPILED_FROM = 1 << 20
_in_cache = {}   # (stream kernel, argument dtypes) -> whether it compiles nothing (_at_hand)
_DIGITS = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def unit(gen, n, dtype):
    """n uniforms in [0, 1): float64's from 53 bits, every other dtype's as float32 from 24
    bits of one word (PyTorch draws float16 in its float32 compute type)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return (gen.random64(n) & np.uint64(2 ** 53 - 1)).astype(np.float64) * 2.0 ** -53
    return (gen.random32(n) & np.uint64(2 ** 24 - 1)).astype(np.float32) * np.float32(2.0 ** -24)


def _at_hand(kernel, args):
    """Whether calling `kernel` (a stream_fill dispatcher) on args compiles nothing. Its
    arrays are 1-D C-contiguous and its numbers float64, so their dtypes tell the argument
    types (Numba's typeof of them costs tens of microseconds: asked once per dtypes)."""
    key = (kernel,) + tuple(a.dtype if type(a) is np.ndarray else type(a) for a in args)
    held = _in_cache.get(key)
    if held is None or (not held and kernel.overloads):
        from numba import typeof
        types = tuple(typeof(a) for a in args)
        held = types in kernel.overloads
        if not held and key not in _in_cache:
            from .kernels.compile_worker import cached
            # (under the argument types alone: a call from Python files its compile so)
            held = cached(kernel, types)
        _in_cache[key] = held
    return held


def _streamed(gen, words, kernel, *args):
    """Run `kernel(state, *args)` of kernels/stream_fill.py on gen's state, which it moves on
    by `words` words, and return True; or nothing and False where that would compile on a
    short fill (the module's docstring) or NumPy's state cannot be viewed."""
    state = gen._state
    if state is None or (words < STREAM_COMPILED_FROM and not _at_hand(kernel, (state,) + args)):
        return False
    kernel(state, *args)
    return True


def uniform(gen, n, dtype, low=0.0, high=1.0, out=None):
    """n draws of U[low, high) in dtype: PyTorch's uniform_ (the loops of
    kernels/uniform_fill.py; `uniform_reference` is the same in NumPy). `out`: a C-contiguous
    array of n elements of dtype (float32 or float64) to write them into, and return."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        out = np.empty(n) if out is None else out
        span, lo = float(high) - float(low), float(low)
        if not _streamed(gen, 2 * n, _stream.uniform64, span, lo, out):
            _uniform_fill.uniform64(gen.random32(2 * n), span, lo, out)
        return out
    if dtype != np.float32:
        return uniform_reference(gen, n, dtype, low, high)
    lo, hi = np.float32(low), np.float32(high)
    out = np.empty(n, np.float32) if out is None else out
    span, lo = float(hi - lo), float(lo)
    if not _streamed(gen, n, _stream.uniform32, span, lo, out):
        _uniform_fill.uniform32(gen.random32(n), span, lo, out)
    return out


def uniform_reference(gen, n, dtype, low=0.0, high=1.0):
    """`uniform` in NumPy (float64's multiply-add fused in exact arithmetic, element by
    element: slow, for tests)."""
    dtype = np.dtype(dtype)
    x = unit(gen, n, dtype)
    if dtype == np.float64:
        return _fused(x, high - low, low)
    acc = np.float32  # float16 computes in float32, PyTorch's opmath type
    lo, hi = acc(low), acc(high)
    # the multiply-add rounds once: the float32 product is exact in float64
    return (x.astype(np.float64) * np.float64(acc(hi - lo)) + np.float64(lo)).astype(dtype)


def _fused(x, scale, shift):
    """x * scale + shift rounded once, element by element, in exact fractions."""
    from fractions import Fraction
    return np.array([float(Fraction(v) * Fraction(scale) + Fraction(shift)) for v in x.tolist()],
                    dtype=np.float64)


def _pairs(gen, count):
    """count standard normals from float64 pairs (normal_distribution<double>), using and
    refilling the generator's cached second value."""
    out = np.empty(count)
    start = 0
    if count and gen.normal_cache is not None:
        out[0], gen.normal_cache, start = gen.normal_cache, None, 1
    k = (count - start + 1) // 2
    if k:
        u = unit(gen, 2 * k, np.float64).tolist()
        # the C library's log1p, cos and sin (Python's math), as PyTorch's: NumPy's own
        # vectorised ones can differ in the last bit
        radius = [math.sqrt(-2.0 * math.log1p(-v)) for v in u[1::2]]
        theta = [2.0 * math.pi * v for v in u[0::2]]
        both = np.empty(2 * k)
        both[0::2] = [r * math.cos(t) for r, t in zip(radius, theta)]
        both[1::2] = [r * math.sin(t) for r, t in zip(radius, theta)]
        out[start:] = both[:count - start]
        if (count - start) % 2:
            gen.normal_cache = float(both[-1])
    return out


def normal(gen, n, dtype, mean=0.0, std=1.0, contiguous=True, out=None):
    """n draws of N(mean, std**2) in dtype: PyTorch's normal_ of a tensor of n elements.
    `out`: a C-contiguous array of n elements of dtype (float32 or float64) that the compiled
    fills write into and return (the other forms return a new array)."""
    dtype = np.dtype(dtype)
    if n < 16 or not contiguous:  # PyTorch's compiler fuses the multiply-add
        return _fma.affine(_pairs(gen, n), float(std), float(mean)).astype(dtype, copy=False)
    tail = 16 if n % 16 else 0
    mean, std = float(mean), float(std)
    if dtype == np.float64:
        out = np.empty(n) if out is None else out
        if not _streamed(gen, 2 * (n + tail), _stream.normal64, mean, std, out):
            _normal_fill.normal64(gen.random32(2 * (n + tail)), mean, std, out)
        return out
    if dtype != np.float32:
        return _normal16(gen, n, dtype, mean, std)
    out = np.empty(n, np.float32) if out is None else out
    if _streamed(gen, n + tail, _stream.normal32, mean, std, out):
        return out
    if n < NORMAL32_COMPILED_FROM:
        return normal_reference(gen, n, dtype, mean, std)
    _normal_fill.normal32(gen.random32(n + tail), mean, std, out)
    return out


def normal_reference(gen, n, dtype, mean=0.0, std=1.0):
    """`normal` of n >= 16 contiguous elements in NumPy: normal_avx.py's float32 Box-Muller
    (NumPy's float64 log, cos and sin can be an ulp off the C library's, and the multiply-add
    is not fused: kernels/normal_fill.py's normal64_reference is float64's exact one)."""
    dtype = np.dtype(dtype)
    calc = np.float64 if dtype == np.float64 else np.float32
    data = unit(gen, n, calc)
    full = n // 16 * 16
    data[:full] = _fill16(data[:full].reshape(-1, 16), calc, mean, std).reshape(-1)
    if n % 16:
        data[n - 16:] = _fill16(unit(gen, 16, calc).reshape(1, 16), calc, mean, std)[0]
    return data.astype(dtype)


def _normal16(gen, n, dtype, mean, std):
    """float16's normal of n >= 16 contiguous elements: PyTorch's generic fill in float32,
    which draws the uniforms of each block of 16 as it goes (the float32 fill draws them all
    first), the last n % 16 recomputed with the last 16 from 16 new uniforms."""
    full = n // 16 * 16
    out = np.empty(n, np.float32)
    out[:full] = _fill16(unit(gen, full, np.float32).reshape(-1, 16), np.float32, mean,
                         std).reshape(-1)
    if n % 16:
        out[n - 16:] = _fill16(unit(gen, 16, np.float32).reshape(1, 16), np.float32, mean, std)[0]
    return out.astype(dtype)


def _fill16(u, calc, mean, std):
    if calc == np.float32:
        return normal_avx.box_muller_16(u, mean, std)
    radius = np.sqrt(-2.0 * np.log(1.0 - u[:, :8]))
    theta = 2.0 * np.pi * u[:, 8:]
    out = np.empty_like(u)
    out[:, :8] = radius * np.cos(theta) * std + mean
    out[:, 8:] = radius * np.sin(theta) * std + mean
    return out


def integers(gen, n, low, high, dtype=np.int64):
    """n integers of [low, high) (PyTorch's random_(from, to) and randint): one word modulo
    the range, a 64-bit word when the range reaches 2**32 (for 64-bit and float dtypes)."""
    span = int(high) - int(low)
    wide = span >= 2 ** 32 and np.dtype(dtype) in (np.dtype(np.int64), np.dtype(np.float64),
                                                   np.dtype(np.float32))
    words = gen.random64(n) if wide else gen.random32(n)
    vals = (words % np.uint64(span)).astype(np.int64)
    return (vals + np.int64(low)) if -2 ** 63 <= int(low) < 2 ** 63 else vals + int(low)


def full_range(gen, n, dtype):
    """random_() with no range: 0 .. the dtype's largest integer (2**24 for float32: every
    integer it holds exactly), from a 64-bit word for int64 and float64, else a 32-bit one."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return (gen.random32(n) & np.uint64(1)).astype(dtype)
    if dtype.kind == "f":
        top = 2 ** _DIGITS[dtype] + 1
    else:
        top = int(np.iinfo(dtype).max) + 1
    words = gen.random64(n) if dtype in (np.dtype(np.int64), np.dtype(np.float64)) else (
        gen.random32(n))
    return (words % np.uint64(top)).astype(dtype)


def randperm(gen, n):
    """PyTorch's randperm_cpu: for n below 2**32 / 20, the Fisher-Yates swaps of i with
    i + random() % (n - i); above, the inside-out shuffle on random64() % (i + 1)."""
    from .kernels.shuffle import inside_out, swap_forward
    if n < (2 ** 32 - 1) // 20:
        steps = (gen.random32(max(n - 1, 0)) % np.arange(n, 1, -1, dtype=np.uint64)).astype(
            np.int64)
        return swap_forward(steps, n)
    return inside_out((gen.random64(n) % np.arange(1, n + 1, dtype=np.uint64)).astype(np.int64))


def bernoulli(gen, probs, n=None):
    """True where a uniform < p, for each p of the flat array probs (or its one p, n times):
    float64 uniforms for float64 probabilities, float32 ones for others (PyTorch's
    bernoulli_distribution<T>; the loops of kernels/uniform_fill.py)."""
    n = probs.size if n is None else n
    out = np.empty(n, np.bool_)
    if probs.dtype == np.float64:
        probs = np.ascontiguousarray(probs)
        if not _streamed(gen, 2 * n, _stream.bernoulli64, probs, out):
            _uniform_fill.bernoulli64(gen.random32(2 * n), probs, out)
    else:
        probs = np.ascontiguousarray(probs, np.float32)
        if not _streamed(gen, n, _stream.bernoulli32, probs, out):
            _uniform_fill.bernoulli32(gen.random32(n), probs, out)
    return out


def bernoulli_reference(gen, probs, n=None):
    """`bernoulli` in NumPy."""
    n = probs.size if n is None else n
    if probs.dtype == np.float64:
        return unit(gen, n, np.float64) < probs
    return unit(gen, n, np.float32) < probs.astype(np.float32)


def dropout_mask(gen, shape, p, dtype, like=None):
    """PyTorch's CPU dropout mask of `shape` in dtype: `empty_like(x).bernoulli_(1 - p)` (a
    float64 uniform < 1 - p per element, in x's memory order: that of the array `like` when
    its elements are dense in memory, else C order), then divided by 1 - p in dtype: 0 or
    1 / (1 - p), the division rounded in dtype, as `noise.div_(1 - p)`."""
    dtype = np.dtype(dtype)
    order = _dense_order(like) if like is not None else None
    drawn = tuple(shape) if order is None else tuple(shape[a] for a in order)
    n = int(np.prod(shape, dtype=np.int64))
    keep = bernoulli(gen, np.array([1.0 - p]), n).reshape(drawn)
    if order is not None:
        keep = keep.transpose(np.argsort(order))
    return np.where(keep, dtype.type(1) / dtype.type(1.0 - p), dtype.type(0))


def fused_dropout(gen, x):
    """Whether `dropout_drawn` takes x: float32 or float64, its elements filling a block of
    memory (C order or another order of its axes), and a view of gen's state."""
    return (gen._state is not None and x.dtype in _FUSED
            and (x.flags.c_contiguous or _dense_order(x) is not None))


_FUSED = (np.dtype(np.float32), np.dtype(np.float64))


def dropout_drawn(gen, x, p, relu=False, keep_mask=True, residual=None):
    """(x * mask, mask) in one compiled pass (kernels/stream_dropout.py), the mask
    `dropout_mask(gen, x.shape, p, x.dtype, like=x)`, for an x that `fused_dropout` takes;
    relu: max(x, 0) * mask; keep_mask False: the mask is not written, and None; residual (of
    x's shape and dtype): residual + x * mask, a residual connection's sum in the same pass.
    Drawn in x's memory order, the output and the mask are laid out as x (PyTorch's
    empty_like)."""
    from .kernels import stream_dropout
    order = None if x.flags.c_contiguous else _dense_order(x)
    if order is not None:   # its memory order as C order
        x = x.transpose(order)
        residual = None if residual is None else residual.transpose(order)
    scale = x.dtype.type(1.0) / x.dtype.type(1.0 - p)
    out = np.empty(x.shape, x.dtype)
    mask = np.empty(x.shape if keep_mask else 0, x.dtype)
    res = (np.empty(0, x.dtype) if residual is None
           else np.ascontiguousarray(residual, x.dtype).reshape(-1))
    stream_dropout.dropout(gen._state, x.reshape(-1), 1.0 - p, scale, bool(relu),
                           out.reshape(-1), mask.reshape(-1), res)
    if order is not None:
        back = np.argsort(order)
        out, mask = out.transpose(back), (mask.transpose(back) if keep_mask else mask)
    return out, (mask if keep_mask else None)


def _dense_order(a):
    """The axes of the array a from the outermost in memory to the innermost, when a's
    elements fill a block of memory in that order and it is not C order; else None."""
    if a.ndim < 2 or a.flags.c_contiguous:
        return None
    order = tuple(sorted(range(a.ndim), key=lambda ax: -a.strides[ax]))
    return order if a.transpose(order).flags.c_contiguous else None


def exponential(gen, n, lambd):
    """n draws of the exponential distribution of rate lambd, in float64."""
    return -1.0 / lambd * np.log1p(-unit(gen, n, np.float64))


def _memory_order(d):
    """d as a view whose C order is d's memory order when d is transposed (PyTorch's
    iterators walk memory in order), else d."""
    return d.T if d.ndim > 1 and not d.flags.c_contiguous and d.flags.f_contiguous else d


def fill_normal(gen, d, mean=0.0, std=1.0):
    """Write N(mean, std**2) draws into the array d, as PyTorch's d.normal_(mean, std)."""
    if d.dtype.kind == "c":  # the real view, with std / sqrt(2) per part
        part = np.dtype(d.dtype.char.lower())
        vals = normal(gen, 2 * d.size, part, 0.0, std / np.sqrt(2.0))
        d[...] = (vals[0::2] + 1j * vals[1::2]).reshape(d.shape) + mean
        return d
    view = _memory_order(d)
    # PyTorch's Box-Muller blocks need a contiguous tensor; a transposed one is drawn pair by
    # pair, in memory order
    contiguous = d.flags.c_contiguous
    into = _flat_target(view)
    vals = normal(gen, d.size, d.dtype if d.dtype.kind == "f" else np.float64, mean, std,
                  contiguous, out=into)
    if vals is not into:
        view[...] = vals.reshape(view.shape)
    return d


def _flat_target(view):
    """view as a flat array the fills may write into (C-contiguous float32 or float64), else
    None: the draws are then copied in (and converted)."""
    if view.flags.c_contiguous and view.dtype in _FUSED and view.flags.writeable:
        return view.reshape(-1)
    return None


def fill_uniform(gen, d, low=0.0, high=1.0):
    """Write U[low, high) draws into the array d, as PyTorch's d.uniform_(low, high)."""
    if d.dtype.kind == "c":
        part = np.dtype(d.dtype.char.lower())
        vals = uniform(gen, 2 * d.size, part, low, high)
        d[...] = (vals[0::2] + 1j * vals[1::2]).reshape(d.shape)
        return d
    view = _memory_order(d)
    into = _flat_target(view)
    vals = uniform(gen, d.size, d.dtype if d.dtype.kind == "f" else np.float64, low, high,
                   out=into)
    if vals is not into:
        view[...] = vals.reshape(view.shape)
    return d
