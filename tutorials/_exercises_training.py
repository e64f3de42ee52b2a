"""Checkers for tutorials 12 to 14 and the kernels appendix: the warm-up schedule, one BPE merge,
greedy decoding, attention over a graph's neighbours and a softmax that does not overflow.

As in the other checker modules, hypothesis draws the inputs and shrinks a failure, and a
mistake is named only when it reproduces the learner's output on the shrunk input and on a
typical one.
"""
import numpy as np

from _exercise_search import (Later, Wrong, as_array, call, compare, expect_shape,
                              first_match, float32_note, hypothesis_modules, search, show)


# -- 12: the warm-up schedule ------------------------------------------------------------------

def _noam(step, d_model, warmup, pick=min):
    return d_model ** -0.5 * pick(step ** -0.5, step * warmup ** -1.5)


_NOAM_MISTAKES = [
    ("use the minimum of the two curves, not the maximum",
     lambda s, d, w: _noam(s, d, w, max)),
    ("the factor d_model^-0.5 is missing", lambda s, d, w: _noam(s, 1, w)),
    ("the rate is the paper's (d_model 512, 4000 warm-up steps) whatever the arguments; use "
     "d_model and warmup", lambda s, d, w: _noam(s, 512, 4000)),
    ("the warm-up line is step * warmup^-1.5, not step * warmup^-0.5",
     lambda s, d, w: d ** -0.5 * min(s ** -0.5, s * w ** -0.5)),
    ("steps count from 1: the first step is step = 1, not 0", lambda s, d, w: _noam(s + 1, d, w))]


def check_noam(fn):
    """fn(step, d_model, warmup) -> d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)."""
    _, st = hypothesis_modules()
    cases = st.tuples(st.integers(1, 20000), st.sampled_from((512, 16, 64, 128, 256, 1024)),
                      st.integers(1, 8000))

    def verdict(case):
        step, d_model, warmup = case
        at = f"at step {step} with d_model {d_model} and warm-up {warmup}"
        got, low = as_array(call(fn, at, step, d_model, warmup), "noam")
        want = np.asarray(_noam(step, d_model, warmup))
        kind = compare(got, want, floor=0.0)
        if kind in ("exact", "float32"):
            return float32_note("noam", kind, low)

        def diagnose():
            runs = [(case, got)] + [(t, as_array(fn(*t), "noam")[0]) for t in typical[1::4]]
            label = first_match(runs, _NOAM_MISTAKES)
            raise Wrong(f"{at}, the rate is {float(got):.4g}, expected {float(want):.4g}"
                        + (f": {label}" if label else ""))
        raise Later(diagnose)
    typical = [(step, d, w) for d, w in ((512, 4000), (128, 400), (256, 1000))
               for step in (1, w // 4, w, 4 * w)]
    return search(cases, verdict, max_examples=40, typical=typical)


# -- 13: one BPE merge -------------------------------------------------------------------------

def _merge(symbols, pair, skip=True, first_only=False):
    """The merge, or a usual mistake: no skip after a merge, or only the first occurrence."""
    out, i, merged = [], 0, False
    while i < len(symbols):
        if (i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair
                and not (first_only and merged)):
            out.append(symbols[i] + symbols[i + 1])
            merged = True
            i += 2 if skip else 1
        else:
            out.append(symbols[i])
            i += 1
    return out


def check_merge_pair(fn):
    """fn(symbols, pair) -> symbols with every adjacent occurrence of pair joined, left to right."""
    _, st = hypothesis_modules()
    letter = st.sampled_from("abc")
    cases = st.tuples(st.lists(letter, max_size=7).map(lambda s: ["▁", *s]),
                      st.tuples(letter, letter))

    def verdict(case):
        symbols, pair = case
        where = f"merging {pair} in {symbols}"
        got = call(fn, f"for {where}", list(symbols), pair)
        try:
            got = list(got)
        except TypeError:
            raise Wrong(f"return a list of symbols, got {type(got).__name__}") from None
        want = _merge(symbols, pair)
        if got == want:
            return None
        hint = ""
        if got == symbols:
            hint = ": nothing was merged; join each adjacent (left, right) into one symbol"
        elif got == _merge(symbols, pair, skip=False):
            hint = ": after a merge, skip the symbol just used (it cannot be merged twice)"
        elif got == _merge(symbols, pair, first_only=True):
            hint = ": merge every occurrence, not only the first"
        elif "".join(got) != "".join(symbols):
            hint = ": a merge never adds or drops letters; the joined text must stay the same"
        raise Wrong(f"{where} should give {want}, got {got}{hint}")
    typical = [(["▁", "l", "o", "w"], ("l", "o")), (["▁", "a", "a", "a"], ("a", "a")),
               (["▁", "a", "b", "a", "b"], ("a", "b")), (["▁", "x"], ("y", "z"))]
    return search(cases, verdict, max_examples=60, typical=typical)


# -- 13: greedy decoding -----------------------------------------------------------------------

def _decoding_models():
    """Tiny untrained translators whose greedy outputs depend on the fed-back words, end with
    <eos> at various lengths or run to max_len, and are tempted by padding (its bias raised)."""
    import minigrad as mg
    from minigrad.models import Seq2SeqTransformer

    models = []
    for seed in (2, 0):
        saved = mg.get_rng_state()
        mg.manual_seed(seed)
        model = Seq2SeqTransformer(9, 9, d_model=16, nhead=2, num_encoder_layers=1,
                                   num_decoder_layers=1, dim_feedforward=32).eval()
        mg.set_rng_state(saved)
        with mg.no_grad():
            bias = model.generator.bias.numpy().copy()
            bias[2] += 0.3
            bias[0] += 3.0
            model.generator.bias.copy_(bias)
        models.append(model)
    return models


def _greedy_variant(model, src, max_len, eos_id):
    """Greedy decoding that never feeds its words back: every step decodes <bos> alone."""
    import minigrad as mg

    with mg.no_grad():
        memory, src_pad = model.encode(np.array([src]))
        out = [1]
        for _ in range(max_len):
            hidden = model.decode(np.array([[1]]), memory, src_pad)
            logp = model.generator(hidden[:, -1]).numpy()[0]
            logp[model.pad_id] = -np.inf
            out.append(int(logp.argmax()))
            if out[-1] == eos_id:
                break
    return out[1:]


def _greedy_verdict(fn, model, src, max_len):
    from minigrad.models.decoding import greedy_decode

    bos, eos = 1, 2
    row = [int(t) for t in greedy_decode(model, np.array([src]), max_len=max_len, bos_id=bos,
                                         eos_id=eos).tokens[0]]
    want = row[:row.index(eos) + 1] if eos in row else row
    where = f"for the source {src} (max_len {max_len})"
    got = call(fn, where, model, list(src), max_len, bos, eos)
    try:
        got = [int(t) for t in got]
    except TypeError:
        raise Wrong(f"return a list of token ids, got {type(got).__name__}") from None
    if got == want:
        return None
    if got[:1] == [bos] and got[1:] == want:
        raise Wrong(f"{where} the output starts with <bos> ({bos}): return only the generated "
                    f"tokens")
    if want[-1:] == [eos] and got[:len(want)] == want:
        raise Wrong(f"{where} you went on after <eos>: stop as soon as <eos> is generated "
                    f"({want}, got {got})")
    if want[-1:] == [eos] and got == want[:-1]:
        raise Wrong(f"{where} the <eos> that ended the sentence is missing: keep it")
    if model.pad_id in got:
        raise Wrong(f"{where} you generated padding (id {model.pad_id}) at step "
                    f"{got.index(model.pad_id) + 1}: padding is never a word; set its score to "
                    f"-inf before the argmax")
    if len(got) > max_len:
        raise Wrong(f"{where} you returned {len(got)} tokens: at most max_len")
    if got == _greedy_variant(model, src, max_len, eos):
        # under the causal mask, position 0 sees <bos> only: both mistakes give this
        raise Wrong(f"{where} every step's choice depends on <bos> alone: append each chosen "
                    f"word to the prefix, decode the whole prefix, and read the scores at its "
                    f"last position, hidden[:, -1] (not hidden[:, 0])")
    i = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    raise Wrong(f"{where} greedy decoding gives {want}; yours {got} differs from step {i + 1}: "
                f"pick the argmax of the next-word scores given the whole prefix")


def check_greedy_decode(fn):
    """fn(model, src_ids, max_len, bos_id, eos_id) -> the generated ids (no <bos>, with the
    <eos> that ended the sentence, at most max_len), as the library's `greedy_decode`."""
    _, st = hypothesis_modules()
    models = _decoding_models()  # built afresh: a learner's function may change a model
    # sentences these models end with <eos> after 1, 2, 3, 4 and 7 words, drawn half the time:
    # a random source rarely ends before max_len in an untrained model
    ending = st.sampled_from(((1, [8]), (0, [7, 5]), (0, [7]), (0, [4, 7, 3]), (0, [3, 3, 5])))
    anything = st.tuples(st.integers(0, len(models) - 1),
                         st.lists(st.integers(3, 8), min_size=1, max_size=7))
    cases = st.tuples(st.one_of(ending, anything), st.integers(1, 8))
    typical = [((m, [int(t) for t in np.random.default_rng(seed).integers(3, 9, n)]), 8)
               for m, seed in ((0, 2), (1, 0)) for n in (1, 3, 5, 7)]
    return search(cases, lambda c: _greedy_verdict(fn, models[c[0][0]], c[0][1], c[1]),
                  max_examples=20, budget=60, typical=typical)


# -- 14: attention over a graph ----------------------------------------------------------------

def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _masked_softmax(scores, allowed, axis=-1):
    with np.errstate(all="ignore"):
        return _softmax(np.where(allowed, scores, -np.inf), axis)


_NO_SELF = "a node attends to itself too: N(i) includes i (add the identity to the adjacency)"
_NEIGHBOUR_MISTAKES = [
    (_NO_SELF, lambda s, a: _masked_softmax(s, a)),
    (_NO_SELF, lambda s, a: _softmax(np.where(a, s, -1e9))),  # a node without edges: uniform
    ("pairs without an edge get weight: mask them with -inf before the softmax",
     lambda s, a: _softmax(s)),
    ("the weights are normalised down the columns; each node's row must sum to 1",
     lambda s, a: _masked_softmax(s, a | np.eye(len(s), dtype=bool), axis=0))]


def check_neighbour_softmax(fn):
    """fn(scores (N, N), adjacency (N, N) bool) -> weights over each node's neighbours and
    itself."""
    _, st = hypothesis_modules()

    @st.composite
    def cases(draw):
        N = draw(st.integers(1, 4))
        scores = np.array(draw(st.lists(st.integers(-2, 2), min_size=N * N, max_size=N * N)),
                          dtype=np.float64).reshape(N, N)
        bits = draw(st.lists(st.booleans(), min_size=N * N, max_size=N * N))
        return scores, np.array(bits, dtype=bool).reshape(N, N)

    def verdict(case):
        scores, adj = case
        N = len(scores)
        where = f"for scores = {show(scores)} and adjacency = {show(adj)}"
        with np.errstate(all="ignore"):
            out, low = as_array(call(fn, where, scores.copy(), adj.copy()), "neighbour_softmax")
        expect_shape(out, (N, N), f"neighbour_softmax {where}")
        allowed = adj | np.eye(N, dtype=bool)
        want = _masked_softmax(scores, allowed)
        kind = compare(out, want)
        if kind in ("exact", "float32"):
            return float32_note("neighbour_softmax", kind, low)
        def diagnose():
            with np.errstate(all="ignore"):
                runs = [(case, out), (typical, as_array(fn(*typical), "neighbour_softmax")[0])]
            label = first_match(runs, _NEIGHBOUR_MISTAKES)
            if label is None:
                if not np.allclose(out.sum(1), 1.0):
                    label = "each node's weights should sum to 1"
                elif not np.all(out[~allowed] == 0):
                    label = "pairs without an edge must get weight exactly 0"
                else:
                    label = "the weights should be a softmax of the scores over the allowed pairs"
            raise Wrong(f"{where}, you returned {show(out)}, expected {show(want)}: {label}")
        raise Later(diagnose)
    typical = (np.random.default_rng(2).standard_normal((4, 4)),
               np.array([[0, 1, 1, 0], [1, 0, 0, 0], [1, 0, 0, 1], [0, 0, 1, 0]], bool))
    return search(cases(), verdict, max_examples=40, typical=[typical])


# -- A1: a stable softmax ----------------------------------------------------------------------

_STABLE_MISTAKES = [
    ("exp() overflows for scores above about 709 (float64): subtract each row's maximum first "
     "(the result does not change)", lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    ("subtract each row's own maximum, not the maximum of the whole array: a row far below it "
     "underflows to 0 / 0",
     lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.max()))),
    ("subtract the row's maximum, not its minimum: the largest exponent must be 0",
     lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.min(-1, keepdims=True))))]


def check_stable_softmax(fn):
    """fn(x (N, C)) -> softmax over the last axis, without overflow for large scores."""
    _, st = hypothesis_modules()

    @st.composite
    def cases(draw):
        N, C = draw(st.integers(1, 3)), draw(st.integers(1, 4))
        values = draw(st.lists(st.integers(-1200, 1200), min_size=N * C, max_size=N * C))
        return np.array(values, dtype=np.float64).reshape(N, C)

    def verdict(x):
        where = f"for x = {show(x)}"
        with np.errstate(all="ignore"):
            out, low = as_array(call(fn, where, x.copy()), "softmax")
        expect_shape(out, x.shape, f"softmax {where}")
        want = _softmax(x)
        kind = compare(out, want)
        if kind in ("exact", "float32"):
            return float32_note("softmax", kind, low)
        def diagnose():
            with np.errstate(all="ignore"):
                runs = [((x,), out), ((typical,), as_array(fn(typical), "softmax")[0])]
            label = first_match(runs, _STABLE_MISTAKES)
            if label is None and not np.all(np.isfinite(out)):
                label = "the result has inf or NaN: keep every exponent at most 0"
            raise Wrong(f"{where}, you returned {show(out)}, expected {show(want)}: "
                        + (label or "each row should be exp(x) / sum(exp(x))"))
        raise Later(diagnose)
    typical = np.array([[1.0, 2.0, 3.0], [1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 5.0]])
    return search(cases(), verdict, max_examples=40, typical=[typical])
