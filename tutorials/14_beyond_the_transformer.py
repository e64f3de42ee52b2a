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
# # 14. Beyond the Transformer
#
# Attention is older and broader than the Transformer. This last tutorial follows the second
# lecture through four other places where it appears, each kept short:
#
# 1. the **recurrent encoder-decoder with attention** of tutorial 6, trained on the same
#    translation task as tutorial 13;
# 2. **BERT**, a Transformer encoder pre-trained by filling in masked words;
# 3. **graph attention (GAT)**, attention over a node's neighbours in a graph;
# 4. **hierarchical attention (HAN)**, attention over words and then over sentences to
#    classify documents.
#
# With `MINIGRAD_TUTORIAL_SMALL=1` every model is trained only briefly and the checks are
# limited to "the loss falls"; the comparisons quoted in the text need the normal run.

# %%
import os

# small matrices: one thread per product is faster than several (see tutorial 13)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import time

from _common import SMALL, out_path, savefig, show_image

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import optim
from minigrad import models
from minigrad.demos import bert, gat, han
from minigrad.translate import corpus as toy
from minigrad.translate.batching import encode_pairs, iterate_batches, make_batch
from minigrad.translate.metrics import corpus_bleu
from minigrad.translate.plots import plot_attention
from minigrad.models.rnn_seq2seq import build_seq2seq_rnn
from minigrad.translate.tokenizers import WordTokenizer
from minigrad.translate.inference import translate
from minigrad.nn.utils import clip_grad_norm_
from minigrad.optim.lr_scheduler import WarmupScheduler

t_start = time.perf_counter()


def falls(losses, k=5):
    """Mean of the last k losses below the mean of the first k."""
    return float(np.mean(losses[-k:])) < float(np.mean(losses[:k]))


# %% [markdown]
# ## 1. The recurrent encoder-decoder, with and without attention
#
# Tutorial 6 began with the recurrent encoder-decoder: an encoder that reads the source one word
# at a time, a decoder that writes the target one word at a time, and attention, which gives each
# decoder step a context $\mathbf c_t = \sum_i \alpha_{ti} \mathbf h_i$ over *all* the encoder
# states instead of a single final vector, with the score functions of `minigrad.nn.scores`
# (dot, scaled dot, bilinear, additive) and the two wirings (Bahdanau's and Luong's) that decide
# what can run in parallel. Here we train it, with and without attention, on the translation
# task of tutorial 13, and compare it with the Transformer.

# %% [markdown]
# We train both versions on the toy corpus of tutorial 13. Instead of the `Trainer`, here is the
# loop it runs, written out: batches of similar-length sentences, the label-smoothed loss on
# teacher-forced targets, gradient clipping, Adam and the warm-up schedule.

# %%
n_train = 1_000 if SMALL else 12_000
data = toy.generate_corpus(n_train, 20, 30 if SMALL else 300, seed=0)
src_tok = WordTokenizer.fit([s for s, _ in data.train])
tgt_tok = WordTokenizer.fit([t for _, t in data.train])
examples = encode_pairs(data.train, src_tok, tgt_tok)
sizes = dict(emb_dim=16, hidden=32) if SMALL else dict(emb_dim=64, hidden=128)
rnn_steps = 20 if SMALL else 400


def train_rnn(arch, steps, batch_size=64):
    mg.manual_seed(0)
    model = build_seq2seq_rnn(arch, len(src_tok), len(tgt_tok), dropout=0.1, **sizes)
    opt = optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    # the Noam schedule again; d_model=128 only sets its scale: peak 8.4e-3 (small) or 3.75e-3
    warmup = 10 if SMALL else 50
    sched = WarmupScheduler(opt, d_model=128, warmup_steps=warmup, factor=0.3)
    losses, epoch = [], 0
    while len(losses) < steps:
        for _, batch in iterate_batches(examples, batch_size, tgt_tok.pad_id, seed=0, epoch=epoch):
            loss = model.loss(batch.src, batch.tgt_in, batch.tgt_out, label_smoothing=0.1)
            opt.zero_grad()
            loss.backward()
            clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
            if len(losses) == steps:
                break
        epoch += 1
    return model.eval(), losses


rnn_results = {}
for arch in ("rnn", "rnn-attention"):
    t0 = time.perf_counter()
    model, losses = train_rnn(arch, rnn_steps)
    hyps = translate(model, src_tok, tgt_tok, [s for s, _ in data.test],
                     max_len=24 if SMALL else 64)
    bleu_score = corpus_bleu(hyps, [t for _, t in data.test])
    rnn_results[arch] = dict(model=model, losses=losses, bleu=bleu_score, hyps=hyps)
    print(f"{arch:<14} {model.num_parameters():>8,} parameters, "
          f"loss {np.mean(losses[:5]):.2f} -> {np.mean(losses[-5:]):.2f}, "
          f"test BLEU {bleu_score:5.1f} ({time.perf_counter() - t0:.0f} s)")
    assert falls(losses)

# %% [markdown]
# With the same number of updates the attention model translates far better: in the normal run
# its BLEU is more than 10 points above the plain model's.

# %%
if not SMALL:
    assert rnn_results["rnn-attention"]["bleu"] > rnn_results["rnn"]["bleu"] + 10

# %% [markdown]
# ### A fair comparison with the Transformer
#
# To compare the recurrent model with the Transformer of tutorial 13 on equal terms, train that
# Transformer here for the same number of updates, on the same data, with the same batch size
# and label smoothing, at a similar number of parameters.

# %%
from minigrad.translate.config import TrainConfig
from minigrad.translate.inference import evaluate_bleu
from minigrad.translate.train import Trainer

t0 = time.perf_counter()
tf_config = TrainConfig(d_model=sizes["hidden"] // 2, nhead=4, num_encoder_layers=2 if not SMALL else 1,
                        num_decoder_layers=2 if not SMALL else 1,
                        dim_feedforward=2 * sizes["hidden"], batch_size=64,
                        warmup=10 if SMALL else 100, lr_factor=1.0 if SMALL else 0.5,
                        epochs=100, checkpoint_every=0, valid_bleu_sentences=0, seed=0)
tf_trainer = Trainer(tf_config, data.train, data.valid, out_path("14_transformer"),
                     tokenizers=(src_tok, tgt_tok), progress=False, log=lambda msg: None)
tf_trainer.fit(max_steps=rnn_steps)
tf_model = tf_trainer.model.eval()
bleu_tf, _ = evaluate_bleu(tf_model, src_tok, tgt_tok, data.test, max_len=24 if SMALL else 64)
rnn_att = rnn_results["rnn-attention"]
print(f"after {rnn_steps} updates of 64 sentences:  RNN with attention "
      f"{rnn_att['model'].num_parameters():,} parameters, BLEU {rnn_att['bleu']:.1f};  "
      f"Transformer {tf_model.num_parameters():,} parameters, BLEU {bleu_tf:.1f} "
      f"({time.perf_counter() - t0:.0f} s)")
assert 0.5 < tf_model.num_parameters() / rnn_att["model"].num_parameters() < 2
if not SMALL:  # the text below says which was ahead in the full run
    assert rnn_att["bleu"] > bleu_tf

# %% [markdown]
# On short sentences like these a recurrent model with attention is a strong baseline: at
# equal updates and size it was ahead in the full run (BLEU 51 against 35 after 400 updates),
# and the Transformer of tutorial 13, trained for 700 updates with its warm-up finished,
# reaches about 78. What the recurrent model cannot do is run in parallel: its encoder needs $S$
# steps one after another and its decoder $T$ more, while a Transformer layer processes all
# positions at once. That, more than accuracy on toy data, is why the Transformer took over.

# %% [markdown]
# The attention weights $\alpha_{ti}$ make the model inspectable, as in tutorial 13. Here is a
# test sentence whose word order changes in translation.

# %%
attn_model = rnn_results["rnn-attention"]["model"]
def reorders(src):
    a = [j for j in toy.alignment(src) if j is not None]
    return any(later < earlier for earlier, later in zip(a, a[1:]))


# a reordered sentence, preferably one the model translated exactly
candidates = [s for s, _ in data.test if reorders(s) and 6 <= len(s.split()) <= 10]
exact_ones = [s for (s, r), hyp in zip(data.test, rnn_results["rnn-attention"]["hyps"])
              if hyp == r and s in candidates]
sentence = (exact_ones or candidates or [data.test[0][0]])[0]
src_ids = src_tok.encode(sentence)
tokens, weights = attn_model.greedy_decode(make_batch([(src_ids, [0])], src_tok.pad_id).src,
                                           24 if SMALL else 64, tgt_tok.bos_id, tgt_tok.eos_id)
out_ids = [int(i) for i in tokens[0] if i != tgt_tok.pad_id]
print("source:     ", sentence)
print("reference:  ", toy.translate_reference(sentence))
print("translation:", tgt_tok.decode(out_ids))
plot_attention(weights[0], [src_tok.id_to_token(i) for i in src_ids],
               [tgt_tok.id_to_token(i) for i in out_ids], out_path("14_rnn_attention.png"),
               title=f"Attention of the recurrent decoder (additive score)\n{sentence}")
show_image(out_path("14_rnn_attention.png"))
assert np.allclose(weights[0, :len(out_ids)].sum(-1), 1.0, atol=1e-4)

# %% [markdown]
# ## 2. BERT: pre-training an encoder on unlabelled text
#
# BERT keeps only the Transformer's **encoder** and trains it on plain text, which exists in
# huge amounts, before it is adapted to a task with few labels. The input is a pair of
# sentences,
#
# $$[\mathrm{CLS}]\ S\ [\mathrm{SEP}]\ S'\ [\mathrm{SEP}],$$
#
# and each position gets the sum of a token embedding, a segment embedding (0 for $S$, 1 for
# $S'$) and a learned position embedding. Two training criteria are summed:
#
# * **masked language model (MLM)**: hide 15 % of the words and predict them from both sides
#   of the context;
# * **next-sentence prediction (NSP)**: from the output at [CLS], decide whether $S'$ really
#   followed $S$ in the text or was drawn at random.
#
# `minigrad.demos.bert` has a small topical text generator to play with.

# %%
bcorpus = bert.make_bert_corpus(n_docs=200 if SMALL else 800, seed=0)
vocab = bcorpus.vocab
doc = bcorpus.docs[0]
ids, segments = bert.encode_pair(doc[0], doc[1], vocab)
print(vocab.decode(ids))
print("segments:", segments)
assert ids[0] == vocab.cls_id and ids.count(vocab.sep_id) == 2
assert segments == [0] * (len(doc[0]) + 2) + [1] * (len(doc[1]) + 1)

# %% [markdown]
# ### The input: three embeddings added
#
# Each position's input vector is the sum of three learned rows: the **token**'s embedding,
# the **segment**'s (one of two rows: sentence A or B) and the **position**'s (BERT learns a
# row per position instead of tutorial 9's sinusoids). The sum is layer-normalised and enters
# the encoder stack of tutorial 11. Below, the three parts for the pair above, in a small
# untrained `BertForPreTraining` ($d = 16$): rows are the input positions, columns the features.

# %%
mg.manual_seed(0)
tiny_bert = models.BertForPreTraining(len(vocab), d_model=16, nhead=2, num_layers=1,
                                      dim_feedforward=32, max_len=64).eval()
enc = tiny_bert.bert
with mg.no_grad():
    parts = {"token": enc.tok_embed(np.array(ids)).numpy(),
             "segment": enc.seg_embed(np.array(segments)).numpy(),
             "position": enc.pos_embed(np.arange(len(ids))).numpy()}
summed = sum(parts.values())
assert np.allclose(parts["segment"][0], parts["segment"][segments.index(1) - 1])   # one row per segment
assert not np.allclose(parts["segment"][0], parts["segment"][-1])
labels_y = [f"{vocab.itos[i]} ({s})" for i, s in zip(ids, segments)]
fig, axes = plt.subplots(1, 4, figsize=(13, 0.28 * len(ids) + 1.5), sharey=True,
                         layout="constrained")
lim = np.abs(summed).max()
for ax, (name, part) in zip(axes, [*parts.items(), ("sum: the encoder's input", summed)]):
    im = ax.imshow(part, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_title(name)
    ax.set_xlabel("feature")
axes[0].set_yticks(range(len(ids)), labels_y, fontsize=8)
fig.colorbar(im, ax=axes, shrink=0.6)
fig.suptitle("BERT's input = token + segment + position embeddings (segment in brackets)")
savefig(fig, "14_bert_input_embeddings")
with mg.no_grad():   # the encoder's first step is the norm of exactly this sum
    first = enc.norm(mg.tensor(summed[None])).numpy()
    assert np.allclose(first, enc.norm(enc.tok_embed(np.array([ids])) + enc.seg_embed(np.array([segments]))
                                       + enc.pos_embed(np.arange(len(ids)))).numpy(), atol=1e-6)

# %% [markdown]
# ### The two heads and their summed loss, on one batch
#
# On top of the encoder's output $\mathbf z$ sit two small heads:
#
# * the **MLM head** scores every position against the whole vocabulary:
#   $\mathrm{LayerNorm}(\mathrm{GELU}(\mathbf z W + \mathbf b))\, E^\top + \mathbf b_V$, where
#   $E$ is the token embedding table again (tied, as the output layer of tutorial 11);
# * the **NSP head** reads only position 0, [CLS]: the pooler
#   $\tanh(W_p \mathbf z_{[CLS]} + \mathbf b_p)$, then a linear layer to two scores (NotNext, IsNext).
#
# The loss is the cross entropy of the masked words (only the selected positions count,
# labels $-100$ elsewhere) **plus** the cross entropy of IsNext/NotNext. We compute both heads and
# the loss by hand on a batch of 8 pairs and compare with the model and `pretraining_loss`.

# %%
from minigrad.models.bert import pretraining_loss

rng_b = np.random.default_rng(1)
b_ids, b_types, b_next = bert.nsp_batch(bcorpus, np.arange(len(bcorpus.docs)), 8, rng_b)
b_masked, b_labels = models.mask_tokens(b_ids, vocab, rng_b)
with mg.no_grad():
    z = enc(b_masked, b_types)                                              # (B, T, D)
    h_mlm = tiny_bert.mlm_norm(tiny_bert.mlm_dense(z).gelu())
    mlm_by_hand = (h_mlm.numpy() @ enc.tok_embed.weight.numpy().T
                   + tiny_bert.mlm_bias.numpy())                            # (B, T, V)
    nsp_by_hand = tiny_bert.nsp(enc.pooler(z[:, 0]).tanh()).numpy()         # (B, 2)
    mlm_logits, nsp_logits = tiny_bert(b_masked, b_types)
    library_loss = pretraining_loss(mlm_logits, nsp_logits, b_labels, b_next).item()
assert np.allclose(mlm_by_hand, mlm_logits.numpy(), atol=1e-4)
assert np.allclose(nsp_by_hand, nsp_logits.numpy(), atol=1e-5)


def log_softmax_np(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


sel = b_labels != -100                                                      # masked positions
mlm_loss = -log_softmax_np(mlm_by_hand)[sel, b_labels[sel]].mean()
nsp_loss = -log_softmax_np(nsp_by_hand)[np.arange(8), b_next.astype(int)].mean()
print(f"{int(sel.sum())} masked positions in {b_ids.size} tokens; MLM loss {mlm_loss:.3f} "
      f"(ln V = {np.log(len(vocab)):.3f}), NSP loss {nsp_loss:.3f} (ln 2 = {np.log(2):.3f}), "
      f"sum {mlm_loss + nsp_loss:.3f}; pretraining_loss {library_loss:.3f}")
assert np.isclose(mlm_loss + nsp_loss, library_loss, rtol=1e-4)
assert abs(mlm_loss - np.log(len(vocab))) < 0.5 and abs(nsp_loss - np.log(2)) < 0.3  # untrained

# %% [markdown]
# Untrained, both losses sit near their "uniform guess" values, $\ln V$ and $\ln 2$. (The MLM
# head starts near uniform because BERT initialises the embeddings with a small standard
# deviation, 0.02.) Pre-training lowers their sum.
#
# Of the selected 15 %, BERT replaces 80 % with [MASK], 10 % with a random word, and leaves
# 10 % unchanged. The model must then predict the original word at all selected positions.
# Because some visible words are also targets, it cannot assume that only [MASK] positions
# matter, and it keeps a useful vector at every position. `mask_tokens` does this; on a large
# batch the proportions come out as designed.

# %%
rng = np.random.default_rng(0)
big_ids, _, _ = bert.nsp_batch(bcorpus, np.arange(len(bcorpus.docs)), 4000, rng)
masked, labels = models.mask_tokens(big_ids, vocab, rng)
ordinary = ~vocab.is_special(big_ids)
selected = labels != -100
share = selected.sum() / ordinary.sum()
to_mask = (masked[selected] == vocab.mask_id).mean()
unchanged = (masked[selected] == big_ids[selected]).mean()
print(f"selected {share:.3f} of ordinary tokens; of these [MASK] {to_mask:.3f}, "
      f"unchanged {unchanged:.3f}, random {1 - to_mask - unchanged:.3f}")
assert abs(share - 0.15) < 0.01 and abs(to_mask - 0.8) < 0.02 and abs(unchanged - 0.1) < 0.02

# %% [markdown]
# Now pre-train: 800 steps of 64 sentence pairs, a fresh draw of pairs and masks at every step.
# Besides the accuracy of the masked-word guesses and its "always guess the most common word"
# baseline, `pretrain_demo` reports two numbers that say *what* was learned:
#
# * how often the guess for a masked topical word (a noun, verb or adjective) is at least a word
#   **of the right topic**. Eight topics make that 1 in 8 by chance;
# * how often NSP catches a random second sentence that, by chance, has **the same topic** as the
#   first one.
#
# The length of the run matters more than anything else in this section. For its first few
# hundred steps the model learns only where ".", "a" and "the" go, and its guesses for a masked
# topical word have the right topic about 1 time in 10. Then, somewhere between steps 300 and 600
# depending on the seed, it learns which words occur together, and that share jumps to about
# 0.98. Stopped too early, pre-training is worse than useless: with 400 steps (and dropout 0.1)
# this run guessed the right topic only 49 % of the time, and fine-tuning that encoder on the
# task below did *worse* than training from random weights (0.58 against 0.77 with 16 labels).

# %%
pre = bert.pretrain_demo(steps=60 if SMALL else 800, n_docs=200 if SMALL else 800,
                         eval_pairs=300 if SMALL else 1000, verbose=False)
print(f"MLM accuracy {pre['mlm_accuracy']:.3f} (most-common-word baseline "
      f"{pre['unigram_baseline']:.3f}); guess of the right topic {pre['mlm_topic_accuracy']:.3f}")
print(f"NSP accuracy {pre['nsp_accuracy']:.3f}; on random pairs that share a topic "
      f"{pre['nsp_same_topic_accuracy']:.3f}; {pre['seconds']:.0f} s")
assert pre["mlm_accuracy"] > pre["unigram_baseline"]
if not SMALL:   # held for each of the 5 seeds tried (right topic 0.97-0.98, NSP 0.92-0.95)
    assert pre["mlm_topic_accuracy"] > 0.9 and pre["nsp_accuracy"] > 0.85

# %% [markdown]
# NSP is right about 94 % of the time, but look at its second number: on our corpus it has learned
# a shortcut. Seven times in eight, a random second sentence comes from a document on another
# topic, so "do the two sentences share a topic?" alone scores $1/2 + 1/2 \cdot 7/8 \approx 0.94$,
# and that is what the model does: a random pair that happens to share a topic is called NotNext
# only about 1 time in 5 (measured on several hundred such pairs; the 1,000 pairs above hold only
# about 60). On real text NSP leans on topic too: RoBERTa dropped it, and ALBERT replaced it by
# predicting the order of two consecutive sentences, which topic cannot give away. Here the
# shortcut has a useful side effect: the vector at [CLS], which NSP trains, has learned to carry
# the sentence's topic.

# %% [markdown]
# How big are the real ones? A BERT encoder's parameters are its three embedding tables, a
# layer norm, $L$ encoder layers (tutorial 11's count) and the pooler on [CLS]. We check a formula
# against a small `BertEncoder` and then apply it to the published sizes (30,522 word pieces,
# 512 positions): BERT-base ($d = 768$, 12 layers) and BERT-large ($d = 1024$, 24 layers).

# %%
def bert_encoder_parameters(V, d, layers, d_ff, max_len=512, segments=2):
    embeddings = (V + segments + max_len) * d + 2 * d
    layer = (4 * d * d + 4 * d) + (2 * d * d_ff + d_ff + d) + 4 * d
    return embeddings + layers * layer + (d * d + d)


small_bert = models.BertEncoder(len(vocab), d_model=32, nhead=4, num_layers=2, dim_feedforward=64)
assert small_bert.num_parameters() == bert_encoder_parameters(len(vocab), 32, 2, 64, max_len=64)
base_count = bert_encoder_parameters(30_522, 768, 12, 3072)
print(f"BERT-base: {base_count:,} parameters")
assert base_count == 109_482_240                  # the "110 M" of the paper and the lecture

# %% [markdown]
# The lecture compares sizes: the translation Transformer has about 65 M parameters (tutorial
# 11), BERT-base about 110 M, BERT-large about 340 M (Test yourself 3) and GPT-3 175 billion. GPT-3
# is a stack of 96 decoder-style layers with $d = 12{,}288$ and $d_{ff} = 4d$ (no cross-attention,
# so each layer is counted like an encoder layer), a 50,257-token vocabulary and 2,048 positions.
# The same bookkeeping lands on 175 billion.

# %%
d3 = 12_288
gpt3_layer = (4 * d3 * d3 + 4 * d3) + (2 * d3 * 4 * d3 + 4 * d3 + d3) + 4 * d3
gpt3 = (50_257 + 2_048) * d3 + 96 * gpt3_layer + 2 * d3          # embeddings, layers, final norm
print(f"GPT-3: {gpt3:,} parameters")
assert round(gpt3 / 1e9) == 175

# %% [markdown]
# ### Fine-tuning on a few labels
#
# The point of pre-training is what comes after. To solve a task, put a small classifier on the
# [CLS] vector (after BERT's "pooler", a tanh layer) and train everything, BERT included, on the
# task's labelled examples: **fine-tuning**. The lecture also names the cheaper option of keeping
# BERT **frozen** and training only the classifier. Our task: tell the topic of a *single*
# sentence (8 topics) when only $k$ sentences of each topic are labelled. Three ways:
#
# * **fine-tuned**: the pre-trained encoder plus a new classifier, all trained (learning rate
#   $10^{-3}$, 100 steps of 16 sentences, BERT's warm-up and decay);
# * **frozen**: the pre-trained encoder unchanged, only the classifier trained (rate $10^{-2}$);
# * **scratch**: the same architecture from random weights, trained like "fine-tuned" (a larger
#   rate, $3 \cdot 10^{-3}$, did not help it).
#
# `bert.finetune_classifier` is the training loop (`freeze=True` calls `requires_grad_(False)` on
# the encoder); `bert.finetune_demo` runs it for every method, every $k$, and three random
# labelled sets per $k$, and tests on every sentence of the held-out documents.

# %%
ft = bert.finetune_demo(pre, per_topic=(1, 4) if SMALL else (1, 2, 4, 8),
                        seeds=(0,) if SMALL else (0, 1, 2), steps=20 if SMALL else 100,
                        verbose=False)
print(bert.format_label_table(ft))
print(f"fine-tuning: {ft['seconds']:.0f} s")
if SMALL:
    print("(small mode: 60 pre-training steps stop long before the encoder learns the topics,"
          " so these numbers say nothing about pre-training; run in full mode)")
acc = {m: a.mean(1) for m, a in ft["accuracy"].items()}   # mean over the labelled sets
assert all(0 <= a.min() and a.max() <= 1 for a in acc.values())
if not SMALL:
    # these held for each of the 5 pre-training seeds tried, 3 labelled sets each
    assert (acc["fine-tuned"] > acc["scratch"]).all()
    assert min(acc["fine-tuned"][0], acc["frozen"][0]) > acc["scratch"][0] + 0.15  # 1 per topic
    assert acc["scratch"][-1] > 0.9            # with 8 per topic, random weights learn it too

fig, ax = plt.subplots(figsize=(6.5, 3.8))
for name, a in ft["accuracy"].items():
    mean = a.mean(1)
    ax.errorbar(ft["n_labels"], mean, yerr=[mean - a.min(1), a.max(1) - mean], fmt="o-",
                capsize=3, label=name)
ax.axhline(ft["majority_baseline"], color="k", ls=":", label="majority class")
ax.set_xscale("log", base=2)
ax.set_xticks(ft["n_labels"], [str(n) for n in ft["n_labels"]])
ax.set_xlabel("labelled sentences (all 8 topics together)")
ax.set_ylabel("test accuracy (topic of a sentence)")
ax.set_title("Pre-trained BERT vs the same model from random weights\n"
             "(mean, min and max over the labelled sets)")
ax.legend()
savefig(fig, "14_bert_finetuning")

# %% [markdown]
# With one labelled sentence per topic the pre-trained encoder is right most of the time and the
# model from random weights about half the time; with eight per topic both are nearly perfect.
# The table is one pre-training run. On five pre-training seeds, measured with an earlier version
# of the library, with 1 sentence per topic the means were 0.71-0.91 (fine-tuned),
# 0.74-0.98 (frozen) and 0.47-0.52 (scratch); with 8 per topic, 1.00, 0.94-1.00 and 0.96-0.98.
# Few labels suffice *after* pre-training, which is the lecture's point. Whether all the weights
# are trained or only the classifier matters less here: with one example per topic neither won
# on every seed, and with eight per topic fine-tuning was ahead or level. The pre-trained
# numbers move by a few points with floating-point details (the order of a sum, another BLAS),
# because they change the path of the 800 pre-training steps; the ordering did not move.
#
# Why does pre-training help? Split the test sentences by whether any of their topical words
# occurs in a labelled sentence. For a sentence whose words were all absent from the labels, the
# model trained from scratch has nothing to go on: its embeddings of those words are still the
# random ones. The pre-trained model learned from unlabelled text that, say, "comet" goes with
# "telescope", so one labelled space sentence covers words it never showed.

# %%
for i, k in enumerate(ft["per_topic"]):
    share = ft["unseen_share"][i].mean()
    if share < 0.01:   # a handful of sentences: too few to measure an accuracy on
        continue
    line = "  ".join(f"{m} {np.nanmean(a[i]):.2f}" for m, a in ft["unseen_accuracy"].items())
    print(f"{k} per topic: {share:.0%} of the test sentences share no topical word with the "
          f"labelled ones; accuracy on those: {line}")
assert (np.diff(ft["unseen_share"].mean(1)) < 0).all()   # more labels, fewer unseen words
if not SMALL:   # one per topic: the random-weights model is near chance on them (5 seeds: .07-.12)
    unseen = {m: np.nanmean(a[0]) for m, a in ft["unseen_accuracy"].items()}
    assert unseen["scratch"] < 0.3 and unseen["fine-tuned"] > unseen["scratch"] + 0.4

# %% [markdown]
#
# ## 3. Graph attention
#
# In a sentence a word's context is the words around it; in a graph a node's context is its
# **neighbours**. A graph attention layer (Veličković et al., 2018) gives every node a weighted
# average of its neighbours' projected features, with weights from a small scoring function:
#
# $$e_{ij} = \mathrm{LeakyReLU}\big(\mathbf a^\top [W\mathbf h_i \,\|\, W\mathbf h_j]\big), \qquad
#   \alpha_{ij} = \frac{\exp e_{ij}}{\sum_{k \in N(i)} \exp e_{ik}}, \qquad
#   \mathbf h'_i = \sum_{j \in N(i)} \alpha_{ij}\, W\mathbf h_j .$$
#
# $N(i)$ holds $i$'s neighbours and $i$ itself. Pairs without an edge get no weight at all, so
# this is self-attention with a mask given by the graph. As in the Transformer, several heads
# run side by side.

# %%
adjacency = np.zeros((5, 5), dtype=bool)
for i, j in [(0, 1), (0, 2), (0, 3), (3, 4)]:               # node 0 is a hub, 4 hangs off 3
    adjacency[i, j] = adjacency[j, i] = True
mg.manual_seed(0)
layer = models.GATLayer(in_features=6, out_features=4, heads=2)
h_out, alpha = layer(mg.randn(5, 6), adjacency, return_attention=True)
alpha = alpha.numpy()
print("output", h_out.shape, "(nodes, heads x features); attention", alpha.shape)
print("head 0 weights of node 0:", alpha[0, 0].round(3))
assert np.allclose(alpha.sum(-1), 1.0, atol=1e-5)
allowed = adjacency | np.eye(5, dtype=bool)
assert np.all(alpha[:, ~allowed] == 0)                      # no edge, no attention

# draw head 0: an arrow j -> i for each weight alpha_ij that node i gives node j
pos = np.array([[0.0, 0.0], [-1.7, 1.2], [-1.7, -1.2], [1.7, 0.0], [3.4, 0.0]])  # the hub in the middle
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
for head, ax in enumerate(axes):
    for i, j in zip(*np.nonzero(adjacency)):
        a_ij = alpha[head, i, j]
        along = (pos[i] - pos[j]) / np.linalg.norm(pos[i] - pos[j])
        shift = 0.09 * np.array([along[1], -along[0]])      # the two directions side by side
        start, end = pos[j] + shift, pos[i] + shift
        ax.annotate("", end + 0.22 * (start - end) / np.linalg.norm(start - end),
                    start - 0.22 * (start - end) / np.linalg.norm(start - end),
                    arrowprops=dict(arrowstyle="-|>", lw=0.5 + 6 * a_ij,
                                    color=plt.cm.viridis(a_ij)))
        ax.text(*(0.62 * end + 0.38 * start), f"{a_ij:.2f}", fontsize=8, ha="center",
                va="center", bbox=dict(fc="white", ec="none", pad=0.5))
    for i in range(5):
        ax.scatter(*pos[i], s=500, color="#dddddd", ec="k", zorder=3)
        ax.text(*pos[i], str(i), ha="center", va="center", zorder=4)
        ax.text(pos[i, 0], pos[i, 1] - 0.38, f"self {alpha[head, i, i]:.2f}", ha="center",
                fontsize=8, color="0.3")
    ax.set_xlim(-2.3, 3.9)
    ax.set_ylim(-1.8, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"head {head + 1}")
fig.suptitle("GAT attention on the edges (untrained): arrow j -> i shows alpha_ij, "
             "what node i takes from j")
savefig(fig, "14_gat_edge_attention")
assert np.allclose(alpha[:, 4, [3, 4]].sum(-1), 1.0)        # node 4 hears only 3 and itself

# %% [markdown]
# The lecture's setting is multi-label node classification: each node may carry several labels,
# so each label gets its own sigmoid ("is label $y$ present?") and binary cross-entropy, instead
# of one softmax. `gat_demo` builds a random graph with communities; a node's labels depend on
# its community, its own features are very noisy, and its neighbours are mostly from its own
# community. A plain MLP sees one node's features only; the GAT averages over the neighbourhood
# and so sees through much of the noise.

# %%
g = gat.gat_demo(seed=0, epochs=30 if SMALL else 100, n_nodes=200 if SMALL else 500, verbose=False)
print(f"test micro-F1: GAT {g['gat_f1']:.3f}, MLP {g['mlp_f1']:.3f}")
assert g["gat_f1"] > g["mlp_f1"]

# %% [markdown]
# ## 4. Hierarchical attention for documents
#
# A document is a sequence of sentences, a sentence a sequence of words. A hierarchical attention
# network (Yang et al., 2016) applies attention at both levels to classify documents:
#
# * a bidirectional GRU reads each sentence's words; attention with a **learned query vector**
#   $\mathbf u_w$ ("which words matter?") pools them into a sentence vector;
# * a second bidirectional GRU reads the sentence vectors; attention with a second learned
#   query $\mathbf u_s$ ("which sentences matter?") pools them into a document vector;
# * a linear layer and a softmax give the class.
#
# There is no output sequence here to supply queries, so the queries are simply parameters.
# `make_han_dataset` writes documents whose class is given away by a single key sentence (it
# holds a marker word and the class keyword), while other sentences hold keywords of random
# classes as distractors.

# %%
docs, doc_labels, key_pos = han.make_han_dataset(4, seed=0)
print("document 0 (word ids, 0 = padding), class", doc_labels[0], "key sentence", key_pos[0])
print(docs[0])
assert models.han.MARKER in docs[0, key_pos[0]]

# %%
h = han.train_han_demo(n_docs=400 if SMALL else 800, epochs=3 if SMALL else 6, verbose=False)
print(f"test accuracy {h['accuracy']:.3f}; counting keywords {h['keyword_count_baseline']:.3f}; "
      f"majority class {h['majority_baseline']:.3f}; sentence attention peaks on the key "
      f"sentence in {h['key_sentence_hit_rate']:.0%} of test documents")
assert falls(h["losses"])
if not SMALL:
    assert h["accuracy"] > h["keyword_count_baseline"] and h["key_sentence_hit_rate"] > 0.8

# %% [markdown]
# The sentence weights $\beta_i$ show where the model looked. For a test document:

# %%
test_docs, test_labels, test_keys = han.make_han_dataset(400 if SMALL else 800, seed=0)
with mg.no_grad():
    _, word_w, sent_w = h["model"](test_docs[:1], return_attention=True)
beta = sent_w.numpy()[0]
n_sent = int((test_docs[0] != 0).any(-1).sum())
fig, ax = plt.subplots(figsize=(6, 3.2))
colors = ["C3" if i == test_keys[0] else "C0" for i in range(n_sent)]
ax.bar(range(n_sent), beta[:n_sent], color=colors)
ax.set_xticks(range(n_sent))
ax.set_xlabel("sentence of the document (red: the key sentence)")
ax.set_ylabel("sentence attention weight")
ax.set_title("Hierarchical attention: where one document's classification looked")
savefig(fig, "14_han_sentence_attention")
assert np.isclose(beta.sum(), 1.0, atol=1e-5) and np.all(beta[n_sent:] == 0)

# %% [markdown]
# One level down, the word weights $\alpha_{it}$ that pooled each sentence. Here they are
# for every sentence of the same document, one row per sentence, each word shaded by its weight.
# Word ids: 1 is the marker, 2 to 5 the four class keywords, higher ids are filler.

# %%
alpha_w = word_w.numpy()[0]                                  # (sentences, words)
n_classes = int(test_labels.max()) + 1


def word_name(i):
    if i == models.han.MARKER:
        return "MARKER"
    return f"class{i - 2}" if i < 2 + n_classes else f"w{i}"


fig, ax = plt.subplots(figsize=(8, 0.55 * n_sent + 1.2))
for r in range(n_sent):
    for c, word in enumerate(test_docs[0, r]):
        if word == 0:
            continue
        ax.add_patch(plt.Rectangle((c, -r - 0.45), 0.95, 0.9, color=plt.cm.Oranges(alpha_w[r, c])))
        ax.text(c + 0.47, -r, f"{word_name(word)}\n{alpha_w[r, c]:.2f}", ha="center",
                va="center", fontsize=7)
ax.set_xlim(0, test_docs.shape[2])
ax.set_ylim(-n_sent + 0.4, 0.6)
ax.set_yticks([-r for r in range(n_sent)],
              [f"sentence {r}" + (" (key)" if r == test_keys[0] else "") for r in range(n_sent)])
ax.set_xticks([])
ax.set_title("HAN word attention: the weight of each word within its sentence")
savefig(fig, "14_han_word_attention")
real_words = test_docs[0, :n_sent] != 0
assert np.allclose(alpha_w[:n_sent].sum(-1), 1.0, atol=1e-5) and np.all(alpha_w[:n_sent][~real_words] == 0)

# %% [markdown]
# ## Exercise: attention over a graph's neighbours
#
# Write `neighbour_softmax(scores, adjacency)`: given raw scores $e_{ij}$ $(N, N)$ and a
# boolean adjacency matrix, return the GAT weights $\alpha_{ij}$, a softmax of each row over node
# $i$'s neighbours *and $i$ itself*, with exactly 0 for every other pair.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_neighbour_softmax


def neighbour_softmax(scores, adjacency):
    """(N, N) scores, (N, N) bool edges -> (N, N) weights over N(i), which includes i."""
    raise NotImplementedError


check(check_neighbour_softmax, neighbour_softmax);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def neighbour_softmax(scores, adjacency):
    """(N, N) scores, (N, N) bool edges -> (N, N) weights over N(i), which includes i."""
    allowed = adjacency | np.eye(len(scores), dtype=bool)
    masked = np.where(allowed, scores, -np.inf)
    weights = np.exp(masked - masked.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


assert check(check_neighbour_softmax, neighbour_softmax)

# %% [markdown]
# ## Test yourself
#
# **1.** What fraction of all ordinary tokens does BERT's masking turn into [MASK]? Into a
# random word? How many are targets while staying visible?
#
# <details><summary>Answer</summary>
#
# $0.15 \times 0.8 = 12\,\%$ become [MASK], $0.15 \times 0.1 = 1.5\,\%$ a random word, and
# $1.5\,\%$ stay unchanged but must still be predicted.
#
# </details>

# %%
assert np.isclose(0.15 * 0.8, 0.12) and np.isclose(0.15 * 0.1, 0.015)
assert abs((masked[ordinary] == vocab.mask_id).mean() - 0.12) < 0.01

# %% [markdown]
# **2.** In a GAT layer whose attention vector $\mathbf a$ is all zeros, what weights does a node
# with three neighbours give them?
#
# <details><summary>Answer</summary>
#
# Every score is $\mathrm{LeakyReLU}(0) = 0$, so the softmax is uniform over the
# neighbourhood, which includes the node itself: four weights of $1/4$. (This is node 0 of our
# little graph.)
#
# </details>

# %%
with mg.no_grad():
    layer.att_dst.zero_()
    layer.att_src.zero_()
    _, uniform = layer(mg.randn(5, 6), adjacency, return_attention=True)
assert np.allclose(uniform.numpy()[:, 0, [0, 1, 2, 3]], 0.25)

# %% [markdown]
# **3.** Use the formula above for BERT-large: $d = 1024$, 24 layers, $d_{ff} = 4096$, the same
# 30,522-token vocabulary.
#
# <details><summary>Answer</summary>
#
# Embeddings $(30{,}522 + 2 + 512) \cdot 1024 + 2048 = 31{,}782{,}912$; each layer
# $4{,}198{,}400 + 8{,}393{,}728 + 4{,}096 = 12{,}596{,}224$, times 24 is $302{,}309{,}376$; pooler
# $1{,}049{,}600$. In all $335{,}141{,}888$, the "340 M" usually quoted.
#
# </details>

# %%
large_count = bert_encoder_parameters(30_522, 1024, 24, 4096)
assert large_count == 31_782_912 + 302_309_376 + 1_049_600 == 335_141_888
print(f"all checks passed in {time.perf_counter() - t_start:.0f} s")
