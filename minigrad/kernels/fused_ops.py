"""Entry points of the fused ops of a Transformer that read and write whole activations:
attention's masked softmax and dropout, the post-norm residual connection (dropout, add,
layer norm), cross entropy, an embedding's backward; and Adam's update of a parameter, one
pass over its four arrays.

Each function checks its inputs (ValueError, TypeError or IndexError naming the op), then runs
the NumPy reference ("numpy" backend) or the Numba kernel, serial below PARALLEL_MIN_WORK
(.policy).
"""
import math
import operator

import numpy as np

from . import adam as _adam
from . import driver as _driver
from . import policy
from . import reference as _ref
from . import scatter as _sc
from .checks import rows as as_rows
from .checks import (FLOATS, as_array, check_affine, check_eps, check_float, check_p_seed,
                     check_rows, check_same_shape)
from .dropout_ops import mask_args


def _attention_rows(op, x, allowed):
    """x as C-contiguous rows (R, S), and (allowed rows (R, S) bool, masked?)."""
    if x.ndim and x.shape[-1] == 0 and math.prod(x.shape[:-1]):
        raise ValueError(f"{op}: the last dim of the input of shape {x.shape} has size 0, "
                         f"so there is nothing to normalise over")
    # no elements: no rows to hand the kernels (a (0, 0) array has no (-1, 0) reshape)
    rows = as_rows(x) if x.size else np.empty((0, max(x.shape[-1:] or (1,))), x.dtype)
    if allowed is None:
        return rows, np.ones((1, 1), np.bool_), False
    allowed = np.asarray(allowed)
    if allowed.dtype != np.bool_:
        raise TypeError(f"{op}: allowed must be a bool array, got dtype {allowed.dtype}")
    try:
        allowed = np.broadcast_to(allowed, x.shape)
    except ValueError:
        raise ValueError(f"{op}: mask of shape {allowed.shape} does not broadcast to the "
                         f"scores' shape {x.shape}") from None
    return rows, np.ascontiguousarray(allowed).reshape(rows.shape), True


def masked_softmax_dropout(x, allowed=None, p=0.0, seed=0):
    """Attention's weights: y = softmax(x masked to -inf where not `allowed`) along the last
    axis, and out = dropout(y, p, seed). Returns (y, out); out is y when p == 0.

    allowed: None or a bool array broadcastable to x. The numbers are those of masked_fill,
    softmax and dropout in turn, bit for bit; y is what the backward pass needs."""
    op = "masked_softmax_dropout"
    x = as_array(x, op, "x")
    check_rows(op, x)
    check_float(op, x)
    p, seed = check_p_seed(op, p, seed)
    rows, allow, masked = _attention_rows(op, x, allowed)
    if policy.numpy_backend():
        y = _ref.softmax(np.where(allow.reshape(x.shape), x, x.dtype.type(-np.inf))
                         if masked else x)
        return y, (_ref.dropout(y, p, seed) if p else y)
    y = np.empty(x.shape, x.dtype)
    out = np.empty(x.shape, x.dtype) if p else y
    if x.size:
        _driver.masked_softmax_dropout(
            policy.parallel(x.size), False, rows, rows, allow, masked,
            *mask_args(p, seed, x.dtype), p > 0, y.reshape(rows.shape), out.reshape(rows.shape))
    return y, out


def masked_softmax_dropout_backward(y, grad, allowed=None, p=0.0, seed=0):
    """dx of masked_softmax_dropout: the softmax gradient of dropout's gradient (the mask
    regenerated from the seed), 0 where not allowed."""
    op = "masked_softmax_dropout_backward"
    y, grad = as_array(y, op, "y"), as_array(grad, op, "grad")
    check_rows(op, y)
    check_same_shape(op, y, grad)
    check_float(op, y, grad)
    p, seed = check_p_seed(op, p, seed)
    rows, allow, masked = _attention_rows(op, y, allowed)
    if policy.numpy_backend():
        dx = _ref.softmax_backward(y, _ref.dropout(grad, p, seed) if p else grad)
        return np.where(allow.reshape(y.shape), dx, y.dtype.type(0)) if masked else dx
    dx = np.empty(y.shape, y.dtype)
    if y.size:
        out = dx.reshape(rows.shape)
        _driver.masked_softmax_dropout(
            policy.parallel(y.size), True, rows, as_rows(grad), allow, masked,
            *mask_args(p, seed, y.dtype), p > 0, out, out)
    return dx


def dropout_add_layer_norm(x, s, p, seed, weight, bias, eps):
    """layer_norm(x + dropout(s, p, seed), weight, bias, eps) of rows (N, D) in one pass: the
    post-norm residual connection. The same numbers, bit for bit, as the three kernels one
    after the other; returns (y, x_hat, rstd) as layer_norm does (its backward applies)."""
    op = "dropout_add_layer_norm"
    x, s = as_array(x, op, "x"), as_array(s, op, "s")
    if x.ndim != 2 or s.shape != x.shape:
        raise ValueError(f"{op}: expected x and s of one shape (N, D), got {x.shape} and "
                         f"{s.shape}")
    check_float(op, x, s)
    check_affine(op, x, weight, bias)
    p, seed = check_p_seed(op, p, seed)
    eps = check_eps(op, eps)
    if policy.numpy_backend() or x.size == 0:
        return _ref.dropout_add_layer_norm(x, s, p, seed, weight, bias, eps)
    return _driver.dropout_add_layer_norm_numba(
        x, s, np.uint64(_ref.dropout_key(seed)), np.uint64(_ref.dropout_threshold(p)),
        x.dtype.type(1.0 / (1.0 - p)), weight, bias, eps, parallel=policy.parallel(x.size))


def dropout_add_layer_norm_backward(grad, xhat, rstd, weight, p, seed):
    """The gradients of dropout_add_layer_norm from the output gradient (N, D) and its x_hat
    and rstd: (dx, ds, dweight, dbias), dx layer norm's input gradient (x's) and ds =
    dropout(dx, p, seed) (s's). One pass over the rows: each share's ds is written while its
    dx is still in cache. The same numbers, bit for bit, as layer_norm_backward then dropout."""
    op = "dropout_add_layer_norm_backward"
    grad, xhat = as_array(grad, op, "grad"), as_array(xhat, op, "xhat")
    rstd = as_array(rstd, op, "rstd")
    if xhat.ndim != 2 or grad.shape != xhat.shape or rstd.shape != (xhat.shape[0], 1):
        raise ValueError(f"{op}: expected grad and x_hat of one shape (N, D) and rstd (N, 1), "
                         f"got {grad.shape}, {xhat.shape} and {rstd.shape}")
    check_float(op, xhat, grad, rstd)
    check_affine(op, xhat, weight, None)
    p, seed = check_p_seed(op, p, seed)
    if policy.numpy_backend() or xhat.size == 0:
        return _ref.dropout_add_layer_norm_backward(grad, xhat, rstd, weight, p, seed)
    return _driver.layer_norm_dropout_backward_numba(
        grad, xhat, rstd, weight, np.uint64(_ref.dropout_key(seed)),
        np.uint64(_ref.dropout_threshold(p)), xhat.dtype.type(1.0 / (1.0 - p)),
        parallel=policy.parallel(xhat.size))


# --------------------------------------------------------- cross entropy ----
def _check_targets(op, x, target):
    x, target = as_array(x, op, "x"), as_array(target, op, "target")
    if x.ndim != 2 or target.shape != x.shape[:1]:
        raise ValueError(f"{op}: expected logits (N, C) and target (N,), got shapes {x.shape} "
                         f"and {target.shape}")
    check_float(op, x)
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold class ids (integers), got dtype {target.dtype}")
    if target.size and (target.min() < 0 or target.max() >= x.shape[1]):
        bad = target.min() if target.min() < 0 else target.max()
        raise IndexError(f"{op}: target {bad} is out of range for {x.shape[1]} classes "
                         f"(Target {bad} is out of bounds.)")
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
    if policy.numpy_backend() or x.size == 0:
        return _ref.cross_entropy(x, target, eps)
    stats = np.empty((x.shape[0], 2), x.dtype)
    loss = np.empty(x.shape[0], np.float64)
    _driver.cross_entropy(policy.parallel(x.size), False, x, target, eps, stats, loss, x)
    return loss, stats


def cross_entropy_backward(x, target, stats, row_weight, label_smoothing=0.0):
    """d loss / d x (N, C): row_weight[i] * (softmax(x_i) - e / C - (1 - e) onehot(target_i)).

    row_weight (N,) is each row's upstream gradient times what it counts for (0 if ignored)."""
    op = "cross_entropy_backward"
    x, target = _check_targets(op, x, target)
    eps = _check_smoothing(op, label_smoothing)
    stats = as_array(stats, op, "stats")
    w = np.ascontiguousarray(as_array(row_weight, op, "row_weight"), dtype=np.float64)
    if stats.shape != (x.shape[0], 2) or w.shape != x.shape[:1]:
        raise ValueError(f"{op}: expected stats ({x.shape[0]}, 2) and row_weight "
                         f"({x.shape[0]},) for logits of shape {x.shape}, got {stats.shape} "
                         f"and {w.shape}")
    check_float(op, x, stats)
    if policy.numpy_backend() or x.size == 0:
        return _ref.cross_entropy_backward(x, target, stats, w, eps)
    dx = np.empty(x.shape, x.dtype)
    _driver.cross_entropy(policy.parallel(x.size), True, x, target, eps,
                          np.ascontiguousarray(stats), w, dx)
    return dx


# ---------------------------------------------------------- scatter-add ----
def embedding_backward(ids, grad, num_rows):
    """The gradient (num_rows, D) of an embedding table from the output gradient grad (N, D)
    of a lookup of ids (N,): row ids[i] receives grad[i], and repeated ids add up."""
    op = "embedding_backward"
    ids, grad = as_array(ids, op, "ids"), as_array(grad, op, "grad")
    if ids.ndim != 1 or grad.ndim != 2 or grad.shape[0] != ids.shape[0]:
        raise ValueError(f"{op}: expected ids (N,) and grad (N, D), got shapes {ids.shape} "
                         f"and {grad.shape}")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: ids must be integers, got dtype {ids.dtype}")
    check_float(op, grad)
    num_rows = operator.index(num_rows)
    if ids.size and (ids.min() < 0 or ids.max() >= num_rows):
        bad = ids.min() if ids.min() < 0 else ids.max()
        raise IndexError(f"{op}: id {bad} is out of range for a table of {num_rows} rows")
    if policy.numpy_backend():
        return _ref.embedding_backward(ids, grad, num_rows)
    out = np.zeros((num_rows, grad.shape[1]), grad.dtype)
    _sc.add_rows(ids.astype(np.int64, copy=False), np.ascontiguousarray(grad), out)
    return out


# ------------------------------------------------------------------ adam ----
# Parameters of at least this many elements (an embedding table, an output layer) are updated
# by Numba's threads together: the pass is memory-bound, so waking the pool pays only for
# large arrays. On the toy model's 256 Ki-element tables: 0.18 ms alone, 0.10 ms on 2 threads.
ADAM_PARALLEL_MIN = 1 << 17
def adam_step(p, g, m, v, vmax, lr, beta1, beta2, eps, weight_decay, decoupled, t):
    """Step t (from 1) of Adam, or of AdamW if `decoupled`, in place on p, m, v (and vmax,
    the running maximum of v, when it is not None: amsgrad); g is not changed.

    All five arrays have one shape and one float dtype; p, m, v and vmax are C-contiguous.
    The "numba" backend makes one pass over them (.adam), the "numpy" one runs the reference.
    An optimizer calls this once per parameter per step, so the checks are kept cheap.
    """
    arrays = (p, g, m, v) if vmax is None else (p, g, m, v, vmax)
    for a in arrays:
        if not (isinstance(a, np.ndarray) and a.shape == p.shape and a.dtype == p.dtype):
            _check_adam_arrays(arrays)
    if p.dtype not in FLOATS:
        check_float("adam_step", p)
    if not (p.flags.c_contiguous and m.flags.c_contiguous and v.flags.c_contiguous
            and (vmax is None or vmax.flags.c_contiguous)):
        raise ValueError("adam_step: p, exp_avg, exp_avg_sq and max_exp_avg_sq must be "
                         "C-contiguous (they are updated in place)")
    c = _ref.adam_constants(lr, beta1, beta2, eps, weight_decay, decoupled, t)
    amsgrad = vmax is not None
    if policy.numpy_backend():
        _ref.adam_step(p, g, m, v, vmax, np.empty_like(p), np.empty_like(p), *c, amsgrad)
        return
    n = p.size  # reshape(n) is a view of each C-contiguous array and a copy of another grad
    run = _driver.adam_parallel if n >= ADAM_PARALLEL_MIN else _adam.adam_flat
    run(p.reshape(n), g.reshape(n), m.reshape(n), v.reshape(n),
        (vmax if amsgrad else v).reshape(n), *c, amsgrad)


def _check_adam_arrays(arrays):
    names = ("p", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    for name, a in zip(names, arrays):
        as_array(a, "adam_step", name)
    for name, a in zip(names, arrays):
        if a.shape != arrays[0].shape:
            raise ValueError(f"adam_step: {name} of shape {a.shape} does not match the "
                             f"parameter's shape {arrays[0].shape}")
    check_float("adam_step", *arrays)


def adam_steps(items, lr, beta1, beta2, eps, weight_decay, decoupled):
    """`adam_step` of each (p, g, m, v, vmax, t) of `items` with one set of hyper-parameters:
    an optimizer's parameter group, the foreach form of the step.

    The same compiled pass per parameter, with the same bits, but the scalars are worked out
    once per step count t rather than per parameter, and the usual arrays (of one shape and
    one float dtype, p, m, v and vmax C-contiguous) are told in one test each and go straight
    to the kernel: a small model's 50 parameters spent 3 us each around a call of 1 us. Any
    other item goes through `adam_step`, whose checks raise as they always did."""
    constants = {}
    numpy_backend = policy.numpy_backend()
    for p, g, m, v, vmax, t in items:
        shape, dtype = p.shape, p.dtype
        if (numpy_backend or type(p) is not np.ndarray or dtype not in FLOATS
                or type(g) is not np.ndarray or g.dtype is not dtype or g.shape != shape
                or type(m) is not np.ndarray or m.dtype is not dtype or m.shape != shape
                or type(v) is not np.ndarray or v.dtype is not dtype or v.shape != shape
                or vmax is not None or not (p.flags.c_contiguous and m.flags.c_contiguous
                                            and v.flags.c_contiguous)):
            adam_step(p, g, m, v, vmax, lr, beta1, beta2, eps, weight_decay, decoupled, t)
            continue
        c = constants.get(t)
        if c is None:
            c = constants[t] = _ref.adam_constants(lr, beta1, beta2, eps, weight_decay,
                                                   decoupled, t)
        # ravel: a view of each C-contiguous array, a copy of another g (as reshape(n), at
        # two thirds of its cost: four per parameter were a fifth of a small model's step)
        run = _driver.adam_parallel if p.size >= ADAM_PARALLEL_MIN else _adam.adam_flat
        v = v.ravel()
        run(p.ravel(), g.ravel(), m.ravel(), v, v, *c, False)
