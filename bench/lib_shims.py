"""Run one PyTorch-style program with either library: `torch`, or `minigrad` in its place.

    lib = library("minigrad")     # or "torch"
    program(lib)                  # the program only ever says torch.xxx, torch.nn.xxx, ...

The benchmark programs are written once, against PyTorch's API, the way a user would write them
and then switch `import torch` to `import minigrad as torch`; minigrad has every function they
call, so `library` just imports the module asked for.
"""
from __future__ import annotations

import importlib

LIBRARIES = ("minigrad", "torch")


def library(name):
    """The module `torch` or `minigrad`."""
    if name not in LIBRARIES:
        raise ValueError(f"library: unknown library {name!r}; choose 'minigrad' or 'torch'")
    return importlib.import_module(name)
