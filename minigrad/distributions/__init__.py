"""`minigrad.distributions`: probability distributions with sampling, log-probabilities and
entropies, as PyTorch's `torch.distributions`: the scalar families (Normal, Laplace, Cauchy,
Gumbel, StudentT, Exponential, Gamma, Beta, LogNormal, HalfNormal, Uniform, Pareto,
InverseGamma, Kumaraswamy, FisherSnedecor, GeneralizedPareto, VonMises, ContinuousBernoulli),
the discrete ones (Bernoulli, Binomial, Geometric, Poisson, NegativeBinomial, Categorical,
OneHotCategorical and its straight-through form), the relaxed ones (RelaxedBernoulli,
RelaxedOneHotCategorical), the vector ones (MultivariateNormal, LowRankMultivariateNormal,
Dirichlet, LogisticNormal), the matrix ones (Wishart, LKJCholesky over correlation factors),
the ones built from others (Independent, MixtureSameFamily, TransformedDistribution with the
`transforms`), `biject_to` / `transform_to` onto each constraint, and `kl_divergence`.

Sampling draws from minigrad's random stream (`manual_seed` makes it repeatable; the numbers
are not PyTorch's); `log_prob`, `entropy`, `cdf` and `rsample` are differentiable and compute
PyTorch's values.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .folded import HalfCauchy, HalfNormal
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
# their KL pairs join kl_divergence's table
from . import kl_exp_family, kl_lowrank, kl_pareto  # noqa: F401
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .logistic_normal import LogisticNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .student_t import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform, CumulativeDistributionTransform,
                         ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StackTransform, StickBreakingTransform,
                         TanhTransform, Transform, identity_transform)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
           "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
           "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
           "IndependentTransform", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
           "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "LowerCholeskyTransform",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "VonMises",
           "Weibull", "Wishart", "biject_to", "constraints", "identity_transform", "kl_divergence",
           "register_kl", "transform_to", "transforms"]
