"""Top-level functions that combine tensors (`minigrad.cat`, `minigrad.where`, ...)."""
from __future__ import annotations

import numpy as np

from . import dtypes, ops
from .random import next_seed
from .tensor import Tensor, array_of
from .tensor_operators import as_dtype, binary


def _as_tensor(x, like=None):
    """`x` as a Tensor; a Python number next to a tensor `like` takes that tensor's dtype."""
    if isinstance(x, Tensor):
        return x
    dtype = like.dtype if like is not None and isinstance(x, (int, float)) else None
    return Tensor._wrap(np.asarray(x, dtype=dtype))


def _promoted_all(tensors, op):
    """The operands in their common dtype (PyTorch's promotion), each one standing for itself
    in the graph."""
    tensors = list(tensors)
    kinds = {t._array.dtype if isinstance(t, Tensor) else None for t in tensors}
    if len(kinds) == 1 and None not in kinds:
        return tensors  # tensors of one dtype (cat of heads, stack of a batch): nothing to do
    dtype = dtypes.computation_dtype(tensors, op) if tensors else None
    return [as_dtype(t, dtype) for t in tensors]


def cat(tensors, dim=0):
    """Join tensors along an existing dim: shapes must match except in `dim`."""
    return ops.Cat.apply(*_promoted_all(tensors, "cat"), dim=dim)


concat = cat


def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim."""
    return ops.Stack.apply(*_promoted_all(tensors, "stack"), dim=dim)


def where(condition, input=None, other=None):
    """Elements of `input` where `condition` is True, else of `other`; with the condition
    alone, the indices of its nonzero elements, one tensor per dim (nonzero(as_tuple=True))."""
    if input is None and other is None:
        return _as_tensor(condition).nonzero(as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: give both input and other, or neither (where(condition) is "
                        "nonzero(condition, as_tuple=True))")
    cond = np.asarray(array_of(condition))
    if cond.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    try:
        np.broadcast_shapes(cond.shape, np.shape(array_of(input)), np.shape(array_of(other)))
    except ValueError:
        raise ValueError(f"where: shapes {cond.shape}, {np.shape(array_of(input))} and "
                         f"{np.shape(array_of(other))} cannot be broadcast together") from None
    cond = condition if isinstance(condition, Tensor) else cond  # a tensor's changes are seen
    return ops.Where.apply(cond, *_promoted_all((input, other), "where"))


def maximum(a, b): return binary(ops.Maximum, "maximum", a, b)
def minimum(a, b): return binary(ops.Minimum, "minimum", a, b)
def exp(x): return x.exp()
def log(x): return x.log()
def sqrt(x): return x.sqrt()
def tanh(x): return x.tanh()
def sigmoid(x): return x.sigmoid()
def relu(x): return x.relu()
def abs(x): return x.abs()
def gelu(x, approximate="none"): return x.gelu(approximate)
def clamp(x, min=None, max=None): return x.clamp(min, max)
def matmul(a, b):
    return ops.MatMul.apply(*(x if isinstance(x, Tensor) else np.asarray(x) for x in (a, b)))
def sum(x, dim=None, keepdim=False): return x.sum(dim, keepdim)
def mean(x, dim=None, keepdim=False): return x.mean(dim, keepdim)
def logsumexp(x, dim=None, keepdim=False): return x.logsumexp(dim, keepdim)
def argmax(x, dim=None, keepdim=False): return x.argmax(dim, keepdim)
def softmax(x, dim=-1): return x.softmax(dim)
def log_softmax(x, dim=-1): return x.log_softmax(dim)
def masked_fill(x, mask, value): return x.masked_fill(mask, value)
def gather(x, dim, index): return x.gather(dim, index)
def index_select(x, dim, index): return x.index_select(dim, index)
def transpose(x, dim0, dim1): return x.transpose(dim0, dim1)
def reshape(x, shape): return x.reshape(shape)
def split(x, split_size, dim=0): return x.split(split_size, dim)
def chunk(x, chunks, dim=0): return x.chunk(chunks, dim)


def dropout(x, p=0.5, training=True, seed=None):
    """Zero elements with probability p and scale the survivors by 1/(1-p) (inverted dropout).

    The mask is a counter-based hash of a seed drawn from `manual_seed`'s generator, so the
    same seed always drops the same elements.
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    return ops.Dropout.apply(x, p=p, seed=next_seed() if seed is None else seed)


def one_hot(indices, num_classes=-1):
    """int64 tensor with a 1 at each index along a new last dim (no gradient, as in PyTorch)."""
    idx = np.asarray(array_of(indices))
    if not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"one_hot: indices must be integers, got dtype {idx.dtype}")
    n = int(idx.max()) + 1 if num_classes == -1 else num_classes
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"one_hot: indices must be in [0, {n}), got values from "
                         f"{idx.min()} to {idx.max()}")
    return Tensor._wrap((idx[..., None] == np.arange(n)).astype(np.int64))


# --- PyTorch's function forms of Tensor methods (torch.sin(x) is x.sin()) ----------------------
# Several names (max, min, any, all, round, pow) shadow Python's builtins inside this module
# only; minigrad's own code above never calls those builtins.

def _lhs(x, other):
    """x as a tensor (a number takes the dtype of `other` when that is a tensor)."""
    return _as_tensor(x, other if isinstance(other, Tensor) else None)


def sin(x): return x.sin()
def cos(x): return x.cos()
def rsqrt(x): return x.rsqrt()
def square(x): return x.square()
def reciprocal(x): return x.reciprocal()
def floor(x): return x.floor()
def ceil(x): return x.ceil()
def round(x): return x.round()
def trunc(x): return x.trunc()
def sign(x): return x.sign()
def neg(x): return -x
def pow(x, exponent): return _lhs(x, exponent) ** exponent
def clip(x, min=None, max=None): return x.clamp(min, max)
def clamp_min(x, min): return x.clamp(min=min)
def clamp_max(x, max): return x.clamp(max=max)
def remainder(a, b): return _lhs(a, b) % b
def floor_divide(a, b): return _lhs(a, b) // b
def isnan(x): return x.isnan()
def isinf(x): return x.isinf()
def isfinite(x): return x.isfinite()
def logical_not(x): return x.logical_not()
def logical_and(a, b): return a.logical_and(b)
def logical_or(a, b): return a.logical_or(b)
def logical_xor(a, b): return a.logical_xor(b)
def bitwise_not(x): return x.bitwise_not()
def bitwise_and(a, b): return _lhs(a, b) & b
def bitwise_or(a, b): return _lhs(a, b) | b
def bitwise_xor(a, b): return _lhs(a, b) ^ b
def bitwise_left_shift(a, b): return _lhs(a, b) << b
def bitwise_right_shift(a, b): return _lhs(a, b) >> b


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return a.isclose(b, rtol, atol, equal_nan)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return a.allclose(b, rtol, atol, equal_nan)


def equal(a, b): return a.equal(b)
def any(x, dim=None, keepdim=False): return x.any(dim, keepdim)
def all(x, dim=None, keepdim=False): return x.all(dim, keepdim)
def amax(x, dim=None, keepdim=False): return x.amax(dim, keepdim)
def amin(x, dim=None, keepdim=False): return x.amin(dim, keepdim)
def argmin(x, dim=None, keepdim=False): return x.argmin(dim, keepdim)


def var(x, dim=None, keepdim=False, unbiased=True, correction=None):
    return x.var(dim, keepdim, unbiased, correction)


def std(x, dim=None, keepdim=False, unbiased=True, correction=None):
    return x.std(dim, keepdim, unbiased, correction)


def cumsum(x, dim, dtype=None): return x.cumsum(dim, dtype)
def norm(x, p="fro", dim=None, keepdim=False): return x.norm(p, dim, keepdim)
def mm(a, b): return a.mm(b)
def bmm(a, b): return a.bmm(b)
def dot(a, b): return a.dot(b)
def outer(a, b): return a.outer(b)
def tril(x, diagonal=0): return x.tril(diagonal)
def triu(x, diagonal=0): return x.triu(diagonal)
def sort(x, dim=-1, descending=False, stable=False): return x.sort(dim, descending)
def argsort(x, dim=-1, descending=False, stable=False): return x.argsort(dim, descending)
def topk(x, k, dim=-1, largest=True, sorted=True): return x.topk(k, dim, largest, sorted)
def nonzero(x, as_tuple=False): return x.nonzero(as_tuple)


def unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return x.unique(sorted, return_inverse, return_counts, dim)


def masked_select(x, mask): return x.masked_select(mask)


def scatter(x, dim, index, src=None, value=None, reduce=None):
    return x.scatter(dim, index, src, value, reduce)


def scatter_add(x, dim, index, src): return x.scatter_add(dim, index, src)
def index_fill(x, dim, index, value): return x.index_fill(dim, index, value)
def index_add(x, dim, index, source, alpha=1): return x.index_add(dim, index, source, alpha)
def flatten(x, start_dim=0, end_dim=-1): return x.flatten(start_dim, end_dim)
def squeeze(x, dim=None): return x.squeeze(dim)
def unsqueeze(x, dim): return x.unsqueeze(dim)
def permute(x, dims): return x.permute(dims)
def t(x): return x.t()
def unbind(x, dim=0): return x.unbind(dim)
def select(x, dim, index): return x.select(dim, index)
def narrow(x, dim, start, length): return x.narrow(dim, start, length)
def flip(x, dims): return x.flip(dims)
def roll(x, shifts, dims=None): return x.roll(shifts, dims)
def movedim(x, source, destination): return x.movedim(source, destination)
def repeat_interleave(x, repeats, dim=None): return x.repeat_interleave(repeats, dim)
def broadcast_to(x, size): return x.expand(size)
def numel(x): return x.numel()
def is_tensor(obj): return isinstance(obj, Tensor)
def is_floating_point(x): return x.is_floating_point()


def max(x, dim=None, keepdim=False):
    """The largest element; with dim, (values, indices); with a tensor, the elementwise max."""
    return x.max(dim, keepdim)


def min(x, dim=None, keepdim=False):
    return x.min(dim, keepdim)


def add(x, other, alpha=1): return _lhs(x, other) + (other * alpha if alpha != 1 else other)
def sub(x, other, alpha=1): return _lhs(x, other) - (other * alpha if alpha != 1 else other)
def mul(x, other): return _lhs(x, other) * other


def div(x, other, rounding_mode=None):
    """x / other; rounding_mode "floor" rounds down (as //) and "trunc" toward zero."""
    if rounding_mode == "floor":
        return floor_divide(x, other)
    q = _lhs(x, other) / other
    if rounding_mode == "trunc":
        q = q.trunc()
        return q if _as_tensor(x).is_floating_point() or (
            isinstance(other, Tensor) and other.is_floating_point()) else q.long()
    if rounding_mode is not None:
        raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got "
                         f"{rounding_mode!r}")
    return q


def einsum(equation, *operands):
    """Sums of products given as an index equation, e.g. einsum("bij,bjk->bik", a, b)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return ops.Einsum.apply(*[_as_tensor(o) for o in operands], equation=equation)


for _name in ops.reduce.ALIASED:  # axis= and keepdims= as in torch.sum(x, axis=0)
    globals()[_name] = ops.reduce.dim_aliases(globals()[_name])
