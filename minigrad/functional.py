"""Top-level functions that combine tensors (`minigrad.cat`, `minigrad.where`, ...)."""
from __future__ import annotations

import inspect

import numpy as np

from . import dtypes, ops
from .errors import DTypeError, InvalidValueError, broadcast_error
from .linalg_checks import torch_dtype_name
from .random import engine, next_seed, pytorch_dropout_enabled
from .scalar_conversion import checked_scalar
from .tensor import Tensor, array_of
from .tensor_operators import as_dtype, binary


_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


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
        raise DTypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    try:
        np.broadcast_shapes(cond.shape, np.shape(array_of(input)), np.shape(array_of(other)))
    except ValueError:
        raise broadcast_error("where", cond.shape, np.shape(array_of(input)),
                              np.shape(array_of(other))) from None
    cond = condition if isinstance(condition, Tensor) else cond  # a tensor's changes are seen
    if isinstance(input, _NUMBERS) or isinstance(other, _NUMBERS):
        # a number converted to the result's dtype is range-checked, as PyTorch's (except
        # into float16, where PyTorch rounds it: 1e39 is inf there, an error for float32)
        dtype = dtypes.computation_dtype([input, other], "where")
        with np.errstate(over="ignore"):
            input, other = (checked_scalar(x, dtype if dtype != np.float16 else np.float64)
                            .astype(dtype) if isinstance(x, _NUMBERS) else x
                            for x in (input, other))
    return ops.Where.apply(cond, *_promoted_all((input, other), "where"))


def maximum(input, other): return binary(ops.Maximum, "maximum", input, other)
def minimum(input, other): return binary(ops.Minimum, "minimum", input, other)


def matmul(input, other):
    return ops.MatMul.apply(*(x if isinstance(x, Tensor) else np.asarray(x)
                              for x in (input, other)))


def dropout(x, p=0.5, training=True, seed=None):
    """Zero elements with probability p and scale the survivors by 1/(1-p) (inverted dropout).

    By default the mask is PyTorch's, drawn from `manual_seed`'s generator as its CPU dropout
    draws it (`bernoulli_(1 - p)` over x's memory order), so after the same seed the same
    elements as in PyTorch are dropped. With `seed`, or under
    `random.use_pytorch_dropout(False)` (then with a seed drawn from that generator), it is a
    counter-based hash of the seed: the same seed always drops the same elements.
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    if seed is None and pytorch_dropout_enabled():  # PyTorch's mask, from its draws
        from .random_draws import dropout_mask, fused_dropout
        arr = array_of(x)
        if arr.size == 0:
            return x
        gen = engine()
        if fused_dropout(gen, arr):
            return ops.Dropout.apply(x, p=p, seed=0, gen=gen)  # drawn in the multiply's pass
        # drawn in x's memory order, as PyTorch's empty_like and its iterator
        mask = dropout_mask(gen, arr.shape, p, arr.dtype, like=arr)
        return ops.Dropout.apply(x, p=p, seed=0, mask=mask)
    return ops.Dropout.apply(x, p=p, seed=next_seed() if seed is None else seed)


def one_hot(indices, num_classes=-1):
    """int64 tensor with a 1 at each index along a new last dim (no gradient, as in PyTorch)."""
    idx = np.asarray(array_of(indices))
    if not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"one_hot: indices must be integers, got dtype {idx.dtype}")
    n = int(idx.max()) + 1 if num_classes == -1 else num_classes
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        must = "non-negative" if idx.min() < 0 else "smaller than num_classes"
        raise InvalidValueError(f"one_hot: indices must be in [0, {n}), got values from "
                                f"{idx.min()} to {idx.max()}: Class values must be {must}.")
    return Tensor._wrap((idx[..., None] == np.arange(n)).astype(np.int64))


# --- PyTorch's function forms of Tensor methods (torch.sin(x) is x.sin()) ----------------------
# Several names (max, min, any, all, round, pow, sum, abs) shadow Python's builtins inside this
# module only; minigrad's own code here never calls those builtins.

def _method_form(name):
    """The function `name(input, ...)`, which calls `input.name(...)`: the method's signature
    (its `self` named `input`, as PyTorch names it) and docstring."""
    method = getattr(Tensor, name)

    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    self, *params = inspect.signature(method).parameters.values()
    function.__signature__ = inspect.Signature([self.replace(name="input"), *params])
    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__ or f"`input.{name}(...)`, the Tensor method."
    return function


# the methods whose function form takes the same arguments in the same order
_METHOD_FORMS = (
    "abs", "all", "allclose", "amax", "amin", "any", "argmax", "argmin", "argsort", "bincount",
    "bitwise_not",
    "bmm", "ceil", "chunk", "clamp", "cos", "cumsum", "dot", "equal", "exp", "flatten", "floor",
    "gather", "gelu", "index_add", "index_fill", "index_put", "index_select",
    "is_floating_point", "isclose",
    "isfinite", "isinf", "isnan", "log", "log_softmax", "logical_not", "logsumexp", "masked_fill",
    "masked_select", "max", "mean", "min", "mm", "movedim", "narrow", "nonzero", "norm", "numel",
    "outer", "reciprocal", "relu", "roll", "round", "rsqrt", "scatter",
    "scatter_add", "select", "sigmoid", "sign", "sin", "softmax", "sort", "sqrt",
    "square", "squeeze", "std", "sum", "t", "tan", "tanh", "topk", "transpose", "tril", "triu",
    "trunc",
    "unbind", "unique", "unsqueeze", "var")
globals().update({_name: _method_form(_name) for _name in _METHOD_FORMS})


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """`input.repeat_interleave(repeats, dim)`; with `input` alone, a 1-D integer tensor of
    counts (C,), each position i repeated input[i] times: arange(C).repeat_interleave(input),
    of input's dtype (PyTorch's form for expanding segment lengths into segment ids)."""
    if repeats is not None:
        return input.repeat_interleave(repeats, dim, output_size=output_size)
    if input.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if input.dtype.kind not in "iu":
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}'")
    positions = Tensor._wrap(np.arange(input.shape[0], dtype=input.dtype))
    return positions.repeat_interleave(input, output_size=output_size)


def split(tensor, split_size_or_sections, dim=0):
    """`tensor.split(...)`: pieces of `split_size_or_sections` elements along dim (the last
    one smaller), or of the sizes in a list. The function names its arguments as PyTorch's."""
    return tensor.split(split_size_or_sections, dim)


def _lhs(x, other):
    """x as a tensor (a number takes the dtype of `other` when that is a tensor)."""
    return _as_tensor(x, other if isinstance(other, Tensor) else None)


# the forms whose arguments differ from a method's: a number may stand first, a shape is one
# argument rather than several, or the method has another name
def neg(input): return -input
def pow(input, exponent): return _lhs(input, exponent) ** exponent
def remainder(input, other): return _lhs(input, other) % other
def floor_divide(input, other): return _lhs(input, other) // other
def bitwise_and(input, other): return _lhs(input, other) & other
def bitwise_or(input, other): return _lhs(input, other) | other
def bitwise_xor(input, other): return _lhs(input, other) ^ other
def bitwise_left_shift(input, other): return _lhs(input, other) << other
def bitwise_right_shift(input, other): return _lhs(input, other) >> other
def logical_and(input, other): return input.logical_and(other)
def logical_or(input, other): return input.logical_or(other)
def logical_xor(input, other): return input.logical_xor(other)
def clip(input, min=None, max=None): return input.clamp(min, max)
def clamp_min(input, min): return input.clamp(min=min)
def clamp_max(input, max): return input.clamp(max=max)
def reshape(input, shape): return input.reshape(shape)
def permute(input, dims): return input.permute(dims)
def flip(input, dims): return input.flip(dims)
def broadcast_to(input, size): return input.expand(size)
def is_tensor(obj): return isinstance(obj, Tensor)


def add(input, other, *, alpha=1):
    return _lhs(input, other) + (other * alpha if alpha != 1 else other)


def sub(input, other, *, alpha=1):
    return _lhs(input, other) - (other * alpha if alpha != 1 else other)


def mul(input, other): return _lhs(input, other) * other


def div(input, other, *, rounding_mode=None):
    """input / other; rounding_mode "floor" rounds down (as //) and "trunc" toward zero."""
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc" and not (_as_tensor(input).is_floating_point() or isinstance(
            other, float) or (isinstance(other, Tensor) and other.is_floating_point())):
        # integers: exact, in the promoted integer dtype (a float quotient loses the low bits of
        # large int64s); floor and trunc differ where the division is inexact and the signs
        # differ. floor_divide refuses a zero divisor.
        q = floor_divide(input, other)
        off = (remainder(input, other) != 0) & ((_as_tensor(input) < 0) != (_as_tensor(other) < 0))
        return q + off.to(q.dtype)
    q = _lhs(input, other) / other
    if rounding_mode == "trunc":
        return q.trunc()
    if rounding_mode is not None:
        raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got "
                         f"{rounding_mode!r}")
    return q


def einsum(equation, *operands):
    """Sums of products given as an index equation, e.g. einsum("bij,bjk->bik", a, b)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return ops.Einsum.apply(*[_as_tensor(o) for o in operands], equation=equation)
