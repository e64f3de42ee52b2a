"""Elementwise ops whose derivative is one short expression of their inputs (and output),
written with arithmetic and `call` only, so that the same expression serves arrays in backward
and tensors in the tensor-level rule (`create_graph=True`); the forward-mode rule multiplies
each tangent by the same slopes. The inverse trigonometric and hyperbolic functions, atan2,
hypot and logaddexp are such ops."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd import op as autograd_op
from ..autograd.op import Op
from ..graph_rules import rule, saved_input, saved_output
from ..jvp_rules import jvp_rule
from ._util import conj_slope


def call(name, x):
    """`np.<name>(x)` for an array, `x.<name>()` for a tensor (exp, sqrt, sinh, ...)."""
    return getattr(x, name)() if isinstance(x, autograd_op.Tensor) else getattr(np, name)(x)


def zero_where(mask, x):
    """x with zeros where mask is True: `np.where` for an array, `masked_fill` for a tensor."""
    return x.masked_fill(mask, 0) if isinstance(x, autograd_op.Tensor) else np.where(mask, 0, x)


class Sloped(Op):
    """`fn` applied elementwise to its inputs; `slopes(out, *inputs)` gives d out / d input
    for each input (out is None unless `uses_output`: saving the output would make an in-place
    write to it an error at backward, which PyTorch raises only for ops that save it).
    Every subclass gets the tensor-level and forward-mode rules below. One marked
    `complex_aware` is holomorphic: on complex input backward takes the slopes' conjugates."""
    uses_output = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        rule(cls)(_rule)
        jvp_rule(cls)(_jvp)

    @staticmethod
    def forward(ctx, *inputs):
        with np.errstate(all="ignore"):  # asin(2), atanh(1), ... are NaN or inf, as in PyTorch
            out = np.asarray(ctx.fn(*inputs))
        ctx.save_for_backward(out if ctx.uses_output else None, *inputs)
        return out

    @staticmethod
    def backward(ctx, g):
        with np.errstate(all="ignore"):
            slopes = ctx.slopes(*ctx.saved)
        grads = tuple(g * conj_slope(s) if need else None
                      for s, need in zip(slopes, ctx.needs_input_grad))
        return grads if len(grads) > 1 else grads[0]


def _rule(ctx, g):
    out, *inputs = ctx.saved
    out = None if out is None else saved_output(ctx, out)
    with np.errstate(all="ignore"):
        slopes = ctx.slopes(out, *(saved_input(ctx, i, a) for i, a in enumerate(inputs)))
        grads = tuple(g * s if need else None for s, need in zip(slopes, ctx.needs_input_grad))
    return grads if len(grads) > 1 else grads[0]


def _jvp(ctx, out, tangents):
    with np.errstate(all="ignore"):
        slopes = ctx.slopes(*ctx.saved)
        parts = [t * s for t, s in zip(tangents, slopes) if t is not None]
    return np.broadcast_to(sum(parts[1:], parts[0]), out.shape).astype(out.dtype)


def _tensor(x, op, arg):
    if not isinstance(x, autograd_op.Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    return x


def unary(op, name, input):
    """`op` of a tensor; integer and bool tensors compute in the default float dtype, as
    PyTorch's do."""
    x = _tensor(input, name, "input")
    return op.apply(x if x._array.dtype.kind in "fc" else x.to(dtypes.get_default_dtype()))


def binary(op, name, input, other, integers=True):
    """`op` of two tensors, broadcast, in the float dtype PyTorch computes in (the default
    one for two integer tensors; with `integers=False` those are refused, as PyTorch's
    logaddexp and hypot refuse them)."""
    from ..tensor_operators import binary as promoted
    _tensor(input, name, "input"), _tensor(other, name, "other")
    if not integers and dtypes.computation_dtype((input, other), name).kind != "f":
        raise NotImplementedError(f"{name}: not implemented for {input.dtype} and "
                                  f"{other.dtype} tensors (only floating-point ones)")
    return promoted(op, name, input, other, floats=True)


def with_numbers(name, input, other, floats=True):
    """(input, other) as tensors, a Python number among them made a 0-d tensor of the dtype the
    op computes in (so that its slopes keep that dtype); at least one must be a tensor."""
    if not isinstance(input, autograd_op.Tensor) and not isinstance(other, autograd_op.Tensor):
        raise TypeError(f"{name}(): expected a Tensor as input or other, got "
                        f"{type(input).__name__} and {type(other).__name__}")
    dtype = dtypes.computation_dtype((input, other), name, floats)
    return tuple(x if isinstance(x, autograd_op.Tensor)
                 else autograd_op.Tensor._wrap(np.asarray(x, dtype)) for x in (input, other))
