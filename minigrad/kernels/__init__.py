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
dropout, adam (the optimizer's update in one pass), crossentropy, scatter (an
embedding's backward), and fused: the entry points of the fused ops (attention's
masked softmax and dropout, ReLU + dropout, residual connections, cross entropy, an
embedding's backward), which are functions of this package too.

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


def matmul(a, b, out=None):
    """np.matmul for a.ndim >= 2 and b.ndim >= 2, batch dims broadcast.

    `out`, if given, receives the result: an array of its shape and dtype, with any strides,
    sharing no memory with a or b. Where its matrices have contiguous rows or columns, the
    products are written through its strides (no copy): that is how a caller chooses the
    result's memory layout."""
    a, b = _check_matmul_shapes("matmul", a, b)
    if a.ndim > 2 or b.ndim > 2:  # (not np.broadcast_shapes: 10 us, more than a small product)
        try:
            _blas.broadcast_batch(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: batch "
                             f"dimensions {a.shape[:-2]} and {b.shape[:-2]} do not "
                             f"broadcast") from None
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: dtypes differ: {a.dtype} and {b.dtype}")
    if a.dtype not in _FLOATS and a.dtype.kind not in "iub":
        raise TypeError(f"matmul: unsupported dtype {a.dtype} (expected float32, float64 "
                        f"or an integer type)")
    if out is not None:
        _check_out("matmul", a, b, out)
    return _matmul_checked(a, b, out)


def _check_out(op, a, b, out):
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{op}: out must be a NumPy array, got {type(out).__name__}")
    shape = _blas.broadcast_batch(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    if out.shape != shape or out.dtype != a.dtype:
        raise ValueError(f"{op}: out has shape {out.shape} and dtype {out.dtype}; the product "
                         f"of {a.shape} by {b.shape} needs {shape} and {a.dtype}")
    if not out.flags.writeable:
        raise ValueError(f"{op}: out (shape {out.shape}) is read-only")
    if np.may_share_memory(out, a) or np.may_share_memory(out, b):
        raise ValueError(f"{op}: out (shape {out.shape}) shares memory with an operand")


def _matmul_checked(a, b, out=None):
    """matmul's choice of path, for operands (and out) already checked."""
    if a.dtype not in _FLOATS:  # exact integer product; NumPy uses no BLAS here
        return _ref.matmul(a, b, out)
    work = a.shape[-2] * a.shape[-1] * b.shape[-1]
    if a.ndim > 2 or b.ndim > 2:
        work *= max(math.prod(a.shape[:-2]), math.prod(b.shape[:-2]))
    if _backend != "numba" or work < PARALLEL_MIN_WORK:
        return _ref.matmul(a, b, out)
    if USE_BLAS and work:
        if work < SERIAL_MATMUL_MAX_WORK:
            return _blas.matmul_serial(a, b, out)
        return _blas.matmul(a, b, out)
    c = _mm.matmul(a, b)  # the tiled kernel writes C order only
    if out is None:
        return c
    out[...] = c
    return out


def _check_2d(op, a, b):
    a, b = _check_matmul_shapes(op, a, b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"{op}: expected 2-D operands, got shapes {a.shape} and {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: dtypes differ: {a.dtype} and {b.dtype}")
    if a.dtype not in _FLOATS and a.dtype.kind not in "iub":
        raise TypeError(f"{op}: unsupported dtype {a.dtype} (expected float32, float64 or an "
                        f"integer type)")
    return a, b


def _in_blocks(a, b):
    """Whether the 2-D product a @ b goes to OpenBLAS in blocks in Numba's pool (as matmul
    would send it), where the blocks can also add a bias or sum a's rows."""
    work = a.shape[0] * a.shape[1] * b.shape[1]
    return (_backend == "numba" and USE_BLAS and a.dtype in _FLOATS and work > 0
            and work >= PARALLEL_MIN_WORK and work >= SERIAL_MATMUL_MAX_WORK)


def addmm(bias, a, b):
    """bias + a @ b for a (M, K), b (K, N) and bias (N,) added to every row: PyTorch's addmm
    with beta = alpha = 1. In OpenBLAS's blocks the gemm adds the product to the bias."""
    a, b = _check_2d("addmm", a, b)
    bias = _as_array(bias, "addmm", "bias")
    if bias.shape != (b.shape[1],):
        raise ValueError(f"addmm: bias of shape {bias.shape} does not match a product of "
                         f"{b.shape[1]} columns ({a.shape} @ {b.shape})")
    if bias.dtype != a.dtype:
        raise TypeError(f"addmm: bias dtype {bias.dtype} differs from the operands' {a.dtype}")
    if _in_blocks(a, b):
        return _blas.addmm(bias, a, b)
    out = _matmul_checked(a, b)
    out += bias
    return out


def matmul_and_sum(a, b):
    """(a @ b, a.sum(axis=0)) for a (M, K), b (K, N): a linear layer's input gradient g W and
    bias gradient (the column sums of g). In OpenBLAS's blocks each block of a's rows is
    summed right after its gemm has read it."""
    a, b = _check_2d("matmul_and_sum", a, b)
    if _in_blocks(a, b):
        return _blas.matmul_and_sum(a, b)
    return _matmul_checked(a, b), a.sum(axis=0)


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
    return _elementwise_dropout("dropout", x, p, seed, _ref.dropout,
                                (_dp.dropout_flat, _dp.dropout_flat_serial))


def _elementwise_dropout(op, x, p, seed, reference, kernels):
    """The checks and the call shared by dropout and the ops fused with it element by element:
    `reference(x, p, seed)` on the "numpy" backend, else the parallel or serial kernel of
    `kernels`, which maps flat x to flat out with the mask's key, threshold and scale."""
    x = _as_array(x, op, "x")
    p, seed = _check_p_seed(op, p, seed)
    _check_float(op, x)
    if _backend == "numpy":
        return reference(x, p, seed)
    out = np.empty(x.shape, x.dtype)
    kernel = _pick(kernels, x.size)
    kernel(np.ascontiguousarray(x).reshape(-1), out.reshape(-1),
           np.uint64(_ref.dropout_key(seed)), np.uint64(_ref.dropout_threshold(p)),
           x.dtype.type(1.0 / (1.0 - p)))
    return out


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


# The fused ops' entry points (and Adam's fused update) live in .fused (imported last: it uses the checks above).
from .fused import (adam_step, cross_entropy, cross_entropy_backward, dropout_add,  # noqa: E402
                    dropout_add_layer_norm, embedding_backward, masked_softmax_dropout,
                    masked_softmax_dropout_backward, relu_dropout, relu_dropout_backward)

__all__ = ["BACKENDS", "FASTMATH", "set_backend", "get_backend", "matmul", "addmm", "matmul_and_sum",
           "matmul_naive",
           "softmax", "softmax_backward", "log_softmax", "log_softmax_backward",
           "masked_softmax_dropout", "masked_softmax_dropout_backward", "layer_norm",
           "layer_norm_backward", "dropout_add_layer_norm", "dropout", "dropout_add",
           "dropout_mask", "relu_dropout", "relu_dropout_backward", "cross_entropy",
           "cross_entropy_backward", "embedding_backward", "adam_step"]
