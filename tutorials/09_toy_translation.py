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
# # 9. A toy translator, end to end
#
# Everything so far comes together here: we generate a parallel corpus, turn words into ids,
# train a small Transformer with teacher forcing, label smoothing and the warm-up schedule,
# translate with greedy decoding and with beam search, score the translations with BLEU, and
# look inside the model at its cross-attention.
#
# Training takes about a minute on a laptop CPU. With `MINIGRAD_TUTORIAL_SMALL=1` (what the test
# suite uses) the model is tiny and trains for a few dozen steps only: the pipeline runs, the
# loss falls, but the translations are not yet meaningful.

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

from minigrad.translate import corpus as toy
from minigrad.translate.batching import make_batch
from minigrad.models.decoding import beam_search, greedy_decode
from minigrad.translate.metrics import corpus_bleu, corpus_bleu_details
from minigrad.translate.plots import plot_attention
from minigrad.translate.tokenizers import WordTokenizer
from minigrad.translate.train import TrainConfig, Trainer, evaluate_bleu, translate
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
# (B, T) pair `tgt_in`/`tgt_out` of tutorial 8, all padded with 0.

# %% [markdown]
# ## Training
#
# `TrainConfig` holds every setting of a run and `Trainer` runs it: it builds the tokenizers
# (we pass ours), batches sentences of similar length together, and performs the steps of
# tutorial 8: teacher forcing, cross entropy with label smoothing 0.1, Adam with
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
trainer = Trainer(config, data.train, data.valid, out_path("09_translator"),
                  tokenizers=(src_tok, tgt_tok), progress=False)
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
# smoothed target (tutorial 8), drawn as a dashed line.

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
savefig(fig, "09_loss_curve")

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
# `translate` handles tokenizing, batching and decoding for a list of sentences.

# %%
model.eval()
max_len = 24 if SMALL else config.max_len
sources = [s for s, _ in data.test]
references = [t for _, t in data.test]
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
# results against the references, once with greedy decoding and once with a beam of 4. (The
# word error rate, WER, is the other measure the lecture mentions: the word insertions,
# deletions and substitutions needed to turn the hypothesis into the reference, per reference
# word.)

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
plot_attention(weights, src_words, out_words, out_path("09_cross_attention.png"),
               title=f"Cross-attention, last decoder layer, mean of the heads\n{sentence}")
show_image(out_path("09_cross_attention.png"))
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
# ## Test yourself
#
# **1.** A hypothesis "the cat sat on" is scored against the reference "the cat sat on the mat".
# What is its BLEU?
#
# *Answer.* All its n-grams match (4/4, 3/3, 2/2, 1/1), so the precisions are all 1. But it has
# 4 words against 6: BP $= e^{1 - 6/4} = e^{-0.5} \approx 0.6065$, and BLEU $\approx 60.65$.

# %%
short = corpus_bleu(["the cat sat on"], ["the cat sat on the mat"])
assert round(short, 2) == round(100 * math.exp(-0.5), 2) == 60.65

# %% [markdown]
# **2.** Write the number of parameters of our translator as a formula of $d = d_{model}$,
# $d_{ff}$, the layer counts and the vocabulary sizes $V_s$, $V_t$ (two separate embedding
# tables, an output layer with bias).
#
# *Answer.* Embeddings $V_s d + V_t d$; each encoder layer $4d^2 + 4d + 2 d\, d_{ff} + d_{ff} + d + 4d$;
# each decoder layer $8d^2 + 8d + 2 d\, d_{ff} + d_{ff} + d + 6d$; two final layer norms $4d$; the
# output layer $d V_t + V_t$.

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
# *Answer.* The last target word is the verb "carried" (source word 3). "farmer" is the head of
# the subject, and in a noun phrase the noun comes first, so it is target word 0, ahead of its
# adjective "old".

# %%
assert toy.alignment(example)[-1] == 3
assert toy.alignment(example).index(example.split().index("farmer")) == 0
print(f"all checks passed in {time.perf_counter() - t_start:.0f} s")
