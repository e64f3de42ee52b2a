"""vmap's in-place writes to tensors that are not batched, on a loop over the examples.

PyTorch runs the function once: a write of unbatched values to an unbatched tensor happens
once, and a write of batched values into one is refused (the tensor cannot hold a batch). A
loop would repeat the write per example, so each call starts from the tensor's values before
the map, and what the calls wrote is compared: the same for every example, it is written
once (PyTorch's result); different, it was batched, and the map is refused with PyTorch's
error, the tensors as they were before it.

The guarded tensors are the arguments with in_dim None, the tensors the function captures,
and the parameters and buffers of the modules among those; a write is seen by the tensor's
version counter.
"""
from __future__ import annotations

import functools

import numpy as np

import minigrad

INPLACE_ERROR = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there "
                 "exists a Tensor `other` in extra_args that has more elements than `self`. This "
                 "happened due to `other` being vmapped over but `self` not being vmapped over in "
                 "a vmap. Please try to use out-of-place operators instead of inplace "
                 "arithmetic. If said operator is being called inside the PyTorch framework, "
                 "please file a bug report instead.")


def unbatched_tensors(func, leaves, dims):
    """The tensors a call must not write batched values to (see the module's docstring)."""
    found = [x for x, d in zip(leaves, dims) if d is None and isinstance(x, minigrad.Tensor)]
    owners = [func, getattr(func, "__self__", None)]
    for cell in getattr(func, "__closure__", None) or ():
        try:
            owners.append(cell.cell_contents)
        except ValueError:  # a cell not yet filled
            pass
    owners += list(func.args) if isinstance(func, functools.partial) else []
    owners += leaves
    for obj in owners:
        if isinstance(obj, minigrad.Tensor):
            found.append(obj)
        elif callable(getattr(obj, "buffers", None)) and callable(getattr(obj, "parameters",
                                                                          None)):
            found += list(obj.buffers()) + list(obj.parameters())
    batched = {id(x) for x, d in zip(leaves, dims) if d is not None}
    return list({id(t): t for t in found if id(t) not in batched}.values())


class Writes:
    """Around the loop: `after_call()` after each example's call, `finish()` at the end."""

    def __init__(self, tensors):
        self.tensors = tensors
        self.before = [t.detach().numpy().copy() for t in tensors]
        self.versions = [t._version for t in tensors]
        self.written = None  # {index: the values the first call wrote}

    def _restore(self, indices):
        with minigrad.no_grad():
            for i in indices:
                self.tensors[i].copy_(minigrad.from_numpy(self.before[i]))
                self.versions[i] = self.tensors[i]._version

    def after_call(self):
        changed = [i for i, t in enumerate(self.tensors) if t._version != self.versions[i]]
        if self.written is None:
            self.written = {i: self.tensors[i].detach().numpy().copy() for i in changed}
        elif set(changed) != set(self.written) or not all(
                np.array_equal(self.tensors[i].detach().numpy(), self.written[i],
                               equal_nan=True) for i in changed):
            self._restore(set(changed) | set(self.written))
            raise RuntimeError(INPLACE_ERROR)
        self._restore(changed)

    def finish(self):
        """The unbatched writes, once."""
        with minigrad.no_grad():
            for i, values in (self.written or {}).items():
                self.tensors[i].copy_(minigrad.from_numpy(values))


__all__ = ["INPLACE_ERROR", "Writes", "unbatched_tensors"]
