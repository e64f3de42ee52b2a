"""The synthetic corpus: determinism, splits, grammar, reordering, TSV files."""
import os

import pytest

from minigrad.translate.corpus import (Corpus, alignment, describe_example, generate_corpus,
                                       translate_reference)
from minigrad.translate.tsv import TsvError, read_corpus, read_tsv, write_corpus, write_tsv


@pytest.fixture(scope="module")
def small():
    return generate_corpus(n_train=3000, n_valid=300, n_test=300, seed=1)


def all_pairs(corpus):
    return corpus.train + corpus.valid + corpus.test


def test_default_sizes_and_vocabulary():
    corpus = generate_corpus()
    assert isinstance(corpus, Corpus)
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (20000, 1000, 1000)
    src_vocab = {w for s, _ in corpus.train for w in s.split()}
    tgt_vocab = {w for _, t in corpus.train for w in t.split()}
    assert 200 <= len(src_vocab) <= 600
    assert 300 <= len(tgt_vocab) <= 2000
    # every test word was seen in training, so a word-level model can be perfect
    assert {w for _, t in corpus.test for w in t.split()} <= tgt_vocab


def test_same_seed_same_corpus_other_seed_other_corpus():
    a = generate_corpus(n_train=500, n_valid=50, n_test=50, seed=7)
    b = generate_corpus(n_train=500, n_valid=50, n_test=50, seed=7)
    c = generate_corpus(n_train=500, n_valid=50, n_test=50, seed=8)
    assert a == b
    assert a.train != c.train


def test_splits_are_disjoint_and_deduplicated(small):
    sources = [s for s, _ in all_pairs(small)]
    assert len(sources) == len(set(sources)) == 3600
    train = {s for s, _ in small.train}
    assert not train & {s for s, _ in small.valid}
    assert not train & {s for s, _ in small.test}


def test_lengths(small):
    for src, tgt in all_pairs(small):
        assert 3 <= len(src.split()) <= 16 and 3 <= len(tgt.split()) <= 16
    custom = generate_corpus(n_train=200, n_valid=0, n_test=0, min_len=5, max_len=8)
    assert custom.valid == custom.test == []
    for src, tgt in custom.train:
        assert 5 <= len(src.split()) <= 8 and 5 <= len(tgt.split()) <= 8


def test_impossible_requests_fail_clearly():
    with pytest.raises(ValueError, match="min_len"):
        generate_corpus(n_train=10, min_len=9, max_len=4)
    with pytest.raises(ValueError, match="unique sentences"):
        generate_corpus(n_train=5, n_valid=0, n_test=0, min_len=1, max_len=1)


def test_translate_reference_reproduces_every_target(small):
    for src, tgt in all_pairs(small):
        assert translate_reference(src) == tgt


def test_split_suffixes_only_changes_the_tokenization():
    corpus = generate_corpus(n_train=300, n_valid=0, n_test=0, seed=2, split_suffixes=True)
    assert any(t.startswith("-") for _, tgt in corpus.train for t in tgt.split())
    for src, tgt in corpus.train:
        assert translate_reference(src, split_suffixes=True) == tgt
        assert tgt.replace(" -", "") == translate_reference(src)
        assert len(alignment(src, split_suffixes=True)) == len(tgt.split())


def test_verb_moves_to_the_end_and_alignment_is_non_monotonic(small):
    verb_last = non_monotonic = 0
    for src, tgt in small.train:
        links = alignment(src)
        assert len(links) == len(tgt.split())
        assert all(j is None or 0 <= j < len(src.split()) for j in links)
        # the last target word is the verb; in English it is not last
        verb_last += links[-1] != len(src.split()) - 1
        seen = [j for j in links if j is not None]
        non_monotonic += seen != sorted(seen)
    assert verb_last / len(small.train) > 0.8
    assert non_monotonic / len(small.train) > 0.8


def test_worked_example():
    src = "the old farmer carried two heavy boxes to the market"
    # farmer old market-DAT box-PL-ACC heavy two carry-PAST-SG
    assert alignment(src) == [2, 1, 9, 6, 5, 4, 3]
    tgt = translate_reference(src).split()
    assert tgt[3].endswith("kalai")                 # plural + accusative
    assert tgt[2].endswith("ukku")                  # "to" became a dative suffix
    text = describe_example()
    assert src in text and " ".join(tgt) in text


def test_grammar_phenomena():
    t = translate_reference
    # subject number agreement on the verb, also with "you"
    assert t("the boy walks quickly").split()[-1].endswith("kiraan")
    assert t("the boys walk quickly").split()[-1].endswith("kiraarkal")
    assert t("you walk quickly").split()[-1].endswith("kiraarkal")
    # "with": comitative for animates, instrumental for things
    assert t("she opened the box with the key").split()[1].endswith("aal")
    assert t("she opened the box with the boy").split()[1].endswith("odu")
    # "her": object pronoun vs possessive determiner
    assert len(t("i saw her cat")) != len(t("i saw her"))
    # articles vanish; "a" becomes a word after the noun
    assert len(t("the cat ate the cake").split()) == 3
    assert len(t("a cat ate a cake").split()) == 5


@pytest.mark.parametrize("bad", [
    "he walk quickly",                  # agreement
    "a apple fell",                     # unknown verb
    "i saw a apple",                    # a/an
    "the cats ran a dogs",              # singular determiner on a plural
    "cat sleeps in the house",          # singular noun without determiner
    "the cat sleeps the dog",           # object on an intransitive verb
    "the cat will sleeping",
    "xyzzy", "",
])
def test_outside_the_grammar(bad):
    with pytest.raises(ValueError, match="outside the grammar"):
        translate_reference(bad)


# ------------------------------------------------------------------- TSV --
def test_tsv_round_trip(tmp_path, small):
    path = tmp_path / "pairs.tsv"
    pairs = small.train[:100] + [("naïve café", "ünïcödé ✓")]
    write_tsv(pairs, path)
    assert os.listdir(tmp_path) == ["pairs.tsv"]        # no temp file left
    assert read_tsv(path) == (pairs, 0)
    assert path.read_bytes().count(b"\n") == len(pairs)


def test_write_corpus_round_trip(tmp_path, small):
    paths = write_corpus(small, tmp_path / "data")
    assert sorted(paths) == ["test", "train", "valid"]
    assert all(os.path.basename(paths[s]) == f"{s}.tsv" for s in paths)
    assert read_corpus(tmp_path / "data") == small


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "pairs.tsv"
    write_tsv([("a b c", "x y z")], path)
    for bad in ([("ok", "ok"), ("tab\there", "x")], [("", "x")], [("a",)], [("a\nb", "c")],
                [("a\ufeffb", "c")], [("a\x00b", "c")]):
        with pytest.raises(ValueError, match="pair"):
            write_tsv(bad, path)
    assert os.listdir(tmp_path) == ["pairs.tsv"]
    assert read_tsv(path) == ([("a b c", "x y z")], 0)


BAD_LINES = {
    b"no tab here": "no tab",
    b"a\tb\tc": "2 tabs",
    b"src\t": "empty target",
    b" \ttgt": "empty source",
    b"bad \xff\xfe bytes\tx": "invalid UTF-8",
    b"": "empty line",
    b"a b\rc d\tx": "a carriage return \\(CR\\) at column 4",
    b"a\x00b\tx": "control character U\\+0000 at column 2",
    b"a\x1bb\tx": "control character U\\+001B",
}


@pytest.mark.parametrize("line, problem", BAD_LINES.items())
def test_bad_line_names_file_line_and_problem(tmp_path, line, problem):
    path = tmp_path / "broken.tsv"
    path.write_bytes(b"a\tb\r\n" + line + b"\nc\td\n\n\n")
    with pytest.raises(TsvError, match=rf"broken\.tsv, line 2: {problem}") as info:
        read_tsv(path)
    assert isinstance(info.value, ValueError) and info.value.line_no == 2
    assert read_tsv(path, skip_bad_lines=True) == ([("a", "b"), ("c", "d")], 1)


def test_skipping_counts_every_bad_line(tmp_path):
    path = tmp_path / "broken.tsv"
    path.write_bytes(b"\n".join([b"a\tb", *BAD_LINES, b"c\td"]))
    pairs, skipped = read_tsv(path, skip_bad_lines=True)
    assert pairs == [("a", "b"), ("c", "d")] and skipped == len(BAD_LINES)
