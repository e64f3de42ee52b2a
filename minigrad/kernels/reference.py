"""NumPy reference kernels: the "numpy" backend, and the ground truth in tests.

Each function is the plain, vectorised NumPy version of a Numba kernel, with
the same semantics for edge cases (-inf entries, all -inf rows). Inputs are
validated by `minigrad.kernels`; these functions assume correct shapes and
dtypes.

The dropout mask is NOT drawn from a NumPy generator: it is the same
counter-based hash as the Numba kernel (splitmix64 of the seed and the flat
element index), computed here in vectorised uint64 arithmetic, so both
backends produce the identical mask bit for bit.
"""
import math

import numpy as np


def matmul(a, b, out=None):
    """np.matmul(a, b, out=out); NumPy's BLAS writes an `out` of any strides in place where
    its matrices have contiguous rows or columns."""
    if b.ndim == 2 and a.ndim > 2 and (out is None or out.flags.c_contiguous):
        # (B, T, K) @ (K, N) as one (B*T, K) @ (K, N) product: NumPy would
        # otherwise run B small matmuls, 1.8-3.6x slower at the toy model's
        # shapes (docs/performance.md, section 2)
        k, n = b.shape
        flat = None if out is None else out.reshape(-1, n)
        c = np.matmul(a.reshape(-1, k), b, out=flat)
        return c.reshape(a.shape[:-1] + (n,)) if out is None else out
    return np.matmul(a, b, out=out)


def masked_fill(x, mask, fill):
    """A copy of x with fill where the bool mask, broadcast to x's shape, is True (np.where's
    values: np.where itself took 1.2-1.7x as long on attention's causal masks)."""
    out = np.array(x)  # (x may be a NumPy scalar, whose copy is a scalar)
    np.copyto(out, fill, where=mask)
    return out


def _row_max(x):
    # the max of each row, but 0 for an all -inf row, so x - max stays -inf
    # there (not NaN) and exp gives exactly 0
    m = np.max(x, axis=-1, keepdims=True)
    return np.where(m == -np.inf, np.zeros_like(m), m)


def softmax(x):
    e = np.exp(x - _row_max(x))
    s = np.sum(e, axis=-1, keepdims=True)
    # an all -inf row has s == 0: give zeros rather than 0/0
    return e / np.where(s == 0, np.ones_like(s), s)


def softmax_backward(y, grad):
    return y * (grad - np.sum(grad * y, axis=-1, keepdims=True))


def log_softmax(x):
    m = _row_max(x)
    s = np.sum(np.exp(x - m), axis=-1, keepdims=True)
    # log(0) would make an all -inf row -inf - (-inf) = NaN; keep it -inf
    # subtract m first: m + log(s) would round log(s) away when |m| is large
    return (x - m) - np.log(np.where(s == 0, np.ones_like(s), s))


def log_softmax_backward(y, grad):
    dx = grad - np.exp(y) * np.sum(grad, axis=-1, keepdims=True)
    dead = np.all(y == -np.inf, axis=-1, keepdims=True)   # all -inf rows
    return np.where(dead, np.zeros_like(dx), dx)


# ---------------------------------------------------------- layer norm ----
def layer_norm(x, weight, bias, eps):
    """x (N, D) -> (y, x_hat, rstd (N, 1)); weight and bias (D,) or None."""
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    var = np.mean(xc * xc, axis=1, keepdims=True)
    rstd = (1.0 / np.sqrt(var + x.dtype.type(eps))).astype(x.dtype)
    xhat = xc * rstd
    # y must not share memory with x_hat: the caller saves x_hat for the backward pass and
    # hands y to the user, who may change it in place
    y = xhat * weight if weight is not None else xhat.copy()
    if bias is not None:
        y += bias
    return y, xhat, rstd


def layer_norm_backward(g, xhat, rstd, weight):
    """(dx, dweight, dbias): dx = rstd * (h - mean(h) - x_hat * mean(h * x_hat)), h = g * weight."""
    h = g if weight is None else g * weight
    dx = rstd * (h - h.mean(axis=1, keepdims=True)
                 - xhat * np.mean(h * xhat, axis=1, keepdims=True))
    return dx, (g * xhat).sum(axis=0), g.sum(axis=0)


# ------------------------------------------------------- cross entropy ----
def cross_entropy(x, target, eps):
    """(loss (N,) float64, stats (N, 2)): each row's label-smoothed cross entropy, and its max
    m (0 for an all -inf row) and log sum exp(x - m), which the backward pass needs."""
    m = _row_max(x)
    ls = np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))
    ls = np.where(np.isneginf(ls), np.zeros_like(ls), ls)   # an all -inf row: log 0 -> 0
    logp = (x - m) - ls
    rows = np.arange(len(x))
    loss = -(1.0 - eps) * logp[rows, target].astype(np.float64)
    if eps:
        loss -= eps / x.shape[1] * logp.sum(axis=1, dtype=np.float64)
    return loss, np.concatenate([m, ls], axis=1)


def cross_entropy_backward(x, target, stats, w, eps):
    """w_i * (p - eps / C - (1 - eps) onehot(target)) per row i, p = softmax(x)."""
    p = np.exp((x - stats[:, :1]) - stats[:, 1:])
    grad = w[:, None].astype(x.dtype) * p - (w * eps / x.shape[1]).astype(x.dtype)[:, None]
    grad[np.arange(len(x)), target] -= (w * (1.0 - eps)).astype(x.dtype)
    return grad


# ------------------------------------------------------------- scatter ----
def embedding_backward(ids, g, num_rows):
    """(num_rows, D) table gradient: row ids[i] receives g[i], repeated ids add up."""
    out = np.zeros((num_rows, g.shape[1]), g.dtype)
    np.add.at(out, ids, g)
    return out


# ------------------------------------------------------------- dropout ----
GAMMA = 0x9E3779B97F4A7C15   # splitmix64's increment (2^64 / golden ratio)
_M64 = (1 << 64) - 1


def _mix_int(z):
    """splitmix64's finaliser on a Python int (used once per call)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def dropout_key(seed):
    """The per-call key: the seed scrambled once, so that seeds s and s+1
    give unrelated masks rather than shifted copies of one stream."""
    return _mix_int((seed + GAMMA) & _M64)


def dropout_threshold(p):
    """Element i is kept when (hash(i) >> 11) >= threshold: 53 random bits
    against p * 2^53, an exact integer comparison."""
    return int(p * (1 << 53))


def keep_mask(n, p, seed):
    """Boolean keep-mask of n elements: bits(i) = mix(key + (i+1) * GAMMA).

    In-place uint64 ufuncs (they wrap mod 2^64, as the hash wants) keep
    the temporaries down to two arrays.
    """
    u = np.uint64
    z = np.arange(1, n + 1, dtype=u)
    z *= u(GAMMA)
    z += u(dropout_key(seed))
    t = np.empty_like(z)
    for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        np.right_shift(z, u(shift), out=t)
        z ^= t
        z *= u(mult)
    np.right_shift(z, u(31), out=t)
    z ^= t
    z >>= u(11)
    return z >= u(dropout_threshold(p))


def dropout_mask(shape, p, seed, dtype):
    keep = keep_mask(int(np.prod(shape)), p, seed).reshape(shape)
    scale = np.dtype(dtype).type(1.0 / (1.0 - p))
    return np.where(keep, scale, np.dtype(dtype).type(0))


def dropout(x, p, seed):
    return x * dropout_mask(x.shape, p, seed, x.dtype)


def relu_dropout(x, p, seed):
    return dropout(np.maximum(x, 0), p, seed)


def relu_dropout_backward(y, g, p):
    """g / (1 - p) where the output y is > 0 (ReLU passed and dropout kept), else 0."""
    return np.where(y > 0, g * g.dtype.type(1.0 / (1.0 - p)), g.dtype.type(0))


def dropout_add(x, s, p, seed):
    return x + dropout(s, p, seed)


def dropout_add_layer_norm(x, s, p, seed, weight, bias, eps):
    """layer_norm(x + dropout(s, p, seed)) of rows (N, D): (y, x_hat, rstd)."""
    return layer_norm(x + dropout(s, p, seed), weight, bias, eps)


def dropout_add_layer_norm_backward(g, xhat, rstd, weight, p, seed):
    """(dx, ds, dweight, dbias) of dropout_add_layer_norm: x's gradient is layer norm's, s's
    that through the same mask."""
    dx, dw, db = layer_norm_backward(g, xhat, rstd, weight)
    return dx, dropout(dx, p, seed), dw, db


def adam_constants(lr, beta1, beta2, eps, weight_decay, decoupled, t):
    """The scalars of step t of Adam, as `adam_step` and the compiled `adam_flat` take them:
    (decay, l2, wd, c1, beta2, c2, eps_c, inv_step, move); move is False when lr == 0.

    step_size * m / (sqrt(v) / c + eps) with c = sqrt(1 - beta2^t) equals
    m / ((sqrt(v) + eps * c) * inv_step) with inv_step = -1 / (step_size * c): the same
    update with the constants gathered, so one pass over the data fewer."""
    step_size = lr / (1 - beta1 ** t)
    c = math.sqrt(1 - beta2 ** t)
    decay = 1 - lr * weight_decay if decoupled else 1.0
    l2 = weight_decay != 0 and not decoupled
    inv_step = -1.0 / (step_size * c) if step_size else 0.0
    # floats and bools whatever the caller passed (an int weight decay, say): the compiled
    # adam_flat is then one signature, whichever path calls it
    return (float(decay), bool(l2), float(weight_decay), float(1 - beta1), float(beta2),
            float(1 - beta2), float(eps * c), float(inv_step), bool(step_size))


def adam_step(p, g, m, v, vmax, tmp, g2, decay, l2, wd, c1, beta2, c2, eps_c, inv_step,
              move, amsgrad):
    """Adam's step on matching arrays in place (p, m, v, and vmax if amsgrad; g unchanged);
    tmp and g2 are scratch arrays of the same shape. The scalars: `adam_constants`."""
    if decay != 1:
        p *= decay
    if l2:  # g + wd * p in scratch: the gradient itself must not change
        np.multiply(p, wd, out=g2)
        g2 += g
        g = g2
    np.subtract(g, m, out=tmp)  # m = lerp(m, g, 1 - beta1)
    tmp *= c1
    m += tmp
    np.multiply(g, c2, out=tmp)  # v = beta2 * v + (1 - beta2) * g * g
    tmp *= g
    v *= beta2
    v += tmp
    if amsgrad:
        np.maximum(vmax, v, out=vmax)
    if not move:
        return
    np.sqrt(vmax if amsgrad else v, out=tmp)
    tmp += eps_c
    tmp *= inv_step
    np.divide(m, tmp, out=tmp)
    p += tmp


# ---------------------------------------------------------- activations ----
# erf(x) ~ x P(x^2) / Q(x^2) on x clamped to [-4, 4] (Eigen's and XLA's float32 fit, error
# below 5e-7): the float32 erf of the kernels (.mathfn) and of these references. Highest
# power first.
ERF32_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
           -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
           -1.60960333262415e-02)
ERF32_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
           -7.37332916720468e-03, -1.42647390514189e-02)
_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
GELU_TANH_K, GELU_TANH_C = math.sqrt(2 / math.pi), 0.044715   # sqrt(2/pi) (x + c x^3)
_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    """erf of a float array: float32 by the rational fit above, float64 by the C library's
    erf element by element (exact, slow: the float64 ops are for gradient checks)."""
    if x.dtype != np.float32:
        return _erf64(x).astype(x.dtype, copy=False)
    c = np.clip(x, -4, 4)   # (NaN stays NaN)
    c2 = c * c
    p = np.full_like(c2, ERF32_P[0])
    for a in ERF32_P[1:]:
        p = p * c2 + np.float32(a)
    q = np.full_like(c2, ERF32_Q[0])
    for b in ERF32_Q[1:]:
        q = q * c2 + np.float32(b)
    return np.clip(c * p / q, -1, 1)


def _lgamma1(v):
    if math.isinf(v) or (v <= 0 and v == math.floor(v)):
        return math.inf
    try:
        return math.lgamma(v)   # (NaN passes through)
    except OverflowError:       # past 2.55e305 the value is beyond float64: C's lgamma is inf
        return math.inf


def lgamma(x):
    """log |Gamma(x)| of a float64 array, by math.lgamma element by element (+inf at the
    poles 0, -1, -2, ..., at +-inf and where the value overflows; NaN stays NaN)."""
    return np.array([_lgamma1(v) for v in x.ravel().tolist()],
                    dtype=np.float64).reshape(x.shape)


def gelu(x, approximate="none"):
    """x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); with approximate="tanh",
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(GELU_TANH_K * (x + GELU_TANH_C * x * x * x)))
    return 0.5 * x * (1 + erf(x * _SQRT1_2))


def gelu_backward(x, g, approximate="none"):
    """g times d gelu / dx: Phi(x) + x phi(x), or the derivative of the tanh form."""
    if approximate == "tanh":
        u = GELU_TANH_K * (x + GELU_TANH_C * x * x * x)
        # 1 - tanh(u)^2 as 4 e / (1 + e)^2, e = exp(-2 |u|): 1 - t * t would cancel where
        # tanh is near +-1
        e = np.exp(-2 * np.abs(u))
        dt = 4 * e / ((1 + e) * (1 + e)) * (GELU_TANH_K * (1 + 3 * GELU_TANH_C * x * x))
        return g * (0.5 * (1 + np.tanh(u)) + 0.5 * x * dt)
    cdf = 0.5 * (1 + erf(x * _SQRT1_2))
    return g * (cdf + x * (np.exp(-0.5 * x * x) * _INV_SQRT_2PI))


def sigmoid(x):
    """1 / (1 + exp(-x)). exp only ever sees -|x|, so it never overflows, and below 0 the form
    exp(x) / (1 + exp(x)) keeps the precision of tiny values."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


def sigmoid_backward(y, g):
    return g * y * (1 - y)


def silu(x):
    return x * sigmoid(x)


def silu_backward(x, g):
    return silu_backward_from_sigmoid(x, sigmoid(x), g)


def silu_backward_from_sigmoid(x, s, g):
    """The gradient of silu from x and s = sigmoid(x), as PyTorch writes it."""
    return g * (s * (1 + x * (1 - s)))


def tanh(x):
    return np.tanh(x)


def tanh_backward(y, g):
    return g * (1 - y * y)


def relu(x):
    return np.maximum(x, 0)   # NaN stays NaN


def relu_backward(y, g):
    return np.where(y <= 0, 0, g)   # NaN passes the gradient, as in PyTorch
