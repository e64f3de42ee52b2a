"""`diff`: the n-th forward difference along a dim, out[i] = x[i + 1] - x[i] applied n times
(after joining `prepend` and `append` to the input), as `torch.diff`; for bools the
difference is `!=`. Built from narrow, subtraction and cat, so its gradients of every order
come from those ops.
"""
from __future__ import annotations

from .ops._util import normalize_dim

__all__ = ["diff"]


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th difference along `dim`: size L + (prepend and append sizes) - n there (0 when
    n exceeds it)."""
    from .functional import cat
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, input.ndim, "diff")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        later, earlier = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = later != earlier if x.dtype.kind == "b" else later - earlier
    return x
