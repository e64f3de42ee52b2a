"""The in-place random fills PyTorch tensors have beside `normal_` and `uniform_`:
`bernoulli_` (and `Tensor.bernoulli`), `random_` (integers from a range), `exponential_`,
`geometric_`, `log_normal_`, `cauchy_` (`poisson`, counts drawn at given rates, is in
sampling.py).

Every draw comes from minigrad's seeded generator (`manual_seed`, or `generator=`), so a run
repeats itself. `bernoulli_`, `random_` and `exponential_` draw PyTorch's numbers
(random_draws.py); `geometric_`, `log_normal_` and `cauchy_` follow the same distributions
from the same stream with other numbers (tests/test_tensor_random.py checks them
statistically). Arguments out
of a distribution's range, and dtypes it cannot fill, raise PyTorch's errors. A fill is not
recorded by autograd: like `normal_`, it is refused on a tensor that requires grad while
recording a graph (an initialiser writes weights under no_grad).

`Tensor` inherits the methods (see tensor.py).
"""
from __future__ import annotations

import numpy as np

from .linalg_checks import torch_dtype_name
from . import tensor as _t
from . import random_draws as _draws
from .random import engine as _engine, generator as _rng

# the largest integer each float dtype holds with every smaller one (random_()'s default)
_FLOAT_TOP = {np.dtype(np.float16): 2 ** 11, np.dtype(np.float32): 2 ** 24,
              np.dtype(np.float64): 2 ** 53}


def _continuous(t, what):
    if t.dtype.kind != "f":
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{torch_dtype_name(t.dtype)}")


def _float_only(t, op):
    if t.dtype.kind != "f":
        raise NotImplementedError(f'"{op}_cpu" not implemented for '
                                  f"'{torch_dtype_name(t.dtype)}'")


def _probabilities(p):
    """p (a number or a tensor) as an array, checked to lie in [0, 1]."""
    probs = np.asarray(_t.array_of(p), dtype=np.float64)
    if probs.ndim == 0 and not 0 <= probs <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if np.any((probs < 0) | (probs > 1) | np.isnan(probs)):
        raise RuntimeError("bernoulli: expected every probability p to satisfy 0 <= p <= 1")
    return probs


def _range(t, low, high):
    """[low, high) checked against t's dtype, as random_ takes them."""
    dtype = t.dtype
    if high is None:  # random_() or random_(to)
        if low is not None:
            low, high = 0, low
        elif dtype.kind == "b":
            return 0, 2
        elif dtype.kind == "f":
            return 0, _FLOAT_TOP[dtype] + 1
        else:
            return 0, int(np.iinfo(dtype).max) + 1
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dtype.kind in "biu":
        info = np.iinfo(np.uint8) if dtype.kind == "b" else np.iinfo(dtype)
        top = 1 if dtype.kind == "b" else info.max
        if low < info.min:
            raise RuntimeError(f"random_: from is out of bounds for {torch_dtype_name(dtype)}")
        if high - 1 > top:
            raise RuntimeError(f"random_: to - 1 is out of bounds for {torch_dtype_name(dtype)}")
    return low, high


class RandomFillMethods:
    def bernoulli_(self, p=0.5, *, generator=None):
        """Each element 1 with probability p (a number, or a tensor broadcast to this shape),
        else 0, in this tensor's dtype."""
        probs = _probabilities(p)
        if isinstance(p, _t.Tensor) and p.dtype != np.float64:
            probs = probs.astype(np.float32)  # drawn against float32 uniforms, as PyTorch
        if probs.size == 1:  # one p for every element (no array of n copies of it)
            np.broadcast_shapes(probs.shape, self.shape)
            probs = probs.reshape(1)
        else:
            probs = np.broadcast_to(probs, self.shape).reshape(-1)
        return self._inplace("bernoulli_", lambda d: np.copyto(
            d, _draws.bernoulli(_engine(generator), probs, d.size).reshape(d.shape),
            casting="unsafe"))

    def bernoulli(self, p=None, *, generator=None):
        """A new tensor of 0s and 1s: 1 with probability p, or with this tensor's values as
        the probabilities (a float tensor's)."""
        if p is None:
            _float_only(self, "bernoulli_tensor_cpu_p_")
            p = self
        out = _t.Tensor._wrap(np.zeros(self.shape, dtype=self.dtype))
        return out.bernoulli_(p, generator=generator)

    def random_(self, from_=None, to=None, *, generator=None, **kwargs):
        """Integers drawn uniformly from [from, to): random_(to) from [0, to), random_() from
        0 to the dtype's largest integer (2**24 for float32, every integer held exactly)."""
        if "from" in kwargs:  # PyTorch's keyword, a reserved word in Python
            from_ = kwargs.pop("from")
        if kwargs:
            raise TypeError(f"random_() got unexpected keyword arguments {sorted(kwargs)}")
        if from_ is None and to is None:
            return self._inplace("random_", lambda d: np.copyto(
                d, _draws.full_range(_engine(generator), d.size, d.dtype).reshape(d.shape),
                casting="unsafe"))
        low, high = _range(self, from_, to)
        return self._inplace("random_", lambda d: np.copyto(
            d, _draws.integers(_engine(generator), d.size, low, high, d.dtype).reshape(d.shape),
            casting="unsafe"))

    def exponential_(self, lambd=1.0, *, generator=None):
        """Draws of the exponential distribution of rate lambd (mean 1 / lambd)."""
        _continuous(self, "Exponential")
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        return self._inplace("exponential_", lambda d: np.copyto(
            d, _draws.exponential(_engine(generator), d.size, lambd).reshape(d.shape),
            casting="unsafe"))

    def geometric_(self, p, *, generator=None):
        """Draws of the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
        if self.dtype.kind == "b":
            raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
        return self._inplace("geometric_", lambda d: np.copyto(
            d, _rng(generator).geometric(p, d.shape), casting="unsafe"))

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        """Draws of exp(N(mean, std**2))."""
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        _float_only(self, "log_normal")
        return self._inplace("log_normal_", lambda d: np.copyto(
            d, _rng(generator).lognormal(mean, std, d.shape), casting="unsafe"))

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        """Draws of the Cauchy distribution centred on median with scale sigma."""
        _continuous(self, "Cauchy")
        if not sigma > 0:
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
        return self._inplace("cauchy_", lambda d: np.copyto(
            d, median + sigma * _rng(generator).standard_cauchy(d.shape), casting="unsafe"))

