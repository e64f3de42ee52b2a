"""A hierarchical attention network on generated documents whose class one key sentence decides.

The model lives in `minigrad.models.han`; this module holds the data set, the baseline and the
demo (`python -m minigrad.demos.han`).
"""
from __future__ import annotations

import time

import numpy as np
from minigrad.models.han import MARKER, HierarchicalAttentionNetwork
from minigrad.nn import functional as F

import minigrad

# --- the generated task ---------------------------------------------------------------------

def make_han_dataset(n_docs, seed, n_classes=4, sents=(3, 6), words=(4, 7), n_filler=24,
                     distractor_p=0.7):
    """Documents whose class is told by one key sentence -> (docs (n, N, W), labels (n,),
    key_positions (n,)).

    Word ids: 0 padding, 1 the marker, 2..2+C-1 the class keywords, then `n_filler` fillers.
    Every document has a random number of sentences in `sents` and of words per sentence in
    `words`. The key sentence, at a random position, holds the marker and keyword of the
    document's class; each other sentence holds, with probability `distractor_p`, the keyword
    of a random class (maybe the true one) and no marker. Sizes are inclusive ranges.
    """
    rng = np.random.default_rng(seed)
    first_filler = 2 + n_classes
    N, W = sents[1], words[1]
    docs = np.zeros((n_docs, N, W), np.int64)
    labels = rng.integers(0, n_classes, n_docs)
    key_pos = np.zeros(n_docs, np.int64)
    for d in range(n_docs):
        n = rng.integers(sents[0], sents[1] + 1)
        key_pos[d] = rng.integers(0, n)
        for i in range(n):
            length = rng.integers(words[0], words[1] + 1)
            sent = rng.integers(first_filler, first_filler + n_filler, length)
            special = ([MARKER, 2 + labels[d]] if i == key_pos[d] else
                       [2 + rng.integers(n_classes)] if rng.random() < distractor_p else [])
            slots = rng.choice(length, size=len(special), replace=False)
            sent[slots] = special
            docs[d, i, :length] = sent
    return docs, labels, key_pos


def keyword_count_baseline(docs, n_classes):
    """What a bag of words can do here: predict the class whose keyword occurs most often."""
    counts = np.stack([(docs == 2 + c).sum((1, 2)) for c in range(n_classes)], axis=1)
    return counts.argmax(1)


def train_han_demo(n_docs=800, epochs=6, seed=0, verbose=True, batch_size=32, lr=0.01,
                   n_classes=4, test_fraction=0.25, **model_kw):
    """Train a HAN on `make_han_dataset` and report what it learned (a dict: accuracy, the
    majority-class and keyword-count baselines, key_sentence_hit_rate, losses, seconds)."""
    from minigrad.optim import Adam

    start = time.perf_counter()
    docs, labels, key_pos = make_han_dataset(n_docs, seed, n_classes=n_classes)
    n_test = int(n_docs * test_fraction)
    train, test = slice(n_test, None), slice(0, n_test)
    minigrad.manual_seed(seed)
    model = HierarchicalAttentionNetwork(int(docs.max()) + 1, n_classes, **model_kw)
    opt = Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    losses = []
    for epoch in range(epochs):
        order = n_test + rng.permutation(n_docs - n_test)  # the test documents come first
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            loss = F.cross_entropy(model(docs[idx]), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        if verbose:
            n_batches = -(-len(order) // batch_size)
            print(f"epoch {epoch + 1}/{epochs}: mean loss {np.mean(losses[-n_batches:]):.3f}")
    model.eval()
    with minigrad.no_grad():
        logits, _, sent_w = model(docs[test], return_attention=True)
    pred = logits._array.argmax(1)
    majority = np.bincount(labels[train], minlength=n_classes).argmax()
    result = dict(
        accuracy=float((pred == labels[test]).mean()),
        majority_baseline=float((labels[test] == majority).mean()),
        keyword_count_baseline=float(
            (keyword_count_baseline(docs[test], n_classes) == labels[test]).mean()),
        key_sentence_hit_rate=float((sent_w._array.argmax(1) == key_pos[test]).mean()),
        losses=losses, seconds=time.perf_counter() - start, model=model)
    if verbose:
        print(f"test accuracy {result['accuracy']:.3f} (majority class "
              f"{result['majority_baseline']:.3f}, keyword counting "
              f"{result['keyword_count_baseline']:.3f}); sentence attention on the key sentence "
              f"in {result['key_sentence_hit_rate']:.1%} of test documents "
              f"({result['seconds']:.1f} s)")
    return result


if __name__ == "__main__":
    train_han_demo()
