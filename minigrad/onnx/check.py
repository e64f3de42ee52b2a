"""A second trace on other input values, to find values fixed by accident.

A value the model computes from its inputs by a route the tracer does not see (NumPy after
`np.asarray(x, dtype=other)`, `.item()`, a Python number) is a constant in the trace, right
for the traced inputs only. The model runs again on perturbed inputs, twice: once with every
input's elements moved one place along the array (ids stay in range; whatever depends on
where a value sits, an argmax say, moves), once with floats moved by noise (whatever depends
on the values, a sum say, changes; integers and booleans are moved along the array again).
An op the graph needs whose constants or settings change is an error naming it, rather than
a file that is silently wrong. Either perturbation alone can leave such a value as it was
(noise can keep the argmax where it is, moving keeps the sum): hence both.
"""
from __future__ import annotations

import warnings

import numpy as np

from .errors import UnsupportedOperatorError
from .layer_ops import UNREAD
from .trace import Value


PERTURBATIONS = ("move", "noise")


def perturbed(arr, rng, how):
    """Other values of arr's shape and dtype: with how="noise", floats plus noise; otherwise
    (and for integers and booleans) the elements moved one place along the flattened array (a
    shuffle could leave two elements where they are)."""
    if how == "noise" and arr.dtype.kind == "f":
        return arr + rng.standard_normal(arr.shape).astype(arr.dtype)
    return np.roll(arr.reshape(-1), 1).reshape(arr.shape)


def check_fixed(first, second, needed, outputs):
    """Compare the records `needed` (of Tracer `first`) with Tracer `second`'s, and the
    outputs ((name, Value of the first, Value of the second) triples); raise if a constant or
    a setting of one differs. False if the second run took other operations (nothing to
    compare: a warning says so), else True."""
    for name, a, b in outputs:
        if not _same(a, b):
            raise UnsupportedOperatorError(
                f"onnx.export: output {name!r} is a value the model computed from its inputs "
                f"outside the traced operations ({_HOW}): it would be a constant in the file, "
                f"wrong for other inputs")
    if [r.op for r in first.records] != [r.op for r in second.records]:
        warnings.warn("onnx.export: the model ran other operations for other input values "
                      "(Python control flow on values); the file holds those of the traced "
                      "inputs", stacklevel=4)
        return False
    index = {id(r): i for i, r in enumerate(first.records)}
    for rec in needed:
        other = second.records[index[id(rec)]]
        unread = UNREAD.get(rec.op, ())
        if not (_same(rec.inputs, other.inputs) and _same(
                {k: v for k, v in rec.kwargs.items() if k not in unread},
                {k: v for k, v in other.kwargs.items() if k not in unread})):
            where = f" (in module '{rec.path}')" if rec.path else ""
            raise UnsupportedOperatorError(
                f"onnx.export: {rec.op_name}{where} uses a value that the model computed from "
                f"its inputs outside the traced operations ({_HOW}): it would be a constant "
                f"in the file, wrong for other inputs. Compute it with tensor ops, or with "
                f"NumPy on the input's own array (np.asanyarray keeps it traced)")
    return True


_HOW = ("np.asarray(x, dtype=...), .item(), a reduction of a whole array to a NumPy scalar, or "
        "a Python number, say")


def _same(x, y):
    if isinstance(x, Value) or isinstance(y, Value):
        if not (isinstance(x, Value) and isinstance(y, Value)) or x.kind != y.kind:
            return False
        return x.kind != "const" or (x.shape == y.shape and x.dtype == y.dtype and
                                     np.array_equal(x.array, y.array, equal_nan=True))
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, (tuple, list)):
        return (isinstance(y, (tuple, list)) and len(x) == len(y)
                and all(_same(a, b) for a, b in zip(x, y)))
    try:
        return bool(x == y)
    except (TypeError, ValueError):  # values without a plain equality: nothing to compare
        return True
