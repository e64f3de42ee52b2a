"""BERT on a generated topical corpus: pre-training (masked LM + next sentence) and fine-tuning.

The model lives in `minigrad.models.bert`; this module holds the data it is shown and the
loops that train it. `python -m minigrad.demos.bert` pre-trains, then fine-tunes on a few labels.
"""
from __future__ import annotations

import copy
import time
from collections import namedtuple

import minigrad.optim
import numpy as np
from minigrad.models.bert import (
    BertEncoder,
    BertForPreTraining,
    BertForSequenceClassification,
    BertVocab,
    mask_tokens,
    pretraining_loss,
)
from minigrad.nn import functional as F
from minigrad.optim.lr_scheduler import LambdaLR

import minigrad
from minigrad.autograd import no_grad

# --- a generated corpus -------------------------------------------------------------------------

# Each topic: 8 nouns, 5 verbs, 4 adjectives. Topics share only "a", "an", "the" and ".".
TOPICS = {
    "animals": ("cat dog mouse fox rabbit owl horse cow", "chases bites watches follows feeds",
                "hungry lazy small wild"),
    "kitchen": ("cook soup bread knife oven pan onion cheese", "cuts bakes stirs tastes serves",
                "hot fresh sharp salty"),
    "sports": ("player ball coach goal team referee bat net", "kicks throws catches passes wins",
               "fast tired strong proud"),
    "music": ("singer guitar drum song piano band violin choir", "plays tunes hums records sings",
              "loud soft famous old"),
    "space": ("rocket planet star moon astronaut comet satellite telescope",
              "orbits launches circles spots reaches", "distant bright cold huge"),
    "sea": ("sailor ship whale wave island anchor fish captain", "sails steers crosses drops hunts",
            "stormy blue deep brave"),
    "garden": ("gardener rose tree seed bee flower spade hedge", "waters plants prunes digs picks",
               "green tall sunny tiny"),
    "city": ("driver bus taxi bridge tower street mayor train", "drives parks builds visits repairs",
             "busy noisy modern grey"),
}

BertCorpus = namedtuple("BertCorpus", "vocab docs topics topic_names")
BertCorpus.__doc__ = "docs: list of documents, each a list of sentences (lists of word ids)."


def make_bert_corpus(n_docs=800, seed=0, n_topics=8, min_sents=4, max_sents=8):
    """Documents from a tiny topical grammar; returns a BertCorpus.

    A sentence is "DET [ADJ] SUBJECT VERB a/an [ADJ] OBJECT ." using one topic's words. Within the
    topic, each noun prefers one verb (75 %), each verb two objects (80 %), each noun two
    adjectives. A document's first subject is new ("a"); every later subject is the previous
    object ("the"), which ties consecutive sentences together for next-sentence prediction.
    """
    rng = np.random.default_rng(seed)
    names = list(TOPICS)[:n_topics]
    lex = {t: [s.split() for s in TOPICS[t]] for t in names}
    vocab = BertVocab(["a", "an", "the", "."] + [w for t in names for part in lex[t] for w in part])
    # the "language": per topic, noun -> verb, verb -> 2 objects, noun -> 2 adjectives
    grammar = {t: (rng.integers(0, 5, 8), rng.integers(0, 8, (5, 2)), rng.integers(0, 4, (8, 2)))
               for t in names}

    def sentence(t, subj):
        nouns, verbs, adjs = lex[t]
        verb_of, objs_of, adjs_of = grammar[t]
        new = subj is None  # a new thing gets "a"/"an"; the previous object gets "the"
        subj = rng.integers(8) if new else subj
        verb = verb_of[subj] if rng.random() < 0.75 else rng.integers(5)
        obj = rng.choice(objs_of[verb]) if rng.random() < 0.8 else rng.integers(8)

        def phrase(noun, definite):  # DET [ADJ] NOUN
            words = ([adjs[rng.choice(adjs_of[noun])]] if rng.random() < 0.4 else []) + [nouns[noun]]
            return ["the" if definite else "an" if words[0][0] in "aeiou" else "a"] + words
        return vocab.encode([*phrase(subj, not new), verbs[verb], *phrase(obj, False), "."]), obj

    docs, topics = [], []
    for _ in range(n_docs):
        t = int(rng.integers(n_topics))
        doc, subj = [], None
        for _ in range(int(rng.integers(min_sents, max_sents + 1))):
            s, subj = sentence(names[t], subj)
            doc.append(s)
        docs.append(doc)
        topics.append(t)
    return BertCorpus(vocab, docs, np.array(topics), names)


def encode_pair(a, b, vocab):
    """Sentences a, b (id lists) -> ([CLS] a [SEP] b [SEP], segment ids 0...0 1...1)."""
    return [vocab.cls_id, *a, vocab.sep_id, *b, vocab.sep_id], [0] * (len(a) + 2) + [1] * (len(b) + 1)


def pad_batch(seqs, pad_id=0):
    """List of id lists -> (B, T) int64 array, padded at the end with pad_id."""
    out = np.full((len(seqs), max(map(len, seqs))), pad_id, np.int64)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = s
    return out


def nsp_batch(corpus, doc_ids, n, rng):
    """n sentence pairs from the documents doc_ids -> (ids (n, T), types (n, T), is_next (n,)).

    Half are (s_i, s_i+1) of one document (is_next = 1); half pair s_i with a random sentence
    of another document (is_next = 0).
    """
    docs = corpus.docs
    pairs, types, is_next = [], [], rng.random(n) < 0.5
    for k in range(n):
        d = doc_ids[rng.integers(len(doc_ids))]
        i = rng.integers(len(docs[d]) - 1)
        if is_next[k]:
            b = docs[d][i + 1]
        else:
            other = d
            while other == d:
                other = doc_ids[rng.integers(len(doc_ids))]
            b = docs[other][rng.integers(len(docs[other]))]
        ids, seg = encode_pair(docs[d][i], b, corpus.vocab)
        pairs.append(ids)
        types.append(seg)
    return pad_batch(pairs, corpus.vocab.pad_id), pad_batch(types), is_next.astype(np.int64)


# --- demos --------------------------------------------------------------------------------------

def _adam(model, lr, weight_decay=0.01):
    return minigrad.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


def _bert_schedule(opt, steps):
    """BERT's schedule: linear warm-up over the first 10 % of `steps`, then linear decay to 0."""
    warmup = max(1, steps // 10)

    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))
    return LambdaLR(opt, factor)


def evaluate_pretraining(model, corpus, doc_ids, n_pairs=1000, seed=1):
    """MLM accuracy at selected positions, its unigram baseline, and NSP accuracy on fresh pairs."""
    rng = np.random.default_rng(seed)
    ids, types, is_next = nsp_batch(corpus, doc_ids, n_pairs, rng)
    masked, labels = mask_tokens(ids, corpus.vocab, rng)
    model.eval()
    with no_grad():
        mlm_logits, nsp_logits = model(masked, types)
    model.train()
    sel = labels != -100
    mlm_pred = mlm_logits._array.argmax(-1)[sel]
    baseline = np.bincount(labels[sel]).max() / sel.sum()  # always guess the commonest word
    return dict(mlm_accuracy=float((mlm_pred == labels[sel]).mean()), unigram_baseline=float(baseline),
                nsp_accuracy=float((nsp_logits._array.argmax(-1) == is_next).mean()))


def pretrain_demo(steps=1000, seed=0, verbose=True, n_docs=800, n_topics=8, batch_size=64,
                  lr=4e-3, d_model=64, nhead=4, num_layers=2, dim_feedforward=128, dropout=0.1,
                  eval_pairs=1000):
    """Pre-train a small BERT with MLM + NSP on `make_bert_corpus`; report held-out accuracies.

    Returns a dict with mlm_accuracy, unigram_baseline, nsp_accuracy, seconds, and the trained
    `model` and `corpus` (for `finetune_demo`). 90 % of the documents train, 10 % evaluate.
    """
    t0 = time.time()
    corpus = make_bert_corpus(n_docs, seed=seed, n_topics=n_topics)
    split = int(0.9 * n_docs)
    train_docs, test_docs = np.arange(split), np.arange(split, n_docs)
    minigrad.manual_seed(seed)
    model = BertForPreTraining(len(corpus.vocab), d_model=d_model, nhead=nhead,
                               num_layers=num_layers, dim_feedforward=dim_feedforward,
                               dropout=dropout)
    opt = _adam(model, lr)
    sched = _bert_schedule(opt, steps)
    rng = np.random.default_rng(seed + 1)
    for step in range(steps):
        ids, types, is_next = nsp_batch(corpus, train_docs, batch_size, rng)
        masked, labels = mask_tokens(ids, corpus.vocab, rng)  # fresh masks every step
        opt.zero_grad()
        loss = pretraining_loss(*model(masked, types), labels, is_next)
        loss.backward()
        minigrad.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if verbose and (step % max(1, steps // 10) == 0 or step == steps - 1):
            print(f"step {step:5d}  loss {loss.item():.3f}")
    result = evaluate_pretraining(model, corpus, test_docs, eval_pairs, seed=seed + 2)
    result.update(seconds=time.time() - t0, model=model, corpus=corpus)
    if verbose:
        print(f"MLM accuracy {result['mlm_accuracy']:.3f} (unigram baseline "
              f"{result['unigram_baseline']:.3f}), NSP accuracy {result['nsp_accuracy']:.3f}, "
              f"{result['seconds']:.0f} s")
    return result


def _sentences(corpus, doc_ids):
    """All single sentences of the documents, as ([CLS] s [SEP]) lists, with their topic."""
    pairs = [([corpus.vocab.cls_id, *s, corpus.vocab.sep_id], corpus.topics[d])
             for d in doc_ids for s in corpus.docs[d]]
    return [p[0] for p in pairs], np.array([p[1] for p in pairs])


def _finetune(bert, corpus, x, y, test_x, test_y, steps, lr, seed):
    """Train a classifier on `bert` (updating bert too) on (x, y); return test accuracy."""
    minigrad.manual_seed(seed)
    model = BertForSequenceClassification(bert, len(corpus.topic_names))
    opt = _adam(model, lr)
    sched = _bert_schedule(opt, steps)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        idx = rng.choice(len(x), min(32, len(x)), replace=False)
        opt.zero_grad()
        loss = F.cross_entropy(model(pad_batch([x[i] for i in idx])), y[idx])
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    with no_grad():
        pred = model(pad_batch(test_x))._array.argmax(-1)
    return float((pred == test_y).mean())


def finetune_demo(pretrained=None, n_labelled=24, steps=100, lr=1e-3, seed=0, verbose=True,
                  compare_scratch=True, **pretrain_kwargs):
    """Classify a single sentence's topic with BertForSequenceClassification.

    Starts from `pretrained` (a pretrain_demo result, run here if None), fine-tunes everything
    on `n_labelled` sentences of training documents, tests on the held-out documents. Returns
    accuracy, majority_baseline and (with compare_scratch) the same training from random weights.
    """
    t0 = time.time()
    if pretrained is None:
        pretrained = pretrain_demo(seed=seed, verbose=verbose, **pretrain_kwargs)
    corpus, pre = pretrained["corpus"], pretrained["model"]
    n = len(corpus.docs)
    x, y = _sentences(corpus, range(int(0.9 * n)))
    test_x, test_y = _sentences(corpus, range(int(0.9 * n), n))
    pick = np.random.default_rng(seed).choice(len(x), n_labelled, replace=False)
    x, y = [x[i] for i in pick], y[pick]
    acc = _finetune(copy.deepcopy(pre.bert), corpus, x, y, test_x, test_y, steps, lr, seed)
    result = dict(accuracy=acc, majority_baseline=float(np.bincount(test_y).max() / len(test_y)))
    if compare_scratch:
        minigrad.manual_seed(seed)
        fresh = BertEncoder(**pre.bert.config)
        result["scratch_accuracy"] = _finetune(fresh, corpus, x, y, test_x, test_y, steps, lr, seed)
    result["seconds"] = time.time() - t0
    if verbose:
        extra = (f", from scratch {result['scratch_accuracy']:.3f}" if compare_scratch else "")
        print(f"topic accuracy {acc:.3f} with {n_labelled} labelled sentences (majority baseline "
              f"{result['majority_baseline']:.3f}{extra})")
    return result


if __name__ == "__main__":
    finetune_demo()
