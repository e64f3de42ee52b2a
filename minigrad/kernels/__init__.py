"""Fast kernels behind minigrad's heavy ops, with two interchangeable backends.

    from minigrad import kernels
    kernels.set_backend("numpy")     # or "numba" (default; env MINIGRAD_BACKEND)
    y = kernels.softmax(x)

"numba" runs every op in Numba, all matmuls included, so a training step
uses one thread pool only (docs/performance.md says why; the module
docstrings of matmul, blas, softmax, layernorm and dropout say how each
kernel works). Matmuls call NumPy's OpenBLAS from inside that pool, one
thread per call (.blas), where it is found. "numpy" runs the plain NumPy
references in .reference. Both give the same results up to float rounding,
and the identical dropout mask.

Every public function checks its inputs and raises ValueError (shapes,
p) or TypeError (dtypes) naming the op. Supported dtypes are float32 and
float64; matmul also accepts two integer (or bool) arrays and computes them
exactly with np.matmul (no BLAS or thread pool is involved for integers).

Floating-point policy, for every kernel: no `fastmath=True`. It lets LLVM
assume that no value is NaN or infinite, and a kernel compiled that way may
return a finite number where NumPy returns NaN, or drop softmax's -inf
masking. Kernels that sum along a row compile with FASTMATH below, which
only allows reordering the additions (so LLVM can vectorise the sum, with
partial sums in SIMD lanes) and fusing a multiply with an add: results then
differ from NumPy by rounding alone, and NaN and infinity keep their meaning.

The modules, in the order a reader may take them: reference (NumPy), naive
(matmul as plain loops), simd (vector registers for Numba), matmul (the
register-tiled kernel), blas (OpenBLAS in Numba's pool), softmax, layernorm,
dropout, crossentropy, scatter (an embedding's backward).

This package imports nothing else from minigrad.
"""
import math
import operator
import os

import numpy as np

# The one fastmath setting of the kernels (see above). A set, as Numba requires; defined
# before the submodules are imported, because they read it when they are compiled.
FASTMATH = {"reassoc", "contract"}

# The submodules are imported next: importing a submodule sets an attribute
# of the same name on this package, and the public functions below (matmul,
# softmax, dropout, ...) must be what those names finally refer to.
from . import reference as _ref  # noqa: E402
from . import naive as _naive  # noqa: E402
from . import matmul as _mm  # noqa: E402
from . import softmax as _sm  # noqa: E402
from . import layernorm as _ln  # noqa: E402
from . import dropout as _dp  # noqa: E402
from . import blas as _blas  # noqa: E402
from . import scatter as _sc  # noqa: E402
from . import crossentropy as _ce  # noqa: E402

BACKENDS = ("numba", "numpy")

# Below this much work (multiply-adds for matmul, elements otherwise) the "numba" backend
# does not use the thread pool: waking a parallel kernel's threads costs more than the work,
# and on a loaded machine a 2-thread launch can stall for milliseconds. Softmax, layer norm
# and dropout then run the serial compiled twin of their kernel (the same row code in a plain
# loop: one pass over the data where NumPy makes a temporary per step); matmul calls the NumPy
# reference. Tests of the kernels set it to 0 so that every size runs the parallel code.
# (Products up to SERIAL_MATMUL_MAX_WORK, below, stay out of the pool too.)
PARALLEL_MIN_WORK = 32768
# Float products of the "numba" backend go to NumPy's OpenBLAS, single-threaded calls inside
# Numba's pool (.blas says why); when this is False (no OpenBLAS found, MINIGRAD_NO_BLAS=1, or
# a test of the tiled kernel) every one goes to the tiled kernel of .matmul.
USE_BLAS = _blas.available()
# Float products below this many multiply-adds (and above PARALLEL_MIN_WORK) are one OpenBLAS
# call in the calling thread, with OpenBLAS held at one thread: for a small model's products
# (a (512, 64) @ (64, 16) projection, attention's (32, 16) @ (16, 32) per sequence) launching
# Numba's pool and cutting the product in blocks cost as much as the product itself.
SERIAL_MATMUL_MAX_WORK = 2**21
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check_backend(name, where):
    if name not in BACKENDS:
        raise ValueError(f"{where}: unknown kernel backend {name!r}; "
                         f"choose one of {', '.join(map(repr, BACKENDS))}")
    return name


_backend = _check_backend(os.environ.get("MINIGRAD_BACKEND", "numba"), "MINIGRAD_BACKEND")


def set_backend(name):
    """Use "numba" (Numba kernels) or "numpy" (the NumPy references)."""
    global _backend
    _backend = _check_backend(name, "set_backend")


def get_backend():
    return _backend


# ---------------------------------------------------------------- checks ----
def _as_array(x, op, what):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{op}: {what} must be a numpy array, got {type(x).__name__}")
    return x


def _check_float(op, *arrays):
    dt = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != dt:
            raise TypeError(f"{op}: dtypes differ: {dt} and {a.dtype}")
    if dt not in _FLOATS:
        raise TypeError(f"{op}: unsupported dtype {dt} (expected float32 or float64)")


def _check_rows(op, x):
    if x.ndim == 0:
        raise ValueError(f"{op}: expected at least 1 dimension, got a 0-d array")


def _check_same_shape(op, y, g, what="output"):
    if y.shape != g.shape:
        raise ValueError(f"{op}: {what} of shape {y.shape} and gradient of shape "
                         f"{g.shape} differ")


# ---------------------------------------------------------------- matmul ----
def _check_matmul_shapes(op, a, b):
    a, b = _as_array(a, op, "a"), _as_array(b, op, "b")
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"{op}: expected operands with at least 2 dimensions, got shapes "
                         f"{a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{op}: cannot multiply {a.shape} by {b.shape}: inner dimensions "
                         f"{a.shape[-1]} and {b.shape[-2]} differ")
    return a, b


def matmul(a, b):
    """np.matmul for a.ndim >= 2 and b.ndim >= 2, batch dims broadcast."""
    a, b = _check_matmul_shapes("matmul", a, b)
    if a.ndim > 2 or b.ndim > 2:  # (np.broadcast_shapes costs more than a small product's call)
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: batch "
                             f"dimensions {a.shape[:-2]} and {b.shape[:-2]} do not "
                             f"broadcast") from None
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: dtypes differ: {a.dtype} and {b.dtype}")
    if a.dtype not in _FLOATS:
        if a.dtype.kind in "iub":   # exact integer product; NumPy uses no BLAS here
            return _ref.matmul(a, b)
        raise TypeError(f"matmul: unsupported dtype {a.dtype} (expected float32, float64 "
                        f"or an integer type)")
    work = a.shape[-2] * a.shape[-1] * b.shape[-1]
    if a.ndim > 2 or b.ndim > 2:
        work *= max(math.prod(a.shape[:-2]), math.prod(b.shape[:-2]))
    if _backend != "numba" or work < PARALLEL_MIN_WORK:
        return _ref.matmul(a, b)
    if USE_BLAS and work:
        if work < SERIAL_MATMUL_MAX_WORK:
            return _blas.matmul_serial(a, b)
        return _blas.matmul(a, b)
    return _mm.matmul(a, b)


def matmul_naive(a, b, loop_order="ijk"):
    """a (M, K) @ b (K, N) by the plain Numba loops of .naive: the first step towards .matmul.

    loop_order "ijk" is the textbook loop (a dot product per output), "ikj" the same with the
    inner loops swapped (rows of b added to rows of the output). Always runs in Numba, for
    teaching and for the tests; `matmul` is the one to use.
    """
    a, b = _check_matmul_shapes("matmul_naive", a, b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"matmul_naive: expected 2-D operands, got shapes {a.shape} and "
                         f"{b.shape}")
    _check_float("matmul_naive", a, b)
    kernel = {"ijk": _naive.matmul_ijk, "ikj": _naive.matmul_ikj}.get(loop_order)
    if kernel is None:
        raise ValueError(f"matmul_naive: loop_order must be 'ijk' or 'ikj', got {loop_order!r}")
    c = np.empty((a.shape[0], b.shape[1]), a.dtype)
    kernel(np.ascontiguousarray(a), np.ascontiguousarray(b), c)
    return c


# --------------------------------------------------------------- softmax ----
def _rows(x):
    """A C-contiguous (rows, n) view or copy of x."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-1])


def _pick(kernels, size):
    """The parallel kernel of a (parallel, serial) pair, or the serial one below the threshold."""
    return kernels[size < PARALLEL_MIN_WORK]


def _forward(op, kernels, ref, x):
    x = _as_array(x, op, "x")
    _check_rows(op, x)
    _check_float(op, x)
    if _backend == "numpy":
        return ref(x)
    y = np.empty(x.shape, x.dtype)
    if x.size:
        _pick(kernels, x.size)(_rows(x), y.reshape(-1, x.shape[-1]))
    return y


def _backward(op, kernels, ref, y, grad):
    y, grad = _as_array(y, op, "y"), _as_array(grad, op, "grad")
    _check_rows(op, y)
    _check_same_shape(op, y, grad)
    _check_float(op, y, grad)
    if _backend == "numpy":
        return ref(y, grad)
    dx = np.empty(y.shape, y.dtype)
    if y.size:
        _pick(kernels, y.size)(_rows(y), _rows(grad), dx.reshape(-1, y.shape[-1]))
    return dx


def softmax(x):
    """exp(x - max) / sum(exp(x - max)) along the last axis."""
    return _forward("softmax", (_sm.softmax_2d, _sm.softmax_2d_serial), _ref.softmax, x)


def softmax_backward(y, grad):
    """dx = y * (grad - sum(grad * y, -1)), with y = softmax(x)."""
    return _backward("softmax_backward",
                     (_sm.softmax_backward_2d, _sm.softmax_backward_2d_serial),
                     _ref.softmax_backward, y, grad)


def log_softmax(x):
    """x - logsumexp(x) along the last axis."""
    return _forward("log_softmax", (_sm.log_softmax_2d, _sm.log_softmax_2d_serial),
                    _ref.log_softmax, x)


def log_softmax_backward(y, grad):
    """dx = grad - exp(y) * sum(grad, -1), with y = log_softmax(x)."""
    return _backward("log_softmax_backward",
                     (_sm.log_softmax_backward_2d, _sm.log_softmax_backward_2d_serial),
                     _ref.log_softmax_backward, y, grad)


def _attention_rows(op, x, allowed):
    """x as C-contiguous rows (R, S), and (allowed rows (R, S) bool, masked?)."""
    if allowed is None:
        return _rows(x), np.ones((1, 1), np.bool_), False
    allowed = np.asarray(allowed)
    if allowed.dtype != np.bool_:
        raise TypeError(f"{op}: allowed must be a bool array, got dtype {allowed.dtype}")
    try:
        allowed = np.broadcast_to(allowed, x.shape)
    except ValueError:
        raise ValueError(f"{op}: mask of shape {allowed.shape} does not broadcast to the "
                         f"scores' shape {x.shape}") from None
    return _rows(x), np.ascontiguousarray(allowed).reshape(-1, x.shape[-1]), True


def masked_softmax_dropout(x, allowed=None, p=0.0, seed=0):
    """Attention's weights: y = softmax(x masked to -inf where not `allowed`) along the last
    axis, and out = dropout(y, p, seed). Returns (y, out); out is y when p == 0.

    allowed: None or a bool array broadcastable to x. The numbers are those of masked_fill,
    softmax and dropout in turn, bit for bit; y is what the backward pass needs."""
    op = "masked_softmax_dropout"
    x = _as_array(x, op, "x")
    _check_rows(op, x)
    _check_float(op, x)
    p, seed = _check_p_seed(op, p, seed)
    rows, allow, masked = _attention_rows(op, x, allowed)
    if _backend == "numpy":
        y = _ref.softmax(np.where(allow.reshape(x.shape), x, x.dtype.type(-np.inf))
                         if masked else x)
        return y, (_ref.dropout(y, p, seed) if p else y)
    y = np.empty(x.shape, x.dtype)
    out = np.empty(x.shape, x.dtype) if p else y
    if x.size:
        _pick((_sm.masked_softmax_dropout_2d, _sm.masked_softmax_dropout_2d_serial), x.size)(
            rows, allow, masked, np.uint64(_ref.dropout_key(seed)),
            np.uint64(_ref.dropout_threshold(p)), x.dtype.type(1.0 / (1.0 - p)), p > 0,
            y.reshape(rows.shape), out.reshape(rows.shape))
    return y, out


def masked_softmax_dropout_backward(y, grad, allowed=None, p=0.0, seed=0):
    """dx of masked_softmax_dropout: the softmax gradient of dropout's gradient (the mask
    regenerated from the seed), 0 where not allowed."""
    op = "masked_softmax_dropout_backward"
    y, grad = _as_array(y, op, "y"), _as_array(grad, op, "grad")
    _check_rows(op, y)
    _check_same_shape(op, y, grad)
    _check_float(op, y, grad)
    p, seed = _check_p_seed(op, p, seed)
    rows, allow, masked = _attention_rows(op, y, allowed)
    if _backend == "numpy":
        dx = _ref.softmax_backward(y, _ref.dropout(grad, p, seed) if p else grad)
        return np.where(allow.reshape(y.shape), dx, y.dtype.type(0)) if masked else dx
    dx = np.empty(y.shape, y.dtype)
    if y.size:
        _pick((_sm.masked_softmax_dropout_backward_2d,
               _sm.masked_softmax_dropout_backward_2d_serial), y.size)(
            rows, _rows(grad), allow, masked, np.uint64(_ref.dropout_key(seed)),
            np.uint64(_ref.dropout_threshold(p)), y.dtype.type(1.0 / (1.0 - p)), p > 0,
            dx.reshape(rows.shape))
    return dx


# ------------------------------------------------------------ layer norm ----
def _check_affine(op, x, weight, bias):
    d = x.shape[1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        _as_array(p, op, name)
        if p.shape != (d,):
            raise ValueError(f"{op}: {name} of shape {p.shape} does not match rows of {d} "
                             f"features (input of shape {x.shape})")
        _check_float(op, x, p)


def layer_norm(x, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias along the rows of x (N, D), biased var.

    Returns (y, x_hat, rstd): the output (N, D), the normalised input (N, D) and
    1 / sqrt(var + eps) (N, 1), the two a backward pass needs. weight, bias: (D,) or None.
    """
    x = _as_array(x, "layer_norm", "x")
    if x.ndim != 2:
        raise ValueError(f"layer_norm: expected rows of shape (N, D), got shape {x.shape}")
    _check_float("layer_norm", x)
    _check_affine("layer_norm", x, weight, bias)
    try:
        eps = float(eps)
    except (TypeError, ValueError):
        raise TypeError(f"layer_norm: eps must be a number, got {type(eps).__name__}") from None
    if not eps >= 0:
        raise ValueError(f"layer_norm: eps must be >= 0, got {eps}")
    if _backend == "numpy" or x.size == 0:
        return _ref.layer_norm(x, weight, bias, eps)
    return _ln.layer_norm_numba(x, weight, bias, eps, parallel=x.size >= PARALLEL_MIN_WORK)


def dropout_add_layer_norm(x, s, p, seed, weight, bias, eps):
    """layer_norm(x + dropout(s, p, seed), weight, bias, eps) of rows (N, D) in one pass: the
    post-norm residual connection. The same numbers, bit for bit, as the three kernels one
    after the other; returns (y, x_hat, rstd) as layer_norm does (its backward applies)."""
    op = "dropout_add_layer_norm"
    x, s = _as_array(x, op, "x"), _as_array(s, op, "s")
    if x.ndim != 2 or s.shape != x.shape:
        raise ValueError(f"{op}: expected x and s of one shape (N, D), got {x.shape} and "
                         f"{s.shape}")
    _check_float(op, x, s)
    _check_affine(op, x, weight, bias)
    p, seed = _check_p_seed(op, p, seed)
    eps = float(eps)
    if not eps >= 0:
        raise ValueError(f"{op}: eps must be >= 0, got {eps}")
    if _backend == "numpy" or x.size == 0:
        return _ref.dropout_add_layer_norm(x, s, p, seed, weight, bias, eps)
    return _ln.dropout_add_layer_norm_numba(
        x, s, np.uint64(_ref.dropout_key(seed)), np.uint64(_ref.dropout_threshold(p)),
        x.dtype.type(1.0 / (1.0 - p)), weight, bias, eps, parallel=x.size >= PARALLEL_MIN_WORK)


def layer_norm_backward(grad, xhat, rstd, weight):
    """(dx, dweight, dbias) from the output gradient (N, D) and layer_norm's x_hat and rstd."""
    op = "layer_norm_backward"
    grad, xhat = _as_array(grad, op, "grad"), _as_array(xhat, op, "xhat")
    rstd = _as_array(rstd, op, "rstd")
    if xhat.ndim != 2:
        raise ValueError(f"{op}: expected rows of shape (N, D), got x_hat of shape {xhat.shape}")
    _check_same_shape(op, xhat, grad, "x_hat")
    if rstd.shape != (xhat.shape[0], 1):
        raise ValueError(f"{op}: rstd of shape {rstd.shape} does not match x_hat of shape "
                         f"{xhat.shape} (expected ({xhat.shape[0]}, 1))")
    _check_float(op, xhat, grad, rstd)
    _check_affine(op, xhat, weight, None)
    if _backend == "numpy" or xhat.size == 0:
        return _ref.layer_norm_backward(grad, xhat, rstd, weight)
    return _ln.layer_norm_backward_numba(grad, xhat, rstd, weight,
                                         parallel=xhat.size >= PARALLEL_MIN_WORK)


# --------------------------------------------------------------- dropout ----
def _check_p_seed(op, p, seed):
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: p must be a number, got {type(p).__name__}") from None
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{op}: p must be in [0, 1), got {p}")
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"{op}: seed must be an integer, got {type(seed).__name__}") from None
    if not 0 <= seed < 2**64:
        raise ValueError(f"{op}: seed must be in [0, 2**64), got {seed}")
    return p, seed


def dropout(x, p, seed):
    """x * keep / (1 - p), keep decided by a hash of (seed, flat C-order index).

    The same seed gives the same mask, so dropout(grad, p, seed) is the
    backward pass of dropout(x, p, seed).
    """
    x = _as_array(x, "dropout", "x")
    p, seed = _check_p_seed("dropout", p, seed)
    _check_float("dropout", x)
    if _backend == "numpy":
        return _ref.dropout(x, p, seed)
    out = np.empty(x.shape, x.dtype)
    kernel = _pick((_dp.dropout_flat, _dp.dropout_flat_serial), x.size)
    kernel(np.ascontiguousarray(x).reshape(-1), out.reshape(-1),
           np.uint64(_ref.dropout_key(seed)), np.uint64(_ref.dropout_threshold(p)),
           x.dtype.type(1.0 / (1.0 - p)))
    return out


def dropout_add(x, s, p, seed):
    """x + dropout(s, p, seed) in one pass, x and s of one shape: the pre-norm residual
    connection. Bit for bit the numbers of the dropout kernel followed by an add."""
    op = "dropout_add"
    x, s = _as_array(x, op, "x"), _as_array(s, op, "s")
    if s.shape != x.shape:
        raise ValueError(f"{op}: x of shape {x.shape} and s of shape {s.shape} differ")
    p, seed = _check_p_seed(op, p, seed)
    _check_float(op, x, s)
    if _backend == "numpy" or x.ndim == 0:
        return np.asarray(_ref.dropout_add(x, s, p, seed))
    out = np.empty(x.shape, x.dtype)
    if x.size:
        kernel = _pick((_dp.dropout_add_2d, _dp.dropout_add_2d_serial), x.size)
        kernel(_rows(x), _rows(s), out.reshape(-1, x.shape[-1]),
               np.uint64(_ref.dropout_key(seed)), np.uint64(_ref.dropout_threshold(p)),
               x.dtype.type(1.0 / (1.0 - p)))
    return out


def relu_dropout(x, p, seed):
    """dropout(max(x, 0), p, seed) in one pass: the same numbers, the same mask."""
    x = _as_array(x, "relu_dropout", "x")
    p, seed = _check_p_seed("relu_dropout", p, seed)
    _check_float("relu_dropout", x)
    if _backend == "numpy":
        return _ref.relu_dropout(x, p, seed)
    out = np.empty(x.shape, x.dtype)
    kernel = _pick((_dp.relu_dropout_flat, _dp.relu_dropout_flat_serial), x.size)
    kernel(np.ascontiguousarray(x).reshape(-1), out.reshape(-1),
           np.uint64(_ref.dropout_key(seed)), np.uint64(_ref.dropout_threshold(p)),
           x.dtype.type(1.0 / (1.0 - p)))
    return out


def relu_dropout_backward(y, grad, p):
    """dx = grad / (1 - p) where y = relu_dropout(x, p, seed) is > 0, else 0 (no mask needed)."""
    op = "relu_dropout_backward"
    y, grad = _as_array(y, op, "y"), _as_array(grad, op, "grad")
    _check_same_shape(op, y, grad)
    _check_float(op, y, grad)
    p, _ = _check_p_seed(op, p, 0)
    if _backend == "numpy":
        return _ref.relu_dropout_backward(y, grad, p)
    dx = np.empty(y.shape, y.dtype)
    _pick((_dp.relu_dropout_backward_flat, _dp.relu_dropout_backward_flat_serial), y.size)(
        np.ascontiguousarray(y).reshape(-1), np.ascontiguousarray(grad).reshape(-1),
        dx.reshape(-1), y.dtype.type(1.0 / (1.0 - p)))
    return dx


def dropout_mask(shape, p, seed, dtype=np.float32):
    """The mask dropout(x, p, seed) multiplies by: 0 or 1/(1-p), of `dtype`."""
    p, seed = _check_p_seed("dropout_mask", p, seed)
    dtype = np.dtype(dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"dropout_mask: unsupported dtype {dtype} (expected float32 or float64)")
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    if _backend == "numpy":
        return _ref.dropout_mask(shape, p, seed, dtype)
    out = np.empty(shape, dtype)
    _pick((_dp.mask_flat, _dp.mask_flat_serial), out.size)(
        out.reshape(-1), np.uint64(_ref.dropout_key(seed)),
        np.uint64(_ref.dropout_threshold(p)), dtype.type(1.0 / (1.0 - p)))
    return out


# --------------------------------------------------------- cross entropy ----
def _check_targets(op, x, target):
    x, target = _as_array(x, op, "x"), _as_array(target, op, "target")
    if x.ndim != 2 or target.shape != x.shape[:1]:
        raise ValueError(f"{op}: expected logits (N, C) and target (N,), got shapes {x.shape} "
                         f"and {target.shape}")
    _check_float(op, x)
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold class ids (integers), got dtype {target.dtype}")
    if target.size and (target.min() < 0 or target.max() >= x.shape[1]):
        bad = target.min() if target.min() < 0 else target.max()
        raise IndexError(f"{op}: target {bad} is out of range for {x.shape[1]} classes")
    return np.ascontiguousarray(x), target.astype(np.int64, copy=False)


def _check_smoothing(op, eps):
    eps = float(eps)
    if not 0.0 <= eps <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {eps}")
    return eps


def cross_entropy(x, target, label_smoothing=0.0):
    """Per-row label-smoothed cross entropy of logits x (N, C) against class ids (N,).

    Returns (loss (N,) float64, stats (N, 2) of x's dtype); stats (each row's max and log of
    its sum of exponentials) is what `cross_entropy_backward` needs besides x itself.
    """
    op = "cross_entropy"
    x, target = _check_targets(op, x, target)
    eps = _check_smoothing(op, label_smoothing)
    if _backend == "numpy" or x.size == 0:
        return _ref.cross_entropy(x, target, eps)
    stats = np.empty((x.shape[0], 2), x.dtype)
    loss = np.empty(x.shape[0], np.float64)
    _pick((_ce.forward_2d, _ce.forward_2d_serial), x.size)(x, target, eps, stats, loss)
    return loss, stats


def cross_entropy_backward(x, target, stats, row_weight, label_smoothing=0.0):
    """d loss / d x (N, C): row_weight[i] * (softmax(x_i) - e / C - (1 - e) onehot(target_i)).

    row_weight (N,) is each row's upstream gradient times what it counts for (0 if ignored)."""
    op = "cross_entropy_backward"
    x, target = _check_targets(op, x, target)
    eps = _check_smoothing(op, label_smoothing)
    stats = _as_array(stats, op, "stats")
    w = np.ascontiguousarray(_as_array(row_weight, op, "row_weight"), dtype=np.float64)
    if stats.shape != (x.shape[0], 2) or w.shape != x.shape[:1]:
        raise ValueError(f"{op}: expected stats ({x.shape[0]}, 2) and row_weight "
                         f"({x.shape[0]},) for logits of shape {x.shape}, got {stats.shape} "
                         f"and {w.shape}")
    _check_float(op, x, stats)
    if _backend == "numpy" or x.size == 0:
        return _ref.cross_entropy_backward(x, target, stats, w, eps)
    dx = np.empty(x.shape, x.dtype)
    _pick((_ce.backward_2d, _ce.backward_2d_serial), x.size)(
        x, target, np.ascontiguousarray(stats), w, eps, dx)
    return dx


# ---------------------------------------------------------- scatter-add ----
def embedding_backward(ids, grad, num_rows):
    """The gradient (num_rows, D) of an embedding table from the output gradient grad (N, D)
    of a lookup of ids (N,): row ids[i] receives grad[i], and repeated ids add up."""
    op = "embedding_backward"
    ids, grad = _as_array(ids, op, "ids"), _as_array(grad, op, "grad")
    if ids.ndim != 1 or grad.ndim != 2 or grad.shape[0] != ids.shape[0]:
        raise ValueError(f"{op}: expected ids (N,) and grad (N, D), got shapes {ids.shape} "
                         f"and {grad.shape}")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: ids must be integers, got dtype {ids.dtype}")
    _check_float(op, grad)
    num_rows = operator.index(num_rows)
    if ids.size and (ids.min() < 0 or ids.max() >= num_rows):
        bad = ids.min() if ids.min() < 0 else ids.max()
        raise IndexError(f"{op}: id {bad} is out of range for a table of {num_rows} rows")
    if _backend == "numpy":
        return _ref.embedding_backward(ids, grad, num_rows)
    out = np.zeros((num_rows, grad.shape[1]), grad.dtype)
    _sc.add_rows(ids.astype(np.int64, copy=False), np.ascontiguousarray(grad), out)
    return out


__all__ = ["BACKENDS", "FASTMATH", "set_backend", "get_backend", "matmul", "matmul_naive",
           "softmax", "softmax_backward", "log_softmax", "log_softmax_backward",
           "masked_softmax_dropout", "masked_softmax_dropout_backward", "layer_norm",
           "layer_norm_backward", "dropout_add_layer_norm", "dropout", "dropout_add", "dropout_mask", "relu_dropout",
           "relu_dropout_backward", "cross_entropy", "cross_entropy_backward",
           "embedding_backward"]
