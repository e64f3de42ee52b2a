"""What this package's commands share: errors as one line, numeric flags within bounds."""
from __future__ import annotations

import argparse


class CliError(Exception):
    """A problem with what the user asked for: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a CliError (one line) instead of a usage block."""

    def error(self, message):
        raise CliError(f"{self.prog}: {message} (see {self.prog} --help)")


def bounded(kind, lo=None, hi=None):
    """An argparse type: a `kind` (int or float) within [lo, hi]."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a{'n' if kind is int else ''} "
                                             f"{kind.__name__}: {text!r}") from None
        if value != value or (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {_range(lo, hi)}, got {text}")
        return value
    return parse


def _range(lo, hi):
    if lo is not None and hi is not None:
        return f"between {lo} and {hi}"
    return f">= {lo}" if lo is not None else f"<= {hi}"
