"""Broadcasting made explicit: `broadcast_shapes` (the shape that shapes broadcast to, a
tuple: minigrad's shapes are tuples) and `broadcast_tensors` (each tensor expanded to it,
differentiable: the gradient is summed back over the expanded dims).
"""
from __future__ import annotations

import numpy as np

__all__ = ["broadcast_shapes", "broadcast_tensors"]


def broadcast_shapes(*shapes):
    """The broadcast shape of `shapes` (tuples, or ints for 1-D shapes)."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    result = ()
    for i, shape in enumerate(shapes):
        try:
            result = np.broadcast_shapes(result, shape)
        except ValueError:
            raise RuntimeError(f"broadcast_shapes: shape {shape} (argument {i}) does not "
                               f"broadcast to {list(result)}") from None
    return tuple(int(n) for n in result)


def broadcast_tensors(*tensors):
    """The tensors expanded to their broadcast shape, as a tuple."""
    try:
        shape = broadcast_shapes(*(t.shape for t in tensors))
    except RuntimeError:
        shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
        raise RuntimeError(f"broadcast_tensors: the shapes {shapes} do not broadcast to one "
                           f"shape") from None
    return tuple(t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors)
