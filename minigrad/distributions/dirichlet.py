"""`Dirichlet`: a distribution over the probability simplex of K categories (PyTorch's
`torch.distributions.Dirichlet`), parameters (B..., K); samples are normalised Gamma draws,
so `rsample`'s gradient is Gamma's implicit one carried through the normalisation."""
from __future__ import annotations

from minigrad import Tensor, digamma, finfo, int64, lgamma, one_hot, where, xlogy, zeros_like

from . import constraints
from .distribution import Distribution
from .gamma_sampling import standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """Dir(concentration): concentration (B..., K), positive; event shape (K,)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, Tensor) or concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """(a - 1)+ normalised; where every a < 1 (the density is unbounded at every corner)
        the first corner, as PyTorch's (its argmax of a row of 0 / 0 picks index 0)."""
        concm1 = (self.concentration - 1).clamp(min=0.0)
        below = (self.concentration < 1).all(-1, keepdim=True)
        # a divisor of 1 in the corner rows: 0 / 0 there would send NaN into the gradient
        mode = concm1 / where(below, 1.0, concm1.sum(-1, keepdim=True))
        corner = one_hot(zeros_like(below[..., 0], dtype=int64), concm1.shape[-1]).to(mode.dtype)
        return where(below, corner, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        """g / sum(g) for independent g_k ~ Gamma(a_k, 1): shape S + B + (K,)."""
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(shape))
        tiny = float(finfo(g.dtype).tiny)
        return (g / g.sum(-1, keepdim=True)).clamp(min=tiny, max=1 - float(finfo(g.dtype).eps))

    def log_prob(self, value):
        """sum_k (a_k - 1) log x_k + lgamma(sum a) - sum_k lgamma(a_k)."""
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return xlogy(a - 1.0, value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    def entropy(self):
        a = self.concentration
        k, a0 = a.shape[-1], a.sum(-1)
        return (lgamma(a).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((a - 1.0) * digamma(a)).sum(-1))
