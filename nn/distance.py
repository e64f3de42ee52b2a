"""The distance modules of torch.nn: PairwiseDistance and CosineSimilarity, thin wrappers that
keep their options and call `minigrad.nn.functional`."""
from __future__ import annotations

from . import functional as F
from .module import Module


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dim: (B, D), (B, D) -> (B,) (or (B, 1) with
    keepdim=True)."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along `dim`: (B, D), (B, D) -> (B,) for
    dim=1."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
