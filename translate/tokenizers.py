"""Tokenizers: turning sentences into lists of integer ids and back.

A model only ever sees integers.  A tokenizer fixes a vocabulary - a list of
token strings whose positions are their ids - and converts text to ids
(`encode`) and ids back to text (`decode`).  Two kinds are provided:

* `WordTokenizer`: every whitespace-separated word is a token.  Simple and
  fast, but each inflected form ("house", "houses", "houses-in") needs its
  own entry, and a word never seen in training becomes ``<unk>``.
* `BPETokenizer`: byte-pair encoding (Sennrich et al., 2016).  Start from
  single characters and repeatedly *merge* the most frequent adjacent pair
  of symbols into a new symbol; after enough merges frequent words are one
  token and rare words are spelled with a few sub-word pieces, so any word
  made of known characters can be encoded.  Each word starts with the marker
  "▁" (as in SentencePiece), which is how `decode` knows where spaces go.

Both reserve ids 0-3 for ``<pad>`` (filler in a batch), ``<bos>``/``<eos>``
(beginning / end of sequence) and ``<unk>`` (unknown).  They are saved as
JSON, never pickle: loading a pickle can run arbitrary code.
"""
from __future__ import annotations

import heapq
import json
from collections import Counter, defaultdict

from .files import atomic_write_text

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
FORMAT_VERSION = 1


class TokenizerFileError(ValueError):
    """A tokenizer file that is corrupt, of another type, or not one at all."""


def _check_texts(texts, who: str) -> list[str]:
    """Catch the classic slip of passing one string (iterated char by char)."""
    if isinstance(texts, str):
        raise TypeError(f"{who}: expected a list of sentences, got a single str")
    return list(texts)


class _Tokenizer:
    """What both tokenizers share: the vocabulary, specials, decoding, saving."""

    kind = ""                           # the "type" field of the JSON file
    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    def __init__(self, tokens: list[str]):
        tokens = list(tokens)
        if tuple(tokens[:4]) != SPECIALS:
            raise ValueError(f"{type(self).__name__}: the vocabulary must start "
                             f"with {SPECIALS}, got {tokens[:4]}")
        self._tokens = tokens
        self._ids = {tok: i for i, tok in enumerate(tokens)}
        if len(self._ids) != len(tokens):
            dupes = [t for t, n in Counter(tokens).items() if n > 1]
            raise ValueError(f"{type(self).__name__}: duplicate tokens {dupes[:5]}")

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def tokens(self) -> list[str]:
        """The vocabulary: token strings in id order."""
        return list(self._tokens)

    def token_to_id(self, token: str) -> int:
        """The id of `token`, or `unk_id` if it is not in the vocabulary."""
        return self._ids.get(token, self.unk_id)

    def id_to_token(self, i: int) -> str:
        """The token string with id `i`."""
        i = int(i)                      # also accepts numpy integers
        if not 0 <= i < len(self._tokens):
            raise ValueError(f"{type(self).__name__}: id {i} is out of range "
                             f"for a vocabulary of {len(self._tokens)}")
        return self._tokens[i]

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Text -> ids, optionally framed by <bos> ... <eos>."""
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__}.encode: expected a str, "
                            f"got {type(text).__name__}")
        ids = [i for word in text.split() for i in self._encode_word(word)]
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids, skip_special: bool = True) -> str:
        """Ids -> text; skip_special drops <pad>/<bos>/<eos> (<unk> stays visible)."""
        skip = {self.pad_id, self.bos_id, self.eos_id} if skip_special else set()
        return self._join([self.id_to_token(i) for i in ids if int(i) not in skip])

    def encode_batch(self, texts, add_bos: bool = False, add_eos: bool = False):
        """`encode` for a list of texts."""
        texts = _check_texts(texts, f"{type(self).__name__}.encode_batch")
        return [self.encode(t, add_bos, add_eos) for t in texts]

    def decode_batch(self, batch, skip_special: bool = True) -> list[str]:
        """`decode` for a list of id sequences (or a 2-D array)."""
        return [self.decode(ids, skip_special) for ids in batch]

    # -- saving and loading ------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-ready description of the tokenizer."""
        return {"type": self.kind, "format_version": FORMAT_VERSION,
                "tokens": self.tokens}

    def to_json(self) -> str:
        """The tokenizer as one line of JSON (what `save` writes)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def save(self, path) -> None:
        """Write the tokenizer as JSON (atomically: temp file, then rename)."""
        atomic_write_text(path, self.to_json() + "\n")

    @classmethod
    def load(cls, path):
        """Read a tokenizer saved by `save` (TokenizerFileError if it is not one)."""
        return cls._from_file(_read_tokenizer_json(path), path)

    @classmethod
    def _from_file(cls, data: dict, path):
        if data["type"] != cls.kind:
            raise TokenizerFileError(f"{path}: holds a {data['type']!r} tokenizer, "
                                     f"not {cls.kind!r}; use load_tokenizer()")
        try:
            return cls._from_dict(data)
        except (ValueError, TypeError, KeyError) as e:
            raise TokenizerFileError(f"{path}: corrupt tokenizer file: {e}") from None

    @classmethod
    def _from_dict(cls, data: dict):
        return cls(data["tokens"])

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None                     # mutable-looking and compared by value

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={len(self)})"

    # -- what each kind defines --------------------------------------------
    def _encode_word(self, word: str) -> list[int]:
        raise NotImplementedError

    def _join(self, tokens: list[str]) -> str:
        raise NotImplementedError


class WordTokenizer(_Tokenizer):
    """One token per whitespace-separated word; unseen words become <unk>."""

    kind = "word"

    @classmethod
    def fit(cls, texts, min_freq: int = 1, max_size: int | None = None) -> "WordTokenizer":
        """Vocabulary of words seen >= min_freq times, most frequent first (ties: A-Z).

        `max_size` caps len(tokenizer), the four specials included.
        """
        texts = _check_texts(texts, "WordTokenizer.fit")
        if max_size is not None and max_size < len(SPECIALS):
            raise ValueError(f"WordTokenizer.fit: max_size={max_size} leaves no room "
                             f"for the {len(SPECIALS)} special tokens")
        counts = Counter(w for text in texts for w in text.split() if w not in SPECIALS)
        ranked = sorted((w for w, n in counts.items() if n >= min_freq),
                        key=lambda w: (-counts[w], w))      # deterministic order
        if max_size is not None:
            ranked = ranked[:max_size - len(SPECIALS)]
        return cls([*SPECIALS, *ranked])

    def _encode_word(self, word: str) -> list[int]:
        return [self._ids.get(word, self.unk_id)]

    def _join(self, tokens: list[str]) -> str:
        return " ".join(tokens)


MARKER = "\u2581"                       # "▁" marks the start of every word


class BPETokenizer(_Tokenizer):
    """Byte-pair encoding over characters, with "▁" marking each word's start."""

    kind = "bpe"

    def __init__(self, tokens: list[str], merges: list[tuple[str, str]]):
        super().__init__(tokens)
        self.merges = [(str(a), str(b)) for a, b in merges]
        for a, b in self.merges:
            if not {a, b, a + b} <= self._ids.keys():
                raise ValueError(f"BPETokenizer: merge {a!r} + {b!r} uses tokens "
                                 f"missing from the vocabulary")
        self._ranks = {pair: rank for rank, pair in enumerate(self.merges)}
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def fit(cls, texts, num_merges: int = 1000, min_freq: int = 2) -> "BPETokenizer":
        """Learn up to `num_merges` merges of pairs seen at least `min_freq` times."""
        texts = _check_texts(texts, "BPETokenizer.fit")
        word_counts = Counter(w for text in texts for w in text.split())
        alphabet = sorted({c for w in word_counts for c in w} - {MARKER})
        vocab = [*SPECIALS, MARKER, *alphabet]
        known = set(vocab)
        # Every distinct word is a list of symbols; None stands for an
        # unknown character and never merges.
        words = [[MARKER] + [c if c in known else None for c in w] for w in word_counts]
        freqs = list(word_counts.values())

        def pairs_of(symbols):
            return [p for p in zip(symbols, symbols[1:]) if None not in p]

        counts: Counter = Counter()     # pair -> occurrences in the corpus
        where = defaultdict(set)        # pair -> indices of words that have it
        for idx, symbols in enumerate(words):
            for pair in pairs_of(symbols):
                counts[pair] += freqs[idx]
                where[pair].add(idx)
        # A heap finds the most frequent pair fast; entries whose count has
        # changed since they were pushed are stale and skipped when popped.
        # Ties go to the alphabetically first pair, so fitting is deterministic.
        heap = [(-n, pair) for pair, n in counts.items()]
        heapq.heapify(heap)
        merges = []
        while heap and len(merges) < num_merges:
            neg_n, pair = heapq.heappop(heap)
            if counts.get(pair, 0) != -neg_n:
                continue                # stale entry
            if -neg_n < min_freq:
                break
            merges.append(pair)
            if pair[0] + pair[1] not in known:
                known.add(pair[0] + pair[1])
                vocab.append(pair[0] + pair[1])
            touched = set()
            for idx in where.pop(pair):
                old = pairs_of(words[idx])
                for p in old:                           # forget the old pairs...
                    counts[p] -= freqs[idx]
                words[idx] = _merge(words[idx], pair)
                new = pairs_of(words[idx])
                for p in new:                           # ...and count the new ones
                    counts[p] += freqs[idx]
                    where[p].add(idx)
                touched.update(old, new)
            for p in touched:                           # re-file changed counts
                if counts[p] > 0:
                    heapq.heappush(heap, (-counts[p], p))
                else:
                    del counts[p]
        return cls(vocab, merges)

    def _encode_word(self, word: str) -> list[int]:
        ids = self._cache.get(word)
        if ids is None:
            # A character outside the alphabet (or the marker itself) is unknown.
            symbols = [MARKER] + [c if c != MARKER and c in self._ids else None
                                  for c in word]
            while len(symbols) > 1:     # apply the earliest-learned merge first
                pairs = [p for p in zip(symbols, symbols[1:]) if p in self._ranks]
                if not pairs:
                    break
                symbols = _merge(symbols, min(pairs, key=self._ranks.__getitem__))
            ids = [self.unk_id if s is None else self._ids[s] for s in symbols]
            if len(self._cache) > 200_000:
                self._cache.clear()     # bound the memory of odd inputs
            self._cache[word] = ids
        return ids

    def _join(self, tokens: list[str]) -> str:
        return "".join(tokens).replace(MARKER, " ").removeprefix(" ")

    def to_dict(self) -> dict:
        return {**super().to_dict(), "marker": MARKER,
                "merges": [list(pair) for pair in self.merges]}

    @classmethod
    def _from_dict(cls, data: dict):
        if data.get("marker") != MARKER:
            raise ValueError(f"unsupported word marker {data.get('marker')!r}")
        return cls(data["tokens"], [tuple(m) for m in data["merges"]])


def _merge(symbols: list, pair: tuple[str, str]) -> list:
    """Replace every adjacent occurrence of `pair` in `symbols` by one symbol."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


_KINDS = {cls.kind: cls for cls in (WordTokenizer, BPETokenizer)}


def _read_tokenizer_json(path) -> dict:
    """Read and sanity-check a tokenizer JSON file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"tokenizer file not found: {path}") from None
    except UnicodeDecodeError as e:
        raise TokenizerFileError(f"{path}: not a tokenizer file (not UTF-8: {e})") from None
    return _parse_tokenizer_json(text, path)


def _parse_tokenizer_json(text: str, source) -> dict:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        what = "nested too deeply" if isinstance(e, RecursionError) else e
        raise TokenizerFileError(f"{source}: not a tokenizer file (invalid JSON: {what})") \
            from None
    if not isinstance(data, dict) or data.get("type") not in _KINDS:
        raise TokenizerFileError(f"{source}: not a tokenizer file (no 'type' field "
                                 f"with one of {sorted(_KINDS)})")
    if data.get("format_version") != FORMAT_VERSION:
        raise TokenizerFileError(f"{source}: unsupported format_version "
                                 f"{data.get('format_version')!r}")
    if not (isinstance(data.get("tokens"), list)
            and all(isinstance(t, str) for t in data["tokens"])):
        raise TokenizerFileError(f"{source}: corrupt tokenizer file: 'tokens' "
                                 f"must be a list of strings")
    return data


def load_tokenizer(path):
    """Load a WordTokenizer or BPETokenizer, whichever the file holds."""
    data = _read_tokenizer_json(path)
    return _KINDS[data["type"]]._from_file(data, path)


def tokenizer_from_json(text: str, source="tokenizer JSON"):
    """The tokenizer `save` would write as `text` (checkpoints keep it inside); errors name
    `source`."""
    data = _parse_tokenizer_json(text, source)
    return _KINDS[data["type"]]._from_file(data, source)
