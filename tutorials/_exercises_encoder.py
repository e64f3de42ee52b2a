"""Checkers for tutorial 11: Add & Norm around a sublayer, and a whole encoder layer compared
with `nn.TransformerEncoderLayer` holding the same weights.

Hypothesis draws the inputs (and the layer's sizes and padding) and shrinks a failure; a mistake
is named only when it reproduces the learner's output on the shrunk input and on a typical one.
"""
import numpy as np

from _exercise_search import (Later, Wrong, as_array, call, compare, expect, expect_shape,
                              hypothesis_modules, search, show, whole_arrays)


class _Seeded:
    """minigrad's random state set to `seed` inside, and given back as it was on leaving, so
    a checker draws the same weights every run and leaves the tutorial's random stream alone."""

    def __init__(self, seed):
        self.seed = seed

    def __enter__(self):
        import minigrad as mg

        self.saved = mg.get_rng_state()
        mg.manual_seed(self.seed)

    def __exit__(self, *exc):
        import minigrad as mg

        mg.set_rng_state(self.saved)


def _add_and_norm_parts(D):
    """A sublayer and a layer norm of width D with fixed weights (the norm's away from 1, 0)."""
    import minigrad as mg
    from minigrad import nn

    rng = np.random.default_rng(D)
    sub, norm = nn.Linear(D, D), nn.LayerNorm(D)
    with mg.no_grad():
        sub.weight.copy_(rng.normal(0, 1, (D, D)).astype(np.float32))
        sub.bias.copy_(rng.normal(0, 1, D).astype(np.float32))
        norm.weight.copy_(np.linspace(0.5, 2.0, D).astype(np.float32))
        norm.bias.copy_(np.full(D, 0.3, np.float32))
    return sub, norm


def _add_and_norm_runs(fn, x_np):
    """{(norm_first): learner's output} and the usual variants, for one x."""
    import minigrad as mg

    sub, norm = _add_and_norm_parts(x_np.shape[-1])
    x = mg.tensor(x_np.astype(np.float32))
    variants = {"post": norm(x + sub(x)), "pre": x + sub(norm(x)), "post, no residual":
                norm(sub(x)), "pre, no residual": sub(norm(x)), "pre, norm(x) added":
                norm(x) + sub(norm(x))}
    variants = {k: v.numpy().astype(np.float64) for k, v in variants.items()}
    got = {flag: as_array(fn(x, sub, norm, flag), "add_and_norm") for flag in (False, True)}
    return got, variants


_ADD_AND_NORM_MISTAKES = [
    ((False, "pre"), (True, "post"), "the two variants are swapped: norm_first=True is pre-norm, "
                                     "x + f(norm(x)); norm_first=False is post-norm, "
                                     "norm(x + f(x))"),
    ((True, "post"), None, "norm_first=True gives post-norm too: pre-norm is x + f(norm(x))"),
    ((False, "pre"), None, "norm_first=False gives pre-norm too: post-norm (the paper's) is "
                           "norm(x + f(x))"),
    ((False, "post, no residual"), None, "the residual is missing: norm(x + f(x)), not "
                                         "norm(f(x))"),
    ((True, "pre, no residual"), None, "the residual is missing: x + f(norm(x)), not "
                                       "f(norm(x))"),
    ((True, "pre, norm(x) added"), None, "the residual adds the normalised x; it adds x itself: "
                                         "x + f(norm(x))")]


def check_add_and_norm(fn):
    """fn(x, sublayer, norm, norm_first) -> post-norm norm(x + f(x)) or pre-norm x + f(norm(x))."""
    _, st = hypothesis_modules()
    n = st.integers(1, 2)

    @st.composite
    def cases(draw):
        return draw(whole_arrays(st, (draw(n), draw(n), draw(st.integers(2, 4))), -3, 3))

    def same(a, b):
        return a.shape == b.shape and compare(a, b) in ("exact", "float32")

    def verdict(x_np):
        where = f"for x = {show(x_np)} of shape {x_np.shape}"
        got, variants = call(_add_and_norm_runs, where, fn, x_np)
        wrong = [flag for flag, key in ((False, "post"), (True, "pre"))
                 if not same(got[flag][0], variants[key])]
        if not wrong:
            return None

        def diagnose():
            runs = [(got, variants), _add_and_norm_runs(fn, typical)]
            for first, second, label in _ADD_AND_NORM_MISTAKES:
                if all(same(g[c[0]][0], v[c[1]]) for g, v in runs
                       for c in filter(None, (first, second))):
                    raise Wrong(f"{where}: {label}")
            flag = wrong[0]
            want = variants["pre" if flag else "post"]
            raise Wrong(f"{where} and norm_first={flag}, you returned {show(got[flag][0])}, "
                        f"expected {show(want)}: "
                        + ("x + sublayer(norm(x))" if flag else "norm(x + sublayer(x))"))
        raise Later(diagnose)
    typical = np.random.default_rng(0).normal(1.0, 3.0, (2, 3, 6))
    return search(cases(), verdict, max_examples=20, typical=[typical])


def _library_encoder_layer(d, h, ff, dropout, norm_first=False):
    from minigrad import nn

    return nn.TransformerEncoderLayer(d, h, ff, dropout=dropout, batch_first=True,
                                      norm_first=norm_first)


def _encoder_layer_variants(lib, x, pad):
    """What the usual mistakes compute, from the library layer's own modules (eval mode)."""
    def sa(h):
        return lib.self_attn(h, h, h, key_padding_mask=pad, need_weights=False)[0]

    def ffn(h, relu=True):
        a = lib.linear1(h)
        return lib.linear2(a.relu() if relu else a)

    n1, n2 = lib.norm1, lib.norm2
    h = n1(x + sa(x))
    yield ("the residual around self-attention is missing: norm1(x + self_attn(x))",
           n2(n1(sa(x)) + ffn(n1(sa(x)))))
    yield "the residual around the feed-forward network is missing: norm2(h + ffn(h))", n2(ffn(h))
    yield ("the norm is in the wrong place: it normalises the sublayer's output before the "
           "residual is added; Add & Norm is norm(x + sublayer(x))",
           (lambda g: g + n2(ffn(g)))(x + n1(sa(x))))
    yield ("that is pre-norm, x + sublayer(norm(x)); the paper's layer (norm_first=False) is "
           "post-norm, norm(x + sublayer(x))",
           (lambda g: g + ffn(n2(g)))(x + sa(n1(x))))
    yield "norm1 and norm2 are swapped", (lambda g: n1(g + ffn(g)))(n2(x + sa(x)))
    yield "the ReLU between linear1 and linear2 is missing", n2(h + ffn(h, relu=False))
    if pad is not None:
        no_mask = n1(x + lib.self_attn(x, x, x, need_weights=False)[0])
        yield ("the padding mask is ignored: pass src_key_padding_mask to self_attn as "
               "key_padding_mask", n2(no_mask + ffn(no_mask)))


def _encoder_layer_run(cls, B, T, h, d_head, ff, pads):
    """(where, the learner's output twice, the library's, the mistakes' outputs) in eval mode."""
    import minigrad as mg

    d = h * d_head
    with _Seeded(0):
        lib = _library_encoder_layer(d, h, ff, dropout=0.3)
        mine = cls(d, h, ff, 0.3)
    ours_p, theirs = dict(mine.named_parameters()), dict(lib.named_parameters())
    expect(sorted(ours_p) == sorted(theirs),
           f"keep the submodules of the stub (self_attn, linear1, linear2, norm1, norm2), so that "
           f"the library's weights can be copied in; the parameters are {sorted(ours_p)}")
    rng = np.random.default_rng(B * 100 + T)
    with mg.no_grad():
        for name, p in theirs.items():  # norms away from 1 and 0, so their place shows
            if name.startswith("norm"):
                p.copy_(rng.uniform(0.5, 1.5, p.shape) * (1 if "weight" in name else 0.3))
            ours_p[name].copy_(p)
    x = mg.tensor(rng.normal(0.5, 2.0, (B, T, d)).astype(np.float32))
    pad = np.zeros((B, T), bool)
    for row, n_pad in enumerate(pads):
        pad[row, T - n_pad:] = n_pad > 0
    pad = pad if pad.any() else None
    lib.eval(), mine.eval()
    where = (f"for x of shape {(B, T, d)} with {h} head(s), d_ff {ff} and "
             + (f"padding mask {show(pad)}" if pad is not None else "no padding"))
    with mg.no_grad():
        want = lib(x, src_key_padding_mask=pad).numpy()
        got = as_array(call(mine, where, x, pad), "the encoder layer")[0]
        variants = [(m, v.numpy()) for m, v in _encoder_layer_variants(lib, x, pad)]

    def again():
        with mg.no_grad():
            return as_array(mine(x, pad), "the encoder layer")[0]
    return where, got, again, want, variants


def check_encoder_layer(cls):
    """cls(d_model, nhead, dim_feedforward, dropout) -> a module with the library's submodule names
    whose forward(x (B, T, D), src_key_padding_mask (B, T) or None) is the paper's post-norm
    encoder layer; compared with `nn.TransformerEncoderLayer` holding the same weights."""
    _, st = hypothesis_modules()

    @st.composite
    def cases(draw):
        B, T = draw(st.integers(1, 2)), draw(st.integers(1, 4))
        pads = tuple(draw(st.integers(0, T - 1)) for _ in range(B))
        return B, T, draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 8)), pads

    def verdict(case):
        where, got, again, want, variants = _encoder_layer_run(cls, *case)
        expect_shape(got, want.shape, f"the encoder layer {where}")
        if np.allclose(got, want, atol=1e-4):
            return None
        def diagnose():
            if any(not np.allclose(got, again()) for _ in range(4)):
                raise Wrong(f"{where}, calls in eval mode give different outputs: dropout is "
                            f"still on; use the nn.Dropout modules (they stop in eval()) or pass "
                            f"training=self.training")
            generic = _encoder_layer_run(cls, 2, 5, 2, 4, 16, (0, 2))
            for (mistake, wrong), (_, generic_wrong) in zip(variants, generic[4]):
                if np.allclose(got, wrong, atol=1e-4) and np.allclose(generic[1], generic_wrong,
                                                                      atol=1e-4):
                    raise Wrong(f"{where}: {mistake}")
            raise Wrong(f"{where}, the output differs from TransformerEncoderLayer's by up to "
                        f"{np.abs(got - want).max():.3g}: self-attention, Add & Norm, then the "
                        f"feed-forward network, Add & Norm")
        raise Later(diagnose)
    typical = [(1, 3, 1, 4, 8, (0,)), (2, 5, 2, 4, 16, (0, 1)), (3, 6, 3, 4, 20, (0, 0, 1))]
    return search(cases(), verdict, max_examples=10, budget=60, typical=typical)
