"""The activations of `torch.nn.functional` that are built from other ops: log-sigmoid, the
hard (piecewise linear) activations, the shrinkages and threshold, SELU, CELU, PReLU, GLU, Mish,
softsign, softmin and the Gumbel-softmax. `minigrad.nn.functional` re-exports them.

Each is written with `where` so that its gradient at a kink is PyTorch's: the hard activations'
gradients vanish at the clipping points themselves (PyTorch's backward tests `min < x < max`),
where a `clamp` would pass the gradient on.
"""
from __future__ import annotations

__all__ = ["celu", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
           "logsigmoid", "mish", "prelu", "relu6", "selu", "softmin", "softshrink", "softsign",
           "tanhshrink", "threshold"]

# SELU's constants (Klambauer et al., 2017), to PyTorch's precision
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


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


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, `value` elsewhere (the gradient 1 strictly above)."""
    from minigrad.functional import where
    return _apply(input, inplace, "threshold_",
                  lambda x: where(x > threshold, x, value).to(x.dtype))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, 0 elsewhere (a negative lambd keeps every x, as in PyTorch)."""
    from minigrad.functional import where
    return where(input.abs() > lambd, input, 0.0).to(input.dtype)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between (the gradient 0 at +-lambd)."""
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater than or equal to 0, but found "
                           f"{lambd}")
    from minigrad.functional import where
    return where(input > lambd, input - lambd,
                 where(input < -lambd, input + lambd, 0.0)).to(input.dtype)


def _elu(x, alpha, inner):
    """x for x > 0, alpha * (exp(x * inner) - 1) otherwise; exp of min(x, 0), so that the
    branch not taken cannot overflow (its zero gradient times inf would be NaN)."""
    from minigrad.functional import where
    return where(x > 0, x, ((x.clamp(max=0.0) * inner).exp() - 1.0) * alpha)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with SELU's fixed alpha and scale (self-normalising nets)."""
    return _apply(input, inplace, "selu_", lambda x: _elu(x, _SELU_ALPHA, 1.0) * _SELU_SCALE)


def celu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha * (exp(x / alpha) - 1) otherwise."""
    if alpha == 0:
        raise RuntimeError("celu: alpha cannot be 0 (it divides x)")
    return _apply(input, inplace, "celu_", lambda x: _elu(x, alpha, 1.0 / alpha))


def prelu(input, weight):
    """x for x > 0, weight * x otherwise, with one learned slope per channel: weight (C,) for
    input (N, C, ...), or one slope (1,) for any input (a 0- or 1-d input has one channel)."""
    from minigrad.functional import where
    c = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1:
        if weight.ndim != 1 or weight.shape[0] != c:
            raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size. "
                               f"Found parameter numbers = {weight.numel()} and channel size = "
                               f"{c}.")
        weight = weight.reshape((1, c) + (1,) * (input.ndim - 2))
    elif input.ndim == 0:
        weight = weight.reshape(())
    return where(input > 0, input, weight * input)


def _implicit_dim(input, dim, op, stacklevel):
    """`dim`, or without one PyTorch's deprecated implicit choice, with its warning (softmax,
    log_softmax and softmin): dim 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is not None:
        return dim
    import warnings
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if input.ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim; `dim` (with PyTorch's deprecated implicit choice) and `dtype` as
    in `softmax`."""
    dim = _implicit_dim(input, dim, "softmin", _stacklevel)
    return (-(input if dtype is None else input.to(dtype))).softmax(dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) along dim for Gumbel(0, 1) noise g drawn from minigrad's
    random stream: a differentiable sample of the categorical distribution of `logits`.
    With hard=True the result is the one-hot vector of the largest entry, with the soft
    sample's gradient (straight-through). `eps` is PyTorch's deprecated, unused argument."""
    import warnings
    from minigrad import float64, rand, zeros_like
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # g = -log(E) for E ~ Exponential(1) = -log(1 - u); E is floored so that u = 0 (which
    # NumPy's [0, 1) can draw) gives a large finite g, not inf
    exponential = -(1.0 - rand(*logits.shape, dtype=float64)).log()
    gumbels = -exponential.clamp(min=1e-300).log().to(logits.dtype)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
