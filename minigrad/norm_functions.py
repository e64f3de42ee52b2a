"""Two functions of p-norms under PyTorch's names: `dist` (the p-norm of the difference of two
tensors, broadcast) and `renorm` (each slice along a dim scaled down to a p-norm of at most
maxnorm). Both are built from the vector norm and elementwise ops, so their gradients are
those ops'.
"""
from __future__ import annotations

from .linalg_checks import torch_dtype_name
from .ops.shape import normalize_dim

__all__ = ["dist", "renorm"]


def _floats(op, t):
    if t.dtype.kind != "f":
        raise RuntimeError(f"{op}: input dtype should be either floating point or complex. Got "
                           f"{torch_dtype_name(t.dtype)} instead.")


def dist(input, other, p=2):
    """||input - other||_p over all elements (0-d), for float tensors."""
    from .linalg_norms import vector_norm
    _floats("dist", input)
    return vector_norm(input - other, ord=p)


def renorm(input, p, dim, maxnorm):
    """input with each slice along dim (input.select(dim, i)) whose p-norm exceeds maxnorm
    scaled to norm maxnorm (PyTorch's factor maxnorm / (norm + 1e-7)); the rest unchanged."""
    from .functional import where
    from .linalg_norms import vector_norm
    _floats("renorm", input)
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p = {p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           f"dimensions")
    d = normalize_dim(dim, input.ndim, "renorm")
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = vector_norm(input, ord=p, dim=others, keepdim=True)
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * factor.to(input.dtype)
