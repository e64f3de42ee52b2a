"""Helpers the distributions share, at PyTorch's `torch.distributions.utils` names:
broadcasting parameters, converting between probabilities and logits, and `lazy_property`;
plus `draw`, which takes samples from minigrad's seeded NumPy stream."""
from __future__ import annotations

import numbers

import numpy as np

from minigrad import Tensor, finfo, get_default_dtype, tensor
from minigrad.random import generator

__all__ = ["broadcast_all", "clamp_probs", "draw", "expand_probs_or_logits", "lazy_property",
           "logits_to_probs", "probs_or_logits", "probs_to_logits", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]


class lazy_property:
    """A parameter computed from another on first use and then kept (Categorical's probs from
    its logits, or the reverse), as PyTorch's `lazy_property`: until then the instance's
    `__dict__` lacks it, which tells the argument checks which form was given."""

    def __init__(self, compute):
        self.compute = compute
        self.__doc__ = compute.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.compute(instance)
        instance.__dict__[self.compute.__name__] = value
        return value


class BinaryProbsOrLogits:
    """`probs` and `logits` of a distribution over one event's chance, given in either form:
    the other is computed from it on first use (lazy_property), as PyTorch's Bernoulli-like
    distributions each write out."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


def broadcast_all(*values):
    """Tensors of one shape from tensors and numbers (numbers take the tensors' dtype, or the
    default float dtype if all are numbers), as PyTorch's `broadcast_all`."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else get_default_dtype()
    values = [v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(tuple(v.shape) for v in values))
    return [v if tuple(v.shape) == shape else v.expand(shape) for v in values]


def probs_or_logits(probs, logits):
    """(name, tensor, batch shape) of the one of `probs` and `logits` given: the batch shape
    is () for a number, as PyTorch's relaxed and continuous Bernoullis have it."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    given = probs if probs is not None else logits
    (param,) = broadcast_all(given)
    shape = () if isinstance(given, numbers.Number) else tuple(param.shape)
    return ("probs" if probs is not None else "logits"), param, shape


def expand_probs_or_logits(old, new, batch_shape):
    """`new`'s probs and/or logits (whichever `old` holds) and `_param`: old's, expanded."""
    for name in ("probs", "logits"):
        if name in old.__dict__:
            new.__dict__[name] = new._param = old.__dict__[name].expand(tuple(batch_shape))


def clamp_probs(probs):
    """probs clamped to [eps, 1 - eps], eps the dtype's."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """log(p) (log(p) - log(1 - p) when is_binary) of probabilities clamped to [eps, 1 - eps],
    so that 0 and 1 give finite logits."""
    from minigrad import log1p
    p = clamp_probs(probs)
    return p.log() - log1p(-p) if is_binary else p.log()


def logits_to_probs(logits, is_binary=False):
    """sigmoid(logits) when is_binary, else the softmax over the last dim."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def _tril_positions(n, diag):
    """The flat positions in an (n, n) matrix of its entries on or below diagonal `diag`,
    in row order."""
    rows, cols = np.nonzero(np.arange(n) < np.arange(n)[:, None] + (diag + 1))
    return rows * n + cols


def vec_to_tril_matrix(vec, diag=0):
    """(..., N) -> (..., D, D): the lower triangle (from diagonal `diag` down) filled from
    `vec` in row order, zeros elsewhere, as PyTorch's; differentiable in `vec`."""
    from minigrad import cat, zeros
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > float(finfo(vec.dtype).eps):
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the "
                         f"lower triangular part of a square D x D matrix.")
    n = round(n)
    source = np.zeros(n * n, np.int64)  # index 0 is the zero in front of vec
    source[_tril_positions(n, diag)] = np.arange(1, m + 1)
    padded = cat([zeros(*vec.shape[:-1], 1, dtype=vec.dtype), vec], -1)
    return padded[..., tensor(source)].reshape(tuple(vec.shape[:-1]) + (n, n))


def tril_matrix_to_vec(mat, diag=0):
    """(..., D, D) -> (..., N): the lower triangle from diagonal `diag` down, in row order."""
    n = mat.shape[-1]
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat[..., tensor(_tril_positions(n, diag))]


def draw(method, shape, dtype, *params):
    """Samples of `shape` in `dtype` from minigrad's stream: `method` names a NumPy Generator
    method ("standard_gamma", "poisson", ...) called on the parameters' arrays, broadcast to
    `shape`. Outside autograd."""
    arrays = [np.broadcast_to(p.detach().numpy(), shape) for p in params]
    out = getattr(generator(), method)(*arrays, size=shape) if arrays else \
        getattr(generator(), method)(size=shape)
    return tensor(np.asarray(out).astype(dtype_name(dtype)))


def dtype_name(dtype):
    return str(dtype).replace("minigrad.", "").replace("torch.", "")
