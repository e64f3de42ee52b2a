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
# # 12. Training: teacher forcing, label smoothing, warm-up
#
# Tutorial 11 left us with a complete model. Three choices decide how it learns:
#
# 1. **teacher forcing**: what the decoder reads while it is being trained;
# 2. **label smoothing**: what "the right answer" looks like to the loss;
# 3. **the warm-up schedule**: how large a step the optimiser takes at each moment of training.
#
# Each is small in code, and each is explained here with numbers you can check by hand. At
# the end, one whole training step (forward, loss, backward, clipping, Adam, the rate) is
# written out and checked against the library's `Trainer`, which tutorial 13 then uses.

# %%
import math

from _common import SMALL, out_path, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.models import Seq2SeqTransformer
from minigrad.translate.batching import encode_pairs, make_batch
from minigrad.translate.corpus import generate_corpus
from minigrad.translate.tokenizers import WordTokenizer
from minigrad.translate.train import TrainConfig, Trainer
from minigrad.nn import functional as F
from minigrad.optim.lr_scheduler import WarmupScheduler, noam_lr

# %% [markdown]
# ## Teacher forcing
#
# At inference the decoder produces one word, appends it to its input and produces the next.
# During training we could do the same, but if an early guess is wrong every later prediction
# is conditioned on that mistake, the errors pile up, and learning is slow. **Teacher forcing**
# feeds the decoder the *reference* words instead, whatever it would have predicted.
#
# With a reference $\langle bos\rangle\, y_1 \dots y_n\, \langle eos\rangle$, the decoder's input
# and the words it must predict are the same sequence shifted by one:
#
# | position | 1 | 2 | ... | n | n + 1 |
# |---|---|---|---|---|---|
# | `tgt_in` (reads) | ⟨bos⟩ | $y_1$ | ... | $y_{n-1}$ | $y_n$ |
# | `tgt_out` (predicts) | $y_1$ | $y_2$ | ... | $y_n$ | ⟨eos⟩ |
#
# Let us see it on sentence pairs of the toy corpus of tutorial 13 (English-like source,
# an invented verb-final target language).

# %%
mg.manual_seed(0)
corpus = generate_corpus(300, 10, 10, seed=0)
src_tok = WordTokenizer.fit([s for s, _ in corpus.train])
tgt_tok = WordTokenizer.fit([t for _, t in corpus.train])
pairs = corpus.train[:3]
batch = make_batch(encode_pairs(pairs, src_tok, tgt_tok), tgt_tok.pad_id)
print("source :", pairs[0][0])
print("target :", pairs[0][1])
print("src     (B, S):", batch.src.shape)
print("tgt_in  (B, T):", batch.tgt_in.shape)
print("tgt_out (B, T):", batch.tgt_out.shape)
for name, row in (("tgt_in", batch.tgt_in[0]), ("tgt_out", batch.tgt_out[0])):
    print(f"{name:>8}:", " ".join(tgt_tok.id_to_token(i) for i in row))

# %% [markdown]
# The two rows are the same ids, one position apart. Sentences of a batch differ in length, so
# the shorter ones are padded with ⟨pad⟩ (id 0). That is why this first row's `tgt_in` still
# holds ⟨eos⟩ and a ⟨pad⟩: those positions are asked to predict ⟨pad⟩, and the loss skips every
# position whose target is padding.

# %%
assert (batch.tgt_in[:, 1:] == batch.tgt_out[:, :-1]).all()
assert (batch.tgt_in[:, 0] == tgt_tok.bos_id).all()
n0 = len(pairs[0][1].split())
assert batch.tgt_out[0, n0] == tgt_tok.eos_id

# %% [markdown]
# Why is this fast? Because of the causal mask (tutorial 8), position $t$ of the decoder cannot
# see positions after $t$. So one forward pass over the whole `tgt_in` gives, at every position,
# exactly what we would get by feeding that position's prefix alone. All $T$ predictions are
# trained in parallel. We check it on a small untrained model: the logits for position $t$ from
# the full pass equal those from a pass over `tgt_in[:, :t+1]` only.

# %%
model = Seq2SeqTransformer(len(src_tok), len(tgt_tok), d_model=32, nhead=4,
                           num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=64).eval()
with mg.no_grad():
    full = model(batch.src, batch.tgt_in).numpy()                 # (B, T, V) in one pass
    for t in range(batch.tgt_in.shape[1]):
        prefix = model(batch.src, batch.tgt_in[:, :t + 1]).numpy()
        real = batch.tgt_in[:, t] != tgt_tok.pad_id               # compare non-padding rows
        assert np.allclose(full[real, t], prefix[real, t], atol=1e-4)
print("one teacher-forced pass = T separate prefix passes; logits", full.shape)

# %% [markdown]
# ## Label smoothing
#
# The loss is the cross entropy between a *target distribution* $q$ over the $C$ words and the
# model's softmax $p$:
#
# $$\mathcal L = -\sum_{c=1}^{C} q_c \log p_c .$$
#
# Without smoothing $q$ is one-hot and the loss is $-\log p_y$: the model is pushed to make the
# correct word's probability as close to 1 as possible, which needs ever larger logits. The
# Transformer paper used **label smoothing** with $\epsilon = 0.1$: take $\epsilon$ of the
# probability mass off the correct word and spread it out. This makes the model less certain
# (the paper notes it hurts perplexity) but improved accuracy and BLEU.
#
# PyTorch (and minigrad) spread the mass uniformly over all $C$ classes, the correct one
# included:
#
# $$q_c = (1 - \epsilon)\,[c = y] + \frac{\epsilon}{C}
#   \quad\Longrightarrow\quad
#   \mathcal L = (1 - \epsilon)\,(-\log p_y) + \epsilon \cdot \frac{1}{C}\sum_{c}(-\log p_c).$$
#
# A small example: $C = 5$ classes, logits $[2, 1, 0.1, -1, 0.5]$, correct class $y = 0$,
# $\epsilon = 0.1$. The target becomes $q = [0.92, 0.02, 0.02, 0.02, 0.02]$, and the loss rises
# from $-\log p_0 = 0.5824$ to $0.7304$: the smoothed target also asks for some probability on
# the four wrong classes, which these confident logits do not give.

# %%
logits = np.array([2.0, 1.0, 0.1, -1.0, 0.5])
y, eps, C = 0, 0.1, 5
p = np.exp(logits) / np.exp(logits).sum()
q = np.full(C, eps / C)
q[y] += 1 - eps
print("p =", p.round(4))
print("q =", q)
assert np.allclose(q, [0.92, 0.02, 0.02, 0.02, 0.02]) and np.isclose(q.sum(), 1)

loss_by_hand = -(q * np.log(p)).sum()
loss_pytorch_formula = (1 - eps) * -np.log(p[y]) + eps * np.mean(-np.log(p))
loss_minigrad = F.cross_entropy(mg.tensor(logits[None].astype(np.float32)), np.array([y]),
                                label_smoothing=eps).item()
loss_plain = -np.log(p[y])
print(f"smoothed loss: by hand {loss_by_hand:.4f}, PyTorch's formula {loss_pytorch_formula:.4f}, "
      f"minigrad {loss_minigrad:.4f}; without smoothing {loss_plain:.4f}")
assert np.isclose(loss_by_hand, loss_pytorch_formula)
assert np.isclose(loss_by_hand, loss_minigrad, atol=1e-5)
assert round(loss_by_hand, 4) == 0.7304 and round(loss_plain, 4) == 0.5824

# %% [markdown]
# Other code bases keep the correct word at exactly $1 - \epsilon$ and share $\epsilon$ among
# the other classes. The Annotated Transformer, for one, also reserves a padding token whose
# column always gets 0, so $\epsilon$ is spread over the $C - 2$ classes that are neither the
# correct word nor padding. Take class 4 as the padding token here: $q = [0.9, 0.0333, 0.0333,
# 0.0333, 0]$. For large vocabularies the two versions are practically the same; for $C = 5$
# the difference is visible.

# %%
pad = 4
q_other = np.full(C, eps / (C - 2))
q_other[y], q_other[pad] = 1 - eps, 0.0
loss_other = -(q_other * np.log(p)).sum()
print(f"the Annotated Transformer's target {q_other.round(4)}: loss {loss_other:.4f}")
assert np.isclose(q_other.sum(), 1) and q_other[pad] == 0
assert np.isclose(loss_other, 0.9 * -np.log(p[0]) - eps / 3 * np.log(p[1:4]).sum())

# %% [markdown]
# A consequence worth knowing before reading a loss curve: with smoothing the loss can no longer
# reach 0. Its minimum is reached when $p = q$, and equals the entropy of $q$ (0.3897 for our
# $q$). At that point the gradient with respect to the logits, $p - q$, is zero; autograd
# confirms it.

# %%
best_logits = mg.tensor(np.log(q).astype(np.float32)[None], requires_grad=True)
floor = F.cross_entropy(best_logits, np.array([y]), label_smoothing=eps)
floor.backward()
entropy_q = -(q * np.log(q)).sum()
print(f"lowest possible loss for C = 5: {floor.item():.4f} (entropy of q {entropy_q:.4f})")
assert np.isclose(floor.item(), entropy_q, atol=1e-5) and round(entropy_q, 4) == 0.3897
assert np.abs(best_logits.grad.numpy()).max() < 1e-6

# %% [markdown]
# The floor grows with the vocabulary, because the smoothed mass is spread over more words.
# For a vocabulary of a thousand words (the size of the toy translator's target vocabulary in
# tutorial 13) it is about 1 nat, so a training loss with smoothing levels off near there rather
# than at 0.

# %%
def smoothing_floor(C, eps=0.1):
    q_true, q_rest = 1 - eps + eps / C, eps / C
    return -(q_true * math.log(q_true) + (C - 1) * q_rest * math.log(q_rest))


print({C_: round(smoothing_floor(C_), 3) for C_ in (5, 100, 1000, 37000)})
assert 0.95 < smoothing_floor(1000) < 1.05

# %% [markdown]
# ## The learning-rate warm-up
#
# The lecture builds the schedule in three attempts. With `steps` counting optimiser updates:
#
# 1. **Decay only**, $\eta = \text{steps}^{-0.5}$. Learning is slow: over the first 4000 steps the
#    error falls very little, so try larger steps.
# 2. **Growth only**, $\eta = \text{steps} \times 4000^{-1.5}$, a linear ramp. The error now falls
#    well for 4000 steps, but then the rate keeps growing and the error rises again.
# 3. **Both**: ramp up for the first 4000 steps, decay afterwards.
#
# The two curves cross exactly at step = warmup, where both equal $\text{warmup}^{-0.5}$;
# before it the ramp is the smaller one, after it the decay is. So "ramp, then decay" is simply
# their minimum. The paper also scales everything by $d_{model}^{-0.5}$:
#
# $$\eta(\text{step}) = d_{model}^{-0.5} \cdot \min\big(\text{step}^{-0.5},\ \text{step} \cdot \text{warmup}^{-1.5}\big).$$
#
# It is unusual: most schedules start high and only go down. Here the rate is small while the
# freshly initialised network and Adam's running estimates are still unreliable. The number of
# warm-up steps is one more hyperparameter.

# %%
warmup, d = 4000, 512
steps = np.arange(1, 20_001)
attempt1 = steps ** -0.5
attempt2 = steps * warmup ** -1.5
attempt3 = np.minimum(attempt1, attempt2)
assert np.isclose(attempt1[warmup - 1], attempt2[warmup - 1])            # they cross at 4000
assert np.isclose(attempt1[warmup - 1], warmup ** -0.5)
assert (attempt2[:warmup - 1] < attempt1[:warmup - 1]).all()           # ramp below before
assert (attempt2[warmup:] > attempt1[warmup:]).all()                   # and above after

fig, axes = plt.subplots(1, 2, figsize=(12, 4))
ax = axes[0]
ax.plot(steps, attempt1, label=r"1: decay only, $step^{-0.5}$")
ax.plot(steps, attempt2, label=r"2: growth only, $step \cdot 4000^{-1.5}$")
ax.plot(steps, attempt3, "k--", lw=2, label="3: the minimum of both")
ax.axvline(warmup, color="0.6", lw=1)
ax.set_ylim(0, 0.05)
ax.set_xlabel("training step")
ax.set_ylabel("learning rate (before the $d_{model}^{-0.5}$ factor)")
ax.set_title("The lecture's three attempts (warm-up 4000)")
ax.legend()
ax = axes[1]
for d_model_, warm in ((512, 4000), (512, 8000), (256, 4000)):
    ax.plot(steps, [noam_lr(s, d_model_, warm) for s in steps],
            label=f"d_model {d_model_}, warm-up {warm}")
ax.set_xlabel("training step")
ax.set_ylabel("learning rate")
ax.set_title("The final schedule, noam_lr(step, d_model, warmup)")
ax.legend()
savefig(fig, "12_warmup_schedule")

# %% [markdown]
# ### The lecture's Q8
#
# With $d_{model} = 512$ and 4000 warm-up steps, what is the rate at steps 1000, 4000 and 16000?
# First the factor: $512^{-0.5} \approx 0.0442$.
#
# * Step 1000 is on the ramp: $0.0442 \times 1000 \times 4000^{-1.5} = 0.0442 \times 0.00395
#   \approx 1.75 \times 10^{-4}$.
# * Step 4000 is the peak: $0.0442 \times 4000^{-0.5} \approx 6.99 \times 10^{-4}$.
# * Step 16000 is on the decay: $0.0442 \times 16000^{-0.5} = 0.0442 \times 0.00791 \approx
#   3.49 \times 10^{-4}$. That is half the peak, because the step count is four times larger
#   and $4^{-0.5} = 1/2$.

# %%
assert round(512 ** -0.5, 4) == 0.0442
assert round(1000 * 4000 ** -1.5, 5) == 0.00395 and round(16000 ** -0.5, 5) == 0.00791
q8 = {s: noam_lr(s, d_model=512, warmup_steps=4000) for s in (1000, 4000, 16000)}
print({s: f"{lr:.3g}" for s, lr in q8.items()})
assert f"{q8[1000]:.3g}" == "0.000175"
assert f"{q8[4000]:.3g}" == "0.000699"
assert f"{q8[16000]:.3g}" == "0.000349"
assert math.isclose(q8[16000], q8[4000] / 2)

# %% [markdown]
# In a training loop, `WarmupScheduler` writes this rate into the optimiser. Create Adam with
# any `lr` (it is overwritten), and call `scheduler.step()` after every `optimizer.step()`.
# Steps count from 1: right after construction the optimiser already holds the rate of step 1.

# %%
w = nn.Parameter(np.zeros(3, dtype=np.float32))
opt = optim.Adam([w], lr=1.0, betas=(0.9, 0.98), eps=1e-9)        # the paper's Adam settings
sched = WarmupScheduler(opt, d_model=512, warmup_steps=4000)
seen = []
for step in range(1, 4001):
    seen.append(opt.param_groups[0]["lr"])                        # the rate used by this step
    (w * w).sum().backward()
    opt.step()
    opt.zero_grad()
    sched.step()
assert np.isclose(seen[0], noam_lr(1, 512, 4000))
assert np.isclose(seen[999], q8[1000]) and np.isclose(seen[3999], q8[4000])
print(f"rate of step 1: {seen[0]:.3g}, step 1000: {seen[999]:.3g}, step 4000: {seen[3999]:.3g}")

# %% [markdown]
# Tutorial 13 uses the same schedule with a tiny model, where `factor` (a constant multiplier)
# and a short warm-up keep the steps sensible: a smaller $d_{model}$ already means larger
# rates, since the factor $d_{model}^{-0.5}$ grows as $d_{model}$ shrinks.

# %% [markdown]
# ## One training step, written out
#
# Everything a training step does has now been built. Before tutorial 13 hands the loop to the
# library's `Trainer`, here is one step with every part spelled out, on a tiny model:
#
# 1. **forward**, teacher-forced: the logits (B, T, V) for every position of `tgt_in` at once;
# 2. **the loss**: the label-smoothed cross entropy, $-\sum_c q_c \log p_c$ with
#    $q = (1 - \varepsilon)\,\text{one\_hot} + \varepsilon / C$, averaged over the target
#    tokens that are not padding;
# 3. **backward**: `loss.backward()` fills every parameter's `.grad` (tutorials 1 to 4 built it);
# 4. **clipping**: if the norm of all gradients together, $\lVert g\rVert = \sqrt{\sum g^2}$,
#    exceeds `max_norm`, every gradient is multiplied by $\text{max\_norm} / \lVert g\rVert$,
#    so one bad batch cannot throw the weights far;
# 5. **Adam**, with the paper's $\beta_1 = 0.9$, $\beta_2 = 0.98$, $\epsilon = 10^{-9}$: running
#    means of the gradient and of its square, corrected for starting at zero,
#    $$m \leftarrow \beta_1 m + (1 - \beta_1) g,\quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2,\quad
#      \theta \leftarrow \theta - \eta_t \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon};$$
# 6. **the schedule**: the rate $\eta_t$ of step $t$ is the warm-up formula above.
#
# We run two steps by hand on a copy of the `Trainer`'s model, and two steps of
# `Trainer.train_step` on the original, with the same seed for dropout, and compare the losses
# and every weight afterwards.

# %%
step_config = TrainConfig(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                          dim_feedforward=32, warmup=4, label_smoothing=0.1, clip_norm=1.0,
                          dropout=0.1, seed=0, checkpoint_every=0)
trainer = Trainer(step_config, corpus.train, corpus.valid, out_path("12_one_step"),
                  tokenizers=(src_tok, tgt_tok), progress=False, log=lambda msg: None)
mine = Seq2SeqTransformer(len(src_tok), len(tgt_tok), d_model=16, nhead=2, num_encoder_layers=1,
                          num_decoder_layers=1, dim_feedforward=32, dropout=0.1,
                          max_len=step_config.max_len + 2)
mine.load_state_dict(trainer.model.state_dict())          # the same starting weights
params = dict(mine.named_parameters())
adam_m = {n: np.zeros(p.shape) for n, p in params.items()}
adam_v = {n: np.zeros(p.shape) for n, p in params.items()}
beta1, beta2, adam_eps, eps_ls, max_norm = 0.9, 0.98, 1e-9, 0.1, 1.0
pad = tgt_tok.pad_id


def training_step(batch, t):
    """Step t (from 1) by hand; returns (loss, gradient norm before clipping, rate, gradients)."""
    mine.train()
    logits = mine(batch.src, batch.tgt_in)                              # 1. (B, T, V)
    C = logits.shape[-1]
    logp = logits.reshape(-1, C).log_softmax(-1)                        # (B*T, C)
    target = batch.tgt_out.reshape(-1)
    real = target != pad                                                # not padding
    q = np.full((len(target), C), eps_ls / C)
    q[np.arange(len(target)), target] += 1 - eps_ls                     # smoothed targets
    q[~real] = 0.0                                                      # padding adds nothing
    loss = -(logp * mg.tensor(q, dtype=logp.dtype)).sum() / real.sum()  # 2.
    for p in params.values():
        p.grad = None
    loss.backward()                                                     # 3.
    grads = {n: p.grad.numpy().astype(np.float64) for n, p in params.items()}
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if norm > max_norm:                                                 # 4.
        grads = {n: g * (max_norm / (norm + 1e-6)) for n, g in grads.items()}
    lr = noam_lr(t, step_config.d_model, step_config.warmup)            # 6.
    with mg.no_grad():
        for n, p in params.items():                                     # 5.
            g = grads[n]
            adam_m[n] = beta1 * adam_m[n] + (1 - beta1) * g
            adam_v[n] = beta2 * adam_v[n] + (1 - beta2) * g * g
            m_hat, v_hat = adam_m[n] / (1 - beta1 ** t), adam_v[n] / (1 - beta2 ** t)
            p.copy_(p.numpy() - lr * m_hat / (np.sqrt(v_hat) + adam_eps))
    return loss.item(), norm, lr, grads


step_batches = [make_batch(encode_pairs(corpus.train[i:i + 8], src_tok, tgt_tok), pad)
                for i in (0, 8)]
for t, b in enumerate(step_batches, start=1):
    mg.manual_seed(100 + t)                            # the same dropout masks in both runs
    loss_by_hand, norm, lr, grads = training_step(b, t)
    mg.manual_seed(100 + t)
    loss_library = trainer.train_step(b)
    theirs = dict(trainer.model.named_parameters())
    gap = {n: np.abs(p.numpy() - theirs[n].numpy()) for n, p in params.items()}
    d = step_config.d_model
    key_bias = {n: slice(d, 2 * d) for n in params if n.endswith("in_proj_bias")}
    for n, k in key_bias.items():                      # set aside for now, see below
        gap[n][k] = 0.0
        assert np.abs(grads[n][k]).max() < 1e-6 * np.abs(grads[n]).max()
    moved = max(float(g.max()) for g in gap.values())
    print(f"step {t}: rate {lr:.3g}, loss {loss_by_hand:.5f} by hand, {loss_library:.5f} "
          f"Trainer; gradient norm {norm:.3g}; largest weight difference {moved:.2g}")
    assert math.isclose(loss_by_hand, loss_library, rel_tol=1e-5)
    assert moved < 1e-5
assert math.isclose(lr, noam_lr(2, 16, 4)) and norm < max_norm

# %% [markdown]
# The same losses and, after two steps, the same weights to float32 rounding, with one
# exception set aside above: the *key* biases of the attention layers. Their gradient is zero
# in exact arithmetic: adding $\mathbf b_K$ to every key adds $\mathbf q \cdot \mathbf b_K$ to
# all the scores of a query alike, and the softmax does not change when all its inputs move
# together. What `backward()` returns for them is rounding noise, less than a millionth of the
# other gradients, and it differs between our loss and the library's fused cross entropy (the same
# number computed in another order). Adam divides each gradient by its own running size, so even
# noise moves these biases by up to a rate's worth in either direction. They never change a
# score, so the model computes the same function.
#
# Clipping did not act here: the gradient norm was below `max_norm = 1`. Scale the loss up
# and it does: the same gradients times 10 come back with norm exactly 1.

# %%
from minigrad.nn.utils import clip_grad_norm_

w = nn.Parameter(np.ones(4, dtype=np.float32))
(10 * (w * w).sum()).backward()                      # gradient 20 per entry, norm 40
before = float(clip_grad_norm_([w], max_norm=1.0))
print(f"norm {before:g} before clipping, {np.linalg.norm(w.grad.numpy()):.6f} after")
assert before == 40 and np.isclose(np.linalg.norm(w.grad.numpy()), 1.0, atol=1e-6)
assert np.allclose(w.grad.numpy(), 20 / (40 + 1e-6))

# %% [markdown]
# From here on `Trainer.train_step` does exactly this, and `Trainer.fit` repeats it over batches of
# sentences of similar length, with validation and checkpoints around it (tutorial 13).

# %% [markdown]
# ## Exercise: the warm-up schedule
#
# Write `noam(step, d_model, warmup)`, the learning rate
# $d_{model}^{-0.5}\min(\text{step}^{-0.5}, \text{step}\cdot\text{warmup}^{-1.5})$, without calling
# `noam_lr`. The checker tries the lecture's Q8 steps.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_noam


def noam(step, d_model, warmup):
    """The Transformer's learning rate at `step` (counting from 1)."""
    raise NotImplementedError


check(check_noam, noam);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def noam(step, d_model, warmup):
    """The Transformer's learning rate at `step` (counting from 1)."""
    return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


assert check(check_noam, noam)

# %% [markdown]
# ## Test yourself
#
# **1.** A model with $d_{model} = 256$ uses 1000 warm-up steps. At which step does the rate
# peak, and what is the peak?
#
# <details><summary>Answer</summary>
#
# At step 1000, the end of the warm-up: $256^{-0.5} \times 1000^{-0.5} = 0.0625 \times
# 0.03162 \approx 1.98 \times 10^{-3}$.
#
# </details>

# %%
peak_step = max(range(1, 5001), key=lambda s: noam_lr(s, 256, 1000))
assert peak_step == 1000
assert f"{noam_lr(1000, 256, 1000):.3g}" == "0.00198"

# %% [markdown]
# **2.** With $d_{model} = 512$ and warm-up 4000, the rate at step 1000 is $1.75 \times 10^{-4}$.
# At what later step does the decaying rate fall back to that value?
#
# <details><summary>Answer</summary>
#
# Solve $\text{step}^{-0.5} = 1000 \times 4000^{-1.5}$:
# $\text{step} = (4000^{1.5}/1000)^2 = 4000^3/1000^2 = 64{,}000$.
#
# </details>

# %%
assert 4000 ** 3 // 1000 ** 2 == 64_000
assert math.isclose(noam_lr(64_000, 512, 4000), noam_lr(1000, 512, 4000))

# %% [markdown]
# **3.** Four classes, correct class 2, label smoothing $\epsilon = 0.2$ in PyTorch's form. What
# is the target distribution?
#
# <details><summary>Answer</summary>
#
# Every class gets $0.2/4 = 0.05$, and the correct one another $0.8$:
# $q = [0.05, 0.05, 0.85, 0.05]$. The smoothed loss is therefore $-\sum_c q_c \log p_c$ for any
# logits, which minigrad's `cross_entropy` reproduces.
#
# </details>

# %%
q3 = np.full(4, 0.2 / 4)
q3[2] += 0.8
assert np.allclose(q3, [0.05, 0.05, 0.85, 0.05])
z3 = np.array([0.3, -1.2, 2.0, 0.7])
logp3 = z3 - np.log(np.exp(z3).sum())
assert np.isclose(-(q3 * logp3).sum(),
                  F.cross_entropy(mg.tensor(z3[None].astype(np.float32)), np.array([2]),
                                  label_smoothing=0.2).item(), atol=1e-5)

# %% [markdown]
# **4.** The reference is "⟨bos⟩ naan padam paarththen ⟨eos⟩". What are `tgt_in` and `tgt_out`?
#
# <details><summary>Answer</summary>
#
# `tgt_in` = ⟨bos⟩ naan padam paarththen; `tgt_out` = naan padam paarththen ⟨eos⟩:
# the same sequence without its last and without its first token.
#
# </details>

# %%
q4_tok = WordTokenizer.fit(["naan padam paarththen"])
q4 = make_batch([([5], q4_tok.encode("naan padam paarththen", add_bos=True, add_eos=True))],
                q4_tok.pad_id)
assert q4_tok.decode(q4.tgt_in[0], skip_special=False) == "<bos> naan padam paarththen"
assert q4_tok.decode(q4.tgt_out[0], skip_special=False) == "naan padam paarththen <eos>"
print("all checks passed")
