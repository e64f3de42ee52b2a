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


def word_topics(corpus):
    """(V,) ints: the topic index of every word of the vocabulary, -1 for shared and special words."""
    topic = np.full(len(corpus.vocab), -1)
    for t, name in enumerate(corpus.topic_names):
        for part in TOPICS[name]:
            topic[corpus.vocab.encode(part.split())] = t
    return topic


def evaluate_pretraining(model, corpus, doc_ids, n_pairs=1000, seed=1):
    """Held-out MLM and NSP accuracies, with the baselines and breakdowns that say what was learned.

    mlm_accuracy: the original word is the top prediction at a selected position; unigram_baseline:
    always guessing the commonest word; mlm_topic_accuracy: at selected topical words, the top
    prediction is a word of the same topic. nsp_accuracy over all pairs; nsp_same_topic_accuracy
    over the NotNext pairs whose two sentences happen to share a topic (a second sentence drawn
    from another document mostly has another topic, which gives NotNext away without reading on).
    """
    rng = np.random.default_rng(seed)
    ids, types, is_next = nsp_batch(corpus, doc_ids, n_pairs, rng)
    masked, labels = mask_tokens(ids, corpus.vocab, rng)
    model.eval()
    with no_grad():
        mlm_logits, nsp_logits = model(masked, types)
    model.train()
    sel = labels != -100
    mlm_pred = mlm_logits._array.argmax(-1)
    baseline = np.bincount(labels[sel]).max() / sel.sum()  # always guess the commonest word
    topic = word_topics(corpus)
    topical = sel & (topic[np.where(sel, labels, 0)] >= 0)
    # a sentence's topic is the topic of any of its topical words (each sentence has one topic)
    seg_topic = [np.where(types == s, topic[ids], -1).max(1) for s in (0, 1)]
    same = (is_next == 0) & (seg_topic[0] == seg_topic[1])
    nsp_pred = nsp_logits._array.argmax(-1)
    return dict(mlm_accuracy=float((mlm_pred[sel] == labels[sel]).mean()),
                unigram_baseline=float(baseline),
                mlm_topic_accuracy=float((topic[mlm_pred[topical]] == topic[labels[topical]]).mean()),
                nsp_accuracy=float((nsp_pred == is_next).mean()),
                nsp_same_topic_accuracy=float((nsp_pred[same] == 0).mean()) if same.any() else float("nan"))


def pretrain_demo(steps=800, seed=0, verbose=True, n_docs=800, n_topics=8, batch_size=64,
                  lr=4e-3, d_model=64, nhead=4, num_layers=2, dim_feedforward=128, dropout=0.0,
                  eval_pairs=1000):
    """Pre-train a small BERT with MLM + NSP on `make_bert_corpus`; report held-out accuracies.

    Returns `evaluate_pretraining`'s dict plus seconds and the trained `model` and `corpus` (for
    `finetune_demo`). 90 % of the documents train, 10 % evaluate. The defaults are long enough:
    with 8 topics the model first learns only where ".", "a" and "the" go, and learns which topic
    a masked word belongs to (mlm_topic_accuracy from about 0.1 to about 0.98) only between
    steps 300 and 600, a little later for some seeds. No dropout: every step draws fresh pairs
    and fresh masks, so the model never sees a batch twice, and dropout only delays that moment.
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
              f"{result['unigram_baseline']:.3f}; right topic {result['mlm_topic_accuracy']:.3f}), "
              f"NSP accuracy {result['nsp_accuracy']:.3f}, {result['seconds']:.0f} s")
    return result


# --- fine-tuning on a few labels ----------------------------------------------------------------

def topic_sentences(corpus, doc_ids):
    """All single sentences of the documents as ([CLS] s [SEP]) id lists, and their topics (N,)."""
    x = [[corpus.vocab.cls_id, *s, corpus.vocab.sep_id] for d in doc_ids for s in corpus.docs[d]]
    y = np.array([corpus.topics[d] for d in doc_ids for _ in corpus.docs[d]], np.int64)
    return x, y


def pick_labelled(topics, per_topic, seed=0):
    """Indices of `per_topic` random examples of every topic in topics (N,): the labelled set."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.choice(np.flatnonzero(topics == t), per_topic, replace=False)
                           for t in np.unique(topics)])


def finetune_classifier(bert, num_labels, x, y, test_x, steps=100, lr=1e-3, seed=0, freeze=False,
                        batch_size=16):
    """Train BertForSequenceClassification(bert) on sentences x, labels y; predict test_x (N,).

    freeze=False is fine-tuning: every weight, BERT's included, follows the task's gradient.
    freeze=True keeps BERT (embeddings, encoder, pooler) as it is and trains only the new
    classifier on the pooled [CLS] vector. `bert` is changed in place: pass a copy.
    """
    minigrad.manual_seed(seed)
    model = BertForSequenceClassification(bert, num_labels)
    if freeze:
        bert.requires_grad_(False)
    opt = minigrad.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr,
                               weight_decay=0.01)
    sched = _bert_schedule(opt, steps)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        idx = rng.choice(len(x), min(batch_size, len(x)), replace=False)
        opt.zero_grad()
        loss = F.cross_entropy(model(pad_batch([x[i] for i in idx])), y[idx])
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    with no_grad():
        return model(pad_batch(test_x))._array.argmax(-1)


METHODS = ("fine-tuned", "frozen", "scratch")


def finetune_demo(pretrained=None, per_topic=(1, 2, 4, 8), seeds=(0, 1, 2), steps=100, lr=1e-3,
                  frozen_lr=1e-2, methods=METHODS, seed=0, verbose=True, **pretrain_kwargs):
    """Classify a single sentence's topic from a few labelled sentences, three ways.

    "fine-tuned": the pre-trained encoder and a new classifier, all trained (lr); "frozen": the
    pre-trained encoder kept fixed, only the classifier trained (frozen_lr); "scratch": the same
    architecture from random weights, trained like "fine-tuned". For every k in per_topic and
    every labelled-set seed, k sentences per topic of the pre-training documents are labelled;
    the held-out documents' sentences test. `pretrained` is a pretrain_demo result (run here
    with `seed` and pretrain_kwargs if None). Returns per_topic, n_labels, majority_baseline,
    seconds, and per method (K, S) arrays: accuracy, and unseen_accuracy on the test sentences
    that share no topical word with the labelled ones (their share in unseen_share, (K, S)).
    """
    t0 = time.time()
    if pretrained is None:
        pretrained = pretrain_demo(seed=seed, verbose=verbose, **pretrain_kwargs)
    corpus, pre = pretrained["corpus"], pretrained["model"].bert
    n, C = len(corpus.docs), len(corpus.topic_names)
    x, y = topic_sentences(corpus, range(int(0.9 * n)))
    test_x, test_y = topic_sentences(corpus, range(int(0.9 * n), n))
    topic = word_topics(corpus)
    K, S = len(per_topic), len(seeds)
    acc = {m: np.zeros((K, S)) for m in methods}
    unseen_acc = {m: np.full((K, S), np.nan) for m in methods}
    unseen_share = np.zeros((K, S))
    for i, k in enumerate(per_topic):
        for j, s in enumerate(seeds):
            pick = pick_labelled(y, k, s)
            lx, ly = [x[p] for p in pick], y[pick]
            seen = {w for sent in lx for w in sent if topic[w] >= 0}
            unseen = np.array([seen.isdisjoint(sent) for sent in test_x])
            unseen_share[i, j] = unseen.mean()
            for m in methods:
                if m == "scratch":
                    minigrad.manual_seed(s)
                    bert = BertEncoder(**pre.config)
                else:
                    bert = copy.deepcopy(pre)
                pred = finetune_classifier(bert, C, lx, ly, test_x, steps,
                                           frozen_lr if m == "frozen" else lr, s, m == "frozen")
                acc[m][i, j] = (pred == test_y).mean()
                if unseen.any():
                    unseen_acc[m][i, j] = (pred == test_y)[unseen].mean()
    result = dict(per_topic=list(per_topic), n_labels=[k * C for k in per_topic], accuracy=acc,
                  unseen_accuracy=unseen_acc, unseen_share=unseen_share,
                  majority_baseline=float(np.bincount(test_y).max() / len(test_y)),
                  seconds=time.time() - t0)
    if verbose:
        print(format_label_table(result))
    return result


def format_label_table(result):
    """finetune_demo's result as text: mean test accuracy per method and number of labels."""
    lines = ["labelled sentences " + "".join(f"{n:>8d}" for n in result["n_labels"])]
    for m, a in result["accuracy"].items():
        lines.append(f"{m:<19}" + "".join(f"{v:8.2f}" for v in a.mean(1)))
    lines.append(f"(mean over {result['accuracy'][next(iter(result['accuracy']))].shape[1]} labelled"
                 f" sets; majority class {result['majority_baseline']:.2f})")
    return "\n".join(lines)


if __name__ == "__main__":
    finetune_demo()
