"""The activations of `torch.nn.functional` that are built from other ops: log-sigmoid, the
hard (piecewise linear) activations, GLU, Mish and softsign. `minigrad.nn.functional`
re-exports them.

Each is written with `where` so that its gradient at a kink is PyTorch's: the hard activations'
gradients vanish at the clipping points themselves (PyTorch's backward tests `min < x < max`),
where a `clamp` would pass the gradient on.
"""
from __future__ import annotations

__all__ = ["glu", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid", "mish", "relu6",
           "softsign"]


def _apply(input, inplace, name, compute):
    """compute(input), or with inplace=True written into `input` (recorded by autograd)."""
    return input._assign(name, compute) if inplace else compute(input)


def _softplus(x):
    """log(1 + e^x) as logsumexp([0, x]), which never overflows."""
    from minigrad.creation import zeros_like
    from minigrad.functional import stack
    return stack([zeros_like(x), x]).logsumexp(0)


def logsigmoid(input):
    """log(sigmoid(x)) = -log(1 + e^-x), finite for any x."""
    return -_softplus(-input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clipped to [min_val, max_val]; the gradient is 1 strictly inside, 0 elsewhere."""
    if max_val < min_val:
        raise ValueError(f"hardtanh: max_val ({max_val}) must be greater than or equal to "
                         f"min_val ({min_val})")
    from minigrad.functional import where

    def compute(x):
        return where(x <= min_val, min_val, where(x >= max_val, max_val, x)).to(x.dtype)
    return _apply(input, inplace, "hardtanh_", compute)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): hardtanh(x, 0, 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """0 for x <= -3, 1 for x >= 3, x / 6 + 1/2 between (the gradient 1/6 strictly between)."""
    from minigrad.functional import where

    def compute(x):
        return where(x <= -3.0, 0.0, where(x >= 3.0, 1.0, (x + 3.0) / 6.0)).to(x.dtype)
    return _apply(input, inplace, "hardsigmoid_", compute)


def hardswish(input, inplace=False):
    """x * hardsigmoid(x): 0 for x <= -3, x for x >= 3, x (x + 3) / 6 between (MobileNetV3's);
    at -3 and 3 the gradient is that of the outer piece, as in PyTorch."""
    from minigrad.functional import where

    def compute(x):
        return where(x <= -3.0, 0.0, where(x < 3.0, x * (x + 3.0) / 6.0, x)).to(x.dtype)
    return _apply(input, inplace, "hardswish_", compute)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _apply(input, inplace, "mish_", lambda x: x * _softplus(x).tanh())


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1.0)


def glu(input, dim=-1):
    """The gated linear unit: the input halved along `dim` into a and b gives a * sigmoid(b),
    e.g. (B, T, 2D) -> (B, T, D)."""
    if input.ndim == 0:
        raise RuntimeError("glu: does not support scalars because halving size must be even")
    if not -input.ndim <= dim < input.ndim:
        raise IndexError(f"glu: dim {dim} is out of range for a tensor with {input.ndim} dims")
    d = dim % input.ndim
    if input.shape[d] % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = input.chunk(2, d)
    return a * b.sigmoid()
