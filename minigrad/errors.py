"""The exception types of minigrad's bad-input errors, chosen so that a PyTorch program's
`except RuntimeError` (or `except IndexError`) runs where PyTorch's would.

PyTorch raises RuntimeError for most errors found while an op runs: shapes that do not fit,
an index past the end of a dim in gather or scatter, a dtype the op does not take, a negative
size. minigrad used to raise ValueError, IndexError and TypeError for these, and its own
callers catch those, so each type here derives from both: PyTorch's type first and minigrad's
former one second. A handler of either kind catches it.
"""
from __future__ import annotations

__all__ = ["DTypeError", "DTypeNotImplementedError", "DivisionByZeroError", "IndexRangeError",
           "InvalidValueError", "MissingDirectoryError", "ShapeError", "broadcast_error",
           "negative_size", "size_mismatch"]


class ShapeError(RuntimeError, ValueError):
    """Shapes or sizes the op cannot combine: operands that do not broadcast, a matrix
    product's inner sizes, a reshape to another number of elements, a layer's input width."""


class InvalidValueError(RuntimeError, ValueError):
    """An argument's value that PyTorch rejects with RuntimeError while the op runs: a negative
    size, a zero step, a negative standard deviation, probabilities outside [0, 1]."""


class IndexRangeError(RuntimeError, IndexError):
    """An index tensor's entry past the end of its dim in gather, scatter and their kin, and a
    class index past the number of classes in a loss (PyTorch: RuntimeError)."""


class DTypeError(RuntimeError, TypeError):
    """A dtype the op does not take, or operands whose dtypes differ where the op needs one
    (PyTorch: RuntimeError, as in "expected m1 and m2 to have the same dtype")."""


class DivisionByZeroError(RuntimeError, ZeroDivisionError):
    """An integer division, floor division, remainder or fmod by zero (PyTorch: RuntimeError
    "ZeroDivisionError")."""


class MissingDirectoryError(RuntimeError, FileNotFoundError):
    """`save` to a path whose directory does not exist (PyTorch: RuntimeError "Parent
    directory ... does not exist.")."""


class DTypeNotImplementedError(NotImplementedError, TypeError):
    """An op that has no kernel for the dtype, as bitwise ops on floats (PyTorch:
    NotImplementedError, "not implemented for 'Float'")."""


def negative_size(op, shape):
    """The InvalidValueError of op `op` asked for a tensor of `shape`, which has a negative
    size, with PyTorch's words."""
    return InvalidValueError(f"{op}: negative dimension in size {shape} (Trying to create "
                             f"tensor with negative dimension {min(shape)}: {list(shape)})")


def size_mismatch(a, b):
    """PyTorch's words for shapes `a` and `b` that do not broadcast, naming the last dim at
    fault (counted in the broadcast shape), or None when they broadcast."""
    n = max(len(a), len(b))
    for back in range(1, min(len(a), len(b)) + 1):
        if a[-back] != b[-back] and 1 not in (a[-back], b[-back]):
            return (f"The size of tensor a ({a[-back]}) must match the size of tensor b "
                    f"({b[-back]}) at non-singleton dimension {n - back}")
    return None


def broadcast_error(name, *shapes):
    """The ShapeError of op `name` whose operands' `shapes` do not broadcast: minigrad's
    message naming the op and every shape, then PyTorch's for the first pair at fault."""
    shapes = [tuple(int(n) for n in s) for s in shapes]
    listed = ", ".join(map(str, shapes[:-1])) + f" and {shapes[-1]}"
    detail, so_far = None, shapes[0]
    for s in shapes[1:]:
        detail = size_mismatch(so_far, s)
        if detail:
            break
        n = max(len(s), len(so_far))
        padded = ((1,) * (n - len(so_far)) + so_far, (1,) * (n - len(s)) + s)
        so_far = tuple(y if x == 1 else x for x, y in zip(*padded))
    return ShapeError(f"{name}: shapes {listed} cannot be broadcast together"
                      + (f". {detail}" if detail else ""))
