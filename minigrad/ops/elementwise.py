"""Elementwise ops. Each gradient is the local derivative times the incoming gradient. Where
the forward broadcast an input, its gradient comes back in the output's shape and the engine
sums it over the broadcast axes (`_fit` in autograd/engine.py); None marks a gradient nobody
needs."""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd.op import Op
from ..kernels import reference as _ref
from ..kernels.checks import FLOATS
from ._util import Pointwise, conj_slope
from ..errors import DTypeError, InvalidValueError, ShapeError, broadcast_error
from ..scalar_conversion import checked_scalar


def _kernel(a):
    """Whether `a` goes to the kernels (float32, float64); other dtypes (float16, integers)
    take the NumPy reference, which has the same semantics."""
    return isinstance(a, np.ndarray) and a.dtype in FLOATS


def _conj(x):
    """conj(x) for a saved operand that may be None, an array or a number."""
    return None if x is None else np.conj(x)


class _Binary(Op):
    """`fn(a, b)` elementwise, as Pointwise is for one operand. Where each side's gradient
    needs the operands' values, `keeps_operands` saves both."""
    keeps_operands = False

    @staticmethod
    def forward(ctx, a, b):
        if ctx.keeps_operands:
            ctx.save_for_backward(a, b)
        try:
            return ctx.fn(a, b)
        except TypeError as e:  # NumPy refuses the dtypes (bool minus bool): PyTorch's RuntimeError
            raise DTypeError(f"{getattr(ctx.fn, '__name__', 'op')}: {e}") from None


class Add(_Binary):
    complex_aware = True
    fn = np.add

    @staticmethod
    def backward(ctx, g):
        return g, g


class Sub(_Binary):
    complex_aware = True
    fn = np.subtract

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)


class Mul(Op):
    complex_aware = True
    @staticmethod
    def forward(ctx, a, b):
        # each operand is needed only for its partner's gradient: x * weight where x wants no
        # gradient keeps weight alone (and nothing under no_grad). A None input node means no
        # gradient wanted (`needs_input_grad`, read without building its tuple: Mul is hot)
        node_a, node_b = ctx.next_nodes
        ctx.save_for_backward(a if node_b is not None else None, b if node_a is not None else None)
        return np.multiply(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        if g.dtype.kind == "c":  # d(ab)/da is b; PyTorch's complex gradient takes conj(b)
            a, b = _conj(a), _conj(b)
        return (None if b is None else g * b), (None if a is None else g * a)


class Div(_Binary):
    complex_aware = True
    fn, keeps_operands = np.divide, True

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        if g.dtype.kind == "c":  # the complex gradient takes the derivatives' conjugates
            a, b = _conj(a), _conj(b)
        need = ctx.needs_input_grad
        return (g / b if need[0] else None), (-g * a / (b * b) if need[1] else None)


class Pow(Op):
    complex_aware = True

    @staticmethod
    def forward(ctx, a, b):
        out = np.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved
        need = ctx.needs_input_grad
        with np.errstate(divide="ignore", invalid="ignore"):
            # PyTorch's kinks: d(a^0)/da is 0 even at a == 0 (not 0 * 0^-1 = nan); d(a^b)/db
            # = a^b log a is 0 where a == 0 and b >= 0 (its real part, for a complex b), and
            # nan for a negative real base. Complex operands take the slopes' conjugates.
            ga = (g * conj_slope(np.where(b == 0, 0, b * np.power(a, b - 1)))
                  if need[0] else None)
            gb = (g * conj_slope(np.where((a == 0) & (np.real(b) >= 0), 0,
                                          out * np.log(a, dtype=out.dtype)))
                  if need[1] else None)
        return ga, gb


class _Extremum(_Binary):
    """The larger (or smaller) of a and b: `fn` picks, `wins` is where a's value is the one
    taken. Ties split the gradient evenly, as PyTorch does."""
    keeps_operands = True

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        wa = (ctx.wins(a, b) + 0.5 * (a == b)).astype(g.dtype)
        return g * wa, g * (1 - wa)


class Maximum(_Extremum):
    fn, wins = np.maximum, np.greater


class Minimum(_Extremum):
    fn, wins = np.minimum, np.less


class Neg(Op):
    complex_aware = True
    @staticmethod
    def forward(ctx, a):
        try:
            return np.negative(a)
        except TypeError:
            raise DTypeError("neg: Negation, the `-` operator, on a bool tensor is not supported; "
                             "use ~ or logical_not() to invert a mask") from None

    @staticmethod
    def backward(ctx, g):
        return -g


class Exp(Pointwise):
    fn, from_output, complex_aware = np.exp, True, True

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved[0]  # d exp(a) / da = exp(a), the saved output (its conjugate if complex)
        return g * (np.conj(y) if y.dtype.kind == "c" else y)


class Log(Pointwise):
    fn, complex_aware = np.log, True

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]  # g / a, not g * (1 / a): the rounding PyTorch's has (conj a if complex)
        return g / (np.conj(a) if a.dtype.kind == "c" else a)


class Sqrt(Pointwise):
    fn, from_output, complex_aware = np.sqrt, True, True

    @staticmethod
    def backward(ctx, g):
        return g / (2 * conj_slope(ctx.saved[0]))


class Abs(Pointwise):
    fn, derivative = np.abs, np.sign  # the gradient at 0 is 0, as in PyTorch


def _forward(fns, a):
    """fns[0](a): the kernel for float32/64 (kernels.tanh, ...), else the reference."""
    return fns[0](a) if _kernel(a) else fns[2](a)


def _backward(fns, saved, g):
    """fns[1](saved, g): the kernel's gradient, else the reference's."""
    return fns[1](saved, g) if _kernel(saved) and g.dtype == saved.dtype else fns[3](saved, g)


# (kernel, its gradient from the output y, reference, reference gradient)
_TANH = (kernels.tanh, kernels.tanh_backward, _ref.tanh, _ref.tanh_backward)
_SIGMOID = (kernels.sigmoid, kernels.sigmoid_backward, _ref.sigmoid, _ref.sigmoid_backward)
_RELU = (kernels.relu, kernels.relu_backward, _ref.relu, _ref.relu_backward)
_SILU = (kernels.silu, kernels.silu_backward, _ref.silu, _ref.silu_backward)   # from x


class _Fused(Op):
    """An activation with a fused kernel: `fns` as above. Its gradient is computed from the
    output y, or from the input x where `from_input`, whichever is saved. One that takes
    complex input (`complex_aware`, holomorphic) computes it with `complex_fn`; its reference
    gradient, a polynomial in y with real coefficients, given conj(y) is g * conj(f'(z)),
    PyTorch's convention."""
    from_input = False

    @staticmethod
    def forward(ctx, a):
        complex_input = ctx.complex_aware and a.dtype.kind == "c"
        out = ctx.complex_fn(a) if complex_input else _forward(ctx.fns, a)
        ctx.save_for_backward(a if ctx.from_input else out)
        return out

    @staticmethod
    def backward(ctx, g):
        saved = ctx.saved[0]
        if saved.dtype.kind == "c" and ctx.complex_aware:
            return ctx.fns[3](np.conj(saved), g)
        return _backward(ctx.fns, saved, g)


class Tanh(_Fused):
    fns, complex_aware, complex_fn = _TANH, True, np.tanh


def _complex_sigmoid(a):
    return 1 / (1 + np.exp(-a))  # the real kernels' branch on the sign has no complex analogue


class Sigmoid(_Fused):
    fns, complex_aware = _SIGMOID, True
    complex_fn = staticmethod(_complex_sigmoid)


class Relu(_Fused):
    fns = _RELU


def sigmoid(a):
    """1 / (1 + exp(-a)) of an array (the kernel for float32/64)."""
    return _forward(_SIGMOID, a)


class Silu(_Fused):
    """x * sigmoid(x), forward and backward each one pass over memory. Where a gradient is
    wanted, forward keeps the sigmoid it computes anyway, beside x: backward is then a few
    multiplies per element instead of an exp and a division (the same values)."""
    fns, from_input = _SILU, True

    @staticmethod
    def forward(ctx, a):
        if ctx.next_nodes[0] is None or not _kernel(a):
            return _Fused.forward(ctx, a)
        out, s = kernels.silu_with_sigmoid(a)
        ctx.save_for_backward(a, s)
        return out

    @staticmethod
    def backward(ctx, g):
        if len(ctx.saved) == 1 or g.dtype != ctx.saved[0].dtype:
            return _backward(ctx.fns, ctx.saved[0], g)
        return kernels.silu_backward_from_sigmoid(*ctx.saved, g)


class LeakyRelu(Op):
    """x where x > 0, else negative_slope * x. The gradient at 0 is the slope, as in PyTorch
    (a `maximum(x, slope * x)` would split the tie and give (1 + slope) / 2)."""

    @staticmethod
    def forward(ctx, a, negative_slope=0.01):
        ctx.save_for_backward(a)
        ctx.slope = float(negative_slope)  # a Python float keeps a's dtype; np.float64 would not
        return np.where(a > 0, a, a * ctx.slope)

    @staticmethod
    def backward(ctx, g):
        return np.where(ctx.saved[0] > 0, g, g * ctx.slope)


class Gelu(Op):
    """x * Phi(x); `approximate="tanh"` uses 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    Forward and backward are each one pass over memory (kernels.gelu)."""

    @staticmethod
    def forward(ctx, a, approximate="none"):
        if approximate not in kernels.activation_ops.APPROXIMATIONS:
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        ctx.approximate = approximate
        ctx.save_for_backward(a)
        return kernels.gelu(a, approximate) if _kernel(a) else _ref.gelu(a, approximate)

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        if _kernel(a) and g.dtype == a.dtype:
            return kernels.gelu_backward(a, g, ctx.approximate)
        return _ref.gelu_backward(a, g, ctx.approximate)


class Clamp(Op):
    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise InvalidValueError("clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(a)
        ctx.bounds = (min, max)
        try:
            return np.clip(a, min, max)
        except ValueError:
            bounds = [np.shape(b) for b in (min, max) if b is not None]
            raise broadcast_error("clamp", a.shape, *bounds) from None

    @staticmethod
    def backward(ctx, g):
        return g * Clamp.inside(ctx.saved[0], ctx.bounds)

    @staticmethod
    def inside(a, bounds):
        """Where `a` lies within `bounds` (min, max; either may be None), as a boolean array:
        the gradient passes there and is 0 where the value was clamped."""
        lo, hi = bounds
        inside = np.ones(a.shape, dtype=bool)
        if lo is not None:
            inside &= a >= lo
        if hi is not None:
            inside &= a <= hi
        return inside


class Cast(Op):
    """Change dtype; the engine casts the gradient back to the input's dtype."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, dtype=None):
        return a.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g


class Where(Op):
    """`where(cond, a, b)`: a where cond is True, else b; gradients flow to the chosen side."""
    complex_aware = True

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        cond = ctx.saved[0]
        need = ctx.needs_input_grad
        zero = np.zeros((), g.dtype)
        return (None, np.where(cond, g, zero) if need[1] else None,
                np.where(cond, zero, g) if need[2] else None)


class MaskedFill(Op):
    """Replace elements where `mask` is True by `value`; those elements get no gradient."""

    @staticmethod
    def forward(ctx, a, mask, value=0.0):
        if np.asarray(mask).dtype.kind != "b":  # bool, the one kind "b" (issubdtype is slower)
            raise DTypeError(f"masked_fill: mask must be a bool tensor, got "
                             f"{np.asarray(mask).dtype}")
        try:
            # a number gets PyTorch's range check; the fill goes on as a 0-d array, which the
            # kernels read without converting it again
            fill = np.asarray(value if isinstance(value, np.ndarray)
                              else checked_scalar(value, a.dtype), dtype=a.dtype)
            out = _filled(a, mask, fill)
        except ValueError:
            raise ShapeError(f"masked_fill: mask of shape {np.shape(mask)} does not broadcast "
                             f"to the tensor's shape {a.shape}") from None
        ctx.save_for_backward(mask)
        return out

    @staticmethod
    def backward(ctx, g):
        return _filled(g, ctx.saved[0], np.zeros((), g.dtype)), None


def _filled(a, mask, fill):
    """A copy of `a` with `fill` where `mask` (broadcast to a's shape) is True: np.where's
    values, by the kernel of `kernels.masked_fill`."""
    return kernels.masked_fill(a, mask, fill)
