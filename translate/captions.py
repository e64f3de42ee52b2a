"""A parallel corpus of the shape of Multi30k: image captions, English -> a German-like language.

Multi30k (Elliott et al., 2016) pairs 29,000 training, 1,014 validation and 1,000 test captions
of photographs ("a man in a blue shirt is riding a bike down the street .") with German
translations; lower-cased and tokenized, its vocabularies hold roughly 6k English and 8k German
word types and a caption is about 12-13 tokens long. Nothing can be downloaded here, so this
module writes text of that shape, as a stand-in to build and time a recipe on:

* captions follow a small grammar (subject noun phrase, an optional "in a red shirt", an
  optional "is/are V-ing" with an object and place phrases, a final "."), with content words
  drawn from a Zipf-distributed lexicon: a head of real English words and a long tail of
  made-up ones, so that, as in real text, many words are rare and some test words were never
  seen in training;
* the target is German-like: nouns have a gender and a plural class, articles and adjective
  endings agree in gender, number and case (prepositions take the dative or accusative), the
  verb is conjugated and some verbs are separable, their particle moving to the end;
* every lemma has a made-up target stem (fixed seed: the language never changes), and some
  lemmas have two translations chosen at random per sentence, so that, like human references,
  the target is not a pure function of the source and BLEU stays well below 100.

`generate_captions(seed=...)` is deterministic for a seed; `multi30k_shape()` gives the splits.
"""
from __future__ import annotations

import bisect
import random
from dataclasses import dataclass

from .corpus import Corpus

# the head of each lexicon: common caption words, most frequent first
_NOUNS = ("man woman person boy girl child dog people group street water player shirt "
          "crowd building men women children ball field front hat bike team beach camera "
          "table snow jacket dress background area road air car sidewalk city grass park "
          "wall stage hair game guitar area side picture something food couple top horse "
          "rock mountain bench sign store restaurant window worker crowd race river lake "
          "hand umbrella boat costume uniform helmet glasses chair room kitchen").split()
_VERBS = ("sit stand walk play ride hold look wear run smile talk work jump watch climb "
          "perform dance sing carry throw wait cook read swim pose cross paint push").split()
_ADJS = ("young black white blue red little green large small older yellow orange brown "
         "pink old purple dark big colorful long busy wooden tall gray outdoor happy").split()
_COLORS = ("red blue black white green yellow orange brown pink purple gray").split()
_NUMBERS = ("two three four five several many").split()
# preposition -> (target word, the case it governs)
_PREPS = {"in": ("in", "dat"), "on": ("auf", "dat"), "at": ("an", "dat"),
          "near": ("bei", "dat"), "behind": ("hinter", "dat"), "under": ("unter", "dat"),
          "next to": ("neben", "dat"), "in front of": ("vor", "dat"),
          "with": ("mit", "dat"), "through": ("durch", "acc"), "into": ("in", "acc"),
          "down": ("hinunter", "acc"), "across": ("über", "acc"), "along": ("entlang", "acc")}
_ARTICLES = {  # (definite, case, gender or "pl") -> article; indefinite has no plural
    (True, "nom"): dict(m="der", f="die", n="das", pl="die"),
    (True, "acc"): dict(m="den", f="die", n="das", pl="die"),
    (True, "dat"): dict(m="dem", f="der", n="dem", pl="den"),
    (False, "nom"): dict(m="ein", f="eine", n="ein"),
    (False, "acc"): dict(m="einen", f="eine", n="ein"),
    (False, "dat"): dict(m="einem", f="einer", n="einem"),
}
_PLURAL_ENDINGS = ("en", "e", "er", "s", "")
_PARTICLES = ("auf", "an", "ab", "aus", "ein", "mit", "vor", "zu")


def _pseudo_words(rng: random.Random, n: int, syllables, used: set[str], lo=2, hi=3):
    """`n` new made-up words of lo..hi syllables, none in `used` (which grows)."""
    words = []
    while len(words) < n:
        w = "".join(rng.choice(syllables) for _ in range(rng.randint(lo, hi)))
        if w not in used:
            used.add(w)
            words.append(w)
    return words


_EN_SYLLABLES = ("ba be bi bo bu ca co cu da de di do fa fe fi fo ga go gu ha he hi ho "
                 "la le li lo lu ma me mi mo mu na ne ni no pa pe pi po ra re ri ro ru "
                 "sa se si so ta te ti to tu va ve vi wa we wi ya yo za zo ston ler ton "
                 "ber der ker mar per ter ven lin rin kin win dle ble ple gle tle").split()
_DE_SYLLABLES = ("ba be bi bo bu da de di do fa fe fi ga ge gi go ha he hi ka ke ki ko "
                 "la le li lo ma me mi mo na ne ni no pa pe ra re ri ro sa se si so ta te "
                 "ti to wa we wi za ze zu schu schi stra stei bau hau kra krei pfa pfe "
                 "lich ung keit stein berg wald burg feld haus mann").split()


@dataclass(frozen=True)
class Lexicon:
    """Lemmas with their English forms and target stems (one or two translations each)."""
    nouns: list          # (singular, plural, gender, [target sg stems], plural ending)
    verbs: list          # (base, 3sg, ing, [target stems], particle or None)
    adjs: list           # (english, [target stems])


def build_lexicon(n_nouns=3000, n_verbs=600, n_adjs=450, synonym_p=0.1) -> Lexicon:
    """The language: fixed, whatever the corpus seed (the seed below never changes)."""
    rng = random.Random(16_2026)
    used_en = set(_NOUNS) | set(_VERBS) | set(_ADJS) | set(_COLORS) | set(_NUMBERS)
    used_de: set[str] = set()

    def targets():
        k = 2 if rng.random() < synonym_p else 1
        return _pseudo_words(rng, k, _DE_SYLLABLES, used_de)

    noun_names = list(dict.fromkeys(_NOUNS)) + _pseudo_words(
        rng, n_nouns - len(set(_NOUNS)), _EN_SYLLABLES, used_en)
    irregular = {"man": "men", "woman": "women", "child": "children", "person": "people",
                 "people": "people", "men": "men", "women": "women", "children": "children"}
    nouns = []
    for noun in noun_names:
        plural = irregular.get(noun) or (noun + "es" if noun.endswith(("s", "sh", "ch", "x"))
                                         else noun + "s")
        nouns.append((noun, plural, rng.choice("mfn"), targets(), rng.choice(_PLURAL_ENDINGS)))
    verb_names = _VERBS + _pseudo_words(rng, n_verbs - len(_VERBS), _EN_SYLLABLES, used_en)
    verbs = []
    for verb in verb_names:
        stem = verb[:-1] if verb.endswith("e") and len(verb) > 2 else verb
        if verb in ("sit", "run", "swim"):
            stem += verb[-1]                          # sitting, running, swimming
        third = verb + "es" if verb.endswith(("s", "sh", "ch", "x")) else verb + "s"
        particle = rng.choice(_PARTICLES) if rng.random() < 0.3 else None
        verbs.append((verb, third, stem + "ing", targets(), particle))
    adj_names = list(dict.fromkeys(_ADJS + _COLORS)) + _pseudo_words(
        rng, n_adjs - len(set(_ADJS + _COLORS)), _EN_SYLLABLES, used_en)
    adjs = [(adj, targets()) for adj in adj_names]
    return Lexicon(nouns, verbs, adjs)


class _Zipf:
    """Draws indices 0..n-1 with probability proportional to 1 / (rank + shift) ** power."""

    def __init__(self, n, power=1.05, shift=2.0):
        total, self.cum = 0.0, []
        for rank in range(n):
            total += 1.0 / (rank + shift) ** power
            self.cum.append(total)

    def __call__(self, rng: random.Random) -> int:
        return min(bisect.bisect(self.cum, rng.random() * self.cum[-1]), len(self.cum) - 1)


@dataclass(frozen=True)
class _NP:
    noun: int
    plural: bool
    definite: bool
    number: str | None
    adjs: tuple          # adjective indices, at most two
    pp: tuple | None     # (preposition, _NP): "in a red shirt"


class CaptionGenerator:
    """Samples caption structures and renders them in both languages."""

    def __init__(self, lexicon: Lexicon | None = None):
        self.lex = lexicon or build_lexicon()
        self.pick_noun = _Zipf(len(self.lex.nouns))
        self.pick_verb = _Zipf(len(self.lex.verbs))
        self.pick_adj = _Zipf(len(self.lex.adjs))

    # --- sampling -------------------------------------------------------------------------
    def _np(self, rng, depth=0, plural_p=0.25) -> _NP:
        plural = rng.random() < plural_p
        number = rng.choice(_NUMBERS) if plural and rng.random() < 0.5 else None
        definite = rng.random() < (0.3 if not plural else 0.4)
        n_adj = rng.choices((0, 1, 2), (0.4, 0.45, 0.15))[0]
        adjs = tuple(self.pick_adj(rng) for _ in range(n_adj))
        pp = None
        if depth == 0 and rng.random() < 0.4:
            pp = (rng.choice(("in", "with", "on")), self._np(rng, depth + 1, plural_p=0.1))
        return _NP(self.pick_noun(rng), plural, definite, number, adjs, pp)

    def sample(self, rng: random.Random):
        """One caption: (subject, verb index or None, object or None, [(prep, NP)])."""
        subj = self._np(rng)
        verb = self.pick_verb(rng) if rng.random() < 0.85 else None
        obj = self._np(rng, depth=1) if verb is not None and rng.random() < 0.5 else None
        n_pps = rng.choices((0, 1, 2), (0.25, 0.5, 0.25))[0]
        pps = [(rng.choice(list(_PREPS)), self._np(rng, depth=1, plural_p=0.1))
               for _ in range(n_pps)]
        return subj, verb, obj, pps

    # --- English --------------------------------------------------------------------------
    def _english_np(self, np: _NP) -> list[str]:
        sg, pl = self.lex.nouns[np.noun][:2]
        words = [self.lex.adjs[a][0] for a in np.adjs] + [pl if np.plural else sg]
        if np.number:
            words.insert(0, np.number)
        if np.definite:
            words.insert(0, "the")
        elif not np.plural:
            words.insert(0, "an" if words[0][0] in "aeiou" else "a")
        if np.pp:
            words += np.pp[0].split() + self._english_np(np.pp[1])
        return words

    def english(self, caption) -> str:
        subj, verb, obj, pps = caption
        words = self._english_np(subj)
        if verb is not None:
            words += ["are" if subj.plural else "is", self.lex.verbs[verb][2]]
        if obj:
            words += self._english_np(obj)
        for prep, np in pps:
            words += prep.split() + self._english_np(np)
        return " ".join(words + ["."])

    # --- the target language ----------------------------------------------------------------
    def _target_np(self, np: _NP, case: str, rng) -> list[str]:
        _, _, gender, stems, ending = self.lex.nouns[np.noun]
        g = "pl" if np.plural else gender
        words = []
        if np.definite:
            words.append(_ARTICLES[(True, case)][g])
            adj_end = "e" if g != "pl" and (case == "nom" or (case == "acc" and g != "m")) \
                else "en"
        elif not np.plural:
            words.append(_ARTICLES[(False, case)][g])
            adj_end = {"nom": dict(m="er", f="e", n="es"), "acc": dict(m="en", f="e", n="es"),
                       "dat": dict(m="en", f="en", n="en")}[case][g]
        else:
            adj_end = "en" if case == "dat" else "e"
        if np.number:
            words.append("zwei drei vier fünf mehrere viele".split()[_NUMBERS.index(np.number)])
        words += [rng.choice(self.lex.adjs[a][1]) + adj_end for a in np.adjs]
        noun = rng.choice(stems)
        words.append(noun + ending + ("n" if case == "dat" and ending in ("e", "er") else "")
                     if np.plural else noun)
        if np.pp:
            target_prep, governed = _PREPS[np.pp[0]]
            words += [target_prep] + self._target_np(np.pp[1], governed, rng)
        return words

    def target(self, caption, rng: random.Random) -> str:
        subj, verb, obj, pps = caption
        words = self._target_np(subj, "nom", rng)
        particle = None
        if verb is not None:
            _, _, _, stems, particle = self.lex.verbs[verb]
            words.append(rng.choice(stems) + ("en" if subj.plural else "t"))
        if obj:
            words += self._target_np(obj, "acc", rng)
        for prep, np in pps:
            target_prep, governed = _PREPS[prep]
            if prep in ("down", "along"):       # postpositions: "die straße hinunter"
                words += self._target_np(np, governed, rng) + [target_prep]
            else:
                words += [target_prep] + self._target_np(np, governed, rng)
        if particle:                            # a separable verb's particle closes the clause
            words.append(particle)
        return " ".join(words + ["."])


def generate_captions(n_train=29000, n_valid=1014, n_test=1000, seed=0) -> Corpus:
    """Unique English captions with their translations, split disjointly (same seed, same
    corpus); the synonym choices come from the same seeded generator."""
    if min(n_train, n_valid, n_test) < 0:
        raise ValueError(f"generate_captions: split sizes must be >= 0, got {n_train}, "
                         f"{n_valid}, {n_test}")
    gen, rng = CaptionGenerator(), random.Random(seed)
    wanted, pairs = n_train + n_valid + n_test, {}
    for _ in range(20 * wanted + 1000):
        if len(pairs) == wanted:
            break
        caption = gen.sample(rng)
        src = gen.english(caption)
        if 4 <= len(src.split()) <= 40 and src not in pairs:
            pairs[src] = gen.target(caption, rng)
    if len(pairs) < wanted:
        raise ValueError(f"generate_captions: found only {len(pairs)} unique captions, "
                         f"{wanted} requested")
    items = list(pairs.items())
    return Corpus(items[:n_train], items[n_train:n_train + n_valid], items[n_train + n_valid:])


PRESETS = {"multi30k-shape": dict(n_train=29000, n_valid=1014, n_test=1000)}


def corpus_stats(pairs) -> dict:
    """Word types of each side and mean sentence length in tokens: the shape of a corpus."""
    src = [s.split() for s, _ in pairs]
    tgt = [t.split() for _, t in pairs]
    return {"pairs": len(pairs),
            "src_types": len({w for s in src for w in s}),
            "tgt_types": len({w for t in tgt for w in t}),
            "src_mean_len": sum(map(len, src)) / max(len(src), 1),
            "tgt_mean_len": sum(map(len, tgt)) / max(len(tgt), 1)}
