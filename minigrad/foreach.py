"""PyTorch's `torch._foreach_*` functions: one op applied to every tensor of a list, the form
optimizers written for PyTorch's `foreach=True` path call (`_foreach_mul_(exp_avgs, beta1)`,
`_foreach_addcmul_(...)`, `_foreach_norm(grads)`, ...).

PyTorch fuses each into few kernels; here each is the tensor op in a loop, so the values,
dtypes, errors and autograd behaviour are exactly those of the op on each tensor (an in-place
form goes through `Tensor._assign`: a leaf that requires grad is refused in grad mode, and
versions are bumped). The second operand may be one number or tensor for all, or a list with
one per tensor; out-of-place forms return a tuple, in-place forms the list they changed.
"""
from __future__ import annotations

import numpy as np

from . import composite

__all__ = [
    "_foreach_abs", "_foreach_abs_", "_foreach_add", "_foreach_add_", "_foreach_addcdiv",
    "_foreach_addcdiv_", "_foreach_addcmul", "_foreach_addcmul_", "_foreach_clamp_max",
    "_foreach_clamp_max_", "_foreach_clamp_min", "_foreach_clamp_min_", "_foreach_copy_",
    "_foreach_div", "_foreach_div_", "_foreach_exp", "_foreach_exp_", "_foreach_lerp",
    "_foreach_lerp_", "_foreach_maximum", "_foreach_maximum_", "_foreach_minimum",
    "_foreach_minimum_", "_foreach_mul", "_foreach_mul_", "_foreach_neg", "_foreach_neg_",
    "_foreach_norm", "_foreach_sign", "_foreach_sign_", "_foreach_sqrt", "_foreach_sqrt_",
    "_foreach_sub", "_foreach_sub_", "_foreach_zero_",
]


def _tensors(tensors, op):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{op}: Tensor list must have at least one tensor.")
    return tensors


def _per_tensor(operand, n, op):
    """`operand` for each of n tensors: a list (or tuple) of n, or one value for all (a number,
    a tensor)."""
    if isinstance(operand, (list, tuple)):
        if len(operand) != n:
            raise RuntimeError(f"{op}: Tensor lists must have the same number of tensors, got "
                               f"{n} and {len(operand)}")
        return list(operand)
    return [operand] * n


def _pair(name, fn, operands):
    """(out-of-place, in-place) forms of fn(tensor, *operands, **kw) with `operands` operands
    given per tensor (the keyword arguments are the same for all)."""
    out_name, in_name = f"_foreach_{name}", f"_foreach_{name}_"

    def columns(self, others, op):
        tensors = _tensors(self, op)
        if len(others) != operands:
            raise TypeError(f"{op}: takes {operands} operand list(s) after the tensors, got "
                            f"{len(others)}")
        return tensors, [_per_tensor(o, len(tensors), op) for o in others]

    def out_of_place(self, *others, **kw):
        tensors, cols = columns(self, others, out_name)
        return tuple(fn(t, *args, **kw) for t, *args in zip(tensors, *cols))

    def in_place(self, *others, **kw):
        tensors, cols = columns(self, others, in_name)
        for t, *args in zip(tensors, *cols):
            t._assign(in_name, lambda old, args=args: fn(old, *args, **kw))
        return tensors

    out_of_place.__name__, in_place.__name__ = out_name, in_name
    out_of_place.__doc__ = f"`{name}` of each tensor of a list: a tuple of the results."
    in_place.__doc__ = f"`{name}` written into each tensor of a list, which it returns."
    return out_of_place, in_place


def _add(t, other, alpha=1):
    return t + (other if alpha == 1 else other * alpha)


def _sub(t, other, alpha=1):
    return t - (other if alpha == 1 else other * alpha)


def _addcmul(t, tensor1, tensor2, value=1):
    return composite.addcmul(t, tensor1, tensor2, value=value)


def _addcdiv(t, tensor1, tensor2, value=1):
    return composite.addcdiv(t, tensor1, tensor2, value=value)


def _scaled(fn):
    """fn(t, a, b, value): PyTorch's list of values (or a tensor of them) comes positionally
    after the two tensor lists, one value per tensor."""
    def with_values(self, tensor1, tensor2, value=1):
        from .tensor import Tensor
        n = len(_tensors(self, fn.__name__))
        if isinstance(value, Tensor):  # a 1-D tensor of the n values
            value = value.tolist()
        return fn(self, tensor1, tensor2, _per_tensor(value, n, fn.__name__))
    with_values.__name__, with_values.__doc__ = fn.__name__, fn.__doc__
    return with_values


_foreach_add, _foreach_add_ = _pair("add", _add, 1)
_foreach_sub, _foreach_sub_ = _pair("sub", _sub, 1)
_foreach_mul, _foreach_mul_ = _pair("mul", lambda t, o: t * o, 1)
_foreach_div, _foreach_div_ = _pair("div", lambda t, o: t / o, 1)
_foreach_maximum, _foreach_maximum_ = _pair("maximum", lambda t, o: t.maximum(_like(o, t)), 1)
_foreach_minimum, _foreach_minimum_ = _pair("minimum", lambda t, o: t.minimum(_like(o, t)), 1)
_foreach_clamp_min, _foreach_clamp_min_ = _pair("clamp_min", lambda t, o: t.clamp_min(o), 1)
_foreach_clamp_max, _foreach_clamp_max_ = _pair("clamp_max", lambda t, o: t.clamp_max(o), 1)
_foreach_lerp, _foreach_lerp_ = _pair("lerp", lambda t, end, w: t.lerp(end, w), 2)
_foreach_addcmul, _foreach_addcmul_ = map(_scaled, _pair("addcmul", _addcmul, 3))
_foreach_addcdiv, _foreach_addcdiv_ = map(_scaled, _pair("addcdiv", _addcdiv, 3))
_foreach_sqrt, _foreach_sqrt_ = _pair("sqrt", lambda t: t.sqrt(), 0)
_foreach_exp, _foreach_exp_ = _pair("exp", lambda t: t.exp(), 0)
_foreach_abs, _foreach_abs_ = _pair("abs", lambda t: t.abs(), 0)
_foreach_neg, _foreach_neg_ = _pair("neg", lambda t: -t, 0)
_foreach_sign, _foreach_sign_ = _pair("sign", lambda t: t.sign(), 0)


def _like(other, t):
    """A number as a 0-d tensor of t's dtype (maximum and minimum take tensors only)."""
    from .tensor import Tensor
    return other if isinstance(other, Tensor) else Tensor._wrap(np.asarray(other, t.dtype))


def _foreach_zero_(self):
    """Zero every tensor of the list, which it returns."""
    tensors = _tensors(self, "_foreach_zero_")
    for t in tensors:
        t.zero_()
    return tensors


def _foreach_copy_(self, src, non_blocking=False):
    """Copy src[i] into self[i] (broadcast, converted), for every i; returns self."""
    tensors = _tensors(self, "_foreach_copy_")
    for t, s in zip(tensors, _per_tensor(src, len(tensors), "_foreach_copy_")):
        t.copy_(s)
    return tensors


def _foreach_norm(self, ord=2, dtype=None):
    """The `ord`-norm of each tensor (all its elements), a tuple of 0-d tensors; `dtype`
    converts each tensor first."""
    tensors = _tensors(self, "_foreach_norm")
    out = []
    for t in tensors:
        if dtype is not None:
            t = t.to(dtype)
        if t.dtype.kind not in "fc":
            raise RuntimeError(f"_foreach_norm: Expected a floating point or complex tensor as "
                               f"input. Got {t.dtype}")
        out.append(t.norm(float(ord)))
    return tuple(out)
