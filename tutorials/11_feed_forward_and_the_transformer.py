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
# # 11. The feed-forward network, Add & Norm, and the whole Transformer
#
# Tutorials 6 to 10 built the parts that let tokens exchange information (attention, masks,
# positions) and the layer norm. Three pieces remain before the full model stands:
#
# 1. the **position-wise feed-forward network** that follows every attention sublayer;
# 2. the **Add & Norm** wrapper (residual connection plus layer norm) around every sublayer;
# 3. the **assembly**: 6 encoder layers, 6 decoder layers, embeddings and an output layer,
#    written out from these parts and checked against the library's `Seq2SeqTransformer`,
#    with a map of where each tutorial's block sits in the whole model.
#
# Along the way we count parameters with `summary()` and reproduce the lecture's tables,
# including where its round numbers come from.

# %%
from _common import SMALL, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import nn
from minigrad.models import Seq2SeqTransformer
from minigrad.nn import Transformer, TransformerDecoderLayer, TransformerEncoderLayer

mg.manual_seed(0)


def count(module):
    """Number of trainable numbers in a module (a weight shared by two layers counts once)."""
    return sum(p.numel() for p in module.parameters())


def print_totals(model, depth):
    """`summary()` lists every parameter, then totals per sub-module; print just the totals."""
    lines = model.summary(depth=depth, print_fn=None).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("module"))
    print("\n".join(lines[start:]))


# %% [markdown]
# ## The position-wise feed-forward network
#
# Attention mixes information *across* positions; afterwards each position is processed *on
# its own* by a small two-layer network with a ReLU in between. It widens the 512 features
# to 2048 and narrows them back to 512:
#
# $$\mathrm{FFN}(\mathbf z) = \max(0,\ \mathbf z W_1 + \mathbf b_1)\, W_2 + \mathbf b_2,
#   \qquad W_1 \in \mathbb R^{512 \times 2048},\ W_2 \in \mathbb R^{2048 \times 512}.$$
#
# (This is the paper's row-vector convention: a token is a row $\mathbf z$.) The wide middle
# layer gives the block room for a nonlinear transformation of each token's vector.
# Counting weights and biases:
#
# $$512 \cdot 2048 + 2048 + 2048 \cdot 512 + 512 = 2{,}099{,}712 \approx 2 \text{ million}.$$

# %%
d_model, d_ff = 512, 2048
ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
n_ffn = count(ffn)
print(f"FFN parameters: {n_ffn:,}")
assert n_ffn == 512 * 2048 + 2048 + 2048 * 512 + 512 == 2_099_712

# %% [markdown]
# "Position-wise" means the same weights are applied to every token independently, exactly
# like a 1x1 convolution along the sequence. Two checks on a (B, T, D) batch: running the FFN
# on the whole batch equals running it on one position at a time, and changing one token
# changes the output at that position only.

# %%
B, T = 2, 5
z = mg.randn(B, T, d_model)
full = ffn(z).numpy()
for t in range(T):
    assert np.allclose(full[:, t], ffn(z[:, t]).numpy(), atol=1e-4)

z_changed = z.numpy().copy()
z_changed[:, 2] += 1.0                                    # disturb token 2 only
moved = np.abs(ffn(mg.tensor(z_changed)).numpy() - full).max(axis=(0, 2))
print("largest change of the output per position:", moved.round(4))
assert moved[2] > 0 and np.all(moved[[0, 1, 3, 4]] == 0)

# %% [markdown]
# ## Add & Norm
#
# Every sublayer (self-attention, cross-attention, feed-forward) is wrapped the same way. The
# paper adds the sublayer's output to its input (the residual connection, as in ResNet) and
# then applies layer norm:
#
# $$\text{post-norm:}\quad \mathbf x \leftarrow \mathrm{LayerNorm}\big(\mathbf x + \mathrm{Sublayer}(\mathbf x)\big).$$
#
# Many later models move the norm to the front of the branch instead:
#
# $$\text{pre-norm:}\quad \mathbf x \leftarrow \mathbf x + \mathrm{Sublayer}\big(\mathrm{LayerNorm}(\mathbf x)\big).$$
#
# `TransformerEncoderLayer(..., norm_first=False)` is the paper's post-norm (the default) and
# `norm_first=True` is pre-norm. To see that the layer is nothing more than these formulas,
# rebuild its output by hand from its own submodules. Dropout is switched off with `eval()` so
# the two computations are deterministic.

# %%
small_d, small_heads, small_ff = 64, 4, 256
layer = TransformerEncoderLayer(small_d, small_heads, small_ff, batch_first=True).eval()
x = mg.randn(B, T, small_d)


def ffn_of(lay, h):
    return lay.linear2(lay.linear1(h).relu())


with mg.no_grad():
    attn_out, _ = layer.self_attn(x, x, x)
    h = layer.norm1(x + attn_out)                          # Add & Norm after attention
    by_hand = layer.norm2(h + ffn_of(layer, h))            # Add & Norm after the FFN
    assert np.allclose(layer(x).numpy(), by_hand.numpy(), atol=1e-5)

    pre = TransformerEncoderLayer(small_d, small_heads, small_ff, batch_first=True,
                                  norm_first=True).eval()
    n1 = pre.norm1(x)
    h = x + pre.self_attn(n1, n1, n1)[0]
    by_hand_pre = h + ffn_of(pre, pre.norm2(h))
    assert np.allclose(pre(x).numpy(), by_hand_pre.numpy(), atol=1e-5)
print("post-norm and pre-norm layers match their formulas")

# %% [markdown]
# What difference does the position of the norm make? In pre-norm the residual path runs from
# the input to the output untouched by any normalisation. If both sublayers output zeros (for
# instance because their last weights are zero), a pre-norm layer is exactly the identity,
# while a post-norm layer still normalises its input. A clean identity path is what lets
# gradients cross many layers easily.

# %%
with mg.no_grad():
    for lay in (layer, pre):
        for p in (lay.self_attn.out_proj.weight, lay.self_attn.out_proj.bias,
                  lay.linear2.weight, lay.linear2.bias):
            p.zero_()
    assert np.allclose(pre(x).numpy(), x.numpy(), atol=1e-6)           # identity
    assert not np.allclose(layer(x).numpy(), x.numpy(), atol=1e-2)     # LayerNorm(x) instead
    assert np.allclose(layer(x).numpy(), layer.norm2(layer.norm1(x)).numpy(), atol=1e-5)

# %% [markdown]
# The price of pre-norm: nothing rescales the running sum, so the vectors on the residual path
# grow as layers add to them. Post-norm resets each token to mean 0 and standard deviation 1
# after every sublayer. Push one random batch through 12 freshly initialised layers of each
# kind and track the average per-token standard deviation.

# %%
depth = 12
x = mg.randn(B, 10, small_d)
spread = {}
with mg.no_grad():
    for norm_first in (False, True):
        mg.manual_seed(1)
        stack = [TransformerEncoderLayer(small_d, small_heads, small_ff, dropout=0.0,
                                         batch_first=True, norm_first=norm_first)
                 for _ in range(depth)]
        h, stds = x, []
        for lay in stack:
            h = lay(h)
            stds.append(float(h.numpy().std(-1).mean()))
        spread["pre-norm" if norm_first else "post-norm"] = stds
print({k: [round(s, 2) for s in v] for k, v in spread.items()})
assert np.allclose(spread["post-norm"], 1.0, atol=1e-2)
assert spread["pre-norm"][-1] > 1.2 * spread["pre-norm"][0]

fig, ax = plt.subplots(figsize=(7, 3.5))
for name, stds in spread.items():
    ax.plot(range(1, depth + 1), stds, "o-", label=name)
ax.set_xlabel("encoder layer")
ax.set_ylabel("mean per-token standard deviation")
ax.set_title("Size of the residual stream through 12 untrained encoder layers")
ax.legend()
savefig(fig, "11_pre_vs_post_norm")

# %% [markdown]
# Both variants train; the paper used post-norm together with the learning-rate warm-up of
# tutorial 12. The rest of this tutorial uses the paper's post-norm.
#
# ## One encoder layer, counted
#
# An encoder layer is multi-head self-attention and an FFN, each followed by Add & Norm. Here
# is the paper's size ($d_{model} = 512$, 8 heads of $d_k = 64$, $d_{ff} = 2048$) as
# `summary()` reports it.

# %%
enc_layer = TransformerEncoderLayer(512, 8, 2048)
table = enc_layer.summary()
n_enc = count(enc_layer)
assert n_enc == 3_152_384

# %% [markdown]
# The lecture puts one encoder layer at "about 3 million" and its table adds up to 3,148,288.
# The difference of 4,096 is two kinds of small vectors that its table leaves out:
#
# * the biases of the four attention projections $W_Q, W_K, W_V, W_O$: $4 \times 512 = 2{,}048$;
# * the two layer norms, each with a $\gamma$ and a $\beta$ of 512: $2 \times 1{,}024 = 2{,}048$.
#
# The rows of the summary let us take them out again. (One more slip: the lecture's slide prints
# 32,178 for one head's $64 \times 512$ matrix; the product is 32,768.)

# %%
rows = {name: p.numel() for name, p in enc_layer.named_parameters()}
attn_biases = rows["self_attn.in_proj_bias"] + rows["self_attn.out_proj.bias"]
norms = sum(n for name, n in rows.items() if name.startswith("norm"))
lecture_count = n_enc - attn_biases - norms
print(f"attention biases {attn_biases:,}, layer norms {norms:,}, "
      f"without them {lecture_count:,}")
assert attn_biases == 2_048 and norms == 2_048 and lecture_count == 3_148_288

# %% [markdown]
# And the lecture's table line by line, read from the actual weight matrices. `in_proj_weight`
# (1536 x 512) stacks $W_Q$, $W_K$ and $W_V$ for all heads; head $h$ owns rows
# $64h$ to $64h + 63$ of each block.

# %%
W = enc_layer.self_attn.in_proj_weight
W_Q_all, W_K_all, W_V_all = W[0:512], W[512:1024], W[1024:1536]
W_Q_head0 = W_Q_all[0:64]
lecture_table = [
    ("W_Q, one head", W_Q_head0.shape, W_Q_head0.numel()),
    ("W_Q, all 8 heads", W_Q_all.shape, W_Q_all.numel()),
    ("W_K, all 8 heads", W_K_all.shape, W_K_all.numel()),
    ("W_V, all 8 heads", W_V_all.shape, W_V_all.numel()),
    ("W_O", enc_layer.self_attn.out_proj.weight.shape, enc_layer.self_attn.out_proj.weight.numel()),
    ("FFN (with biases)", "512-2048-512", count(enc_layer.linear1) + count(enc_layer.linear2)),
]
for name, shape, n in lecture_table:
    print(f"{name:<20} {str(shape):<14} {n:>12,}")
print(f"{'one encoder layer':<35} {sum(n for *_, n in lecture_table[1:]):>12,}")
assert [n for *_, n in lecture_table] == [32_768, 262_144, 262_144, 262_144, 262_144, 2_099_712]
assert sum(n for *_, n in lecture_table[1:]) == lecture_count
# none of these shapes involves the sentence length T: the same weights serve any sentence

# %% [markdown]
# ## One decoder layer, counted
#
# A decoder layer has three sublayers, each with Add & Norm: masked self-attention,
# cross-attention (queries from the decoder, keys and values from the encoder's output) and the
# same kind of FFN. Two attention blocks of 1,050,624 each (weights and biases), the FFN and three
# layer norms:
#
# $$2 \times 1{,}050{,}624 + 2{,}099{,}712 + 3 \times 1{,}024 = 4{,}204{,}032 \approx 4 \text{ million}.$$

# %%
dec_layer = TransformerDecoderLayer(512, 8, 2048)
n_dec = count(dec_layer)
print(f"decoder layer: {n_dec:,}")
assert count(dec_layer.self_attn) == count(dec_layer.multihead_attn) == 1_050_624
assert n_dec == 2 * 1_050_624 + 2_099_712 + 3 * 1_024 == 4_204_032

# %% [markdown]
# ## One decoder layer, built from its parts
#
# The decoder layer has three sublayers, each wrapped in Add & Norm (post-norm, as in the paper):
#
# 1. **masked self-attention** over the target words read so far (the causal mask of tutorial 8),
#    giving vectors $\mathbf s_1, \dots, \mathbf s_T$, the matrix $S$;
# 2. **cross-attention**: the queries come from the decoder, $Q_2 = S\,W_{Q_2}^\top$, while the
#    keys and values come from the encoder's top output $E$, $K_2 = E\,W_{K_2}^\top$ and
#    $V_2 = E\,W_{V_2}^\top$. Each target position asks "which source words matter to me?";
#    it is the RNN attention of tutorial 6 (query from the decoder, keys and values from the
#    encoder), done for every target position in one matrix product;
# 3. the same position-wise **FFN** as in the encoder.
#
# We write it with two `MultiheadAttention` blocks (tutorial 7 built that one from scratch), an
# FFN and three layer norms, then copy the weights of the library's `TransformerDecoderLayer` into
# it and compare outputs.

# %%
class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output E, FFN; Add & Norm after each."""

    def __init__(self, d_model, nhead, d_ff):
        super().__init__()
        self.masked_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, y, E, tgt_pad=None, src_pad=None):
        """y (B, T, D) target vectors, E (B, S, D) top encoder output -> (B, T, D), weights (B, H, T, S).
        tgt_pad (B, T) and src_pad (B, S) are True at padding (tutorial 8), or None."""
        s, _ = self.masked_attn(y, y, y, is_causal=True, key_padding_mask=tgt_pad,
                                need_weights=False)
        S = self.norm1(y + s)
        c, weights = self.cross_attn(S, E, E, key_padding_mask=src_pad,
                                     average_attn_weights=False)   # queries S; keys, values E
        h = self.norm2(S + c)
        return self.norm3(h + self.ffn(h)), weights


d_small, heads_small, ff_small = 16, 2, 32
library_layer = TransformerDecoderLayer(d_small, heads_small, ff_small, dropout=0.0,
                                        batch_first=True).eval()
mine = DecoderLayer(d_small, heads_small, ff_small)
# which of our parameters is which of the library's (the names are PyTorch's)
same = {"masked_attn": "self_attn", "cross_attn": "multihead_attn", "ffn.0": "linear1",
        "ffn.2": "linear2", "norm1": "norm1", "norm2": "norm2", "norm3": "norm3"}
theirs = dict(library_layer.named_parameters())
with mg.no_grad():
    for name, p in mine.named_parameters():
        prefix = next(k for k in same if name.startswith(k + "."))
        p.copy_(theirs[same[prefix] + name[len(prefix):]])
assert count(mine) == count(library_layer)

tgt_words = ["Naan", "transfarmar", "padaththai", "rasiththen"]    # 4 target words
src_words = ["I", "enjoyed", "the", "movie", "transformers"]      # 5 source words
y = mg.randn(1, len(tgt_words), d_small)                           # (B, T, D) decoder input
E = mg.randn(1, len(src_words), d_small)                           # (B, S, D) encoder output
with mg.no_grad():
    ours, cross_weights = mine(y, E)
    reference = library_layer(y, E, tgt_is_causal=True,
                              tgt_mask=Transformer.generate_square_subsequent_mask(4))
print("largest difference from TransformerDecoderLayer:",
      float(np.abs(ours.numpy() - reference.numpy()).max()))
assert np.allclose(ours.numpy(), reference.numpy(), atol=1e-5)

# %% [markdown]
# ### The lecture's cross-attention question (its Q6)
#
# *Where do the queries, keys and values come from, and what is the shape of $Q_2K_2^\top$ for a
# 4-word target and a 5-word source?* Queries from the decoder (the output $S$ of the masked
# self-attention), keys and values from the top encoder output $E$. One head's score matrix is
# $(4, d_k)(d_k, 5) = 4 \times 5$: for each target position, one score per source word. (The
# lecture writes column-stacked matrices, $Q_2^\top K_2$; with rows, as here, it is $Q_2K_2^\top$.)
# Each row of weights sums to 1 over the five source words.

# %%
with mg.no_grad():
    S_mat = mine.norm1(y + mine.masked_attn(y, y, y, is_causal=True, need_weights=False)[0])
    W_in = mine.cross_attn.in_proj_weight.numpy()
    b_in = mine.cross_attn.in_proj_bias.numpy()
dk = d_small // heads_small
Q2 = S_mat.numpy()[0] @ W_in[:d_small].T + b_in[:d_small]                      # from the decoder
K2 = E.numpy()[0] @ W_in[d_small:2 * d_small].T + b_in[d_small:2 * d_small]    # from the encoder
scores_head0 = Q2[:, :dk] @ K2[:, :dk].T / np.sqrt(dk)
weights_head0 = np.exp(scores_head0 - scores_head0.max(1, keepdims=True))
weights_head0 /= weights_head0.sum(1, keepdims=True)
print("Q2 K2^T of head 0 has shape", scores_head0.shape)
assert scores_head0.shape == (4, 5) and cross_weights.shape == (1, heads_small, 4, 5)
assert np.allclose(weights_head0, cross_weights.numpy()[0, 0], atol=1e-5)
assert np.allclose(cross_weights.numpy().sum(-1), 1.0, atol=1e-5)

fig, axes = plt.subplots(1, heads_small, figsize=(10, 3.4), layout="constrained")
for h, ax in enumerate(axes):
    im = ax.imshow(cross_weights.numpy()[0, h], cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(5), src_words, rotation=30)
    ax.set_yticks(range(4), tgt_words)
    ax.set_title(f"cross-attention, head {h + 1}")
    ax.set_xlabel("source word (key and value from E)")
    ax.set_ylabel("target position (query)")
fig.colorbar(im, ax=axes, label="weight", shrink=0.85)
fig.suptitle("Cross-attention weights are 4 x 5: one row per target word (untrained layer)")
savefig(fig, "11_cross_attention_shape")

# %% [markdown]
# ### The top encoder output feeds every decoder layer
#
# The decoder layers are not paired with the encoder layers. The encoder runs its whole stack
# first; its top output $E$ (after the stack's final norm, see below) is handed to *every*
# decoder layer as the keys and values of its cross-attention. We record what each decoder
# layer of a 3 + 3 `Transformer` receives as its memory.

# %%
mg.manual_seed(3)
stack = Transformer(d_model=d_small, nhead=2, num_encoder_layers=3, num_decoder_layers=3,
                    dim_feedforward=ff_small, dropout=0.0, batch_first=True).eval()
received = []
for dec in stack.decoder.layers:
    dec.register_forward_pre_hook(lambda module, args: received.append(args[1].numpy().copy()))
src_vectors = mg.randn(1, 5, d_small)
with mg.no_grad():
    stack(src_vectors, y, tgt_mask=Transformer.generate_square_subsequent_mask(4))
    E_top = stack.encoder(src_vectors).numpy()
print(f"{len(received)} decoder layers, each given the same (1, 5, {d_small}) encoder output")
assert len(received) == 3 and all(np.array_equal(m, E_top) for m in received)

# %% [markdown]
# ### Parallel within a layer, sequential across layers
#
# Inside one layer, every position's output needs only the layer's *input*, which is complete
# before the layer starts: all $T$ positions are computed at once, as rows of one matrix
# product. (The causal mask does not change that during training: with teacher forcing the
# whole target is known, and the mask only hides columns.) Across layers there is no such
# freedom: layer 2 needs the whole output of layer 1. So a stack of $N$ layers takes $N$ steps
# one after another, whatever the sentence length, where an RNN takes one step per word.
# Below, the decoder layer's output computed position by position (each position alone, with
# its own prefix) equals the all-at-once output, and a figure counts the sequential steps.

# %%
with mg.no_grad():
    one_by_one = np.concatenate([mine(y[:, :t + 1], E)[0].numpy()[:, t:t + 1]
                                 for t in range(len(tgt_words))], axis=1)
assert np.allclose(one_by_one, ours.numpy(), atol=1e-5)

lengths = np.arange(1, 51)
fig, ax = plt.subplots(figsize=(6.5, 3.5))
ax.plot(lengths, lengths, label="RNN encoder: one step per word")
ax.plot(lengths, np.full_like(lengths, 6), label="Transformer encoder: one step per layer (N = 6)")
ax.set_xlabel("sentence length T")
ax.set_ylabel("steps that must run one after another")
ax.set_title("Sequential steps to encode a sentence")
ax.legend()
savefig(fig, "11_sequential_steps")
assert int(np.sum(lengths > 6)) == 44   # from 7 words on, the RNN needs more steps in sequence

# %% [markdown]
# ## The stack: `Transformer()`
#
# `minigrad.nn.Transformer` takes PyTorch's arguments and defaults: 6 encoder layers, 6
# decoder layers, and a final layer norm on each stack. It works on vectors; embeddings and the
# output layer come later. Its summary has almost 200 parameter rows, so we print only the
# totals of the first two levels of sub-modules.
#
# Those two final layer norms are PyTorch's default, **not** part of the paper's post-norm
# model: there every layer already ends with a LayerNorm, so the paper's count has no extra
# norm at the top of either stack. A final norm belongs to pre-norm models (the other variant of
# "Add & Norm" above), where the residual stream is otherwise never normalised. Below we count them and
# then take out their $2 \times 1{,}024$ numbers to get the paper's model.

# %%
transformer = Transformer()                                # d_model 512, 8 heads, 6 + 6 layers
print_totals(transformer, depth=2)
n_transformer = count(transformer)
assert n_transformer == 6 * n_enc + 6 * n_dec + 2 * 1_024 == 44_140_544
final_norms = count(transformer.encoder.norm) + count(transformer.decoder.norm)
n_paper_stacks = n_transformer - final_norms
print(f"final norms {final_norms:,}; the paper's post-norm stacks: {n_paper_stacks:,}")
assert final_norms == 2_048 and n_paper_stacks == 44_138_496

# %% [markdown]
# The lecture also counts the depth: each encoder layer has one attention layer and the FFN's
# two linear layers, each decoder layer two attention layers and two linear layers, so the
# network is $6 \times 3 + 6 \times 4 = 42$ layers deep. Counting the modules gives the same.

# %%
modules = dict(transformer.named_modules())
n_attention = sum(isinstance(m, nn.MultiheadAttention) for m in modules.values())
n_ffn_linear = sum(name.endswith(("linear1", "linear2")) for name in modules)
print(f"{n_attention} attention layers + {n_ffn_linear} FFN linear layers")
assert n_attention == 6 * 1 + 6 * 2 and n_ffn_linear == 12 * 2
assert n_attention + n_ffn_linear == 6 * 3 + 6 * 4 == 42

# %% [markdown]
# ## The whole translation model
#
# `Seq2SeqTransformer` adds what turns token ids into vectors and vectors back into words:
#
# * an embedding table for source tokens and one for target tokens (each multiplied by
#   $\sqrt{d_{model}}$, then the sinusoidal positions of tutorial 9 are added);
# * the `Transformer` above;
# * a linear output layer $W_D$ from 512 features to one score per vocabulary word, followed by a
#   softmax.
#
# First a toy size, to see the shapes: source ids (B, S) and target ids (B, T) in, one score
# per target word and position out, (B, T, V).

# %%
toy = Seq2SeqTransformer(src_vocab=11, tgt_vocab=13, d_model=32, nhead=4, num_encoder_layers=2,
                         num_decoder_layers=2, dim_feedforward=64)
src_ids = np.array([[5, 6, 7, 8, 9], [4, 5, 6, 0, 0]])     # 0 is padding
tgt_in = np.array([[1, 7, 8, 9], [1, 4, 0, 0]])             # 1 is <bos>
logits = toy(src_ids, tgt_in)
print("logits:", logits.shape)
assert logits.shape == (2, 4, 13)

# %% [markdown]
# ### The whole model, built from its parts
#
# `Seq2SeqTransformer` is nothing but the blocks of tutorials 6 to 11 put in a row. We write
# it out, then copy the library model's weights into ours and compare the logits.
#
# 1. **Embeddings**: a table of $V \times d_{model}$ learned vectors, one row per token. The row
#    is multiplied by $\sqrt{d_{model}}$ (section 3.4 of the paper): the embeddings start
#    small, and the sinusoids of tutorial 9 have entries in $[-1, 1]$, so without the factor the
#    positions would drown the words.
# 2. **Positions**: the sinusoid table of tutorial 9, row $t$ added to the token at position $t$.
# 3. **The encoder stack**: $N$ encoder layers (self-attention, Add & Norm, FFN, Add & Norm, as
#    written out in "Add & Norm" above), with the source's padding mask of tutorial 8, then the
#    stack's final norm (PyTorch's default, see "The stack" above). Its output is $E$.
# 4. **The decoder stack**: $N$ of our `DecoderLayer`s, each reading the same $E$, then a final norm.
# 5. **The output layer**: one score per vocabulary word, $\mathbf s\, W_D^\top$. With *tied*
#    weights, $W_D$ is the target embedding table itself: the score of word $w$ is the dot
#    product of the decoder's vector with $w$'s embedding. No separate matrix, no bias.
#
# The softmax that turns the scores into probabilities is left to the loss (tutorial 12) and
# to decoding (tutorial 13), which work with log-probabilities.

# %%
class Seq2Seq(nn.Module):
    """Token ids in, next-token scores out: (B, S) and (B, T) ids -> logits (B, T, V)."""

    def __init__(self, src_vocab, tgt_vocab, d_model, nhead, num_layers, d_ff, pad_id=0,
                 max_len=64):
        super().__init__()
        self.d_model, self.pad_id = d_model, pad_id
        self.src_embed = nn.Embedding(src_vocab, d_model, padding_idx=pad_id)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model, padding_idx=pad_id)
        self.positions = nn.sinusoidal_table(max_len, d_model)          # (max_len, D), tutorial 9
        self.encoder_layers = nn.ModuleList(
            [TransformerEncoderLayer(d_model, nhead, d_ff, dropout=0.0, batch_first=True)
             for _ in range(num_layers)])
        self.decoder_layers = nn.ModuleList([DecoderLayer(d_model, nhead, d_ff)
                                             for _ in range(num_layers)])
        self.encoder_norm, self.decoder_norm = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def embed(self, table, ids):
        """ids (B, T) -> (B, T, D): the token's row times sqrt(d_model), plus position t's row."""
        return table(ids) * np.sqrt(self.d_model) + self.positions[:ids.shape[1]]

    def forward(self, src, tgt_in):
        src_pad, tgt_pad = src == self.pad_id, tgt_in == self.pad_id
        x = self.embed(self.src_embed, src)
        for layer in self.encoder_layers:
            x = layer(x, src_key_padding_mask=src_pad)
        E = self.encoder_norm(x)                                          # (B, S, D)
        y = self.embed(self.tgt_embed, tgt_in)
        for layer in self.decoder_layers:
            y, _ = layer(y, E, tgt_pad=tgt_pad, src_pad=src_pad)          # every layer reads E
        y = self.decoder_norm(y)                                          # (B, T, D)
        return y @ self.tgt_embed.weight.T                                # tied output layer


mg.manual_seed(4)
library_model = Seq2SeqTransformer(src_vocab=11, tgt_vocab=13, d_model=32, nhead=4,
                                   num_encoder_layers=2, num_decoder_layers=2,
                                   dim_feedforward=64, tie_output=True, output_bias=False).eval()
ours_model = Seq2Seq(11, 13, d_model=32, nhead=4, num_layers=2, d_ff=64)
# our names for the library's parameters: the layers' own names are PyTorch's, as above
renames = [("encoder_layers.", "transformer.encoder.layers."),
           ("encoder_norm.", "transformer.encoder.norm."),
           ("decoder_norm.", "transformer.decoder.norm.")]
renames += [(f"decoder_layers.{i}.{a}.", f"transformer.decoder.layers.{i}.{b}.")
            for i in range(2) for a, b in same.items()]
theirs = dict(library_model.named_parameters())
with mg.no_grad():
    for name, p in ours_model.named_parameters():
        lib_name = next((name.replace(a, b, 1) for a, b in renames if name.startswith(a)), name)
        p.copy_(theirs[lib_name])
assert count(ours_model) == count(library_model)  # the tied matrix is counted once in both
with mg.no_grad():
    ours_logits = ours_model(src_ids, tgt_in).numpy()
    library_logits = library_model(src_ids, tgt_in).numpy()
real = tgt_in != 0                                 # positions that are words, not padding
gap = float(np.abs(ours_logits - library_logits)[real].max())
print(f"logits {ours_logits.shape}, largest difference from Seq2SeqTransformer: {gap:.2g}")
assert np.allclose(ours_logits[real], library_logits[real], atol=1e-4)
assert library_model.generator.weight is library_model.tgt_embed.weight

# %% [markdown]
# (Only the positions that hold words are compared: the outputs at padded target positions are
# never used, by the loss or by decoding.) What the factor $\sqrt{d_{model}}$ does: the library
# initialises the tied table with entries of standard deviation $1/\sqrt{d_{model}}$, so a row
# has length about 1; times $\sqrt{d_{model}}$ it has length about $\sqrt{d_{model}}$,
# comparable to a row of the sinusoid table, whose $d_{model}/2$ pairs $(\sin, \cos)$ each
# contribute $\sin^2 + \cos^2 = 1$: length exactly $\sqrt{d_{model}/2}$. Word and position
# arrive at a comparable size; without the factor the word vector would be
# $1/\sqrt{d_{model}/2}$ of the position's size, a quarter for this model's $d_{model} = 32$.

# %%
with mg.no_grad():
    table = ours_model.tgt_embed.weight.numpy()
    emb = ours_model.embed(ours_model.tgt_embed, tgt_in).numpy()
scale = np.sqrt(32)
assert np.allclose(emb - ours_model.positions[:4], table[tgt_in] * scale, atol=1e-5)
word_size = float(np.linalg.norm(table[1:], axis=1).mean() * scale)
position_size = float(np.linalg.norm(ours_model.positions[:4], axis=1).mean())
print(f"a scaled word vector has length {word_size:.2f}, a position's row {position_size:.2f}, "
      f"an unscaled word vector {word_size / scale:.2f}")
assert np.isclose(position_size, np.sqrt(32 / 2), atol=1e-5)
assert 0.5 * position_size < word_size < 2 * position_size and word_size / scale < 0.3 * position_size

# %% [markdown]
# ### A map of the whole model
#
# Every block of the model is now built. The map below places each one and names the tutorial
# that builds it: read bottom to top, the source on the left, the target on the right.
# It is drawn from a list of boxes, and the list is checked against the model: every block
# named on the map is a module (or a function) of `Seq2Seq` above.

# %%
from matplotlib.patches import FancyBboxPatch

# the tutorial that builds each block, by file name, so that a renamed tutorial fails here
# rather than leaving a wrong number on the map
import os

import _common

built_in = {"attention": "06_self_attention", "heads": "07_multi_head_attention",
            "masks": "08_masking", "positions": "09_positional_encoding",
            "norm": "10_layer_norm_vs_batch_norm", "here": "11_feed_forward_and_the_transformer",
            "training": "12_training", "translation": "13_toy_translation"}
tutorial_dir = os.path.dirname(os.path.abspath(_common.__file__))
assert all(os.path.isfile(os.path.join(tutorial_dir, stem + ".py")) for stem in built_in.values())


def T(*blocks):
    """The numbers of the tutorials that build `blocks`, e.g. T("masks", "here") -> "8, 11"."""
    return ", ".join(str(int(built_in[b][:2])) for b in blocks)


# (column, row, label, tutorial); column 0 the encoder, 1 the decoder, rows bottom to top
transformer_map = [
    (0, 0, "source ids (B, S)", T("translation")),
    (1, 0, "target ids, shifted right (B, T)", T("training")),
    (0, 1, "embedding x sqrt(d_model)", T("here")), (1, 1, "embedding x sqrt(d_model)", T("here")),
    (0, 2, "+ positional encoding", T("positions")), (1, 2, "+ positional encoding", T("positions")),
    (0, 3, "multi-head self-attention\n(+ padding mask)", T("attention", "heads", "masks")),
    (1, 3, "masked multi-head\nself-attention", T("attention", "heads", "masks")),
    (0, 4, "Add & Norm", T("norm", "here")), (1, 4, "Add & Norm", T("norm", "here")),
    (0, 5, "feed-forward network", T("here")),
    (1, 5, "cross-attention\n(queries here, keys, values E)", T("here")),
    (0, 6, "Add & Norm", T("norm", "here")), (1, 6, "Add & Norm", T("norm", "here")),
    (0, 7, "final norm -> E", T("here")), (1, 7, "feed-forward network, Add & Norm", T("here")),
    (1, 8, "final norm; output layer\n(tied to the embedding)", T("here")),
    (1, 9, "softmax -> loss / decoding", T("training", "translation")),
]
fig, ax = plt.subplots(figsize=(10, 8.5))
for col, row, label, tut in transformer_map:
    x0, y0 = col * 5.2, row * 1.0
    layer_block = 3 <= row <= (6 if col == 0 else 7)
    ax.add_patch(FancyBboxPatch((x0, y0), 4.4, 0.72, boxstyle="round,pad=0.03",
                                fc="#dbe8f7" if layer_block else "#eeeeee", ec="k"))
    ax.text(x0 + 1.9, y0 + 0.36, label, ha="center", va="center", fontsize=9)
    ax.text(x0 + 4.3, y0 + 0.36, f"T{tut}", ha="right", va="center", fontsize=8, color="#b03030")
    if row > 0:
        ax.annotate("", (x0 + 1.9, y0), (x0 + 1.9, y0 - 0.28), arrowprops=dict(arrowstyle="->"))
for col, top in ((0, 6), (1, 7)):
    ax.add_patch(plt.Rectangle((col * 5.2 - 0.15, 2.88), 4.7, top - 2.88 + 0.95, fill=False,
                               ls="--", ec="#3060a0"))
    ax.text(col * 5.2 - 0.25, 2.95, "x N", ha="right", fontsize=11, color="#3060a0")
ax.annotate("", (5.2, 5.36), (4.4, 7.36),
            arrowprops=dict(arrowstyle="->", color="#3060a0", lw=1.5))
ax.text(2.2, 8.2, "E feeds every decoder layer", ha="center", color="#3060a0")
ax.set_xlim(-1.2, 10.0)
ax.set_ylim(-0.3, 10.0)
ax.axis("off")
ax.set_title("Encoder (left) and decoder (right); red: the tutorial that builds each block")
savefig(fig, "11_transformer_map")

# every block on the map exists in the model written above
parts = {"embedding": ours_model.src_embed, "positional": ours_model.positions,
         "self-attention": ours_model.encoder_layers[0].self_attn,
         "cross-attention": ours_model.decoder_layers[0].cross_attn,
         "feed-forward": ours_model.encoder_layers[0].linear1, "final norm": ours_model.encoder_norm,
         "Add & Norm": ours_model.decoder_layers[0].norm3,
         "output layer": ours_model.tgt_embed.weight}
assert all(any(k in label for _, _, label, _ in transformer_map) for k in parts)

# %% [markdown]
# Now the paper's base model. Its sentences were encoded with a vocabulary of about 37,000
# sub-word tokens **shared** by source and target, so one embedding table serves both, and the
# output layer reuses it too (its weight is the same matrix, "tied"). The paper mentions no
# output bias, so we leave it out. Building this model takes a few seconds: 63 million numbers
# are initialised. In the totals below the shared table appears twice, under `src_embed` and
# under `generator`, but the model's total counts it once.

# %%
V = 37_000
base = Seq2SeqTransformer(V, V, d_model=512, nhead=8, num_encoder_layers=6,
                          num_decoder_layers=6, dim_feedforward=2048, share_embeddings=True,
                          tie_output=True, output_bias=False)
print_totals(base, depth=1)
n_base = count(base)
print(f"the whole model: {n_base:,} parameters")
assert base.src_embed is base.tgt_embed and base.generator.weight is base.tgt_embed.weight
assert n_base == n_transformer + V * 512 == 63_084_544

# %% [markdown]
# So the base Transformer has about 63 million parameters, close to the "65 M" the paper
# reports (its vocabulary size is only given approximately). This count still holds PyTorch's
# two final layer norms; the paper's post-norm model has $2{,}048$ fewer, 63,082,496. The output layer alone, a
# $512 \times 37{,}000$ matrix, is about 19 million of them, almost a third. With an output bias
# (one number per word, as PyTorch's `Linear` has by default) the count grows by exactly
# 37,000. And sharing matters: three separate matrices (source embedding, target embedding,
# output layer) would push the model past 100 million.

# %%
n_output = base.generator.weight.numel()
assert n_output == 18_944_000
print(f"output layer share: {n_output / n_base:.1%}")
assert 0.30 <= n_output / n_base < 0.31
with_bias = n_base + V                                      # what output_bias=True would add
untied = n_transformer + 3 * V * 512
print(f"with an output bias: {with_bias:,}; with three separate tables: {untied:,}")
assert with_bias == 63_121_544 and untied == 100_972_544
assert n_base - final_norms == 63_082_496                  # the paper's model: no final norms
del base  # free the 250 MB

# %% [markdown]
# ## Summary
#
# | part | parameters |
# |---|---|
# | FFN (512 → 2048 → 512) | 2,099,712 |
# | multi-head attention (weights + biases) | 1,050,624 |
# | encoder layer (lecture's count without biases and norms: 3,148,288) | 3,152,384 |
# | decoder layer | 4,204,032 |
# | `Transformer()` (6 + 6 layers, PyTorch's 2 final norms) | 44,140,544 |
# | the paper's post-norm stacks (no final norms) | 44,138,496 |
# | with one shared, tied 37,000-word embedding | 63,084,544 (paper's model: 63,082,496) |
#
# Tutorial 12 trains such a model; tutorial 13 does it for real on a small translation task.

# %% [markdown]
# ## Exercise: Add & Norm
#
# Write `add_and_norm(x, sublayer, norm, norm_first)`, the wrapper around every sublayer:
# post-norm $\mathrm{norm}(x + \mathrm{sublayer}(x))$ when `norm_first` is False (the paper), and
# pre-norm $x + \mathrm{sublayer}(\mathrm{norm}(x))$ when it is True. `sublayer` and `norm` are
# modules; call them like functions.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_add_and_norm


def add_and_norm(x, sublayer, norm, norm_first=False):
    """The residual connection and layer norm around one sublayer."""
    raise NotImplementedError


check(check_add_and_norm, add_and_norm);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def add_and_norm(x, sublayer, norm, norm_first=False):
    """The residual connection and layer norm around one sublayer."""
    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


assert check(check_add_and_norm, add_and_norm)

# %% [markdown]
# ## Exercise: an encoder layer
#
# A larger one. Write the `forward` of a whole encoder layer, the paper's post-norm version:
# self-attention over the sentence (with its padding mask), Add & Norm, the feed-forward network
# (linear1, ReLU, dropout, linear2), Add & Norm. The constructor is written for you, with the
# library's names for the submodules, so the checker can copy the weights of
# `nn.TransformerEncoderLayer` into your layer and compare the outputs, in eval mode, on batches
# with padding. It names the usual mistakes: a missing residual, the norm in the wrong place
# (or pre-norm), the ReLU or the padding mask forgotten, dropout still active in eval mode.

# %%
from _exercises import check_encoder_layer


class EncoderLayer(nn.Module):
    """Self-attention, Add & Norm, FFN, Add & Norm (post-norm); x (B, T, D) -> (B, T, D)."""

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout, self.dropout1, self.dropout2 = (nn.Dropout(dropout) for _ in range(3))

    def forward(self, x, src_key_padding_mask=None):
        raise NotImplementedError


check(check_encoder_layer, EncoderLayer);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
class EncoderLayer(nn.Module):
    """Self-attention, Add & Norm, FFN, Add & Norm (post-norm); x (B, T, D) -> (B, T, D)."""

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout, self.dropout1, self.dropout2 = (nn.Dropout(dropout) for _ in range(3))

    def forward(self, x, src_key_padding_mask=None):
        a, _ = self.self_attn(x, x, x, key_padding_mask=src_key_padding_mask, need_weights=False)
        x = self.norm1(x + self.dropout1(a))
        f = self.linear2(self.dropout(self.linear1(x).relu()))
        return self.norm2(x + self.dropout2(f))


assert check(check_encoder_layer, EncoderLayer)

# %% [markdown]
# ## Test yourself
#
# **1.** How many parameters has the FFN of a smaller model with $d_{model} = 256$ and
# $d_{ff} = 1024$?
#
# <details><summary>Answer</summary>
#
# $256 \cdot 1024 + 1024 + 1024 \cdot 256 + 256 = 525{,}568$.
#
# </details>

# %%
q1 = TransformerEncoderLayer(256, 4, 1024)
assert count(q1.linear1) + count(q1.linear2) == 256 * 1024 + 1024 + 1024 * 256 + 256 == 525_568

# %% [markdown]
# **2.** And the whole encoder layer of that model? Write the count as a formula in $d$ and
# $d_{ff}$.
#
# <details><summary>Answer</summary>
#
# Attention $4d^2 + 4d$, FFN $2 d\, d_{ff} + d_{ff} + d$, two layer norms $4d$. For
# $d = 256$: $263{,}168 + 525{,}568 + 1{,}024 = 789{,}760$.
#
# </details>

# %%
def encoder_layer_count(d, d_ff):
    return (4 * d * d + 4 * d) + (2 * d * d_ff + d_ff + d) + 4 * d


assert count(q1) == encoder_layer_count(256, 1024) == 789_760
assert encoder_layer_count(512, 2048) == n_enc

# %% [markdown]
# **3.** Does doubling the number of heads (8 → 16, same $d_{model} = 512$) change the count?
#
# <details><summary>Answer</summary>
#
# No. Each head becomes half as wide ($d_k = 32$), so the stacked projection matrices
# keep their $512 \times 512$ shapes. The number of heads only decides how those matrices are cut.
#
# </details>

# %%
assert count(TransformerEncoderLayer(512, 16, 2048)) == n_enc
print("all checks passed")
