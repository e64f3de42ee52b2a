"""`LKJCholesky` (PyTorch's `torch.distributions.LKJCholesky`): the LKJ distribution over
D x D correlation matrices, given by their lower Cholesky factors L, density proportional to
det(L L^T)^(concentration - 1); concentration 1 is uniform over correlation matrices, larger
values favour the identity. Samples use the onion method (Lewandowski, Kurowicka and Joe,
2009), as PyTorch's: each row's squared length off the diagonal is a Beta draw, its direction
uniform -- with the Beta concentrations of the method, where PyTorch's differ (see below)."""
from __future__ import annotations

import math

from minigrad import arange, cat, diag_embed, finfo, lgamma, mvlgamma, no_grad, randn, where

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ(dim, concentration) over (..., dim, dim) Cholesky factors; batch shape is the
    concentration's."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = arange(dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        # row i's squared off-diagonal length ~ Beta(i / 2, marginal - (i - 1) / 2) (row 0's
        # is not used). PyTorch's first concentration is offset + 0.5 = i - 1/2, which gives
        # rows from the third on the wrong marginals (each correlation's variance should be
        # 1 / (2 concentration + dim - 1)); this is the onion method's i / 2.
        self._beta = Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(tuple(self.concentration.shape), (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        return self._expanded(new, batch_shape)

    def sample(self, sample_shape=()):
        """Row i: sqrt(y_i) times a uniform unit vector in its first i coordinates, and the
        diagonal sqrt(1 - y_i), so that the row has unit length."""
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = randn(*self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            # row 0 is all zeros: it stays so (its length 0 is not divided by)
            norm = u.norm(dim=-1, keepdim=True)
            u = u / where(norm == 0, 1.0, norm)
            w = y.sqrt() * u
            tiny = float(finfo(w.dtype).tiny)
            return w + diag_embed((1 - (w ** 2).sum(-1)).clamp(min=tiny).sqrt())

    def log_prob(self, value):
        """sum_i (2 (c - 1) + D - i) log L_ii over i = 2..D, minus the log normaliser."""
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalised = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normaliser = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - \
            lgamma(alpha) * dm1
        return unnormalised - normaliser
