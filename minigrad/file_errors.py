"""The errors of `minigrad.load`: one type for every file it cannot read, naming the file
and the field at fault, and the refusal to unpickle under `weights_only=True`.

Both are ValueErrors, so a caller that reports bad input (the translator's commands) prints
them in one line whatever the file's format and whatever was wrong in it.
"""
from __future__ import annotations

import pickle


class FileFormatError(ValueError):
    """A malformed, truncated or foreign file: `path` and `field` say where."""

    def __init__(self, path, field, why, kind="is truncated or corrupt"):
        self.path, self.field, self.why = path, field, why
        where = f"{field}: " if field else ""
        super().__init__(f"load: '{path}' {kind}: {where}{why}")


class WeightsOnlyError(FileFormatError, pickle.UnpicklingError):
    """The file holds a pickled object, which `weights_only=True` (the default) refuses."""

    def __init__(self, path, field, type_name):
        why = (f"holds a pickled {type_name}; weights_only=True refuses anything but tensors, "
               f"arrays, numbers, strings and plain containers, because unpickling can run "
               f"arbitrary code. If you trust the file, pass weights_only=False")
        super().__init__(path, field, why, kind="cannot be loaded with weights_only=True")
