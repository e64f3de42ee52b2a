"""The fills that draw their own mt19937 words (kernels/stream_fill.py, stream_dropout.py,
mt19937.draw) against their references, the same loops over the words drawn first: the same
numbers bit for bit, and the generator left in the same state, from any position in the
stream. (That these equal PyTorch's draws is tests/test_rng_pytorch.py's and
tests/test_dropout_pytorch.py's.)"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import random as mrandom
from minigrad import random_draws as draws
from minigrad.kernels import mt19937, normal_fill, stream_dropout, stream_fill, uniform_fill
from minigrad.random import Generator

# across the 624-word blocks and the chunks of 1024 words, and not multiples of 16
_sizes = st.one_of(st.sampled_from([0, 1, 15, 16, 17, 311, 312, 512, 513, 1024, 1025, 2049]),
                   st.integers(0, 3000))
_seeds = st.integers(0, 2 ** 32 - 1)
_skips = st.one_of(st.sampled_from([0, 1, 623, 624]), st.integers(0, 1500))


def _pair(seed, skip):
    """Two generators at the same place: the first's state for a stream kernel, the second's
    words for the reference."""
    a, b = Generator().manual_seed(seed), Generator().manual_seed(seed)
    a.random32(skip)
    b.random32(skip)
    return a, b


def _same_state(a, b):
    assert np.array_equal(a.random32(700), b.random32(700))


@settings(max_examples=40, deadline=None)
@given(seed=_seeds, skip=_skips, n=_sizes)
def test_draw_is_the_words_loop(seed, skip, n):
    a, b = _pair(seed, skip)
    buf = np.empty(max(n, 1), np.uint32)
    mt19937.draw(a._state, buf, n)
    assert np.array_equal(buf[:n], b.random32(n))
    _same_state(a, b)


@settings(max_examples=40, deadline=None)
@given(seed=_seeds, skip=_skips, n=_sizes, bounds=st.sampled_from([(0.0, 1.0), (-2.5, 3.1),
                                                                   (-1e6, 1e6)]))
def test_uniform_streams_are_the_word_loops(seed, skip, n, bounds):
    low, high = bounds
    a, b = _pair(seed, skip)
    got, want = np.empty(n, np.float32), np.empty(n, np.float32)
    span, lo = float(np.float32(high) - np.float32(low)), float(np.float32(low))
    stream_fill.uniform32(a._state, span, lo, got)
    uniform_fill.uniform32(b.random32(n), span, lo, want)
    assert np.array_equal(got, want)
    got, want = np.empty(n), np.empty(n)
    stream_fill.uniform64(a._state, high - low, low, got)
    uniform_fill.uniform64(b.random32(2 * n), high - low, low, want)
    assert np.array_equal(got, want)
    _same_state(a, b)


@settings(max_examples=40, deadline=None)
@given(seed=_seeds, skip=_skips, n=_sizes, one=st.booleans())
def test_bernoulli_streams_are_the_word_loops(seed, skip, n, one):
    a, b = _pair(seed, skip)
    probs = np.array([0.3]) if one else np.random.default_rng(seed).random(n)
    got, want = np.empty(n, bool), np.empty(n, bool)
    stream_fill.bernoulli64(a._state, probs, got)
    uniform_fill.bernoulli64(b.random32(2 * n), probs, want)
    assert np.array_equal(got, want)
    p32 = probs.astype(np.float32)
    stream_fill.bernoulli32(a._state, p32, got)
    uniform_fill.bernoulli32(b.random32(n), p32, want)
    assert np.array_equal(got, want)
    _same_state(a, b)


@settings(max_examples=30, deadline=None)
@given(seed=_seeds, skip=_skips, n=_sizes, params=st.sampled_from([(0.0, 1.0), (0.3, 1.7),
                                                                   (1e3, 3e-3)]))
def test_normal_streams_are_the_word_loops(seed, skip, n, params):
    n = max(n, 16)
    mean, std = params
    tail = 16 if n % 16 else 0
    a, b = _pair(seed, skip)
    got, want = np.empty(n, np.float32), np.empty(n, np.float32)
    stream_fill.normal32(a._state, mean, std, got)
    normal_fill.normal32(b.random32(n + tail), mean, std, want)
    assert np.array_equal(got.view(np.int32), want.view(np.int32))
    got, want = np.empty(n), np.empty(n)
    stream_fill.normal64(a._state, mean, std, got)
    normal_fill.normal64(b.random32(2 * (n + tail)), mean, std, want)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
    _same_state(a, b)


@settings(max_examples=40, deadline=None)
@given(seed=_seeds, skip=_skips, n=_sizes,
       p=st.one_of(st.sampled_from([0.1, 0.5, 0.9, 1e-9, 0.0, 2.0 ** -53, 1 - 2.0 ** -53]),
                   st.floats(0.0, 0.999)),
       dtype=st.sampled_from([np.float32, np.float64]), relu=st.booleans(),
       keep=st.booleans(), residual=st.booleans())
def test_stream_dropout_is_the_mask_times_x(seed, skip, n, p, dtype, relu, keep, residual):
    a, b = _pair(seed, skip)
    x = np.random.default_rng(seed).standard_normal(n).astype(dtype)
    x[::7] = 0.0
    r = np.random.default_rng(seed + 1).standard_normal(n if residual else 0).astype(dtype)
    mask = draws.dropout_mask(b, (n,), p, dtype)   # the reference: Bernoulli draws, np.where
    want = (np.maximum(x, 0) if relu else x) * mask
    if residual:   # the separate add after the multiply: two roundings
        want = r + want
    out, got_mask = np.empty(n, dtype), np.empty(n if keep else 0, dtype)
    stream_dropout.dropout(a._state, x, 1.0 - p, dtype(1) / dtype(1.0 - p), relu, out,
                           got_mask, r)
    assert np.array_equal(out, want)
    if keep:
        assert np.array_equal(got_mask, mask)
    _same_state(a, b)


def test_a_dropout_of_nan_and_infinities_is_the_multiply():
    a, b = _pair(5, 0)
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 1.0] * 40, np.float32)
    mask = draws.dropout_mask(b, x.shape, 0.5, np.float32)
    for relu in (False, True):
        out = np.empty_like(x)
        stream_dropout.dropout(a._state, x, 0.5, np.float32(2), relu, out,
                               np.empty(0, np.float32), np.empty(0, np.float32))
        with np.errstate(invalid="ignore"):   # inf * 0
            want = (np.maximum(x, 0) if relu else x) * mask
        assert np.array_equal(out, want, equal_nan=True)
        mask = draws.dropout_mask(b, x.shape, 0.5, np.float32)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 600), seed=_seeds, dtype=st.sampled_from([np.float32, np.float64]))
def test_the_draws_without_a_state_view_are_the_same(n, seed, dtype):
    # a NumPy whose MT19937 state cannot be viewed: the word arrays and the loops over them
    a, b = Generator().manual_seed(seed), Generator().manual_seed(seed)
    b._state = None
    assert np.array_equal(draws.uniform(a, n, dtype, -1.0, 2.0),
                          draws.uniform(b, n, dtype, -1.0, 2.0))
    assert np.array_equal(draws.normal(a, n, dtype), draws.normal(b, n, dtype))
    probs = np.array([0.25], dtype)
    assert np.array_equal(draws.bernoulli(a, probs, n), draws.bernoulli(b, probs, n))
    _same_state(a, b)


@pytest.fixture
def pytorch_dropout():
    with mrandom.use_pytorch_dropout(True):   # (the default: set for these tests' sake)
        yield


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_functional_dropout_is_the_drawn_mask_times_x(pytorch_dropout, dtype, transposed):
    # C-contiguous input: the one pass; a transposed view: the mask drawn first, in memory
    # order. Either is x times random_draws.dropout_mask, and so is its gradient
    x = np.random.default_rng(2).standard_normal((40, 30)).astype(dtype)
    weights = np.arange(1200, dtype=dtype).reshape(40, 30)
    leaf = mg.tensor(x.T.copy() if transposed else x, requires_grad=True)
    mg.manual_seed(9)
    t = leaf.t() if transposed else leaf
    y = mg.nn.functional.dropout(t, 0.3)
    (y * mg.tensor(weights)).sum().backward()
    state = mg.get_rng_state().numpy()
    mg.manual_seed(9)
    mask = draws.dropout_mask(mrandom.default_generator, (40, 30), 0.3, dtype,
                              like=t.detach().numpy())
    assert np.array_equal(y.numpy(), x * mask)
    grad = leaf.grad.numpy()
    assert np.array_equal(grad.T if transposed else grad, weights * mask)
    assert np.array_equal(state, mg.get_rng_state().numpy())


def test_relu_dropout_under_pytorch_masks_is_the_separate_ops(pytorch_dropout):
    from nn import fast_path
    x = np.random.default_rng(3).standard_normal((64, 48)).astype(np.float32)
    w = np.random.default_rng(4).standard_normal((64, 48)).astype(np.float32)
    got = []
    for fused in (True, False):
        t = mg.tensor(x, requires_grad=True)
        mg.manual_seed(12)
        y = (fast_path.relu_dropout(t, 0.4) if fused else
             mg.nn.functional.dropout(mg.nn.functional.relu(t), 0.4))
        (y * mg.tensor(w)).sum().backward()
        got.append((y.numpy(), t.grad.numpy(), mg.get_rng_state().numpy()))
    for a, b in zip(*got):
        assert np.array_equal(a, b)


def test_relu_dropout_gradient_matches_pytorch(pytorch_dropout):
    import torch
    from nn import fast_path
    x = np.random.default_rng(5).standard_normal((32, 20)).astype(np.float32)
    torch.manual_seed(6)
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.dropout(torch.relu(tx), 0.25).pow(2).sum().backward()
    mg.manual_seed(6)
    mx = mg.tensor(x, requires_grad=True)
    (fast_path.relu_dropout(mx, 0.25) ** 2).sum().backward()
    assert np.array_equal(tx.grad.numpy(), mx.grad.numpy())
    assert np.array_equal(torch.get_rng_state().numpy(), mg.get_rng_state().numpy())


class _Refused:
    """Stands in for kernels/stream_fill.py: any of its kernels called is a failure."""

    def __getattr__(self, name):
        real = getattr(stream_fill, name)

        class Kernel:
            overloads = real.overloads

            def __call__(self, *args):
                raise AssertionError(f"stream_fill.{name} ran")
        return Kernel()


def test_a_short_fill_takes_the_stream_loop_only_when_it_compiles_nothing(monkeypatch):
    # not at hand (an empty cache, nothing compiled): the loops over words, or NumPy's form
    monkeypatch.setattr(draws, "_stream", _Refused())
    monkeypatch.setattr(draws, "_at_hand", lambda kernel, args: False)
    a = Generator().manual_seed(1)
    for dtype in (np.float32, np.float64):
        draws.normal(a, 1000, dtype)
        draws.uniform(a, 1000, dtype)
        draws.bernoulli(a, np.array([0.5], dtype), 1000)
    # from STREAM_COMPILED_FROM words on, the stream loop (compiling it if need be)
    monkeypatch.setattr(draws, "STREAM_COMPILED_FROM", 500)
    with pytest.raises(AssertionError, match="stream_fill.uniform32 ran"):
        draws.uniform(a, 1000, np.float32)
    with pytest.raises(AssertionError, match="stream_fill.normal64 ran"):
        draws.normal(a, 300, np.float64)


def test_a_compiled_stream_loop_is_at_hand():
    g = Generator().manual_seed(3)
    out = np.empty(40, np.float32)
    stream_fill.uniform32(g._state, 1.0, 0.0, out)   # compiled (or loaded) in this process
    assert draws._at_hand(stream_fill.uniform32, (g._state, 1.0, 0.0, out))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_the_fills_in_place_are_the_drawn_values(dtype, layout):
    # a C-contiguous float tensor is written in place; any other gets the same draws copied
    for fill, draw in ((draws.fill_normal, draws.normal), (draws.fill_uniform, draws.uniform)):
        base = np.zeros((37, 20), dtype)
        d = {"C": base, "F": np.asfortranarray(base), "strided": base[:, ::2]}[layout]
        a, b = Generator().manual_seed(8), Generator().manual_seed(8)
        fill(a, d)
        ref = d.T if layout == "F" else d
        kind = np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(np.float64)
        if draw is draws.normal:
            want = draw(b, d.size, kind, 0.0, 1.0, layout == "C")
        else:
            want = draw(b, d.size, kind)
        assert np.array_equal(ref.reshape(-1), want.astype(dtype)), fill.__name__
        _same_state(a, b)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_generator_draws_one_stream_from_its_own_engine(how):
    import copy
    import pickle
    g = Generator().manual_seed(3)
    g.random32(5)
    h = copy.deepcopy(g) if how == "deepcopy" else pickle.loads(pickle.dumps(g))
    for gen in (g, h):   # the compiled loop on the state, then NumPy's words, then a sampler
        gen.drawn = (stream_fill.uniform32(gen._state, 1.0, 0.0, np.empty(50, np.float32)),
                     gen.random32(700), gen._rng.random(3))
    assert np.array_equal(g.drawn[1], h.drawn[1]) and np.array_equal(g.drawn[2], h.drawn[2])
    assert np.array_equal(g.random32(3), h.random32(3))
    u = Generator().manual_seed(3)
    u.random32(5 + 50)
    assert np.array_equal(u.random32(700), h.drawn[1])   # the copy's state moved with its draws


@pytest.mark.parametrize("batch_first", [True, False])
def test_packed_attention_under_pytorch_masks_is_pytorchs(pytorch_dropout, batch_first):
    # need_weights=False takes the packed op, its weights' mask drawn inside: PyTorch's
    # output, gradients and generator state
    import torch
    a = np.random.default_rng(7).standard_normal((5, 4, 8)).astype(np.float32)
    got = []
    for L in (torch, mg):
        L.manual_seed(2)
        mha = L.nn.MultiheadAttention(8, 2, dropout=0.4, batch_first=batch_first)
        x = L.tensor(a, requires_grad=True)
        out = mha(x, x, x, need_weights=False)[0]
        (out * out).sum().backward()
        got.append([t.detach().numpy() for t in (out, x.grad, mha.in_proj_weight.grad)]
                   + [L.get_rng_state().numpy()])
    for want, have in zip(got[0][:3], got[1][:3]):
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got[0][3], got[1][3])


def test_packed_attention_with_a_drawn_mask_has_the_separate_ops_rules(pytorch_dropout):
    # the double-backward rule and the forward-mode rule use the kept mask
    from minigrad import autograd
    from nn import fast_path
    q = np.random.default_rng(8).standard_normal((2, 3, 12)).astype(np.float64)
    t = mg.tensor(q, requires_grad=True)
    mg.manual_seed(4)
    out = fast_path.packed_attention(t, None, 2, dropout_p=0.5)
    (g,) = autograd.grad((out ** 2).sum(), [t], create_graph=True)
    (gg,) = autograd.grad(g.sum(), [t])
    mg.manual_seed(4)
    y = fast_path.packed_attention(mg.tensor(q), None, 2, dropout_p=0.5)
    mg.manual_seed(4)   # the same draw again, for the separate ops
    mask = draws.dropout_mask(mrandom.default_generator, (2, 2, 3, 3), 0.5, np.float64)
    s = mg.tensor(q, requires_grad=True)
    ref = fast_path._separate(s, None, 2, None, 0.0, 0, mask)
    (rg,) = autograd.grad((ref ** 2).sum(), [s], create_graph=True)
    (rgg,) = autograd.grad(rg.sum(), [s])
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.numpy(), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(g.detach().numpy(), rg.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(gg.numpy(), rgg.numpy(), rtol=1e-10, atol=1e-12)
