"""`Chi2`: the chi-squared distribution of `df` degrees of freedom (PyTorch's
`torch.distributions.Chi2`): Gamma(df / 2, 1/2), so sampling, log_prob, entropy and its KL
are Gamma's."""
from __future__ import annotations

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi2(df) = Gamma(concentration=df / 2, rate=1/2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2
