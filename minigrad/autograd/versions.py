"""Version counters: how an in-place change to a tensor saved for backward is caught.

Every tensor has a counter (`t._vc`, a one-element list so that it can be shared); an in-place
write bumps it (`bump_version`). A view shares its base's counter, so a write through either is
seen by both. When an op saves arrays for backward, `snapshot_versions` notes each one's owner
and its version; `check_versions` compares them before the node's backward runs.

Ops that read positions from index data (`x[idx]`, `gather`, `scatter`, `embedding`, ...) keep
that data as attributes of their node rather than through `save_for_backward`; such an op
declares `takes_indices = True`, and `Op.apply` hands its keyword tensors to
`unwrap_indices` and `track_indices`, so an index tensor changed before backward raises here
too instead of sending the gradient to other rows.
"""
from __future__ import annotations

import numpy as np


def bump_version(tensor):
    """Record that `tensor`'s memory was changed in place (as every in-place op does), so a
    backward that saved the old values raises instead of using the new ones."""
    tensor._vc[0] += 1


def _root(a):
    """The array that owns `a`'s memory (NumPy points every view's `base` at the owner)."""
    return a if a.base is None else a.base


def share_version_counter(out, args, arrays):
    """A view shares its base's version counter (as in PyTorch, whatever the grad mode), so an
    in-place change through the view is seen by every node that saved the base, and back.
    `arrays` are the `args` as forward received them. Returns the input whose memory `out`
    shows (None if it shows no input's: a reshape of a new result, say)."""
    base = out._array.base
    i = 0  # a counter rather than zip: this runs for every op that returns a view
    for a in arrays:
        if a is base or (isinstance(a, np.ndarray) and a.base is base):
            x = args[i]
            if isinstance(x, out.__class__):
                out._vc = x._vc
                return x
        i += 1
    if not isinstance(base, np.ndarray) or base.base is not None:
        # a strided view (sliding windows) hangs off NumPy's wrapper object instead of the
        # array it shows: compare the arrays that own the memory
        owner = _owner(out._array)
        i = 0
        for a in arrays:
            if isinstance(a, np.ndarray) and _owner(a) is owner:
                x = args[i]
                if isinstance(x, out.__class__):
                    out._vc = x._vc
                    return x
            i += 1
    return None


def _owner(a):
    """The array that owns the memory `a` shows, through the wrapper object NumPy's
    `as_strided` puts between a view and its array."""
    while True:
        base = a.base
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)
            if not isinstance(base, np.ndarray):
                return a
        a = base


def snapshot_versions(ctx, args, arrays, out):
    """Remember the version of the tensor each saved array belongs to; `arrays` are the `args`
    as forward received them (each tensor replaced by its array). A plain NumPy operand has no
    version counter, so a saved array of its memory is copied instead."""
    versions, arr, tensor, copies = [], out._array, out.__class__, None
    # this runs for every op that saves: the usual saved array is the output or an input as
    # it came, found by identity before any type test. Plain loops with counters: a zip,
    # enumerate or range object per saved array costs more than the search itself.
    i = -1
    for s in ctx.saved:
        i += 1
        if s is arr:
            x = out
        elif s is None:  # a place left empty (Mul's, for an operand that wants no gradient)
            continue
        else:
            j = 0
            for a in arrays:
                if a is s:
                    x = args[j]
                    break
                j += 1
            else:
                if not isinstance(s, np.ndarray):  # None, a number: nothing that can change
                    continue
                x = _view_owner(s, args, arrays, out)
        if isinstance(x, tensor):
            vc = x._vc
            # the message's shape: the position of the array in `saved` if it is the tensor's
            # own (a shape tuple made for every saved array cost about a tenth of an op), else
            # the shape of the tensor whose view was saved
            versions.append((vc, vc[0], i if x._array is s else x._array.shape))
        elif x is not None and isinstance(s, np.ndarray):
            copies = (copies or []) + [i]
    if copies:
        ctx.saved = tuple(s.copy() if i in copies else s for i, s in enumerate(ctx.saved))
    ctx.saved_versions = versions


def _view_owner(s, args, arrays, out):
    """The operand (tensor or array) that `s` is a view of (a reshape inside forward, say),
    found through NumPy's `base`; None if `s` is new memory (what a kernel returns: the
    common case, so it is ruled out first, in one pass over the operands' arrays)."""
    root = _root(s)
    for j, a in enumerate(arrays):
        if isinstance(a, np.ndarray) and (a is root or a.base is root):
            return args[j]
    a = out._array
    return out if a is root or a.base is root else None


_BASIC = {slice, int, type(None), type(Ellipsis)}  # index items that never hold an array


def unwrap_indices(kwargs, tensor):
    """Replace the tensors among `kwargs` (at the top level or inside a tuple index) by their
    arrays, in place; return the tensors and plain arrays found, for `track_indices`."""
    found = []
    for k, v in kwargs.items():
        if v.__class__ is tuple:
            for i in v:  # a plain loop: basic indices (slices, ints) usually hold no array
                if i.__class__ in _BASIC:  # (a failing isinstance of two classes costs more)
                    continue
                if isinstance(i, (tensor, np.ndarray)):
                    found += [i for i in v if isinstance(i, (tensor, np.ndarray))]
                    kwargs[k] = tuple([i._array if isinstance(i, tensor) else i for i in v])
                    break
        elif isinstance(v, (tensor, np.ndarray)):
            found.append(v)
            if isinstance(v, tensor):
                kwargs[k] = v._array
    return found


def track_indices(ctx, found, tensor):
    """Of the index tensors and arrays `found`, the ones node `ctx` keeps for backward (as an
    attribute, directly or in a tuple): a tensor's version is noted for `check_versions`; a
    plain array has no version counter, so the node keeps a copy of it instead."""
    attributes, versions = ctx.__dict__, []
    for x in found:
        is_tensor = isinstance(x, tensor)
        arr = x._array if is_tensor else x
        kept = False
        for name, value in attributes.items():
            if value is arr:
                kept = True
                if not is_tensor:
                    attributes[name] = arr.copy()  # replaces a value: the dict keeps its size
            elif value.__class__ is tuple:
                for i, item in enumerate(value):
                    if item is arr:
                        kept = True
                        if not is_tensor:
                            value = attributes[name] = value[:i] + (arr.copy(),) + value[i + 1:]
        if kept and is_tensor:
            versions.append((x._vc, x._vc[0], arr.shape))
    if versions:
        ctx.saved_versions = list(ctx.saved_versions) + versions


def check_versions(node):
    """Raise if a tensor `node` saved was changed in place since."""
    for counter, version, shape in node.saved_versions:
        if counter[0] != version:
            if shape.__class__ is int:  # a position in `saved` (see snapshot_versions)
                shape = node.saved[shape].shape
            raise RuntimeError(
                f"{node.name()}: one of the variables needed for gradient computation has "
                f"been modified by an inplace operation: a tensor of shape {shape} needed for "
                f"backward was modified in place (version {version} when saved, now "
                f"{counter[0]}); clone it before changing it, or change it after backward")
