"""BERT: gradchecks of the encoder and heads, the 15 % / 80-10-10 masking, padding leaks, the
generated corpus, and the pre-training and fine-tuning demos at a small size."""
import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, no_grad
from minigrad.demos.bert import (finetune_classifier, finetune_demo, make_bert_corpus, nsp_batch,
                                 pad_batch, pick_labelled, pretrain_demo, topic_sentences,
                                 word_topics)
from minigrad.models.bert import (BertEncoder, BertForPreTraining, BertForSequenceClassification,
                                  BertVocab, mask_tokens, pretraining_loss)

V = 12
IDS = np.array([[1, 5, 6, 2, 7, 8, 9, 2],
                [1, 10, 2, 11, 6, 2, 0, 0]])
TYPES = np.array([[0, 0, 0, 0, 1, 1, 1, 1],
                  [0, 0, 0, 1, 1, 1, 0, 0]])


def tiny(cls=BertEncoder, dropout=0.0):
    """A float64 model small enough for central differences: d_model 8, one layer."""
    minigrad.manual_seed(0)
    model = cls(V, d_model=8, nhead=2, num_layers=1, dim_feedforward=16, max_len=10,
                dropout=dropout)
    return model.double()


# --- gradients ----------------------------------------------------------------------------------

def test_encoder_gradcheck():
    model = tiny()
    out = model(IDS, TYPES)
    assert out.shape == (2, 8, 8) and out.dtype == np.float64
    # outputs at [PAD] positions are excluded: the [PAD] embedding row is frozen (zero gradient,
    # as PyTorch's padding_idx) although it does reach those throw-away outputs
    real = (IDS != 0)[:, :, None].astype(np.float64)
    assert gradcheck(lambda *p: model(IDS, TYPES) * real, list(model.parameters()))


def test_pretraining_heads_gradcheck():
    """Both losses through both heads; the tied token embedding gets gradient from input and output."""
    model = tiny(BertForPreTraining)
    labels = np.full(IDS.shape, -100)
    labels[0, 2], labels[0, 5], labels[1, 4] = 6, 8, 6
    is_next = np.array([1, 0])
    mlm, nsp = model(IDS, TYPES)
    assert mlm.shape == (2, 8, V) and nsp.shape == (2, 2)
    assert gradcheck(lambda *p: pretraining_loss(*model(IDS, TYPES), labels, is_next),
                     list(model.parameters()))


def test_sequence_classifier_gradcheck():
    bert = tiny()
    minigrad.manual_seed(1)
    model = BertForSequenceClassification(bert, 3, dropout=0.0).double()
    assert model(IDS, TYPES).shape == (2, 3)
    params = [model.classifier.weight, model.classifier.bias, bert.pooler.weight,
              bert.tok_embed.weight]
    assert gradcheck(lambda *p: model(IDS, TYPES), params)


# --- masking ------------------------------------------------------------------------------------

def test_mask_tokens_proportions():
    vocab = BertVocab([f"w{i}" for i in range(50)])
    ids = np.random.default_rng(0).integers(0, len(vocab), (400, 250))  # specials included
    masked, labels = mask_tokens(ids, vocab, rng=1)
    special = vocab.is_special(ids)
    sel = labels != -100
    np.testing.assert_array_equal(labels[sel], ids[sel])
    assert abs(sel.sum() / (~special).sum() - 0.15) < 0.006
    to_mask = masked[sel] == vocab.mask_id
    changed = (masked[sel] != ids[sel]) & ~to_mask
    kept = masked[sel] == ids[sel]
    assert abs(to_mask.mean() - 0.8) < 0.015
    # a random word equals the original 1 time in 50, so "changed" is a bit under 10 %
    assert abs(changed.mean() - 0.1 * 49 / 50) < 0.01
    assert abs(kept.mean() - (0.1 + 0.1 / 50)) < 0.01
    assert not vocab.is_special(masked[sel][~to_mask]).any()  # random words are ordinary words
    np.testing.assert_array_equal(masked[~sel], ids[~sel])    # unselected tokens untouched


def test_mask_tokens_never_selects_special_tokens():
    vocab = BertVocab(["x", "y"])
    ids = np.random.default_rng(0).integers(0, 5, (200, 50))  # nothing but special tokens
    masked, labels = mask_tokens(ids, vocab, rng=0, prob=0.9)
    assert (labels == -100).all()
    np.testing.assert_array_equal(masked, ids)


def test_mask_tokens_is_repeatable():
    vocab = BertVocab([f"w{i}" for i in range(20)])
    ids = np.random.default_rng(0).integers(5, len(vocab), (8, 30))
    a, b = mask_tokens(ids, vocab, rng=3), mask_tokens(ids, vocab, rng=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


# --- padding ------------------------------------------------------------------------------------

def test_padding_does_not_leak():
    """Real positions see the same thing whatever the padding holds and however long it is."""
    model = tiny(dropout=0.5).eval()
    real, real_types = IDS[:1, :7], TYPES[:1, :7]
    with no_grad():
        alone = model(real, real_types).numpy()
        padded = model(np.pad(real, ((0, 0), (0, 3))), np.pad(real_types, ((0, 0), (0, 3)))).numpy()
        garbage = np.concatenate([real, [[9, 3, 11]]], 1)  # ordinary tokens, masked explicitly
        mask = np.concatenate([np.ones((1, 7)), np.zeros((1, 3))], 1)
        hidden = model(garbage, np.pad(real_types, ((0, 0), (0, 3)), constant_values=1), mask).numpy()
        batched = model(pad_batch([list(real[0]), [1, 5, 2, 6, 6, 6, 7, 8, 9, 2]]),
                        pad_batch([list(real_types[0]), [0] * 3 + [1] * 7])).numpy()
    np.testing.assert_allclose(padded[:, :7], alone, atol=1e-12)
    np.testing.assert_allclose(hidden[:, :7], alone, atol=1e-12)
    np.testing.assert_allclose(batched[:1, :7], alone, atol=1e-12)


def test_sequence_longer_than_max_len_is_an_error():
    with pytest.raises(ValueError, match="max_len"):
        tiny()(np.ones((1, 11), np.int64))


# --- the corpus ---------------------------------------------------------------------------------

def test_corpus_is_repeatable_and_sentences_chain():
    a, b = make_bert_corpus(30, seed=4), make_bert_corpus(30, seed=4)
    assert a.docs == b.docs and (a.topics == b.topics).all()
    for doc in a.docs:
        for s, t in zip(doc, doc[1:]):
            words, nxt = a.vocab.decode(s).split(), a.vocab.decode(t).split()
            assert nxt[0] == "the" and words[-2] in nxt[1:3]  # the object becomes the subject


def test_nsp_batch_layout():
    corpus = make_bert_corpus(40, seed=0)
    ids, types, is_next = nsp_batch(corpus, np.arange(40), 400, np.random.default_rng(0))
    v = corpus.vocab
    assert (ids[:, 0] == v.cls_id).all() and 0.4 < is_next.mean() < 0.6
    for row, seg in zip(ids, types):
        n = (row != v.pad_id).sum()
        seps = np.flatnonzero(row == v.sep_id)
        assert len(seps) == 2 and seps[1] == n - 1
        assert (seg[:seps[0] + 1] == 0).all() and (seg[seps[0] + 1:n] == 1).all()


# --- the demos, small -----------------------------------------------------------------------------

def test_word_topics_and_labelled_sets():
    corpus = make_bert_corpus(80, seed=0, n_topics=3)
    topic, v = word_topics(corpus), corpus.vocab
    assert (topic[v.encode(["a", "an", "the", "."])] == -1).all() and (topic[:5] == -1).all()
    assert topic[v.stoi["fox"]] == 0 and topic[v.stoi["oven"]] == 1 and topic[v.stoi["net"]] == 2
    x, y = topic_sentences(corpus, range(60))
    assert len(x) == len(y) and all(s[0] == v.cls_id and s[-1] == v.sep_id for s in x)
    pick = pick_labelled(y, 2, seed=5)
    np.testing.assert_array_equal(np.bincount(y[pick]), [2, 2, 2])   # two of every topic
    np.testing.assert_array_equal(pick, pick_labelled(y, 2, seed=5))
    assert len(set(pick)) == 6 and not np.array_equal(pick, pick_labelled(y, 2, seed=6))


def test_frozen_finetuning_trains_only_the_classifier():
    x, y = [list(r[r != 0]) for r in IDS], np.array([0, 1])
    for freeze in (True, False):
        minigrad.manual_seed(0)
        bert = BertEncoder(V, d_model=8, nhead=2, num_layers=1, dim_feedforward=16, max_len=10)
        before = {k: v.numpy().copy() for k, v in bert.state_dict().items()}
        pred = finetune_classifier(bert, 2, x, y, x, steps=5, lr=1e-2, freeze=freeze)
        assert pred.shape == (2,) and set(pred) <= {0, 1}
        after = bert.state_dict()
        same = {k: np.array_equal(before[k], after[k].numpy()) for k in before}
        if freeze:
            assert all(same.values()), [k for k, v in same.items() if not v]
        else:   # fine-tuning moves BERT itself, from the embeddings to the pooler
            assert not same["tok_embed.weight"] and not same["pooler.weight"]


@pytest.fixture(scope="module")
def pretrained():
    # 4 topics learn which words belong together by about step 200 (8 topics need 300-600)
    return pretrain_demo(steps=300, n_docs=400, n_topics=4, eval_pairs=600, verbose=False)


def test_pretraining_beats_the_baselines(pretrained):
    assert pretrained["mlm_accuracy"] > pretrained["unigram_baseline"] + 0.3
    assert pretrained["mlm_topic_accuracy"] > 0.8   # a masked word is guessed within its topic
    assert pretrained["nsp_accuracy"] > 0.8


def test_pretrained_encoder_beats_scratch_with_one_label_per_topic(pretrained):
    """The lecture's point: after pre-training, a few labels suffice; from random weights they do not."""
    r = finetune_demo(pretrained, per_topic=(1,), seeds=(0, 1, 2), methods=("fine-tuned", "scratch"),
                      verbose=False)
    tuned, scratch = r["accuracy"]["fine-tuned"][0], r["accuracy"]["scratch"][0]
    assert r["n_labels"] == [4]
    assert (tuned > scratch).all() and tuned.mean() > scratch.mean() + 0.15, (tuned, scratch)
    assert tuned.mean() > r["majority_baseline"] + 0.4


def test_demo_schedule_warms_up_then_decays_to_zero():
    from minigrad.demos.bert import _bert_schedule
    w = minigrad.nn.Parameter(np.zeros(1, np.float32))
    opt = minigrad.optim.AdamW([w], lr=1e-3)
    sched, lrs = _bert_schedule(opt, steps=50), []
    for _ in range(50):
        lrs.append(opt.param_groups[0]["lr"])   # the rate of this step's update
        sched.step()
    np.testing.assert_allclose(lrs[:5], [2e-4, 4e-4, 6e-4, 8e-4, 1e-3])   # warm-up: 10 % of 50
    assert lrs[4] == lrs[5] == max(lrs) and all(a > b for a, b in zip(lrs[5:], lrs[6:]))
    assert lrs[-1] == pytest.approx(1e-3 / 45) and opt.param_groups[0]["lr"] == 0
