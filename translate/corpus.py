"""A synthetic English -> "Tamilish" parallel corpus for the toy translator.

The idea
--------
Real translation data is large and messy; a toy Transformer trained for a
few minutes on a CPU needs something small that is still *interesting*.  We
invent a target language whose grammar differs from English the way Tamil
does, so the model must learn reordering and morphology, not word swapping:

* clause order is subject - time - places - object - verb (SOV): the English
  verb, second in the sentence, moves to the very end;
* a noun phrase is mirrored: "the two old cats" -> "cat-PL old two"
  (no articles; adjectives, numbers and "this"/"my" follow the noun);
* prepositions become case suffixes ("in the house" -> "house-LOC") or a
  genitive plus a postposition ("on the table" -> "table-GEN mel"), and
  several prepositional phrases come out in reverse order;
* "with" is comitative for people and animals but instrumental for things;
* verbs carry aspect, tense and subject-number suffixes
  ("were singing" -> "sing-PROG-PAST-PL").

Every English lemma gets a made-up stem built from syllables with a *fixed*
seed, so the language never changes; the corpus seed only picks sentences.
`translate_reference` parses English and translates by rule: the target is
a function of the source, so a perfect model would score BLEU 100.

Suffixes are attached by default, one target word per noun or verb: the
lexicon is small (60 nouns, 30 verbs) so each inflected form is seen often,
and the default corpus has ~330 source and ~1,000 target word types.  With
``split_suffixes=True`` each suffix is its own token ("veedu -kal -il"):
~160 target types but longer sentences.  Example (`describe_example()`)::

    the old farmer carried two heavy boxes to the market
    pipaanam chaapa vitheyaalukku suumeenkalai tiimoo muukaa nosootonthaan
    farmer   old    market-DAT    box-PL-ACC   heavy  two    carry-PAST-SG
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from .grammar import Clause, NP, english_tokens, parse, render, target_words
from .lexicon import (ADJ_TAGS, FUT, MANNER, NOUN_TAGS, NUMBERS, PAST, POSSESSIVE, PREPOSITIONS,
                      PRES, PRONOUNS, STEMS, TIME, VERB_INFO)

__all__ = ["Corpus", "NOUN_TAGS", "STEMS", "alignment", "describe_example", "generate_corpus",
           "translate_reference"]


def translate_reference(src: str, split_suffixes: bool = False) -> str:
    """The rule-based translation of an English sentence (ValueError if outside the grammar)."""
    cl, pos = parse(src)
    return " ".join(render(target_words(cl), pos, split_suffixes)[0])


def alignment(src: str, split_suffixes: bool = False) -> list[int | None]:
    """For each token of `translate_reference(src)`, the index of its source word."""
    cl, pos = parse(src)
    return render(target_words(cl), pos, split_suffixes)[1]


def describe_example(src: str = "the old farmer carried two heavy boxes to the market",
                     split_suffixes: bool = False) -> str:
    """A printable sentence pair with its word alignment, showing the reordering."""
    words, tgt = src.split(), translate_reference(src, split_suffixes).split()
    lines = [f"source: {src}", f"target: {' '.join(tgt)}", "alignment (target <- source):"]
    for tok, j in zip(tgt, alignment(src, split_suffixes)):
        lines.append(f"  {tok:<20} <- " + (f"{words[j]} (word {j})" if j is not None else "-"))
    return "\n".join(lines)


# ---------------------------------------------------------------- sampling --
def _sample_np(rng: random.Random, tags: set[str], subject: bool = False,
               pronoun_p: float = 0.0) -> NP:
    """A random noun phrase whose noun carries one of `tags`, or a pronoun."""
    if rng.random() < pronoun_p:
        head = rng.choice([p for p in PRONOUNS if p != "it" or not subject])
        return NP(head, PRONOUNS[head][2], pronoun=True)
    head = rng.choice([n for n in NOUN_TAGS if NOUN_TAGS[n] & tags])
    animate = bool(NOUN_TAGS[head] & {"person", "animal"})
    plural = rng.random() < 0.35
    num = rng.choice(NUMBERS) if plural and rng.random() < 0.4 else None
    owners = [p for p in POSSESSIVE if p != "its" or "person" not in NOUN_TAGS[head]]
    det = rng.choice((None, None, "the", "the", "these", "those", *owners) if plural
                     else ("the", "the", "the", "a", "a", "this", "that", *owners))
    adj = rng.choice([a for a, kind in ADJ_TAGS.items() if kind == "any"
                      or (kind == "animate") == animate]) if rng.random() < 0.35 else None
    return NP(head, plural, det=det, num=num, adj=adj)


# (tense, progressive) weighted by how often each is sampled
_TENSES = [(PRES, False)] * 5 + [(PAST, False)] * 5 + [(FUT, False)] * 4 \
    + [(PRES, True)] * 3 + [(PAST, True)] * 3 + [(FUT, True)] * 2


def _sample_clause(rng: random.Random) -> Clause:
    """A random sentence structure, (mostly) semantically sensible."""
    subj = _sample_np(rng, {"person", "animal"}, subject=True, pronoun_p=0.3)
    subj_tags = {"person"} if subj.pronoun else NOUN_TAGS[subj.head]
    verb = rng.choice([v for v, info in VERB_INFO.items() if info[2] & subj_tags])
    tense, prog = rng.choice(_TENSES)
    objects = VERB_INFO[verb][1]
    obj = _sample_np(rng, objects, pronoun_p=0.25 * ("person" in objects)) if objects else None
    manner = rng.choice(MANNER) if rng.random() < 0.15 else None
    pps = []
    for prep in rng.sample(sorted(PREPOSITIONS), rng.choice((0, 1, 1, 2, 2))):
        tags = set(PREPOSITIONS[prep][2].split())
        pps.append((prep, _sample_np(rng, tags, pronoun_p=0.15 * ("person" in tags))))
    times = [t for t, ok in TIME.items() if (tense, prog) in ok]
    time = rng.choice(times) if rng.random() < 0.25 else None
    return Clause(subj, verb, tense, prog, obj, manner, tuple(pps), time)


@dataclass
class Corpus:
    """Train / validation / test lists of (source, target) sentence pairs."""
    train: list[tuple[str, str]]
    valid: list[tuple[str, str]]
    test: list[tuple[str, str]]


def generate_corpus(n_train: int = 20000, n_valid: int = 1000, n_test: int = 1000,
                    seed: int = 0, min_len: int = 3, max_len: int = 16,
                    split_suffixes: bool = False) -> Corpus:
    """Sample unique sentences (same seed, same corpus) and split them disjointly."""
    if min(n_train, n_valid, n_test) < 0:
        raise ValueError("generate_corpus: n_train, n_valid and n_test must be >= 0")
    if not 1 <= min_len <= max_len:
        raise ValueError(f"generate_corpus: need 1 <= min_len <= max_len, "
                         f"got min_len={min_len}, max_len={max_len}")
    rng, wanted = random.Random(seed), n_train + n_valid + n_test
    pairs: dict[str, str] = {}          # source -> target; a dict dedupes sources
    for _ in range(100 * wanted + 1000):
        if len(pairs) == wanted:
            break
        cl = _sample_clause(rng)
        src, pos = english_tokens(cl)
        tgt = render(target_words(cl), pos, split_suffixes)[0]
        if min_len <= len(src) <= max_len and min_len <= len(tgt) <= max_len:
            pairs.setdefault(" ".join(src), " ".join(tgt))
    if len(pairs) < wanted:
        raise ValueError(f"generate_corpus: found only {len(pairs)} unique sentences "
                         f"of {min_len}..{max_len} tokens, {wanted} requested")
    items = list(pairs.items())         # already in random order
    return Corpus(items[:n_train], items[n_train:n_train + n_valid], items[n_train + n_valid:])
