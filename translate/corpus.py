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

# ---------------------------------------------------------------- lexicon --
# Tags say which slots a noun may fill when *sampling*; the parser ignores
# them, so odd but grammatical sentences still translate.
_NOUNS = {
    "person": "man/men woman/women child/children boy girl teacher student "
              "doctor farmer king queen friend brother sister mother father",
    "animal": "cat dog horse bird cow mouse/mice lion monkey elephant goat",
    "food": "apple mango/mangoes banana cake egg",
    "text": "book letter story poem",
    "thing": "key pen knife/knives ball cup box bag chair table car boat "
             "basket tree",
    "place": "house school garden river city village market forest kitchen "
             "hill room bridge",
}
_EXTRA_TAGS = {
    "cont": "box bag car boat basket cup house room kitchen school",
    "surf": "table chair tree bridge hill car boat box",
    "tool": "key pen knife ball",
    "art": "house school bridge boat table chair box car basket cup",
}
# verb forms (base past -ing), ... | object tags ("-": none) | subject tags
_VERBS = """
eat ate eating                                       | food                     | person animal
cook cooked cooking                                  | food                     | person
see saw seeing, find found finding                   | person animal food thing | person animal
draw drew drawing                                    | person animal food thing | person
like liked liking                                    | person animal food text  | person animal
carry carried carrying                               | animal food thing        | person
buy bought buying, sell sold selling                 | animal food text thing   | person
write wrote writing                                  | text                     | person
open opened opening                                  | cont text                | person
wash washed washing                                  | animal art               | person
build built building, paint painted painting         | art                      | person
call called calling                                  | person animal            | person
visit visited visiting                               | person place             | person
help helped helping, love loved loving               | person animal            | person animal
follow followed following                            | person animal            | person animal
catch caught catching                                | animal tool              | person animal
walk walked walking, run ran running, sleep slept sleeping | -                  | person animal
sing sang singing, swim swam swimming, play played playing | -                  | person animal
sit sat sitting, wait waited waiting                 | -                        | person animal
dance danced dancing, work worked working            | -                        | person
laugh laughed laughing, cry cried crying             | -                        | person
"""
_ADJECTIVES = {
    "any": "big small old new good beautiful",
    "animate": "young happy sad clever hungry angry kind brave tall",
    "thing": "red green blue white black heavy",
}
_NUMBERS = "two three four five six seven eight nine ten".split()
# subject object possessive; "you" is treated as plural (a polite plural)
_PRONOUNS = {"i": ("me", "my", False), "you": ("you", "your", True),
             "he": ("him", "his", False), "she": ("her", "her", False),
             "it": ("it", "its", False), "we": ("us", "our", True),
             "they": ("them", "their", True)}
# preposition -> (case, postposition or None, noun tags it takes)
_PREPOSITIONS = {
    "in": ("LOC", None, "place cont"), "at": ("LOC", None, "place"),
    "on": ("GEN", "mel", "surf"), "under": ("GEN", "kizh", "surf"),
    "near": ("GEN", "arugil", "place surf person animal"),
    "to": ("DAT", None, "place person animal"),
    "from": ("ABL", None, "place person"),
    "with": ("COM", None, "person animal tool"),   # INS for things
    "for": ("BEN", None, "person animal"),
}
_MANNER = "quickly slowly happily quietly carefully loudly".split()
_PAST, _PRES, _FUT = "past", "present", "future"
# time adverb -> the (tense, progressive) combinations it goes with
_TIME = {"yesterday": {(_PAST, False), (_PAST, True)},
         "today": {(t, p) for t in (_PAST, _PRES, _FUT) for p in (False, True)},
         "tomorrow": {(_FUT, False), (_FUT, True)},
         "now": {(_PRES, True)}, "every day": {(_PRES, False)}}

# Target morphology: hand-picked, Tamil-flavoured suffixes and function words.
_CASE = {"NOM": "", "ACC": "ai", "DAT": "ukku", "LOC": "il", "ABL": "ilirunthu",
         "COM": "odu", "INS": "aal", "GEN": "in", "BEN": "ukkaaka"}
_PLURAL, _PROG = "kal", "kondu"
_TENSE = {_PRES: "kir", _PAST: "nth", _FUT: "v"}
_AGREE = {False: "aan", True: "aarkal"}           # singular / plural subject
_FUNCTION = {"a": "oru", "this": "inta", "these": "inta", "that": "anta",
             "those": "anta"}


def _plural(word: str) -> str:
    """English -s ending of plurals and verbs: box -> boxes, cry -> cries."""
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


NOUN_TAGS: dict[str, set[str]] = {}
_NOUN_FORMS: dict[str, tuple[str, bool]] = {}      # "mice" -> ("mouse", True)
for _cat, _words in _NOUNS.items():
    for _entry in _words.split():
        _sg, _, _pl = _entry.partition("/")
        NOUN_TAGS[_sg] = {_cat}
        _NOUN_FORMS[_sg] = (_sg, False)
        _NOUN_FORMS[_pl or _plural(_sg)] = (_sg, True)
for _tag, _words in _EXTRA_TAGS.items():
    for _noun in _words.split():
        NOUN_TAGS[_noun].add(_tag)
_NOUN_PLURALS = {lemma: form for form, (lemma, pl) in _NOUN_FORMS.items() if pl}

_VERB_INFO: dict[str, tuple[dict[str, str], set[str], set[str]]] = {}
_VERB_FORMS: dict[str, tuple[str, str]] = {}       # "sang" -> ("sing", "past")
for _line in _VERBS.strip().splitlines():
    _verbs, _objs, _subjs = _line.split("|")
    for _entry in _verbs.split(","):
        _base, _past, _ing = _entry.split()
        _table = {"base": _base, "s": _plural(_base), "past": _past, "ing": _ing}
        _VERB_INFO[_base] = (_table, set(_objs.split()) - {"-"}, set(_subjs.split()))
        for _kind, _form in _table.items():
            assert _form not in _VERB_FORMS, f"ambiguous verb form {_form!r}"
            _VERB_FORMS[_form] = (_base, _kind)

_ADJ_TAGS = {adj: kind for kind, words in _ADJECTIVES.items() for adj in words.split()}
_SUBJ_PRON = {p: p for p in _PRONOUNS}
_OBJ_PRON = {obj: p for p, (obj, _, _) in _PRONOUNS.items()}
_POSSESSIVE = {poss: p for p, (_, poss, _) in _PRONOUNS.items()}
_DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", *_POSSESSIVE}


# ------------------------------------------------------- the target words --
def _noun_morphs(stem: str, plural: bool, case: str) -> list[str]:
    """Morphemes of a target noun: stem, optional plural, optional case."""
    return [stem] + [_PLURAL] * plural + ([_CASE[case]] if _CASE[case] else [])


def _verb_morphs(stem: str, tense: str, prog: bool, plural: bool) -> list[str]:
    """Morphemes of a target verb: stem, aspect, tense, agreement."""
    return [stem] + [_PROG] * prog + [_TENSE[tense], _AGREE[plural]]


def _build_stems() -> dict[str, str]:
    """Give every English lemma a made-up stem; no two target words clash."""
    rng = random.Random(20240601)          # fixed: the language never changes
    onsets, vowels = "k ch t th p m n v y r l zh s".split(), "a i u e o aa ii uu ee oo".split()
    used = set(_FUNCTION.values()) | {p[1] for p in _PREPOSITIONS.values() if p[1]}
    stems = {}
    for lemma in [*NOUN_TAGS, *_PRONOUNS, *_VERB_INFO, *_ADJ_TAGS, *_NUMBERS, *_MANNER, *_TIME]:
        while True:
            stem = "".join(rng.choice(onsets) + rng.choice(vowels)
                           for _ in range(rng.choice((2, 2, 3))))
            if lemma in NOUN_TAGS or lemma in _PRONOUNS:
                stem += rng.choice("mnlr")  # a final consonant before the suffixes
                forms = {"".join(_noun_morphs(stem, pl, c)) for c in _CASE for pl in (0, 1)}
            elif lemma in _VERB_INFO:
                forms = {"".join(_verb_morphs(stem, t, pr, pl)) for t in _TENSE
                         for pr in (0, 1) for pl in (False, True)}
            else:
                forms = set()
            if not (forms | {stem}) & used:
                break
        used |= forms | {stem}
        stems[lemma] = stem
    return stems


STEMS = _build_stems()


# ------------------------------------------------------ sentence structure --
@dataclass(frozen=True)
class _NP:
    """A noun phrase: a pronoun, or [det] [number] [adjective] noun."""
    head: str
    plural: bool
    pronoun: bool = False
    det: str | None = None
    num: str | None = None
    adj: str | None = None


@dataclass(frozen=True)
class _Clause:
    """One sentence: subject verb [object] [manner] [preps...] [time]."""
    subj: _NP
    verb: str
    tense: str
    prog: bool
    obj: _NP | None = None
    manner: str | None = None
    pps: tuple[tuple[str, _NP], ...] = ()
    time: str | None = None


def _english(cl: _Clause) -> tuple[list[str], dict[str, int]]:
    """Render a clause as English tokens, plus the word position of each role."""
    toks: list[str] = []
    pos: dict[str, int] = {}

    def put(word: str, role: str) -> None:
        pos.setdefault(role, len(toks))     # "every day": keep the first word
        toks.extend(word.split())

    def noun_phrase(np: _NP, role: str, subject: bool) -> None:
        if np.pronoun:
            return put(np.head if subject else _PRONOUNS[np.head][0], role)
        noun = _NOUN_PLURALS[np.head] if np.plural else np.head
        det = "an" if np.det == "a" and (np.num or np.adj or noun)[0] in "aeiou" else np.det
        for word, sub in ((det, ".det"), (np.num, ".num"), (np.adj, ".adj"), (noun, "")):
            if word:
                put(word, role + sub)

    noun_phrase(cl.subj, "subj", subject=True)
    forms = _VERB_INFO[cl.verb][0]
    third_sg = not cl.subj.plural and cl.subj.head != "i"
    be = "am" if cl.subj.head == "i" else ("is" if third_sg else "are")
    if cl.tense == _FUT:
        put("will", "aux")
        if cl.prog:
            put("be", "aux2")
        put(forms["ing" if cl.prog else "base"], "verb")
    elif cl.prog:
        put({"am": "was", "is": "was", "are": "were"}[be] if cl.tense == _PAST else be, "aux")
        put(forms["ing"], "verb")
    else:
        put(forms["past" if cl.tense == _PAST else "s" if third_sg else "base"], "verb")
    if cl.obj:
        noun_phrase(cl.obj, "obj", subject=False)
    if cl.manner:
        put(cl.manner, "manner")
    for i, (prep, np) in enumerate(cl.pps):
        put(prep, f"pp{i}")
        noun_phrase(np, f"pp{i}n", subject=False)
    if cl.time:
        put(cl.time, "time")
    return toks, pos


def _target(cl: _Clause) -> list[list[tuple[str, str]]]:
    """Render a clause in the target language: words made of (morpheme, role)."""

    def noun_phrase(np: _NP, role: str, case: str, case_role: str):
        morphs = _noun_morphs(STEMS[np.head], np.plural and not np.pronoun, case)
        roles = [role] * len(morphs)
        if case != "NOM":               # the case suffix "comes from" a preposition
            roles[-1] = case_role
        words = [list(zip(morphs, roles))]              # mirrored: noun first
        for word, sub in ((np.adj, ".adj"), (np.num, ".num")):
            if word:
                words.append([(STEMS[word], role + sub)])
        if np.det in _FUNCTION:
            words.append([(_FUNCTION[np.det], role + ".det")])
        elif np.det in _POSSESSIVE:                     # "my" -> genitive of "i"
            words.append([(m, role + ".det")
                          for m in _noun_morphs(STEMS[_POSSESSIVE[np.det]], False, "GEN")])
        return words

    words = noun_phrase(cl.subj, "subj", "NOM", "subj")
    if cl.time:
        words.append([(STEMS[cl.time], "time")])
    for i in reversed(range(len(cl.pps))):              # mirrored order
        prep, np = cl.pps[i]
        case, postposition, _ = _PREPOSITIONS[prep]
        animate = np.head != "it" if np.pronoun else NOUN_TAGS[np.head] & {"person", "animal"}
        words += noun_phrase(np, f"pp{i}n", "INS" if case == "COM" and not animate else case,
                             f"pp{i}")
        if postposition:
            words.append([(postposition, f"pp{i}")])
    if cl.obj:
        words += noun_phrase(cl.obj, "obj", "ACC", "obj")
    if cl.manner:
        words.append([(STEMS[cl.manner], "manner")])
    aux = "aux2" if cl.tense == _FUT and cl.prog else "aux"
    roles = ["verb"] + [aux] * cl.prog + ["aux" if cl.tense == _FUT or cl.prog else "verb", "verb"]
    morphs = _verb_morphs(STEMS[cl.verb], cl.tense, cl.prog, cl.subj.plural)
    return words + [list(zip(morphs, roles))]


def _render(words, pos, split_suffixes: bool) -> tuple[list[str], list[int | None]]:
    """Join morphemes into tokens and map every token to a source position."""
    if split_suffixes:
        pieces = [(m if j == 0 else "-" + m, role)
                  for word in words for j, (m, role) in enumerate(word)]
    else:
        pieces = [("".join(m for m, _ in word), word[0][1]) for word in words]
    return [tok for tok, _ in pieces], [pos.get(role) for _, role in pieces]


# ------------------------------------------------------------------ parser --
class _Parser:
    """Recursive-descent parser from an English sentence back to a `_Clause`."""

    def __init__(self, src: str):
        self.src, self.toks, self.i = src, src.split(), 0

    def peek(self, k: int = 0) -> str | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def fail(self, expected: str):
        raise ValueError(f"translate_reference: {self.src!r} is outside the grammar: "
                         f"expected {expected} at word {self.i + 1}, "
                         f"got {self.peek() or 'the end'!r}")

    def take(self, words) -> str | None:
        if self.peek() not in words:
            return None
        self.i += 1
        return self.toks[self.i - 1]

    def noun_phrase(self, subject: bool) -> _NP:
        prons = _SUBJ_PRON if subject else _OBJ_PRON
        # "her" is a pronoun ("saw her") unless a noun phrase follows ("her cat")
        if self.peek() in prons and self.peek(1) not in {*_NUMBERS, *_ADJ_TAGS, *_NOUN_FORMS}:
            head = prons[self.take(prons)]
            return _NP(head, _PRONOUNS[head][2], pronoun=True)
        det = self.take(_DETERMINERS)
        num, adj = self.take(_NUMBERS), self.take(_ADJ_TAGS)
        noun = self.take(_NOUN_FORMS) or self.fail("a noun or pronoun")
        np = _NP(*_NOUN_FORMS[noun], det="a" if det == "an" else det, num=num, adj=adj)
        if np.plural and np.det in ("a", "this", "that"):
            self.fail("a determiner that fits the plural noun")
        if not np.plural and (np.det in (None, "these", "those") or np.num):
            self.fail("a determiner that fits the singular noun")
        return np

    def verb(self, kinds: str) -> str:
        lemma, kind = _VERB_FORMS.get(self.peek(), (None, None))
        if kind not in kinds.split():
            self.fail(f"a verb ({kinds.replace(' ', ' or ')} form)")
        self.i += 1
        return lemma

    def clause(self) -> _Clause:
        subj, prog = self.noun_phrase(subject=True), False
        if self.take({"will"}):
            tense, prog = _FUT, bool(self.take({"be"}))
            verb = self.verb("ing" if prog else "base")
        elif aux := self.take({"am", "is", "are", "was", "were"}):
            tense, prog = (_PAST if aux in ("was", "were") else _PRES), True
            verb = self.verb("ing")
        else:
            verb = self.verb("base s past")
            tense = _PAST if _VERB_FORMS[self.toks[self.i - 1]][1] == "past" else _PRES
        obj = self.noun_phrase(subject=False) if _VERB_INFO[verb][1] else None
        manner, pps = self.take(_MANNER), []
        while prep := self.take(_PREPOSITIONS):
            pps.append((prep, self.noun_phrase(subject=False)))
        time = self.take(_TIME)
        if time is None and self.take({"every"}):
            time = "every " + (self.take({"day"}) or self.fail("'day'"))
        if self.peek() is not None:
            self.fail("the end of the sentence")
        return _Clause(subj, verb, tense, prog, obj, manner, tuple(pps), time)


def _parse(src: str) -> tuple[_Clause, dict[str, int]]:
    """Parse `src`, and check it is exactly what the grammar would write."""
    if not isinstance(src, str):
        raise TypeError(f"translate_reference: expected a str, got {type(src).__name__}")
    parser = _Parser(src)
    cl = parser.clause()
    toks, pos = _english(cl)
    for i, (got, want) in enumerate(zip(parser.toks, toks)):
        if got != want:                 # agreement ("he walk"), "a apple", ...
            parser.i = i
            parser.fail(repr(want))
    return cl, pos


def translate_reference(src: str, split_suffixes: bool = False) -> str:
    """The rule-based translation of an English sentence (ValueError if outside the grammar)."""
    cl, pos = _parse(src)
    return " ".join(_render(_target(cl), pos, split_suffixes)[0])


def alignment(src: str, split_suffixes: bool = False) -> list[int | None]:
    """For each token of `translate_reference(src)`, the index of its source word."""
    cl, pos = _parse(src)
    return _render(_target(cl), pos, split_suffixes)[1]


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
               pronoun_p: float = 0.0) -> _NP:
    """A random noun phrase whose noun carries one of `tags`, or a pronoun."""
    if rng.random() < pronoun_p:
        head = rng.choice([p for p in _PRONOUNS if p != "it" or not subject])
        return _NP(head, _PRONOUNS[head][2], pronoun=True)
    head = rng.choice([n for n in NOUN_TAGS if NOUN_TAGS[n] & tags])
    animate = bool(NOUN_TAGS[head] & {"person", "animal"})
    plural = rng.random() < 0.35
    num = rng.choice(_NUMBERS) if plural and rng.random() < 0.4 else None
    owners = [p for p in _POSSESSIVE if p != "its" or "person" not in NOUN_TAGS[head]]
    det = rng.choice((None, None, "the", "the", "these", "those", *owners) if plural
                     else ("the", "the", "the", "a", "a", "this", "that", *owners))
    adj = rng.choice([a for a, kind in _ADJ_TAGS.items() if kind == "any"
                      or (kind == "animate") == animate]) if rng.random() < 0.35 else None
    return _NP(head, plural, det=det, num=num, adj=adj)


# (tense, progressive) weighted by how often each is sampled
_TENSES = [(_PRES, False)] * 5 + [(_PAST, False)] * 5 + [(_FUT, False)] * 4 \
    + [(_PRES, True)] * 3 + [(_PAST, True)] * 3 + [(_FUT, True)] * 2


def _sample_clause(rng: random.Random) -> _Clause:
    """A random sentence structure, (mostly) semantically sensible."""
    subj = _sample_np(rng, {"person", "animal"}, subject=True, pronoun_p=0.3)
    subj_tags = {"person"} if subj.pronoun else NOUN_TAGS[subj.head]
    verb = rng.choice([v for v, info in _VERB_INFO.items() if info[2] & subj_tags])
    tense, prog = rng.choice(_TENSES)
    objects = _VERB_INFO[verb][1]
    obj = _sample_np(rng, objects, pronoun_p=0.25 * ("person" in objects)) if objects else None
    manner = rng.choice(_MANNER) if rng.random() < 0.15 else None
    pps = []
    for prep in rng.sample(sorted(_PREPOSITIONS), rng.choice((0, 1, 1, 2, 2))):
        tags = set(_PREPOSITIONS[prep][2].split())
        pps.append((prep, _sample_np(rng, tags, pronoun_p=0.15 * ("person" in tags))))
    times = [t for t, ok in _TIME.items() if (tense, prog) in ok]
    time = rng.choice(times) if rng.random() < 0.25 else None
    return _Clause(subj, verb, tense, prog, obj, manner, tuple(pps), time)


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
        src, pos = _english(cl)
        tgt = _render(_target(cl), pos, split_suffixes)[0]
        if min_len <= len(src) <= max_len and min_len <= len(tgt) <= max_len:
            pairs.setdefault(" ".join(src), " ".join(tgt))
    if len(pairs) < wanted:
        raise ValueError(f"generate_corpus: found only {len(pairs)} unique sentences "
                         f"of {min_len}..{max_len} tokens, {wanted} requested")
    items = list(pairs.items())         # already in random order
    return Corpus(items[:n_train], items[n_train:n_train + n_valid], items[n_train + n_valid:])
