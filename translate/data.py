"""Where a run's sentence pairs come from: the user's TSV files or the built-in generator.

`DataConfig` names the source. The checkpoint stores it, so that `--resume` reads the same
pairs without being told again, and `evaluate` scores a run on built-in test sentences it
never trained on. `fingerprint` is stored too: a resumed run refuses pairs that differ.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .config import check_settings, setting, settings_from_dict
from .corpus import generate_corpus
from .tsv import read_tsv


class DataError(ValueError):
    """The data named by a DataConfig cannot be used (no pairs, say)."""


@dataclass
class DataConfig:
    """The training and validation pairs: TSV files, or the built-in corpus when none."""
    train_file: str = setting("", "training pairs, one 'source<TAB>target' per line (UTF-8)")
    valid_file: str = setting("", "validation pairs (TSV)")
    skip_bad_lines: bool = setting(False, "skip malformed TSV lines (counted) instead of "
                                          "stopping")
    n_train: int = setting(20000, "built-in corpus: training pairs", lo=1, hi=10_000_000)
    n_valid: int = setting(1000, "built-in corpus: validation pairs", lo=0, hi=10_000_000)
    data_seed: int = setting(0, "built-in corpus: generator seed", lo=0, hi=2**63 - 1)

    def __post_init__(self):
        check_settings(self)
        if self.valid_file and not self.train_file:
            raise DataError("DataConfig: valid_file needs a train_file (the built-in corpus "
                            "has its own validation split)")

    @classmethod
    def from_dict(cls, data, source="the stored data settings"):
        return settings_from_dict(cls, data, source)

    def load(self, log=print):
        """(train pairs, validation pairs); without a validation file, the first 200 training
        pairs stand in for it."""
        if not self.train_file:
            c = generate_corpus(self.n_train, self.n_valid, 0, seed=self.data_seed)
            return c.train, c.valid
        train = self._read(self.train_file, log)
        if not train:
            raise DataError(f"{self.train_file} holds no sentence pairs")
        valid = self._read(self.valid_file, log) if self.valid_file else []
        return train, valid or train[:200]

    def test_pairs(self, test_file="", n_test=1000, log=print):
        """Pairs to score a model on: `test_file`, or built-in sentences after this corpus's
        training and validation splits (so never ones the run trained on)."""
        if test_file:
            return self._read(test_file, log)
        if self.train_file:
            raise DataError(f"this run trained on {self.train_file}; name its test pairs "
                            f"with --test-file")
        return generate_corpus(self.n_train, self.n_valid, n_test, seed=self.data_seed).test

    def _read(self, path, log):
        pairs, skipped = read_tsv(path, skip_bad_lines=self.skip_bad_lines)
        if skipped:
            log(f"{path}: skipped {skipped} bad line(s)")
        return pairs

    def describe(self) -> str:
        if self.train_file:
            return f"{self.train_file} (validation: {self.valid_file or 'its first 200 pairs'})"
        return (f"the built-in corpus ({self.n_train:,} training and {self.n_valid:,} "
                f"validation pairs, seed {self.data_seed})")


def fingerprint(pairs) -> str:
    """A short hash of a list of (source, target) pairs: equal pairs, equal fingerprint."""
    return hashlib.sha256(json.dumps(list(map(list, pairs)), ensure_ascii=False)
                          .encode("utf-8")).hexdigest()[:16]
