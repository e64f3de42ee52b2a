"""A module's state: `Module.state_dict()` and `Module.load_state_dict()`.

The state is every parameter and persistent buffer under its dotted name
(`encoder.layers.0.linear1.weight`), in PyTorch's order, so a checkpoint's keys are PyTorch's.
Loading is all or nothing: a checkpoint with one wrong key, shape or dtype changes nothing.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from minigrad.autograd import bump_version
from minigrad.tensor import Tensor


def state_items(module, prefix=""):
    """(name, tensor) of every parameter and persistent buffer, module by module, in
    PyTorch's order; a tensor shared by two modules (tied weights) appears under both."""
    for k, p in module._parameters.items():
        if p is not None:
            yield prefix + k, p
    non_persistent = module.__dict__.get("_non_persistent_buffers_set", ())
    for k, b in module._buffers.items():
        if b is not None and k not in non_persistent:
            yield prefix + k, b
    for k, m in module._modules.items():
        if m is not None:
            yield from state_items(m, prefix + k + ".")


def state_dict(module):
    """Parameters and persistent buffers by dotted name, as detached tensors (copies)."""
    return OrderedDict((name, Tensor._wrap(np.array(t._array, copy=True)))
                       for name, t in state_items(module))


def load_state_dict(module, state_dict, strict=True):
    """Copy values into the module's parameters and buffers, all or nothing: every key, shape
    and dtype is checked first and the error lists each problem; only then is anything
    overwritten. Returns (missing_keys, unexpected_keys) as PyTorch does."""
    own = dict(state_items(module))
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    problems, values = [], {}
    if strict and missing:
        problems.append("missing keys: " + ", ".join(missing))
    if strict and unexpected:
        problems.append("unexpected keys: " + ", ".join(unexpected))
    bad = []
    for k, t in own.items():
        if k in state_dict:
            value, problem = _castable(state_dict[k], t._array)
            if problem:
                bad.append(f"{k}: {problem}")
            values[k] = value
    if bad:
        problems.append("bad values: " + "; ".join(bad))
    if problems:
        raise RuntimeError(f"load_state_dict for {type(module).__name__} (nothing was "
                           f"loaded): " + " | ".join(problems))
    for k, value in values.items():
        np.copyto(own[k]._array, value)  # in place, as PyTorch's copy_: views stay views
        bump_version(own[k])
    return _IncompatibleKeys(missing, unexpected)


class _IncompatibleKeys(tuple):
    def __new__(cls, missing, unexpected):
        t = super().__new__(cls, (missing, unexpected))
        t.missing_keys, t.unexpected_keys = missing, unexpected
        return t


def _castable(value, like):
    """(value as an array of like's dtype, None) or (None, what is wrong with it)."""
    arr = value._array if isinstance(value, Tensor) else value
    try:
        arr = np.asarray(arr)
    except (TypeError, ValueError) as e:
        return None, f"not an array ({type(value).__name__}: {e})"
    if arr.shape != like.shape:
        return None, f"checkpoint shape {arr.shape}, model shape {like.shape}"
    if not like.flags.writeable:
        return None, "the model's array is read-only"
    kind, want = arr.dtype.kind, like.dtype.kind
    if kind not in "biuf" or (want in "biu" and kind == "f"):
        # strings, objects and complex numbers have no faithful cast; floats would be truncated
        return None, f"checkpoint dtype {arr.dtype} cannot be stored in {like.dtype}"
    with np.errstate(over="ignore", invalid="ignore"):
        out = arr.astype(like.dtype)
    if want == "f" and kind == "f" and not np.array_equal(np.isfinite(out), np.isfinite(arr)):
        return None, f"{arr.dtype} values overflow {like.dtype}"
    if want in "biu" and not np.array_equal(out, arr):
        return None, f"{arr.dtype} values overflow {like.dtype}"
    return out, None
