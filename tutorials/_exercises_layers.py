"""Checkers for tutorials 6 to 10: one head of attention, splitting heads, the causal mask, the
sinusoid table and layer norm.

Each checker compares the learner's function with minigrad or a formula on inputs hypothesis
draws and shrinks, and names a mistake only when it reproduces the learner's output both on the
shrunk input and on random inputs of the same kind.
"""
import math

import numpy as np

from _exercise_search import (Later, Wrong, as_array, call, compare, expect, expect_shape,
                              first_match, float32_note, hypothesis_modules, search, show,
                              whole_arrays)


def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# -- 06: one head of attention -----------------------------------------------------------------

_ATTENTION_MISTAKES = [
    ("the scores are not divided by sqrt(d_k)", lambda Q, K, V: _softmax(Q @ K.T) @ V),
    ("the scores are divided by d_k; divide by its square root, sqrt(d_k)",
     lambda Q, K, V: _softmax(Q @ K.T / Q.shape[-1]) @ V),
    ("the softmax runs down the columns; each query's row must sum to 1",
     lambda Q, K, V: _softmax(Q @ K.T / math.sqrt(Q.shape[-1]), axis=0) @ V),
    ("the softmax is missing: the weights are the raw scores",
     lambda Q, K, V: Q @ K.T / math.sqrt(Q.shape[-1]) @ V)]


def check_attention(fn):
    """fn(Q, K, V) -> softmax(Q K^T / sqrt(d_k)) V for arrays (T, d_k), (S, d_k), (S, d_v)."""
    _, st = hypothesis_modules()
    d = st.integers(1, 2)  # the typical case below has d_k 8

    @st.composite
    def cases(draw):
        T, S, dk, dv = draw(d), draw(d), draw(d), draw(d)
        return tuple(draw(whole_arrays(st, s)) for s in ((T, dk), (S, dk), (S, dv)))

    def verdict(case):
        Q, K, V = case
        where = f"for Q = {show(Q)}, K = {show(K)}, V = {show(V)}"
        out, low = as_array(call(fn, where, Q, K, V), "attention")
        expect_shape(out, (Q.shape[0], V.shape[1]), f"attention {where}")
        want = _softmax(Q @ K.T / math.sqrt(Q.shape[-1])) @ V
        kind = compare(out, want)
        if kind in ("exact", "float32"):
            return float32_note("attention", kind, low)

        def diagnose():
            rng = np.random.default_rng(0)
            generic = tuple(rng.standard_normal(a.shape) for a in case)
            runs = [(case, out), (generic, as_array(fn(*generic), "attention")[0])]
            label = first_match(runs, _ATTENTION_MISTAKES)
            raise Wrong(f"{where}: " + (label or f"expected {show(want)}, got {show(out)}"))
        raise Later(diagnose)
    rng = np.random.default_rng(0)
    typical = [(rng.standard_normal((4, 8)), rng.standard_normal((6, 8)),
                rng.standard_normal((6, 3)))]
    return search(cases(), verdict, max_examples=40, typical=typical)


# -- 07: splitting heads -----------------------------------------------------------------------

def check_split_heads(fn):
    """fn(x, n_heads): (B, T, E) tensor -> (B, H, T, E / H), head h holding features h*d:(h+1)*d."""
    import minigrad as mg

    _, st = hypothesis_modules()
    n = st.integers(1, 3)

    def verdict(case):
        B, T, H, d = case
        x_np = np.arange(B * T * H * d, dtype=np.float32).reshape(B, T, H * d)
        where = f"for x = {show(x_np)} of shape {x_np.shape} and {H} heads"
        out, _ = as_array(call(fn, where, mg.tensor(x_np), H), "split_heads")
        want = x_np.reshape(B, T, H, d).transpose(0, 2, 1, 3)
        if out.shape == (B, T, H, d) and out.shape != want.shape:
            raise Wrong(f"{where}, the shape is (B, T, H, d_k) = {out.shape}: move the head axis "
                        f"forward, to (B, H, T, d_k)")
        expect_shape(out, want.shape, f"split_heads {where}")
        if np.array_equal(out, want):
            return None
        if np.array_equal(out, x_np.reshape(B, H, T, d)):
            raise Wrong(f"{where}: reshaping (B, T, E) straight to (B, H, T, d_k) mixes "
                        f"positions into heads: reshape to (B, T, H, d_k) first, then move the "
                        f"head axis forward")
        if np.array_equal(out, x_np.reshape(B, T, d, H).transpose(0, 3, 1, 2)):
            raise Wrong(f"{where}: head h takes every H-th feature; it should take the block "
                        f"h*d_k:(h+1)*d_k (reshape to (B, T, H, d_k), not (B, T, d_k, H))")
        raise Wrong(f"{where}: out[b, h, t] should be x[b, t, h*d_k:(h+1)*d_k]; expected "
                    f"{show(want)}, got {show(out)}")
    return search(st.tuples(n, n, n, n), verdict, max_examples=25, typical=[(2, 3, 4, 2)])


# -- 08: the causal mask -----------------------------------------------------------------------

def check_causal_mask(fn):
    """fn(T) -> (T, T) float mask: 0 on and below the diagonal, -inf above."""
    _, st = hypothesis_modules()

    def verdict(T):
        m = as_array(call(fn, f"for T = {T}", T), "causal_mask")[0]
        expect_shape(m, (T, T), f"causal_mask({T})")
        above = np.triu(np.ones((T, T), bool), 1)
        where = f"causal_mask({T}) gave {show(m)}"
        if T > 1 and np.all(np.isneginf(m[above.T])) and np.all(m[above] == 0):
            raise Wrong(f"{where}: the mask blocks the past: -inf belongs above the diagonal "
                        f"(keys after the query), not below")
        if np.all(np.isneginf(np.diag(m))):
            raise Wrong(f"{where}: the diagonal is blocked, but a position may see itself (use "
                        f"k=1 in triu: strictly above the diagonal)")
        expect(np.all(m[~above] == 0), f"{where}: it must be 0 on and below the diagonal (a "
                                       f"position may see itself and the past)")
        if np.all(m[above] < -1e3):
            expect(np.all(np.isneginf(m[above])), f"{where}: use -inf above the diagonal, not a "
                                                  f"large finite number (a fully masked row "
                                                  f"would then still get weights)")
        expect(np.all(np.isneginf(m[above])), f"{where}: it must be -inf above the diagonal")
    return search(st.integers(1, 8), verdict, max_examples=8, typical=[1, 3, 6])


# -- 09: the sinusoid table --------------------------------------------------------------------

def _table(max_len, d, even=np.sin, odd=np.cos, step=2, halves=False):
    """Sinusoids as the usual mistakes write them (the defaults are the right table)."""
    j = np.arange(max_len)[:, None]
    omega = 10000.0 ** (-np.arange(0, d, 2) * step / 2 / d)
    if halves:
        return np.concatenate([even(omega * j), odd(omega * j)], axis=1)
    out = np.zeros((max_len, d))
    out[:, 0::2], out[:, 1::2] = even(omega * j), odd(omega * j)
    return out


_TABLE_MISTAKES = [
    ("sin and cos are swapped: sin at the even dimensions 2i, cos at the odd ones 2i + 1",
     lambda n, d: _table(n, d, np.cos, np.sin)),
    ("the sines fill the first half and the cosines the second; they alternate: sin at 2i, "
     "cos at 2i + 1", lambda n, d: _table(n, d, halves=True)),
    ("the frequencies are off: pair (2i, 2i + 1) uses 1 / 10000^(2i / d_model); yours uses "
     "i / d_model", lambda n, d: _table(n, d, step=1)),
    ("the frequencies are off: pair (2i, 2i + 1) uses 1 / 10000^(2i / d_model); yours uses "
     "4i / d_model (the index already counts in steps of 2)", lambda n, d: _table(n, d, step=4))]


def check_sinusoid_table(fn):
    """fn(max_len, d_model) -> (max_len, d_model): sin at even, cos at odd dimensions."""
    from minigrad.nn import sinusoidal_table

    _, st = hypothesis_modules()

    def verdict(case):
        n, d = case
        where = f"sinusoid_table({n}, {d})"
        P, low = as_array(call(fn, f"for {where}", n, d), "sinusoid_table")
        expect_shape(P, (n, d), where)
        want = sinusoidal_table(n, d, dtype=np.float64)
        kind = compare(P, want)
        if kind in ("exact", "float32"):
            return float32_note("sinusoid_table", kind, low)

        def diagnose():
            runs = [((n, d), P), ((10, 16), as_array(fn(10, 16), "sinusoid_table")[0])]
            label = first_match(runs, _TABLE_MISTAKES)
            if label is None and not np.allclose(P[0], np.tile([0.0, 1.0], d // 2), atol=1e-6):
                label = ("row 0 should be [0, 1, 0, 1, ...]: sin(0) at even and cos(0) at odd "
                         "dimensions")
            raise Wrong(f"{where} gave {show(P)}, expected {show(want)}: "
                        + (label or "pair (2i, 2i + 1) is sin, cos of j / 10000^(2i / d_model)"))
        raise Later(diagnose)
    return search(st.tuples(st.integers(1, 12), st.integers(1, 8).map(lambda h: 2 * h)), verdict,
                  max_examples=25, typical=[(10, 16)])


# -- 10: layer norm ----------------------------------------------------------------------------

def _stats_norm(x, axes, ddof=0, centre=True, eps=1e-5):
    mu = x.mean(axes, keepdims=True) if centre else 0
    return (x - mu) / np.sqrt(x.var(axes, ddof=ddof, keepdims=True) + eps)


_LAYER_NORM_MISTAKES = [
    ("that is batch norm (statistics over the batch and time axes); layer norm takes them over "
     "each token's own features, the last axis", lambda x: _stats_norm(x, (0, 1))),
    ("use the biased variance (divide by D, not D - 1), as the formula does",
     lambda x: _stats_norm(x, -1, ddof=1)),
    ("the mean is not subtracted: x - mean(x), then divide", lambda x: _stats_norm(x, -1,
                                                                                 centre=False)),
    ("eps is missing: a row whose values are all equal has variance 0, and eps inside the square "
     "root keeps the division finite", lambda x: _stats_norm(x, -1, eps=0.0))]


def check_layer_norm(fn):
    """fn(x, eps) -> x normalised over its last axis (biased variance), no gamma or beta."""
    _, st = hypothesis_modules()
    n = st.integers(1, 2)

    @st.composite
    def cases(draw):
        return draw(whole_arrays(st, (draw(n), draw(n), draw(st.integers(1, 4))), -3, 3))

    def verdict(x):
        where = f"for x = {show(x)} of shape {x.shape}"
        with np.errstate(all="ignore"):
            out, low = as_array(call(fn, where, x.copy(), 1e-5), "layer_norm")
        expect_shape(out, x.shape, f"layer_norm {where}")
        want = _stats_norm(x, -1)
        kind = compare(out, want)
        if kind in ("exact", "float32"):
            return float32_note("layer_norm", kind, low)

        def diagnose():
            with np.errstate(all="ignore"):
                runs = [((x,), out), ((typical,), as_array(fn(typical, 1e-5), "layer_norm")[0])]
            label = first_match(runs, _LAYER_NORM_MISTAKES)
            raise Wrong(f"{where}, you returned {show(out)}, expected {show(want)}: "
                        + (label or "each token's row should come out with mean 0 and variance 1"))
        raise Later(diagnose)
    typical = np.random.default_rng(1).normal(3.0, 2.0, (2, 5, 4))
    return search(cases(), verdict, max_examples=30, typical=[typical])
