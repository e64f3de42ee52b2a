"""Figures of a training run: the loss curve and a cross-attention heat map."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .files import atomic_write


def _pyplot():
    """pyplot for drawing into files. The backend is left as it is (a notebook's inline backend
    must survive a call here); without a display, matplotlib already picks a file-only one."""
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path):
    """Render to a temporary file, then rename: a half-written PNG never replaces a good one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: fig.savefig(f, format=path.suffix.lstrip(".") or "png", dpi=120,
                                             bbox_inches="tight"), binary=True)
    return path


def plot_loss_curve(history, valid, path, title="Training loss"):
    """history: [[step, loss]] per step; valid: [[step, valid_loss, valid_bleu]] per epoch."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    if history:
        steps, losses = np.array(history, dtype=float).T
        k = max(1, len(losses) // 100)  # a running mean makes the trend readable
        smooth = np.convolve(losses, np.ones(k) / k, mode="valid")
        ax.plot(steps, losses, color="0.8", lw=0.8, label="train loss (per step)")
        ax.plot(steps[k - 1:], smooth, color="C0", label=f"train loss (mean of {k})")
    if valid:
        v = np.array(valid, dtype=float)
        ax.plot(v[:, 0], v[:, 1], "o-", color="C1", label="validation loss")
    ax.set_xlabel("training step")
    ax.set_ylabel("cross entropy (nats per token)")
    ax.set_title(title)
    ax.legend()
    path = _save(fig, path)
    plt.close(fig)
    return path


def plot_attention(weights, src_tokens, tgt_tokens, path, title="Cross-attention"):
    """weights (T, S): row t says how much target token t looked at each source token."""
    plt = _pyplot()
    weights = np.asarray(weights)[:len(tgt_tokens), :len(src_tokens)]
    fig, ax = plt.subplots(figsize=(0.5 * len(src_tokens) + 2.5, 0.45 * len(tgt_tokens) + 2))
    im = ax.imshow(weights, cmap="viridis", vmin=0, vmax=max(float(weights.max()), 1e-6))
    ax.set_xticks(range(len(src_tokens)), src_tokens, rotation=60, ha="right")
    ax.set_yticks(range(len(tgt_tokens)), tgt_tokens)
    ax.set_xlabel("source tokens")
    ax.set_ylabel("generated target tokens")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="attention weight")
    path = _save(fig, path)
    plt.close(fig)
    return path


def plot_cross_attention(attn, src_words, tgt_words, path, sentence):
    """The last decoder layer's cross-attention, its heads averaged into one (T, S) map."""
    weights = np.asarray(attn[-1][0])
    weights = weights.mean(0) if weights.ndim == 3 else weights
    return plot_attention(weights, src_words, tgt_words, path,
                          title=f"Cross-attention (last decoder layer, mean of heads)\n{sentence}")
