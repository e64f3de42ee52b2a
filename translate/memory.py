"""How much memory a training step needs, so that a run too big for the machine is refused
with an estimate instead of growing until the operating system kills it."""
from __future__ import annotations

import os

from .config import TrainConfig


def estimate_step_bytes(config: TrainConfig, batch, src_len, tgt_len, src_vocab,
                        tgt_vocab) -> int:
    """A rough upper bound of the memory a training step holds at its peak, in bytes.

    What grows fastest is attention: every Transformer layer keeps a (batch, heads, T, S)
    weight map for the backward pass, several times over (scores, mask, softmax, dropout), and
    additive attention (the RNN's) a (batch, T, S, hidden) array, so memory grows with the
    square of the sentence length. Then come the activations each layer keeps per token, the
    logits over the target vocabulary, and the weights four times over (the weights, their
    gradients and Adam's two running averages). Measured peaks of the activations: 0.5 to 1.0
    times their estimate.
    """
    S, T, d, f = src_len, tgt_len + 1, config.d_model, config.dim_feedforward
    if config.arch == "transformer":
        E, D = config.num_encoder_layers, config.num_decoder_layers
        maps = 5 * config.nhead * (E * S * S + D * (T * T + T * S))
        acts = (E * S + D * T) * (16 * d + 4 * f)
    else:  # the RNNs are 128 wide and keep about forty such vectors a token
        maps = 6 * 128 * T * S if config.arch == "rnn-attention" else 0
        acts = (S + T) * 40 * 128
    weights = estimate_weights(config, src_vocab, tgt_vocab)
    return 4 * (batch * (maps + acts + 4 * T * tgt_vocab) + 4 * weights)  # float32


def estimate_weights(config: TrainConfig, src_vocab, tgt_vocab) -> int:
    """About how many numbers the model of `config` holds (an upper bound: embeddings untied,
    biases and norms left out, which a bigger positional table makes up for)."""
    d, f = config.d_model, config.dim_feedforward
    if config.arch == "transformer":
        E, D = config.num_encoder_layers, config.num_decoder_layers
        return ((src_vocab + 2 * tgt_vocab) * d + E * (4 * d * d + 2 * d * f)
                + D * (8 * d * d + 2 * d * f))
    return 64 * src_vocab + 192 * tgt_vocab + 400_000


def physical_memory():
    """This machine's RAM in bytes, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_memory(config: TrainConfig, examples, src_vocab, tgt_vocab, limit=None):
    """Refuse a run whose model and largest batch would not fit in memory, before it tries."""
    limit = physical_memory() if limit is None else limit
    if limit is None or not examples:
        return
    src_len = max(len(s) for s, _ in examples)
    tgt_len = max(len(t) for _, t in examples)
    # batches by tokens: the logits, the largest part, hold about max_tokens rows at any length
    batch = max(1, config.max_tokens // tgt_len) if config.max_tokens else config.batch_size
    batch = min(batch, len(examples))
    need = estimate_step_bytes(config, batch, src_len, tgt_len, src_vocab, tgt_vocab)
    if need > 0.8 * limit:
        flag = "--max-tokens" if config.max_tokens else "--batch-size"
        raise MemoryError(f"train: a step would need about {need / 2**30:,.1f} GB for batches "
                          f"of {batch} sentences of up to {src_len:,} source and {tgt_len:,} "
                          f"target tokens, more than this machine's {limit / 2**30:,.1f} GB "
                          f"allow; lower {flag} or --max-len (or the model's size)")
