# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 13. A toy translator, end to end
#
# Everything so far comes together here: we generate a parallel corpus, turn words into ids,
# train a small Transformer with teacher forcing, label smoothing and the warm-up schedule,
# translate with greedy decoding and with beam search, score the translations with BLEU, and
# look inside the model at its cross-attention.
#
# The full run takes a minute or two on a laptop CPU (two translators are trained, one with
# word tokens and one with subwords). With `MINIGRAD_TUTORIAL_SMALL=1` (what the test suite uses)
# the models are tiny and train for a few dozen steps only: the pipeline runs, the loss falls,
# but the translations are not yet meaningful.

# %%
import os

# The matrices here are small: splitting each product over several threads costs more than it
# saves (far more on a busy machine), so use one thread unless you say otherwise. This has to
# happen before NumPy and Numba are first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import math
import time

from _common import SMALL, out_path, savefig, show_image

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad.translate import corpus as toy
from minigrad.translate.batching import make_batch
from minigrad.models.beam import Beams, length_penalty
from minigrad.models.decoding import beam_search, greedy_decode
from minigrad.translate.metrics import corpus_bleu, corpus_bleu_details
from minigrad.translate.plots import plot_attention
from minigrad.translate.tokenizers import WordTokenizer
from minigrad.translate.config import TrainConfig
from minigrad.translate.inference import evaluate_bleu, translate
from minigrad.translate.train import Trainer
from minigrad.optim.lr_scheduler import noam_lr

t_start = time.perf_counter()

# %% [markdown]
# ## The task: a language with a different word order
#
# `minigrad.translate.corpus` invents a target language that is built like Tamil in a few
# respects, so that translating is more than swapping words:
#
# * the verb goes to the **end** of the clause (subject, object, verb);
# * inside a noun phrase the noun comes **first** ("the two old cats" → "cat-PL old two");
# * prepositions become **suffixes** on the noun ("to the market" → "market-DAT");
# * verbs carry tense and number suffixes.
#
# Every target sentence is computed from its source by fixed rules, so a perfect model could
# score BLEU 100. `describe_example()` shows one pair with its word alignment.

# %%
print(toy.describe_example())

# %% [markdown]
# `alignment(src)` returns, for every target word, the position of the source word it
# translates. In the example the verb "carried" (source word 3) becomes the last target word,
# and "market" (word 9) moves ahead of "boxes" (word 6).

# %%
example = "the old farmer carried two heavy boxes to the market"
align = toy.alignment(example)
print(align)
assert align[-1] == example.split().index("carried") == 3
assert align.index(9) < align.index(6)

# %% [markdown]
# The corpus generator samples random sentences from the grammar (each source sentence occurs
# once) and splits them into training, validation and test sets.

# %%
n_train, n_valid, n_test = (1_000, 50, 30) if SMALL else (12_000, 500, 300)
data = toy.generate_corpus(n_train, n_valid, n_test, seed=0)
print(f"{len(data.train):,} training, {len(data.valid)} validation, {len(data.test)} test pairs")
for src, tgt in data.train[:3]:
    print(f"  {src}\n    -> {tgt}")
assert not set(s for s, _ in data.test) & set(s for s, _ in data.train)

# %% [markdown]
# ## Tokens and ids
#
# A `WordTokenizer` treats every whitespace-separated word as a token. Ids 0 to 3 are
# reserved for ⟨pad⟩, ⟨bos⟩, ⟨eos⟩ and ⟨unk⟩ (an unknown word); the rest of the vocabulary
# follows, most frequent words first. Source and target get a tokenizer each.

# %%
src_tok = WordTokenizer.fit([s for s, _ in data.train])
tgt_tok = WordTokenizer.fit([t for _, t in data.train])
print(f"source vocabulary {len(src_tok)}, target vocabulary {len(tgt_tok)}")
print("special tokens:", src_tok.tokens[:4])
ids = src_tok.encode(data.train[0][0])
print(ids, "->", src_tok.decode(ids))
assert (src_tok.pad_id, src_tok.bos_id, src_tok.eos_id, src_tok.unk_id) == (0, 1, 2, 3)
assert src_tok.decode(ids) == data.train[0][0]
assert src_tok.encode("zebra") == [src_tok.unk_id]            # never seen in training

# %% [markdown]
# The target vocabulary is larger than the source's: every inflected form ("house-LOC",
# "house-PL-LOC", ...) is a word of its own. A batch is a (B, S) array of source ids and the
# (B, T) pair `tgt_in`/`tgt_out` of tutorial 12, all padded with 0.

# %% [markdown]
# ## Training
#
# `TrainConfig` holds every setting of a run and `Trainer` runs it: it builds the tokenizers
# (we pass ours), batches sentences of similar length together, and performs the steps of
# tutorial 12: teacher forcing, cross entropy with label smoothing 0.1, Adam with
# $\beta = (0.9, 0.98)$ and the warm-up schedule, plus gradient clipping. At the end of each
# pass over the data it reports the validation loss and BLEU, and it writes a checkpoint to
# its output folder.
#
# The model is much smaller than the paper's: $d_{model} = 64$, 4 heads, 2 encoder and 2 decoder
# layers, $d_{ff} = 256$ (the small run shrinks it further). With so small a $d_{model}$ the
# schedule's factor $d_{model}^{-0.5} = 0.125$ is almost three times the base model's 0.044, so we
# use a short warm-up of 100 steps and a `factor` of 0.5, which halves every rate:
#
# $$\eta(\text{step}) = 0.5 \cdot 64^{-0.5} \cdot \min(\text{step}^{-0.5},\ \text{step} \cdot 100^{-1.5}),
#   \qquad \text{peak } 0.5 \cdot 0.125 \cdot 0.1 = 6.25 \times 10^{-3} \text{ at step 100}.$$

# %%
if SMALL:
    config = TrainConfig(d_model=32, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                         dim_feedforward=64, batch_size=32, warmup=20, lr_factor=1.0,
                         epochs=100, checkpoint_every=0, valid_bleu_sentences=10, seed=0)
    max_steps = 40
else:
    config = TrainConfig(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                         dim_feedforward=256, batch_size=64, warmup=100, lr_factor=0.5,
                         epochs=100, checkpoint_every=0, valid_bleu_sentences=100, seed=0)
    max_steps = 700
# the trainer's validation loss has no label smoothing: say so where it is printed
trainer = Trainer(config, data.train, data.valid, out_path("13_translator"),
                  tokenizers=(src_tok, tgt_tok), progress=False,
                  log=lambda msg: print(msg.replace("valid loss", "valid loss (unsmoothed)")))
model = trainer.model
print(f"{model.num_parameters():,} parameters; training for {max_steps} steps")
assert config.label_smoothing == 0.1
assert 64 ** -0.5 == 0.125 and 2.8 < 64 ** -0.5 / 512 ** -0.5 < 3
if not SMALL:
    assert math.isclose(trainer.optimizer.param_groups[0]["lr"], 0.5 * 64 ** -0.5 * 100 ** -1.5)
    assert math.isclose(noam_lr(100, 64, 100, factor=0.5), 6.25e-3)          # the peak

# %%
t0 = time.perf_counter()
state = trainer.fit(max_steps=max_steps)
train_seconds = time.perf_counter() - t0
losses = np.array([loss for _, loss in state["history"]])
print(f"trained {state['step']} steps in {train_seconds:.0f} s; "
      f"loss {losses[:5].mean():.2f} (first 5 steps) -> {losses[-5:].mean():.2f} (last 5)")
assert state["step"] == max_steps
assert losses[-5:].mean() < losses[:5].mean() - (0.3 if SMALL else 2.0)

# %% [markdown]
# The loss starts near $\ln V$ (the model's first guesses are close to uniform over the $V$
# target words) and falls. Because of label smoothing it cannot fall below the entropy of the
# smoothed target (tutorial 12), drawn as a dashed line.

# %%
V = len(tgt_tok)
eps = config.label_smoothing
q_true, q_rest = 1 - eps + eps / V, eps / V
floor = -(q_true * math.log(q_true) + (V - 1) * q_rest * math.log(q_rest))
print(f"ln V = {math.log(V):.2f}; smoothing floor = {floor:.2f}")
assert abs(losses[0] - math.log(V)) < 1.0

steps = np.array([s for s, _ in state["history"]])
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(steps, losses, color="0.7", lw=0.8, label="training loss (per step)")
k = max(1, len(losses) // 20)
smooth = np.convolve(losses, np.ones(k) / k, mode="valid")
ax.plot(steps[k - 1:], smooth, label=f"mean of {k} steps")
ax.axhline(floor, color="k", ls="--", lw=1, label="lowest possible with label smoothing")
ax.axhline(math.log(V), color="C3", ls=":", lw=1, label="ln V (uniform guessing)")
ax.set_xlabel("training step")
ax.set_ylabel("label-smoothed cross entropy (nats per token)")
ax.set_ylim(0, 1.3 * math.log(V))
ax.set_title("Training the toy translator")
ax.legend(loc="upper right")
savefig(fig, "13_loss_curve")

# %% [markdown]
# ### A note on the validation loss printed during training
#
# At the end of each pass over the data the trainer printed a line with `valid loss`. That
# number is the plain cross entropy, computed **without** label smoothing, so it measures how
# much probability the model gives the reference word, and it is not bounded by the smoothing
# floor. (Our log function above tags it "unsmoothed".) It can therefore lie *below* the
# dashed line, where the training loss can never go. With smoothing, the same model's
# validation loss is always at or above the floor:

# %%
from minigrad.translate.train import validation_loss

valid_plain = validation_loss(model, trainer.valid_ex, config.batch_size, tgt_tok.pad_id)
valid_smooth = validation_loss(model, trainer.valid_ex, config.batch_size, tgt_tok.pad_id,
                               label_smoothing=eps)
print(f"validation loss: unsmoothed {valid_plain:.3f}, with smoothing {valid_smooth:.3f}, "
      f"floor {floor:.3f}")
assert valid_smooth >= floor - 1e-3 and valid_smooth > valid_plain


# %% [markdown]
# ## Translating: greedy decoding and beam search
#
# At inference there is no reference to feed in. The encoder runs once; then the decoder starts
# from ⟨bos⟩ and produces one word at a time, feeding each back in, until it outputs ⟨eos⟩.
#
# * **Greedy decoding** takes the single most probable word at every step. It is fast but
#   short-sighted: a word that looks best now can force a poor continuation.
# * **Beam search** keeps the $k$ best partial translations (here $k = 4$), extends each by every
#   word, and keeps the $k$ best of the results, ranked by total log-probability divided by a
#   length penalty (otherwise shorter outputs would always win, since each extra word only
#   adds a negative log-probability).
#
# Before the library's decoders take over, we write the pieces out. The model has two halves
# that decoding uses separately (tutorial 11 built them): `model.encode(src)` runs the encoder
# once and returns the memory $E$ with the source's padding mask, and `model.decode(prefix, E,
# mask)` runs the decoder over a target prefix. The output layer turns the decoder's vector at
# the *last* position into scores for the next word; a log-softmax makes them log-probabilities.
# Padding is never a word to generate, so its score is set to $-\infty$.

# %%
model.eval()
max_len = 24 if SMALL else config.max_len
sources = [s for s, _ in data.test]
references = [t for _, t in data.test]


def next_log_probs(memory, src_pad, prefix):
    """log P(next word | source, prefix) for one prefix of ids (starting with <bos>) -> (V,)."""
    with mg.no_grad():
        hidden = model.decode(np.array([prefix]), memory, src_pad)          # (1, t, D)
        logp = model.generator(hidden[:, -1]).log_softmax(-1).numpy()[0]  # the last position
    logp[model.pad_id] = -np.inf
    return logp


# %% [markdown]
# ### Beam search, written out
#
# Beam search keeps the $k$ best hypotheses. At each step every unfinished hypothesis is
# extended by every word; a finished one (it ended with ⟨eos⟩) stays as it is. All candidates
# are ranked by
#
# $$\frac{\log P(y_1 \dots y_L)}{\mathrm{lp}(L)}, \qquad \mathrm{lp}(L) = \Big(\frac{5 + L}{6}\Big)^{\alpha}$$
#
# (GNMT's length penalty; $\alpha = 0$ ranks by the plain log-probability), and the $k$ best
# are kept. It stops when all $k$ have ended or after `max_len` steps, and returns the best of
# the $k$. The function takes `next_log_probs` as an argument, so that below it can also run on
# a made-up vocabulary. Each step is recorded, for drawing.

# %%
def beam_by_hand(next_logp, k, max_len, alpha, bos_id, eos_id):
    """next_logp(prefix) -> (V,) log-probabilities. Returns (best tokens without <bos>, the
    steps: for each, every candidate as (prefix, word, log-probability, kept))."""
    hyps = [([bos_id], 0.0, False)]                       # (tokens, log-probability, ended)
    steps = []
    for step in range(1, max_len + 1):
        candidates = []                                   # (key, hypothesis, word, logp, ended)
        for h, (tokens, logp, ended) in enumerate(hyps):
            if ended:                                     # kept as it is, at its own length
                candidates.append((logp / length_penalty(len(tokens) - 1, alpha), h, -1, logp, True))
                continue
            word_logp = next_logp(tokens)
            for w in np.flatnonzero(np.isfinite(word_logp)):
                total = logp + word_logp[w]
                candidates.append((total / length_penalty(step, alpha), h, int(w), total,
                                   int(w) == eos_id))
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))  # best first; ties to the lower index
        kept = candidates[:k]
        steps.append([(hyps[h][0], w, logp, c in kept) for c in candidates
                      for _, h, w, logp, _ in [c] if w >= 0])
        hyps = [(hyps[h][0] + ([w] if w >= 0 else []), logp, ended)
                for _, h, w, logp, ended in kept]
        if all(ended for *_, ended in hyps):
            break
    best = max(hyps, key=lambda hyp: hyp[1] / length_penalty(len(hyp[0]) - 1, alpha))
    return best[0][1:], steps


def beam_on_model(src_ids, k=4, alpha=0.6):
    memory, src_pad = model.encode(np.array([src_ids]))
    return beam_by_hand(lambda prefix: next_log_probs(memory, src_pad, prefix), k, max_len,
                        alpha, tgt_tok.bos_id, tgt_tok.eos_id)[0]


def trimmed(row):
    """A library output row without the padding after <eos>."""
    row = list(row)
    return row[:row.index(tgt_tok.eos_id) + 1] if tgt_tok.eos_id in row else row


n_check = 3 if SMALL else 10
for s in sources[:n_check]:
    ids = src_tok.encode(s)[:max_len]
    by_hand = beam_on_model(ids)
    library = trimmed(beam_search(model, np.array([ids]), beam_size=4, max_len=max_len).tokens[0])
    assert by_hand == library, (s, by_hand, library)
    assert beam_on_model(ids, k=1) == trimmed(greedy_decode(model, np.array([ids]),
                                                            max_len=max_len).tokens[0])
print(f"beam search by hand = the library's beam_search on {n_check} test sentences; "
      f"and a beam of 1 is greedy decoding")

# %% [markdown]
# A beam of one keeps the single best word at each step: that is **greedy decoding**, and the
# last check above compared it with the library's `greedy_decode`. (Writing greedy decoding as a
# plain loop over `encode` and `decode` is this tutorial's second exercise.)
#
# ### Where greedy is short-sighted, and what the length penalty changes
#
# The translator's probabilities are hard to read, so here is a made-up "model" with four words
# whose next-word probabilities are given by hand. The first word is "A" with probability 0.5
# or "B" with 0.4. After "A" nothing is likely (the best is "C", 0.4, then ⟨eos⟩ 0.5); after "B"
# the sentence can end at once (⟨eos⟩ 0.52) or go on with "C" (0.45), which almost surely ends
# next (0.95).
#
# * Greedy takes "A" (0.5 > 0.4), then "C", then ⟨eos⟩: probability $0.5 \cdot 0.4 \cdot 0.5 = 0.10$.
# * A beam of 3 keeps "B" alive and finds "B ⟨eos⟩", $0.4 \cdot 0.52 = 0.208$, twice as likely.
# * With the length penalty $\alpha = 1$, "B C ⟨eos⟩" ($0.4 \cdot 0.45 \cdot 0.95 = 0.171$) wins
#   instead: $\ln 0.171 / \mathrm{lp}(3) = -1.325$ beats $\ln 0.208 / \mathrm{lp}(2) = -1.346$.
#   Every word adds a negative log-probability, so without the penalty shorter outputs are
#   favoured; the penalty divides by a number that grows with the length.

# %%
toy_words = ["<pad>", "<bos>", "<eos>", "A", "B", "C", "D"]
PAD, BOS, EOS, A, B, C, D = range(7)
toy_table = {(BOS,): {A: 0.5, B: 0.4, EOS: 0.1},
             (BOS, A): {C: 0.4, D: 0.35, EOS: 0.25},
             (BOS, B): {EOS: 0.52, C: 0.45, D: 0.03},
             (BOS, A, C): {EOS: 0.5, D: 0.3, C: 0.2}}


def toy_next(prefix):
    """The made-up model: any prefix not in the table ends almost surely."""
    probs = toy_table.get(tuple(prefix), {EOS: 0.95, C: 0.02, D: 0.03})
    logp = np.full(len(toy_words), -np.inf)
    for w, pr in probs.items():
        logp[w] = math.log(pr)
    return logp


toy_greedy, _ = beam_by_hand(toy_next, 1, 5, 0.0, BOS, EOS)
toy_beam0, toy_steps0 = beam_by_hand(toy_next, 3, 5, 0.0, BOS, EOS)
toy_beam1, toy_steps1 = beam_by_hand(toy_next, 3, 5, 1.0, BOS, EOS)
print("greedy:", [toy_words[w] for w in toy_greedy], " beam 3, alpha 0:",
      [toy_words[w] for w in toy_beam0], " beam 3, alpha 1:", [toy_words[w] for w in toy_beam1])
assert toy_greedy == [A, C, EOS] and toy_beam0 == [B, EOS] and toy_beam1 == [B, C, EOS]
assert round(math.log(0.4 * 0.45 * 0.95) / length_penalty(3, 1.0), 3) == -1.325
assert round(math.log(0.4 * 0.52) / length_penalty(2, 1.0), 3) == -1.346


def library_beams(next_logp, k, max_len, alpha):
    """The same search run by the library's bookkeeping (`Beams`, which `beam_search` drives)."""
    beams = Beams(1, k, max_len, alpha, EOS, PAD)
    rows = [[BOS]] * k
    for step in range(1, max_len + 1):
        tok, index = beams.advance(np.stack([next_logp(r) for r in rows]), step, [])
        beams.retire(step)
        if len(beams.alive) == 0:
            break
        rows = [rows[i] + [int(t)] for i, t in zip(index, tok)]
    tokens = list(beams.answers()[0][0])
    return tokens[:tokens.index(EOS) + 1]


for k, alpha, ours in ((1, 0.0, toy_greedy), (3, 0.0, toy_beam0), (3, 1.0, toy_beam1)):
    assert library_beams(toy_next, k, 5, alpha) == ours

# %% [markdown]
# The tree of the search with a beam of 3: every candidate the search scored, its probability,
# the ones kept (filled) and the ones dropped (hollow). Greedy's path is drawn in red, the
# answers with $\alpha = 0$ and $\alpha = 1$ are marked.

# %%
def draw_beam_tree(ax, steps, alpha, answer, greedy_path, title):
    where = {(BOS,): (0, 0.0)}
    for t, cands in enumerate(steps, start=1):
        # children next to their parent, parents in their order from top to bottom
        cands = sorted((c for c in cands if tuple(c[0]) in where),
                       key=lambda c: (-where[tuple(c[0])][1], c[1]))
        ys = np.linspace((len(cands) - 1) / 2, -(len(cands) - 1) / 2, len(cands)) * 0.9
        for (prefix, w, logp, kept), y in zip(cands, ys):
            node = tuple(prefix) + (w,)
            x0, y0 = where[tuple(prefix)]
            on_greedy = list(node[1:]) == greedy_path[:len(node) - 1]
            ax.plot([x0, t], [y0, y], color="C3" if on_greedy else "0.6",
                    lw=2 if on_greedy else 1, zorder=1)
            ax.scatter([t], [y], s=60, zorder=2, color="C0" if kept else "white", ec="C0")
            ax.text(t + 0.08, y, f"{toy_words[w]} {math.exp(logp):.3f}", va="center", fontsize=8)
            if list(node[1:]) == answer:
                ax.scatter([t], [y], s=300, facecolors="none", ec="C2", lw=2, zorder=3)
                ax.text(t, y - 0.3, f"best, alpha = {alpha:g}", ha="center", fontsize=8,
                        color="C2", fontweight="bold")
            if kept and w != EOS:
                where[node] = (t, y)
    ax.text(0, 0.15, "<bos>", ha="center", fontsize=8)
    ax.scatter([0], [0], s=60, color="C0")
    ax.set_xticks(range(len(steps) + 1))
    ax.set_xlabel("step")
    ax.set_yticks([])
    ax.set_xlim(-0.3, len(steps) + 1.3)
    ax.set_title(title)


fig, axes = plt.subplots(1, 2, figsize=(13, 5))
draw_beam_tree(axes[0], toy_steps0, 0.0, toy_beam0, toy_greedy,
               "beam 3, no length penalty: the short 'B <eos>' wins")
draw_beam_tree(axes[1], toy_steps1, 1.0, toy_beam1, toy_greedy,
               "beam 3, alpha = 1: the longer 'B C <eos>' wins")
fig.suptitle("Beam search on a toy vocabulary (red: greedy's path, probability 0.10); "
             "filled: kept, hollow: dropped; green ring: the answer")
savefig(fig, "13_beam_tree")

# %% [markdown]
# From here on the library's decoders do this, batched: `greedy_decode` and `beam_search`
# run all the sentences of a batch at once, keep the decoder's keys and values between steps
# (so each step feeds only the newest word), and stop a sentence as soon as its answer can no
# longer change. `translate` handles tokenizing, batching and decoding for a list of sentences.

# %%
for s, r, g in zip(sources[:3], references[:3], translate(model, src_tok, tgt_tok, sources[:3])):
    print(f"source:      {s}\nreference:   {r}\ntranslation: {g}\n")

# %% [markdown]
# ## BLEU
#
# BLEU compares a translation with a reference by counting shared word sequences. For
# $n = 1, \dots, 4$ it computes the precision $p_n$: the fraction of the hypothesis's $n$-grams
# that also occur in the reference (each counted at most as often as it occurs there). The
# score is their geometric mean times a **brevity penalty** that punishes translations shorter
# than the references, since precision alone would reward saying very little:
#
# $$\text{BLEU} = \mathrm{BP} \cdot \Big(\prod_{n=1}^{4} p_n\Big)^{1/4}, \qquad
#   \mathrm{BP} = \begin{cases} 1 & c \ge r \\ e^{\,1 - r/c} & c < r \end{cases}$$
#
# with $c$ and $r$ the total hypothesis and reference lengths, and everything summed over the
# whole test set before dividing. It is reported from 0 to 100. A hand-checked example:
# hypothesis "the cat sat on the mat" against reference "the cat sat on a mat". Of the
# hypothesis's unigrams 5 of 6 match, then 3 of 5 bigrams, 2 of 4 trigrams and 1 of 3
# four-grams; both have 6 words, so BP = 1:
#
# $$\text{BLEU} = 100 \cdot \left(\tfrac{5}{6} \cdot \tfrac{3}{5} \cdot \tfrac{2}{4} \cdot \tfrac{1}{3}\right)^{1/4} \approx 53.73 .$$

# %%
details = corpus_bleu_details(["the cat sat on the mat"], ["the cat sat on a mat"])
print(details)
assert details.counts == [5, 3, 2, 1] and details.totals == [6, 5, 4, 3] and details.bp == 1.0
assert round(details.score, 2) == round(100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25, 2) == 53.73

# %% [markdown]
# Now the whole test set: `evaluate_bleu` translates every source sentence and scores the
# results against the references, once with greedy decoding and once with a beam of 4.

# %%
t0 = time.perf_counter()
bleu_greedy, greedy = evaluate_bleu(model, src_tok, tgt_tok, data.test, beam=1, max_len=max_len)
t_greedy = time.perf_counter() - t0
t0 = time.perf_counter()
bleu_beam, beam = evaluate_bleu(model, src_tok, tgt_tok, data.test, beam=4, max_len=max_len)
t_beam = time.perf_counter() - t0
assert len(greedy) == len(beam) == len(sources)
assert np.isclose(bleu_greedy, corpus_bleu(greedy, references))
print(f"test BLEU: greedy {bleu_greedy:.1f} ({t_greedy:.1f} s), "
      f"beam 4 {bleu_beam:.1f} ({t_beam:.1f} s)")
print(corpus_bleu_details(beam, references))
if not SMALL:
    assert bleu_greedy > 25 and bleu_beam > 25          # about 75 after 700 steps in our runs
exact = sum(h == r for h, r in zip(beam, references))
print(f"{exact} of {len(references)} test sentences translated exactly (beam)")

# %% [markdown]
# Where the two decoders disagree, beam search has found a sequence that the model scores
# higher as a whole (after the length penalty) than the greedy one. A higher model score is not
# always a better translation: compare each line with the reference.

# %%
differ = [(s, r, g, b) for s, r, g, b in zip(sources, references, greedy, beam) if g != b]
print(f"greedy and beam differ on {len(differ)} of {len(sources)} sentences")
for s, r, g, b in differ[:3]:
    print(f"source:    {s}\nreference: {r}\ngreedy:    {g}\nbeam:      {b}\n")

# %% [markdown]
# The decoders can also be called directly on a batch of ids: `greedy_decode(model, src)` and
# `beam_search(model, src, beam_size=4)` return the tokens and, for every decoder layer, the
# cross-attention weights of each generated word over the source words.

# %%
src_batch = make_batch([(src_tok.encode(s), [0]) for s in sources[:4]], src_tok.pad_id).src
out_g = greedy_decode(model, src_batch, max_len=max_len)
out_b = beam_search(model, src_batch, beam_size=4, max_len=max_len)
assert tgt_tok.decode(out_g.tokens[0]) == greedy[0] and tgt_tok.decode(out_b.tokens[0]) == beam[0]
print("tokens", out_g.tokens.shape, "cross-attention per layer", out_g.cross_attention[-1].shape,
      "(B, heads, generated words, source words)")

# %% [markdown]
# ## WER, the other measure
#
# The lecture also names the **word error rate**: the smallest number of word substitutions,
# deletions and insertions that turn the hypothesis into the reference, divided by the number
# of reference words. The smallest number of edits is the edit (Levenshtein) distance, found by
# filling a table: cell $(i, j)$ holds the distance between the first $i$ hypothesis words and
# the first $j$ reference words,
#
# $$d_{i,j} = \min\big(d_{i-1,j} + 1,\ \ d_{i,j-1} + 1,\ \ d_{i-1,j-1} + [h_i \ne r_j]\big),
#   \qquad d_{i,0} = i,\ d_{0,j} = j,$$
#
# (delete $h_i$, insert $r_j$, or substitute, free when the words agree). By hand: hypothesis
# "the cat sit on mat" against reference "the cat sat on the mat" needs one substitution (sit →
# sat) and one insertion (the): distance 2, WER $= 2/6 \approx 0.333$. Unlike BLEU, lower is
# better, and WER ignores word order beyond the alignment it finds.

# %%
from minigrad.translate.metrics import edit_distance, wer

hyp_words, ref_words = "the cat sit on mat".split(), "the cat sat on the mat".split()
table = np.zeros((len(hyp_words) + 1, len(ref_words) + 1), dtype=int)
table[:, 0] = np.arange(len(hyp_words) + 1)
table[0, :] = np.arange(len(ref_words) + 1)
for i, h in enumerate(hyp_words, 1):
    for j, r in enumerate(ref_words, 1):
        table[i, j] = min(table[i - 1, j] + 1, table[i, j - 1] + 1, table[i - 1, j - 1] + (h != r))
print(table)
assert table[-1, -1] == edit_distance(hyp_words, ref_words) == 2
assert math.isclose(wer(["the cat sit on mat"], ["the cat sat on the mat"]), 2 / 6)

fig, ax = plt.subplots(figsize=(6, 4.5))
ax.imshow(table, cmap="Blues")
for i in range(table.shape[0]):
    for j in range(table.shape[1]):
        ax.text(j, i, str(table[i, j]), ha="center", va="center")
ax.set_xticks(range(len(ref_words) + 1), ["-"] + ref_words)
ax.set_yticks(range(len(hyp_words) + 1), ["-"] + hyp_words)
ax.set_xlabel("reference words")
ax.set_ylabel("hypothesis words")
ax.set_title("Edit-distance table: bottom right = 2 edits, WER 2/6")
savefig(fig, "13_edit_distance_table")

# %% [markdown]
# On the test set, for both decoders:

# %%
wer_greedy, wer_beam = wer(greedy, references), wer(beam, references)
print(f"test WER: greedy {wer_greedy:.3f}, beam 4 {wer_beam:.3f}  "
      f"(BLEU {bleu_greedy:.1f} and {bleu_beam:.1f})")
if not SMALL:
    assert wer_greedy < 0.5 and wer_beam < 0.5

# %% [markdown]
# ## Looking inside: the cross-attention of a reordered sentence
#
# In cross-attention every generated word sends a query to the encoder's outputs, one per
# source word. The weights say where the decoder looked while producing each word. Pick a test
# sentence whose word order changes in translation (preferably one the model got exactly
# right), decode it, and average the last decoder layer's heads into one (generated words ×
# source words) map. If the model has learned the reordering, the bright cells follow the
# alignment rather than the diagonal.

# %%
def reorders(src):
    a = [j for j in toy.alignment(src) if j is not None]
    return any(later < earlier for earlier, later in zip(a, a[1:]))


# prefer a sentence the model translated exactly, so that the alignment applies word for word
candidates = [s for s in sources if reorders(s) and 6 <= len(s.split()) <= 10]
exact_ones = [s for s, g, r in zip(sources, greedy, references) if g == r and s in candidates]
sentence = (exact_ones or candidates or sources)[0]
src_ids = src_tok.encode(sentence)
out = greedy_decode(model, make_batch([(src_ids, [0])], src_tok.pad_id).src, max_len=max_len)
out_ids = [int(i) for i in out.tokens[0] if i != tgt_tok.pad_id]
weights = out.cross_attention[-1][0].mean(0)               # (generated words, source words)
src_words = [src_tok.id_to_token(i) for i in src_ids]
out_words = [tgt_tok.id_to_token(i) for i in out_ids]
print("source:     ", sentence)
print("reference:  ", toy.translate_reference(sentence))
print("translation:", tgt_tok.decode(out_ids))
plot_attention(weights, src_words, out_words, out_path("13_cross_attention.png"),
               title=f"Cross-attention, last decoder layer, mean of the heads\n{sentence}")
show_image(out_path("13_cross_attention.png"))
assert np.allclose(weights.sum(-1), 1.0, atol=1e-4)        # each row is a distribution

# %% [markdown]
# When the translation matches the reference word for word, we can compare every row's
# brightest source word with the true alignment. Attention weights are a hint about what the
# model uses, not a proof, and single layers can look at neighbouring words too, so we only
# print the agreement.

# %%
reference_words = toy.translate_reference(sentence).split()
if out_words[:len(reference_words)] == reference_words:
    truth = toy.alignment(sentence)
    looked = weights[:len(truth)].argmax(-1)
    pairs_known = [(int(l), t) for l, t in zip(looked, truth) if t is not None]
    agree = sum(l == t for l, t in pairs_known)
    print(f"brightest source word = aligned source word for {agree} of {len(pairs_known)} "
          f"target words")
else:
    print("the translation differs from the reference, "
          "so the alignment does not apply word for word")

# %% [markdown]
# ### Every head of the trained model
#
# The map above averages the heads. With `average_attn_weights=False` the attention layers
# return one map per head, shape (B, H, queries, keys). Here are the four heads of the trained
# encoder's last self-attention layer (source word to source word) and of the last decoder
# layer's cross-attention (generated word to source word) for the same sentence. Heads of one
# layer often divide the work: some look at the word itself or a neighbour, some at the word
# that the current one is aligned with.

# %%
src_arr = np.array([src_ids])
with mg.no_grad():
    h_enc = model._embed(model.src_embed, src_arr)              # embeddings + positions
    for enc_layer in model.transformer.encoder.layers:
        _, enc_heads = enc_layer.self_attn(h_enc, h_enc, h_enc, average_attn_weights=False)
        h_enc = enc_layer(h_enc)
    h_enc = model.transformer.encoder.norm(h_enc)
    assert np.allclose(h_enc.numpy(), model.encode(src_arr)[0].numpy(), atol=1e-5)
enc_heads = enc_heads.numpy()[0]                                # (H, S, S), last encoder layer
cross_heads = out.cross_attention[-1][0]                        # (H, T, S), last decoder layer
n_h = enc_heads.shape[0]
assert enc_heads.shape == (config.nhead, len(src_ids), len(src_ids)) and cross_heads.shape[0] == n_h
assert np.allclose(enc_heads.sum(-1), 1.0, atol=1e-4)

fig, axes = plt.subplots(2, n_h, figsize=(3.4 * n_h, 7), layout="constrained")
for h in range(n_h):
    for row, (maps, ylabels, title) in enumerate(
            [(enc_heads, src_words, "encoder self-attention"),
             (cross_heads[:, :len(out_words)], out_words, "cross-attention")]):
        ax = axes[row, h]
        ax.imshow(maps[h], cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(src_words)), src_words, rotation=70, fontsize=7)
        ax.set_yticks(range(len(ylabels)), ylabels, fontsize=7)
        ax.set_title(f"{title}, head {h + 1}", fontsize=9)
fig.suptitle("Per-head attention of the trained translator (last layers)")
savefig(fig, "13_trained_heads")

# %% [markdown]
# ## Subword units: byte-pair encoding
#
# Word tokens have a cost the lecture points out: every inflected form is a separate entry, so
# the target vocabulary is large, and a form never seen in training is ⟨unk⟩ even if its stem
# and its suffix are both well known. Real translators and BERT cut words into **subword**
# pieces instead. Byte-pair encoding (BPE) learns the pieces from the training text:
#
# 1. start with every word spelt as characters, after a word-start marker "▁";
# 2. count every pair of adjacent symbols, weighted by how often the word occurs;
# 3. merge the most frequent pair into one new symbol everywhere, and add it to the vocabulary;
# 4. repeat for as many merges as wanted.
#
# Frequent words end up as one symbol, rare ones as a few common pieces (stems and suffixes).
# Our target language, with its many suffixed forms, is the kind of language where this pays.
# Here are the first merges, computed by hand on the target side of the training data, and
# compared with `BPETokenizer.fit` (ties go to the alphabetically first pair in both).

# %%
from collections import Counter

from minigrad.translate.tokenizers import BPETokenizer, MARKER

word_freq = Counter(w for _, t in data.train for w in t.split())
spelled = {w: [MARKER, *w] for w in word_freq}


def most_frequent_pair(spelled, word_freq):
    pairs = Counter()
    for w, symbols in spelled.items():
        for pair in zip(symbols, symbols[1:]):
            pairs[pair] += word_freq[w]
    best = max(pairs.values())
    return min(p for p, n in pairs.items() if n == best), best


def merge_pair(symbols, pair):
    out_, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out_.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out_.append(symbols[i])
            i += 1
    return out_


example_word = max(word_freq, key=lambda w: (len(w) >= 8, word_freq[w]))
by_hand_merges = []
for step in range(8):
    pair, n = most_frequent_pair(spelled, word_freq)
    spelled = {w: merge_pair(s, pair) for w, s in spelled.items()}
    by_hand_merges.append(pair)
    print(f"merge {step + 1}: {pair[0]!r} + {pair[1]!r} ({n} times)  "
          f"{example_word!r} is now {' '.join(spelled[example_word])}")
assert by_hand_merges == BPETokenizer.fit([t for _, t in data.train], num_merges=8).merges

# %% [markdown]
# Now a BPE target tokenizer with a few hundred merges, against the word tokenizer: the
# vocabulary shrinks, the sentences get longer (more tokens each), and no target word of the
# test set is unknown any more.

# %%
n_merges = 100 if SMALL else 400
bpe_tok = BPETokenizer.fit([t for _, t in data.train], num_merges=n_merges)
test_targets = [t for _, t in data.test]
unk_word = sum(tgt_tok.unk_id in tgt_tok.encode(t) for t in test_targets)
unk_bpe = sum(bpe_tok.unk_id in bpe_tok.encode(t) for t in test_targets)
length_word = np.mean([len(tgt_tok.encode(t)) for t in test_targets])
length_bpe = np.mean([len(bpe_tok.encode(t)) for t in test_targets])
print(f"target vocabulary: words {len(tgt_tok)}, BPE {len(bpe_tok)} ({n_merges} merges)")
print(f"tokens per test sentence: words {length_word:.1f}, BPE {length_bpe:.1f}; "
      f"test sentences with an unknown token: words {unk_word}, BPE {unk_bpe}")
assert len(bpe_tok) < len(tgt_tok) and length_bpe > length_word and unk_bpe == 0
assert all(bpe_tok.decode(bpe_tok.encode(t)) == t for t in test_targets)

# %% [markdown]
# And the real question: does the translator do better with subword targets? We train the same
# model, for the same number of steps, with the BPE tokenizer on the target side, and score the
# decoded *words* with BLEU and WER against the same references.

# %%
bpe_trainer = Trainer(config, data.train, data.valid, out_path("13_translator_bpe"),
                      tokenizers=(src_tok, bpe_tok), progress=False, log=lambda msg: None)
bpe_trainer.fit(max_steps=max_steps)
bpe_model = bpe_trainer.model.eval()
bleu_bpe, hyps_bpe = evaluate_bleu(bpe_model, src_tok, bpe_tok, data.test, beam=1,
                                   max_len=3 * max_len)
wer_bpe = wer(hyps_bpe, references)
print(f"greedy test BLEU: words {bleu_greedy:.1f}, BPE {bleu_bpe:.1f};  "
      f"WER: words {wer_greedy:.3f}, BPE {wer_bpe:.3f}")
if not SMALL:
    assert bleu_bpe > bleu_greedy

fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), layout="constrained")
names = ["words", f"BPE ({n_merges} merges)"]
for ax, values, title in zip(axes, [[len(tgt_tok), len(bpe_tok)], [length_word, length_bpe],
                                    [bleu_greedy, bleu_bpe]],
                             ["target vocabulary", "tokens per sentence", "test BLEU (greedy)"]):
    ax.bar(names, values, color=["C0", "C1"])
    ax.set_title(title)
fig.suptitle(f"Word tokens against BPE subwords, same model and {max_steps} steps")
savefig(fig, "13_bpe_vs_words")

# %% [markdown]
# In the full run the BPE translator was far ahead after the same 700 updates (greedy BLEU
# about 95 against 78, WER 0.03 against 0.14). Each update teaches it fewer whole sentences,
# since its sentences are longer, but what it learns about a stem or a suffix is shared by every
# word that contains it, where the word model must see each inflected form on its own. On real
# languages, with hundreds of thousands of word forms, that sharing is what makes subwords the
# standard.

# %% [markdown]
# ## Exercise: one BPE merge
#
# Write `merge(symbols, pair)`: the list `symbols` with every adjacent occurrence of `pair`
# replaced by the joined symbol, scanning left to right (so merging `("a", "a")` in
# `a a a` gives `aa a`). This is step 3 of BPE.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_merge_pair


def merge(symbols, pair):
    """Join every adjacent occurrence of pair = (left, right) in the list of symbols."""
    raise NotImplementedError


check(check_merge_pair, merge);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def merge(symbols, pair):
    """Join every adjacent occurrence of pair = (left, right) in the list of symbols."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2                            # both symbols are used up
        else:
            out.append(symbols[i])
            i += 1
    return out


assert check(check_merge_pair, merge)

# %% [markdown]
# ## Exercise: greedy decoding
#
# A larger one. Write `greedy(model, src_ids, max_len, bos_id, eos_id)` for one sentence
# (`src_ids` a list of ids) as a loop over the model's two halves: encode the source once with
# `model.encode`, then start from `[bos_id]` and at every step run `model.decode` on the prefix,
# turn the decoder's vector at the last position into scores with `model.generator`, set the
# score of padding (`model.pad_id`) to $-\infty$, append the best word, and stop after ⟨eos⟩
# (kept in the output) or `max_len` words. Return the generated ids without ⟨bos⟩. Work under
# `mg.no_grad()`: no gradients are needed. The checker compares your answers with the library's
# `greedy_decode` on small untrained models and names the usual mistakes.

# %%
from _exercises import check_greedy_decode


def greedy(model, src_ids, max_len, bos_id=1, eos_id=2):
    """Greedy decoding of one sentence: the generated ids, <eos> included, without <bos>."""
    raise NotImplementedError


check(check_greedy_decode, greedy);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def greedy(model, src_ids, max_len, bos_id=1, eos_id=2):
    """Greedy decoding of one sentence: the generated ids, <eos> included, without <bos>."""
    with mg.no_grad():
        memory, src_pad = model.encode(np.array([src_ids]))          # the encoder runs once
        out = [bos_id]
        for _ in range(max_len):
            hidden = model.decode(np.array([out]), memory, src_pad)   # (1, t, D)
            scores = model.generator(hidden[:, -1]).numpy()[0]       # the next word's scores
            scores[model.pad_id] = -np.inf
            out.append(int(scores.argmax()))
            if out[-1] == eos_id:
                break
    return out[1:]


assert check(check_greedy_decode, greedy)

# %% [markdown]
# And on the translator trained above, the same words as the library's decoder:

# %%
test_ids = src_tok.encode(sources[0])[:max_len]
assert greedy(model, test_ids, max_len, tgt_tok.bos_id, tgt_tok.eos_id) == trimmed(
    greedy_decode(model, np.array([test_ids]), max_len=max_len).tokens[0])

# %% [markdown]
# ## Test yourself
#
# **1.** A hypothesis "the cat sat on" is scored against the reference "the cat sat on the mat".
# What is its BLEU?
#
# <details><summary>Answer</summary>
#
# All its n-grams match (4/4, 3/3, 2/2, 1/1), so the precisions are all 1. But it has
# 4 words against 6: BP $= e^{1 - 6/4} = e^{-0.5} \approx 0.6065$, and BLEU $\approx 60.65$.
#
# </details>

# %%
short = corpus_bleu(["the cat sat on"], ["the cat sat on the mat"])
assert round(short, 2) == round(100 * math.exp(-0.5), 2) == 60.65

# %% [markdown]
# **2.** Write the number of parameters of our translator as a formula of $d = d_{model}$,
# $d_{ff}$, the layer counts and the vocabulary sizes $V_s$, $V_t$ (two separate embedding
# tables, an output layer with bias).
#
# <details><summary>Answer</summary>
#
# Embeddings $V_s d + V_t d$; each encoder layer $4d^2 + 4d + 2 d\, d_{ff} + d_{ff} + d + 4d$;
# each decoder layer $8d^2 + 8d + 2 d\, d_{ff} + d_{ff} + d + 6d$; two final layer norms $4d$; the
# output layer $d V_t + V_t$.
#
# </details>

# %%
def translator_parameters(d, d_ff, n_enc, n_dec, Vs, Vt):
    enc = 4 * d * d + 4 * d + 2 * d * d_ff + d_ff + d + 4 * d
    dec = 8 * d * d + 8 * d + 2 * d * d_ff + d_ff + d + 6 * d
    return (Vs + Vt) * d + n_enc * enc + n_dec * dec + 4 * d + d * Vt + Vt


assert model.num_parameters() == translator_parameters(
    config.d_model, config.dim_feedforward, config.num_encoder_layers, config.num_decoder_layers,
    len(src_tok), len(tgt_tok))

# %% [markdown]
# **3.** In the target language the verb ends the clause. For "the old farmer carried two
# heavy boxes to the market", which source word does the last target word translate, and which
# target word translates "farmer"?
#
# <details><summary>Answer</summary>
#
# The last target word is the verb "carried" (source word 3). "farmer" is the head of
# the subject, and in a noun phrase the noun comes first, so it is target word 0, ahead of its
# adjective "old".
#
# </details>

# %%
assert toy.alignment(example)[-1] == 3
assert toy.alignment(example).index(example.split().index("farmer")) == 0
print(f"all checks passed in {time.perf_counter() - t_start:.0f} s")
