"""Word and BPE tokenizers: round trips, <unk>, determinism, JSON files."""
import json
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad.translate.corpus import generate_corpus
from minigrad.translate.tokenizers import (BPETokenizer, TokenizerFileError, WordTokenizer,
                                        load_tokenizer)


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(n_train=2000, n_valid=200, n_test=200, seed=3)


@pytest.fixture(scope="module")
def sources(corpus):
    return [s for s, _ in corpus.train]


@pytest.fixture(scope="module")
def targets(corpus):
    return [t for _, t in corpus.train]


@pytest.fixture(scope="module")
def bpe(targets):
    return BPETokenizer.fit(targets, num_merges=300)


# ------------------------------------------------------------------- word --
def test_word_specials_and_ordering():
    tok = WordTokenizer.fit(["b a c a", "c a b", "d"])
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    assert tok.tokens == ["<pad>", "<bos>", "<eos>", "<unk>", "a", "b", "c", "d"]
    assert len(tok) == 8
    assert tok.token_to_id("a") == 4 and tok.id_to_token(4) == "a"
    assert tok.token_to_id("zebra") == tok.unk_id


def test_word_min_freq_and_max_size():
    texts = ["a a a b b c"]
    assert WordTokenizer.fit(texts, min_freq=2).tokens[4:] == ["a", "b"]
    assert WordTokenizer.fit(texts, max_size=5).tokens[4:] == ["a"]
    with pytest.raises(ValueError, match="max_size"):
        WordTokenizer.fit(texts, max_size=3)


def test_word_round_trip_on_training_text(targets, sources):
    for texts in (targets, sources):
        tok = WordTokenizer.fit(texts)
        for text in texts:
            ids = tok.encode(text)
            assert tok.unk_id not in ids
            assert tok.decode(ids) == text


def test_word_bos_eos_and_skip_special():
    tok = WordTokenizer.fit(["hello world"])
    ids = tok.encode("hello world", add_bos=True, add_eos=True)
    assert ids[0] == tok.bos_id and ids[-1] == tok.eos_id
    assert tok.decode(ids) == "hello world"
    assert tok.decode(ids, skip_special=False) == "<bos> hello world <eos>"
    padded = np.array(ids + [tok.pad_id] * 3)       # numpy ids work too
    assert tok.decode(padded) == "hello world"
    assert tok.decode_batch([ids, padded]) == ["hello world"] * 2


def test_word_unknown_words():
    tok = WordTokenizer.fit(["hello world"])
    ids = tok.encode("hello brave new world")
    assert ids == [4, 3, 3, 5] or ids == [tok.token_to_id("hello"), 3, 3,
                                          tok.token_to_id("world")]
    assert tok.decode(ids) == "hello <unk> <unk> world"


def test_word_errors():
    tok = WordTokenizer.fit(["a"])
    with pytest.raises(ValueError, match="id 99"):
        tok.decode([99])
    with pytest.raises(TypeError, match="single str"):
        WordTokenizer.fit("a b c")
    with pytest.raises(TypeError):
        tok.encode(["a"])


def test_word_fit_is_deterministic(targets):
    shuffled = targets[:]
    random.Random(0).shuffle(shuffled)
    assert WordTokenizer.fit(targets) == WordTokenizer.fit(shuffled)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_word_round_trip_property(targets, data):
    tok = WordTokenizer.fit(targets)
    words = data.draw(st.lists(st.sampled_from(tok.tokens[4:]), max_size=20))
    text = " ".join(words)
    assert tok.decode(tok.encode(text)) == text


# -------------------------------------------------------------------- BPE --
def test_bpe_round_trip_on_training_text(bpe, targets, sources):
    for text in targets:
        ids = bpe.encode(text)
        assert bpe.unk_id not in ids
        assert bpe.decode(ids) == text
    src_tok = BPETokenizer.fit(sources, num_merges=200)
    assert all(src_tok.decode(src_tok.encode(s)) == s for s in sources)


def test_bpe_compresses(bpe, targets):
    n_tokens = sum(len(bpe.encode(t)) for t in targets)
    n_chars = sum(len(t.replace(" ", "")) for t in targets)
    assert n_tokens < n_chars / 3


def test_bpe_whitespace_is_normalised(bpe, targets):
    text = targets[0]
    assert bpe.decode(bpe.encode("  " + text.replace(" ", " \t  ") + " \n")) == text


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_bpe_round_trip_on_unseen_words(bpe, targets, data):
    alphabet = sorted({c for t in targets for c in t if c != " "})
    word = st.text(alphabet=alphabet, min_size=1, max_size=12)
    text = " ".join(data.draw(st.lists(word, max_size=8)))
    ids = bpe.encode(text)
    assert bpe.unk_id not in ids
    assert bpe.decode(ids) == text


def test_bpe_unknown_characters(bpe):
    ids = bpe.encode("kaQ Zi")           # "Q" and "Z" never occur in training
    assert ids.count(bpe.unk_id) == 2
    assert bpe.decode(ids) == "ka<unk> <unk>i"
    assert bpe.decode(bpe.encode("\u2581")) == "<unk>"    # the marker itself


def test_bpe_zero_merges_is_character_level(targets):
    tok = BPETokenizer.fit(targets, num_merges=0)
    assert tok.merges == []
    assert len(tok.encode("kal")) == 4                  # marker + 3 characters


def test_bpe_fit_is_deterministic(targets, bpe):
    shuffled = targets[:]
    random.Random(1).shuffle(shuffled)
    again = BPETokenizer.fit(shuffled, num_merges=300)
    assert again == bpe
    assert again.merges == bpe.merges


def test_bpe_merges_follow_frequency():
    tok = BPETokenizer.fit(["ab ab ab cd cd"], num_merges=10, min_freq=2)
    # "▁a" and "ab" both occur 3 times: ties go to the alphabetically first
    assert tok.merges[:2] == [("a", "b"), ("\u2581", "ab")]
    assert "\u2581ab" in tok.tokens and "\u2581cd" in tok.tokens
    assert len(tok.encode("ab cd")) == 2


# ---------------------------------------------------------------- files --
@pytest.mark.parametrize("kind", ["word", "bpe"])
def test_save_load_round_trip(tmp_path, targets, bpe, kind):
    tok = WordTokenizer.fit(targets) if kind == "word" else bpe
    path = tmp_path / "tok.json"
    tok.save(path)
    assert os.listdir(tmp_path) == ["tok.json"]         # no temp file left
    assert json.loads(path.read_text(encoding="utf-8"))["type"] == kind
    for loaded in (type(tok).load(path), load_tokenizer(path)):
        assert type(loaded) is type(tok) and loaded == tok
        assert [loaded.encode(t) for t in targets[:50]] == [tok.encode(t) for t in targets[:50]]


def test_load_errors(tmp_path, bpe):
    with pytest.raises(FileNotFoundError, match="missing.json"):
        load_tokenizer(tmp_path / "missing.json")
    cases = {
        "garbage.json": b"\x00\xff not json",
        "truncated.json": b'{"type": "word", "tokens": ["<pad>"',
        "list.json": b"[1, 2, 3]",
        "foreign.json": b'{"model": "something else"}',
        "version.json": b'{"type": "word", "format_version": 99, "tokens": []}',
        "specials.json": b'{"type": "word", "format_version": 1, "tokens": ["a", "b"]}',
        "merges.json": (b'{"type": "bpe", "format_version": 1, "marker": "\xe2\x96\x81",'
                        b' "tokens": ["<pad>", "<bos>", "<eos>", "<unk>"],'
                        b' "merges": [["x", "y"]]}'),
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(TokenizerFileError, match=name):
            load_tokenizer(tmp_path / name)
    bpe.save(tmp_path / "bpe.json")
    with pytest.raises(TokenizerFileError, match="'bpe' tokenizer"):
        WordTokenizer.load(tmp_path / "bpe.json")


def test_json_round_trip_and_damaged_json(bpe, targets):
    """Checkpoints keep tokenizers as JSON text; damaged text names its source."""
    from minigrad.translate.tokenizers import TokenizerFileError, tokenizer_from_json
    word = WordTokenizer.fit(targets)
    for tok in (word, bpe):
        assert tokenizer_from_json(tok.to_json(), "here") == tok
    with pytest.raises(TokenizerFileError, match="here: not a tokenizer file .*nested too deeply"):
        tokenizer_from_json("[" * 5000 + "]" * 5000, "here")
    with pytest.raises(TokenizerFileError, match="here: not a tokenizer file"):
        tokenizer_from_json("[1, 2]", "here")

