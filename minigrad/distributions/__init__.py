"""`minigrad.distributions`: probability distributions with sampling, log-probabilities and
entropies, as PyTorch's `torch.distributions` (`Bernoulli`, `Categorical`, `Normal`,
`Uniform`, `kl_divergence`).

Sampling draws from minigrad's random stream (`manual_seed` makes it repeatable; the numbers
are not PyTorch's); `log_prob`, `entropy` and `rsample` are differentiable and compute
PyTorch's values.
"""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
