"""`VonMises` (PyTorch's `torch.distributions.VonMises`): the circular Normal on angles,
density exp(kappa cos(x - loc)) / (2 pi I0(kappa)). log I0 and log I1 use the polynomial
approximations PyTorch uses (Abramowitz and Stegun 9.8.1-9.8.4, relative error about 1e-7),
so log_prob and variance compute PyTorch's numbers; samples come from Best and Fisher's
rejection sampler in float64, as PyTorch's."""
from __future__ import annotations

import math

import numpy as np

from minigrad import tensor, where
from minigrad.random import generator

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, dtype_name, lazy_property

__all__ = ["VonMises"]

_COEF_SMALL = [[1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2,
                0.32411e-3]]
_COEF_LARGE = [[0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2],
               [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]]


def _eval_poly(y, coef):
    """coef[0] + y (coef[1] + y (...)), Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0, order 0 or 1: a polynomial in (x / 3.75)^2 below 3.75, and
    x - log(x) / 2 + log(polynomial in 3.75 / x) above."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    small = _eval_poly((x / 3.75) ** 2, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


def _rejection_sample(loc, kappa, proposal_r, shape):
    """Best and Fisher (1979): propose f = (1 + r z) / (r + z), z = cos(pi u1), accept by u2;
    u3 picks the sign. float64 arrays of `shape`, wrapped to [-pi, pi)."""
    x, done = np.zeros(shape), np.zeros(shape, bool)
    while not done.all():
        u1, u2, u3 = generator().random((3,) + shape)
        z = np.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = kappa * (proposal_r - f)
        with np.errstate(divide="ignore"):
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        x = np.where(accept & ~done, np.sign(u3 - 0.5) * np.arccos(f), x)
        done |= accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration kappa) per element of the batch; values are angles."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    def _proposal_r(self):
        """The proposal's r, with its Taylor form 1/kappa + kappa for tiny kappa."""
        kappa = self.concentration.detach().numpy().astype(np.float64)
        tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        return np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        loc = self.loc.detach().numpy().astype(np.float64)
        kappa = self.concentration.detach().numpy().astype(np.float64)
        x = _rejection_sample(loc, kappa, self._proposal_r(), shape)
        return tensor(x.astype(dtype_name(self.loc.dtype)))

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=self._validate_args)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        kappa = self.concentration
        return 1 - (_log_modified_bessel_fn(kappa, order=1)
                    - _log_modified_bessel_fn(kappa, order=0)).exp()
