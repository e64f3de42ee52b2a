"""The hierarchical attention network: the generated documents, masking, a gradcheck of the
learned-query attention, and the demo: the model classifies by the key sentence and its
sentence-level attention points at that sentence."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.demos.han import keyword_count_baseline, make_han_dataset, train_han_demo
from minigrad.models.han import MARKER, PAD, AttentionPooling, HierarchicalAttentionNetwork


def test_dataset_structure_and_determinism():
    docs, labels, key_pos = make_han_dataset(200, seed=0, n_classes=4, sents=(3, 6), words=(4, 7))
    assert docs.shape == (200, 6, 7) and docs.dtype == np.int64
    again = make_han_dataset(200, seed=0, n_classes=4, sents=(3, 6), words=(4, 7))
    assert all(np.array_equal(a, b) for a, b in zip((docs, labels, key_pos), again))
    assert not np.array_equal(docs, make_han_dataset(200, seed=1)[0])
    n_sents = (docs != PAD).any(-1).sum(1)
    assert n_sents.min() == 3 and n_sents.max() == 6
    assert np.all((docs != PAD).any(-1)[np.arange(6) < n_sents[:, None]])  # sentences packed left
    assert np.all(key_pos < n_sents) and len(set(key_pos)) == 6  # the key sentence moves around
    for d in range(200):
        key = docs[d, key_pos[d]]
        assert (docs[d] == MARKER).sum() == 1 and MARKER in key  # one marker, in the key sentence
        assert 2 + labels[d] in key
        assert len(set(key) & set(range(2, 6))) == 1  # and just one keyword
    assert np.bincount(labels, minlength=4).min() > 30


def test_bag_of_words_is_not_enough():
    """Counting keywords, the best a bag of words can do here, is far from solving the task."""
    docs, labels, _ = make_han_dataset(1000, seed=0)
    accuracy = (keyword_count_baseline(docs, 4) == labels).mean()
    assert 0.3 < accuracy < 0.65


def test_attention_pooling_gradcheck_and_mask():
    mg.manual_seed(0)
    pool = AttentionPooling(4, attn_dim=3).double()
    h = mg.tensor(np.random.default_rng(0).standard_normal((2, 5, 4)), requires_grad=True)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)
    params = list(pool.parameters())
    assert [k for k, _ in pool.named_parameters()] == ["query", "proj.weight", "proj.bias"]
    assert gradcheck(lambda h, *p: mg.cat([t.reshape(-1) for t in pool(h, mask)]), [h] + params)
    pooled, weights = pool(h, mask)
    assert pooled.shape == (2, 4) and np.all(weights.numpy()[0, 3:] == 0)
    np.testing.assert_allclose(weights.numpy().sum(-1), 1.0)


def test_forward_shapes_weights_and_padding_invariance():
    mg.manual_seed(1)
    docs, _, _ = make_han_dataset(5, seed=3)
    model = HierarchicalAttentionNetwork(30, 4, emb_dim=8, word_hidden=6, sent_hidden=5).eval()
    with mg.no_grad():
        logits, word_w, sent_w = model(docs, return_attention=True)
        # more padding (an extra empty sentence, longer sentences) must change nothing
        wider = np.zeros((5, docs.shape[1] + 1, docs.shape[2] + 2), np.int64)
        wider[:, :docs.shape[1], :docs.shape[2]] = docs
        np.testing.assert_allclose(model(wider).numpy(), logits.numpy(), atol=1e-5)
    assert logits.shape == (5, 4) and word_w.shape == docs.shape and sent_w.shape == docs.shape[:2]
    real_words, real_sents = docs != PAD, (docs != PAD).any(-1)
    assert np.all(word_w.numpy()[~real_words] == 0) and np.all(sent_w.numpy()[~real_sents] == 0)
    np.testing.assert_allclose(word_w.numpy().sum(-1)[real_sents], 1.0, rtol=1e-5)
    np.testing.assert_allclose(sent_w.numpy().sum(-1), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="sentences"):
        model(docs[0])


def test_demo_classifies_by_the_key_sentence_and_attends_to_it():
    result = train_han_demo(n_docs=400, epochs=4, seed=0, lr=0.02, verbose=False)
    assert result["accuracy"] > result["majority_baseline"] + 0.4, result
    assert result["accuracy"] > result["keyword_count_baseline"] + 0.2, result
    assert result["key_sentence_hit_rate"] > 0.7, result
    assert result["losses"][-1] < 0.5 * result["losses"][0]
