"""The toy translator's grammar: one sentence structure rendered in English and in the target
language, and a parser from English back to that structure.

A `Clause` (subject, verb, tense, object, manner, prepositional phrases, time) is written out
in English word order by `english_tokens` and in the target's order (SOV, mirrored noun
phrases, case suffixes) by `target_words`; `parse` reads an English sentence back into its
`Clause`, so any sentence of the grammar has exactly one reference translation.
"""
from __future__ import annotations

from dataclasses import dataclass

from .lexicon import (ADJ_TAGS, DETERMINERS, FUNCTION_WORDS, FUT, MANNER, NOUN_FORMS,
                      NOUN_PLURALS, NOUN_TAGS, NUMBERS, OBJ_PRON, PAST, POSSESSIVE, PREPOSITIONS,
                      PRES, PRONOUNS, STEMS, SUBJ_PRON, TIME, VERB_FORMS, VERB_INFO, noun_morphs,
                      verb_morphs)


# ------------------------------------------------------ sentence structure --
@dataclass(frozen=True)
class NP:
    """A noun phrase: a pronoun, or [det] [number] [adjective] noun."""
    head: str
    plural: bool
    pronoun: bool = False
    det: str | None = None
    num: str | None = None
    adj: str | None = None


@dataclass(frozen=True)
class Clause:
    """One sentence: subject verb [object] [manner] [preps...] [time]."""
    subj: NP
    verb: str
    tense: str
    prog: bool
    obj: NP | None = None
    manner: str | None = None
    pps: tuple[tuple[str, NP], ...] = ()
    time: str | None = None


def english_tokens(cl: Clause) -> tuple[list[str], dict[str, int]]:
    """Render a clause as English tokens, plus the word position of each role."""
    toks: list[str] = []
    pos: dict[str, int] = {}

    def put(word: str, role: str) -> None:
        pos.setdefault(role, len(toks))     # "every day": keep the first word
        toks.extend(word.split())

    def noun_phrase(np: NP, role: str, subject: bool) -> None:
        if np.pronoun:
            return put(np.head if subject else PRONOUNS[np.head][0], role)
        noun = NOUN_PLURALS[np.head] if np.plural else np.head
        det = "an" if np.det == "a" and (np.num or np.adj or noun)[0] in "aeiou" else np.det
        for word, sub in ((det, ".det"), (np.num, ".num"), (np.adj, ".adj"), (noun, "")):
            if word:
                put(word, role + sub)

    noun_phrase(cl.subj, "subj", subject=True)
    forms = VERB_INFO[cl.verb][0]
    third_sg = not cl.subj.plural and cl.subj.head != "i"
    be = "am" if cl.subj.head == "i" else ("is" if third_sg else "are")
    if cl.tense == FUT:
        put("will", "aux")
        if cl.prog:
            put("be", "aux2")
        put(forms["ing" if cl.prog else "base"], "verb")
    elif cl.prog:
        put({"am": "was", "is": "was", "are": "were"}[be] if cl.tense == PAST else be, "aux")
        put(forms["ing"], "verb")
    else:
        put(forms["past" if cl.tense == PAST else "s" if third_sg else "base"], "verb")
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


def target_words(cl: Clause) -> list[list[tuple[str, str]]]:
    """Render a clause in the target language: words made of (morpheme, role)."""

    def noun_phrase(np: NP, role: str, case: str, case_role: str):
        morphs = noun_morphs(STEMS[np.head], np.plural and not np.pronoun, case)
        roles = [role] * len(morphs)
        if case != "NOM":               # the case suffix "comes from" a preposition
            roles[-1] = case_role
        words = [list(zip(morphs, roles))]              # mirrored: noun first
        for word, sub in ((np.adj, ".adj"), (np.num, ".num")):
            if word:
                words.append([(STEMS[word], role + sub)])
        if np.det in FUNCTION_WORDS:
            words.append([(FUNCTION_WORDS[np.det], role + ".det")])
        elif np.det in POSSESSIVE:                     # "my" -> genitive of "i"
            words.append([(m, role + ".det")
                          for m in noun_morphs(STEMS[POSSESSIVE[np.det]], False, "GEN")])
        return words

    words = noun_phrase(cl.subj, "subj", "NOM", "subj")
    if cl.time:
        words.append([(STEMS[cl.time], "time")])
    for i in reversed(range(len(cl.pps))):              # mirrored order
        prep, np = cl.pps[i]
        case, postposition, _ = PREPOSITIONS[prep]
        animate = np.head != "it" if np.pronoun else NOUN_TAGS[np.head] & {"person", "animal"}
        words += noun_phrase(np, f"pp{i}n", "INS" if case == "COM" and not animate else case,
                             f"pp{i}")
        if postposition:
            words.append([(postposition, f"pp{i}")])
    if cl.obj:
        words += noun_phrase(cl.obj, "obj", "ACC", "obj")
    if cl.manner:
        words.append([(STEMS[cl.manner], "manner")])
    aux = "aux2" if cl.tense == FUT and cl.prog else "aux"
    roles = ["verb"] + [aux] * cl.prog + ["aux" if cl.tense == FUT or cl.prog else "verb", "verb"]
    morphs = verb_morphs(STEMS[cl.verb], cl.tense, cl.prog, cl.subj.plural)
    return words + [list(zip(morphs, roles))]


def render(words, pos, split_suffixes: bool) -> tuple[list[str], list[int | None]]:
    """Join morphemes into tokens and map every token to a source position."""
    if split_suffixes:
        pieces = [(m if j == 0 else "-" + m, role)
                  for word in words for j, (m, role) in enumerate(word)]
    else:
        pieces = [("".join(m for m, _ in word), word[0][1]) for word in words]
    return [tok for tok, _ in pieces], [pos.get(role) for _, role in pieces]


# ------------------------------------------------------------------ parser --
class _Parser:
    """Recursive-descent parser from an English sentence back to a `Clause`."""

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

    def noun_phrase(self, subject: bool) -> NP:
        prons = SUBJ_PRON if subject else OBJ_PRON
        # "her" is a pronoun ("saw her") unless a noun phrase follows ("her cat")
        if self.peek() in prons and self.peek(1) not in {*NUMBERS, *ADJ_TAGS, *NOUN_FORMS}:
            head = prons[self.take(prons)]
            return NP(head, PRONOUNS[head][2], pronoun=True)
        det = self.take(DETERMINERS)
        num, adj = self.take(NUMBERS), self.take(ADJ_TAGS)
        noun = self.take(NOUN_FORMS) or self.fail("a noun or pronoun")
        np = NP(*NOUN_FORMS[noun], det="a" if det == "an" else det, num=num, adj=adj)
        if np.plural and np.det in ("a", "this", "that"):
            self.fail("a determiner that fits the plural noun")
        if not np.plural and (np.det in (None, "these", "those") or np.num):
            self.fail("a determiner that fits the singular noun")
        return np

    def verb(self, kinds: str) -> str:
        lemma, kind = VERB_FORMS.get(self.peek(), (None, None))
        if kind not in kinds.split():
            self.fail(f"a verb ({kinds.replace(' ', ' or ')} form)")
        self.i += 1
        return lemma

    def clause(self) -> Clause:
        subj, prog = self.noun_phrase(subject=True), False
        if self.take({"will"}):
            tense, prog = FUT, bool(self.take({"be"}))
            verb = self.verb("ing" if prog else "base")
        elif aux := self.take({"am", "is", "are", "was", "were"}):
            tense, prog = (PAST if aux in ("was", "were") else PRES), True
            verb = self.verb("ing")
        else:
            verb = self.verb("base s past")
            tense = PAST if VERB_FORMS[self.toks[self.i - 1]][1] == "past" else PRES
        obj = self.noun_phrase(subject=False) if VERB_INFO[verb][1] else None
        manner, pps = self.take(MANNER), []
        while prep := self.take(PREPOSITIONS):
            pps.append((prep, self.noun_phrase(subject=False)))
        time = self.take(TIME)
        if time is None and self.take({"every"}):
            time = "every " + (self.take({"day"}) or self.fail("'day'"))
        if self.peek() is not None:
            self.fail("the end of the sentence")
        return Clause(subj, verb, tense, prog, obj, manner, tuple(pps), time)


def parse(src: str) -> tuple[Clause, dict[str, int]]:
    """Parse `src`, and check it is exactly what the grammar would write."""
    if not isinstance(src, str):
        raise TypeError(f"translate_reference: expected a str, got {type(src).__name__}")
    parser = _Parser(src)
    cl = parser.clause()
    toks, pos = english_tokens(cl)
    for i, (got, want) in enumerate(zip(parser.toks, toks)):
        if got != want:                 # agreement ("he walk"), "a apple", ...
            parser.i = i
            parser.fail(repr(want))
    return cl, pos
