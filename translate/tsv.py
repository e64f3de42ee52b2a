"""Parallel corpora as TSV files: one `source<TAB>target` pair a line, UTF-8.

Reading checks every line and names the file and line number of a bad one (no tab, more
than one tab, an empty side, bytes that are not UTF-8, control characters such as NUL, and
carriage returns that are not part of a CRLF ending: a file with CR-only line endings would
otherwise read as one long line). A byte order mark is dropped wherever it appears, since
concatenated files carry one at each seam and it would make "word" and "\ufeffword" two words.
Writing is atomic (a temporary file renamed into place), so an interrupted write never
leaves half a file.
"""
from __future__ import annotations

import os
import re

from .corpus import Corpus
from .files import atomic_write_text

BOM = "\ufeff"
# C0 and C1 control characters other than the tab: invisible, and no word contains them
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


# --------------------------------------------------------------- TSV files --
class TsvError(ValueError):
    """A malformed line in a TSV file; the message names the file and the line."""

    def __init__(self, path: str, line_no: int, problem: str):
        super().__init__(f"{path}, line {line_no}: {problem}")
        self.path, self.line_no, self.problem = path, line_no, problem


def _tsv_problem(raw: bytes) -> tuple[list[str], str | None]:
    """Split one line (without its line ending) into its two sides, or say what is wrong."""
    try:
        text = raw.decode("utf-8").replace(BOM, "")
    except UnicodeDecodeError as e:
        return [], f"invalid UTF-8 (byte {e.start + 1} of the line)"
    if "\r" in text:
        return [], (f"a carriage return (CR) at column {text.index(chr(13)) + 1}: the file "
                    f"seems to use CR-only line endings; convert them to LF or CRLF")
    bad = _CONTROL.search(text)
    if bad:
        return [], (f"control character U+{ord(bad.group()):04X} at column {bad.start() + 1} "
                    f"(a binary file?)")
    parts = text.split("\t")
    if not text.strip():
        return parts, "empty line"
    if len(parts) != 2:
        return parts, ("no tab between source and target" if len(parts) == 1
                       else f"{len(parts) - 1} tabs, expected exactly one")
    for side, part in zip(("source", "target"), parts):
        if not part.strip():
            return parts, f"empty {side} side"
    return parts, None


def write_tsv(pairs, path) -> None:
    """Write (source, target) pairs as "src<TAB>tgt" lines, atomically."""
    lines = []
    for i, pair in enumerate(pairs):
        ok = isinstance(pair, (tuple, list)) and len(pair) == 2 \
            and all(isinstance(text, str) for text in pair)
        line = "\t".join(pair) if ok else ""
        problem = _tsv_problem(line.encode("utf-8"))[1]     # what read_tsv rejects
        if not ok or "\n" in line or "\r" in line:
            problem = "not a (source, target) pair of one-line strings"
        elif BOM in line:                                    # read_tsv would drop it
            problem = "a byte order mark (U+FEFF) inside the text"
        if problem:
            raise ValueError(f"write_tsv: pair {i} {pair!r}: {problem}")
        lines.append(line + "\n")
    atomic_write_text(path, "".join(lines))


def read_tsv(path, skip_bad_lines: bool = False) -> tuple[list[tuple[str, str]], int]:
    """Read "src<TAB>tgt" lines; a bad line raises TsvError, or is skipped and counted."""
    path = os.fspath(path)
    with open(path, "rb") as f:         # bytes: decode line by line to know where
        raw_lines = f.read().removeprefix(b"\xef\xbb\xbf").split(b"\n")
    while raw_lines and not raw_lines[-1].strip():
        raw_lines.pop()                 # blank trailing lines are fine
    pairs, skipped = [], 0
    for line_no, raw in enumerate(raw_lines, start=1):
        parts, problem = _tsv_problem(raw.removesuffix(b"\r"))
        if problem is None:
            pairs.append((parts[0], parts[1]))
        elif skip_bad_lines:
            skipped += 1
        else:
            raise TsvError(path, line_no, problem)
    return pairs, skipped


def write_corpus(corpus: Corpus, directory) -> dict[str, str]:
    """Write train.tsv, valid.tsv and test.tsv; return {"train": path, ...}."""
    os.makedirs(directory, exist_ok=True)
    paths = {split: os.path.join(os.fspath(directory), f"{split}.tsv")
             for split in ("train", "valid", "test")}
    for split, path in paths.items():
        write_tsv(getattr(corpus, split), path)
    return paths


def read_corpus(directory, skip_bad_lines: bool = False) -> Corpus:
    """Read the three files written by `write_corpus` back into a Corpus."""
    return Corpus(*(read_tsv(os.path.join(os.fspath(directory), f"{split}.tsv"),
                             skip_bad_lines)[0] for split in ("train", "valid", "test")))
