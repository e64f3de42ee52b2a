"""The toy translator's two vocabularies: English words and their "Tamilish" stems and suffixes.

Nouns, verbs, adjectives, pronouns, prepositions and time words, with the tags that say
which slots a noun may fill; the target language's case, tense and agreement suffixes; and
`STEMS`, a made-up stem for every English lemma, drawn with a fixed seed so that the
language never changes. `grammar.py` puts these words into sentences and `corpus.py`
samples them.
"""
from __future__ import annotations

import random

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
NUMBERS = "two three four five six seven eight nine ten".split()
# subject object possessive; "you" is treated as plural (a polite plural)
PRONOUNS = {"i": ("me", "my", False), "you": ("you", "your", True),
             "he": ("him", "his", False), "she": ("her", "her", False),
             "it": ("it", "its", False), "we": ("us", "our", True),
             "they": ("them", "their", True)}
# preposition -> (case, postposition or None, noun tags it takes)
PREPOSITIONS = {
    "in": ("LOC", None, "place cont"), "at": ("LOC", None, "place"),
    "on": ("GEN", "mel", "surf"), "under": ("GEN", "kizh", "surf"),
    "near": ("GEN", "arugil", "place surf person animal"),
    "to": ("DAT", None, "place person animal"),
    "from": ("ABL", None, "place person"),
    "with": ("COM", None, "person animal tool"),   # INS for things
    "for": ("BEN", None, "person animal"),
}
MANNER = "quickly slowly happily quietly carefully loudly".split()
PAST, PRES, FUT = "past", "present", "future"
# time adverb -> the (tense, progressive) combinations it goes with
TIME = {"yesterday": {(PAST, False), (PAST, True)},
         "today": {(t, p) for t in (PAST, PRES, FUT) for p in (False, True)},
         "tomorrow": {(FUT, False), (FUT, True)},
         "now": {(PRES, True)}, "every day": {(PRES, False)}}

# Target morphology: hand-picked, Tamil-flavoured suffixes and function words.
_CASE = {"NOM": "", "ACC": "ai", "DAT": "ukku", "LOC": "il", "ABL": "ilirunthu",
         "COM": "odu", "INS": "aal", "GEN": "in", "BEN": "ukkaaka"}
_PLURAL, _PROG = "kal", "kondu"
_TENSE = {PRES: "kir", PAST: "nth", FUT: "v"}
_AGREE = {False: "aan", True: "aarkal"}           # singular / plural subject
FUNCTION_WORDS = {"a": "oru", "this": "inta", "these": "inta", "that": "anta",
             "those": "anta"}


def _plural(word: str) -> str:
    """English -s ending of plurals and verbs: box -> boxes, cry -> cries."""
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


NOUN_TAGS: dict[str, set[str]] = {}
NOUN_FORMS: dict[str, tuple[str, bool]] = {}      # "mice" -> ("mouse", True)
for _cat, _words in _NOUNS.items():
    for _entry in _words.split():
        _sg, _, _pl = _entry.partition("/")
        NOUN_TAGS[_sg] = {_cat}
        NOUN_FORMS[_sg] = (_sg, False)
        NOUN_FORMS[_pl or _plural(_sg)] = (_sg, True)
for _tag, _words in _EXTRA_TAGS.items():
    for _noun in _words.split():
        NOUN_TAGS[_noun].add(_tag)
NOUN_PLURALS = {lemma: form for form, (lemma, pl) in NOUN_FORMS.items() if pl}

VERB_INFO: dict[str, tuple[dict[str, str], set[str], set[str]]] = {}
VERB_FORMS: dict[str, tuple[str, str]] = {}       # "sang" -> ("sing", "past")
for _line in _VERBS.strip().splitlines():
    _verbs, _objs, _subjs = _line.split("|")
    for _entry in _verbs.split(","):
        _base, _past, _ing = _entry.split()
        _table = {"base": _base, "s": _plural(_base), "past": _past, "ing": _ing}
        VERB_INFO[_base] = (_table, set(_objs.split()) - {"-"}, set(_subjs.split()))
        for _kind, _form in _table.items():
            assert _form not in VERB_FORMS, f"ambiguous verb form {_form!r}"
            VERB_FORMS[_form] = (_base, _kind)

ADJ_TAGS = {adj: kind for kind, words in _ADJECTIVES.items() for adj in words.split()}
SUBJ_PRON = {p: p for p in PRONOUNS}
OBJ_PRON = {obj: p for p, (obj, _, _) in PRONOUNS.items()}
POSSESSIVE = {poss: p for p, (_, poss, _) in PRONOUNS.items()}
DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", *POSSESSIVE}


# ------------------------------------------------------- the target words --
def noun_morphs(stem: str, plural: bool, case: str) -> list[str]:
    """Morphemes of a target noun: stem, optional plural, optional case."""
    return [stem] + [_PLURAL] * plural + ([_CASE[case]] if _CASE[case] else [])


def verb_morphs(stem: str, tense: str, prog: bool, plural: bool) -> list[str]:
    """Morphemes of a target verb: stem, aspect, tense, agreement."""
    return [stem] + [_PROG] * prog + [_TENSE[tense], _AGREE[plural]]


def _build_stems() -> dict[str, str]:
    """Give every English lemma a made-up stem; no two target words clash."""
    rng = random.Random(20240601)          # fixed: the language never changes
    onsets, vowels = "k ch t th p m n v y r l zh s".split(), "a i u e o aa ii uu ee oo".split()
    used = set(FUNCTION_WORDS.values()) | {p[1] for p in PREPOSITIONS.values() if p[1]}
    stems = {}
    for lemma in [*NOUN_TAGS, *PRONOUNS, *VERB_INFO, *ADJ_TAGS, *NUMBERS, *MANNER, *TIME]:
        while True:
            stem = "".join(rng.choice(onsets) + rng.choice(vowels)
                           for _ in range(rng.choice((2, 2, 3))))
            if lemma in NOUN_TAGS or lemma in PRONOUNS:
                stem += rng.choice("mnlr")  # a final consonant before the suffixes
                forms = {"".join(noun_morphs(stem, pl, c)) for c in _CASE for pl in (0, 1)}
            elif lemma in VERB_INFO:
                forms = {"".join(verb_morphs(stem, t, pr, pl)) for t in _TENSE
                         for pr in (0, 1) for pl in (False, True)}
            else:
                forms = set()
            if not (forms | {stem}) & used:
                break
        used |= forms | {stem}
        stems[lemma] = stem
    return stems


STEMS = _build_stems()
