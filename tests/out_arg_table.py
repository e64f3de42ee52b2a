"""The generated comparison of `out=` with PyTorch: every function of minigrad/out_names.py that
minigrad has, called with out= in both libraries over a grid of outs.

No call is written by hand. Each function gets the first of the argument lists below
(`CANDIDATES`) that both libraries accept without out= and on which they agree in shape and
dtype; then it is called with out= of every dtype and of these layouts: the result's shape, an
empty tensor, another shape with elements (resized, with PyTorch's warning), a non-contiguous
view of a larger base (the values must appear in the base). Two runs agree when both raise, or
both return their `out` with the same shape, dtype and values (random functions and `empty`:
shape and dtype) and both warn or neither does. A function with several results gets a
tuple of outs.
"""
from __future__ import annotations

import warnings

import numpy as np

OUT_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
              "float64", "complex64", "complex128")
LAYOUTS = ("exact", "empty", "resized", "view")
UNDETERMINED = {"empty", "empty_like", "bernoulli", "normal", "poisson", "rand", "rand_like",
                "randint", "randint_like",
          "randn", "randn_like", "randperm", "multinomial", "binomial"}

SIGN_FREE = {"svd", "eig"}

_rng = np.random.default_rng(5)
_X = _rng.uniform(0.1, 0.9, (2, 3)).astype(np.float32)         # in every function's domain
_Y = _rng.uniform(0.1, 0.9, (2, 3)).astype(np.float32)
_V = _rng.uniform(0.1, 0.9, 4).astype(np.float32)
_SPD = (lambda a: (a @ a.T + 3 * np.eye(3)).astype(np.float32))(_rng.uniform(-1, 1, (3, 3)))
_M34 = _rng.uniform(-1, 1, (3, 4)).astype(np.float32)
_B = _rng.uniform(0.1, 0.9, (2, 3, 4)).astype(np.float32)        # (B, C, L) for pooling
_I = np.array([0, 2, 1, 2], dtype=np.int64)
_C2 = _rng.uniform(-1, 1, (2, 3)).astype(np.complex64)
_N = _rng.integers(1, 9, (2, 3))                                  # int64, for bitwise ops, gcd
_M = _rng.integers(1, 9, (2, 3))
_COLS = np.array([[0, 2, 1], [2, 2, 0]])                          # indices along dim 1
_P = _rng.uniform(0.1, 0.9, (2, 4)).astype(np.float32)


class Arr:
    """An array argument: a tensor in each library."""

    def __init__(self, array):
        self.array = array


class Many:
    """A list of array arguments (cat's tensors)."""

    def __init__(self, *arrays):
        self.arrays = arrays


CANDIDATES = (
    (Arr(_X),), (Arr(_X), Arr(_Y)), (Arr(_X), 1), (Arr(_X), 0.5), (Arr(_SPD),),
    (Arr(_SPD), Arr(_SPD)), (Arr(_V),), (Arr(_V), Arr(_V)), (Arr(_X), Arr(_M34)),
    (Arr(_X), Arr(_Y), Arr(_Y)), (Arr(_X), Arr(_Y), 0.5), (Many(_X, _Y),), (Many(_X, _Y), 1),
    (3,), (2, 3), (Arr(_I),), (Arr(_B), 2), (Arr(_B), 1), (Arr(_SPD), 2), (Arr(_X), 2, 1),
    (4, 3), (Arr(_V), Arr(_V), Arr(_V)), (Arr(_X), Arr(_X > 0.5)),
    (Arr(_X > 0.5), Arr(_X), Arr(_Y)),
    (Arr(_C2),), (Arr(_N), Arr(_M)), (Arr(_N), 1), (Arr(_P), Arr(_X), Arr(_M34)),
    (Arr(_B), Arr(_B.transpose(0, 2, 1))), (Arr(_X), (0,)), ((2, 3), 1.5), (0.0, 1.0, 5),
    (Arr(_X), 1, Arr(_COLS)), (Arr(_X), 1, Arr(_COLS[0])),
)


def _arg(lib, a):
    if isinstance(a, Arr):
        return lib.tensor(a.array)
    if isinstance(a, Many):
        return [lib.tensor(x) for x in a.arrays]
    return a


def _call(lib, fn, args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            lib.manual_seed(0)
            result = fn(*[_arg(lib, a) for a in args], **kw)
        except Exception as e:  # the outcome compared: the error's type
            return e, caught
    return result, caught


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _function(lib, namespace, name):
    ns = {"torch": lib, "linalg": lib.linalg, "special": lib.special, "fft": lib.fft,
          "nn.functional": lib.nn.functional}[namespace]
    return getattr(ns, name, None)


def resolve(torch, minigrad, namespace, name):
    """The first candidate argument list both libraries run alike without out=, or None."""
    tf, mf = _function(torch, namespace, name), _function(minigrad, namespace, name)
    if mf is None:
        return None
    for args in CANDIDATES:
        t, _ = _call(torch, tf, args)
        if isinstance(t, Exception) or not all(isinstance(x, torch.Tensor) for x in _leaves(t)):
            continue
        m, _ = _call(minigrad, mf, args)
        if isinstance(m, Exception) or len(_leaves(m)) != len(_leaves(t)):
            continue
        if all(isinstance(b, minigrad.Tensor) and tuple(a.shape) == tuple(b.shape)
               and str(a.dtype).split(".")[-1] == np.dtype(b.dtype).name
               for a, b in zip(_leaves(t), _leaves(m))):
            return args
    return None


def _make_out(lib, dtype, shape, layout):
    dt = getattr(lib, dtype)
    if layout == "exact":
        return lib.zeros(shape, dtype=dt), None
    if layout == "empty":
        return lib.empty(0, dtype=dt), None
    if layout == "resized":
        return lib.zeros((7, 1) if tuple(shape) != (7, 1) else (5,), dtype=dt), None
    base = lib.zeros((*shape, 2), dtype=dt)          # a non-contiguous view of a larger base
    return base[..., 1], base


def _outcome(lib, fn, args, dtypes_, shapes, layout):
    """(kind, payload, warned): kind "raises" (payload the exception) or "ok" (payload the
    arrays written: the base's for views), with whether `out` itself came back."""
    made = [_make_out(lib, d, s, layout) for d, s in zip(dtypes_, shapes)]
    outs = [m[0] for m in made]
    out = outs[0] if len(outs) == 1 else tuple(outs)
    result, caught = _call(lib, fn, args, out=out)
    warned = any("resized" in str(w.message) for w in caught)
    if isinstance(result, Exception):
        return "raises", result, warned, True
    same = all(a is b for a, b in zip(_leaves(result), outs))
    written = [(b if b is not None else o) for o, (_, b) in zip(outs, made)]
    arrays = [np.array(w.detach().resolve_conj().numpy() if lib.__name__ == "torch" else w.numpy())
              for w in written]
    return "ok", arrays, warned, same


def compare(torch, minigrad, namespace, name, args, full=False):
    """The disagreements of one function: [(out dtype(s), layout, kind, text)], kind "casts"
    (PyTorch refuses this out, minigrad writes PyTorch's result cast to its dtype), "accepts"
    (PyTorch has no out= in this overload, `sum(x)` without a dim, say) or "differs"
    (anything else)."""
    tf, mf = _function(torch, namespace, name), _function(minigrad, namespace, name)
    t0, _ = _call(torch, tf, args)
    leaves = _leaves(t0)
    shapes = [tuple(x.shape) for x in leaves]
    natural = [str(x.dtype).split(".")[-1] for x in leaves]
    if len(leaves) > 1:
        grid = [(natural, lay) for lay in LAYOUTS]
    else:  # every layout in the result's dtype; the others (all layouts only when `full`)
        grid = [(natural, lay) for lay in LAYOUTS] + [
            ([d], lay) for d in OUT_DTYPES if d != natural[0]
            for lay in (LAYOUTS if full else ("empty",))]
    found = []
    for dts, layout in grid:
        a = _outcome(torch, tf, args, dts, shapes, layout)
        b = _outcome(minigrad, mf, args, dts, shapes, layout)
        label = (",".join(dts), layout)
        if a[0] == "raises" and b[0] == "ok" and _refuses_keyword(a[1]):
            found.append((*label, "accepts", f"torch {_brief(a[1])}"))
            continue
        if a[0] == "raises" and b[0] == "ok" and b[3] and \
                _is_cast(name, leaves, dts, layout, b[1]):
            found.append((*label, "casts", f"torch {_brief(a[1])}"))
            continue
        if a[0] != b[0]:
            found.append((*label, "differs",
                          f"torch {a[0]} {_brief(a[1])}, minigrad {b[0]} {_brief(b[1])}"))
            continue
        if a[0] == "raises":
            continue
        if a[2] != b[2]:
            found.append((*label, "differs", f"resize warning: torch {a[2]}, minigrad {b[2]}"))
        if not b[3]:
            found.append((*label, "differs", "minigrad did not return its out"))
        for x, y in zip(a[1], b[1]):
            if x.shape != y.shape or x.dtype != y.dtype:
                found.append((*label, "differs", f"torch {x.dtype}{list(x.shape)}, minigrad "
                                                 f"{y.dtype}{list(y.shape)}"))
            elif name not in UNDETERMINED and not _close(name, x, y):
                found.append((*label, "differs", f"values: torch {x.ravel()[:4]}, minigrad "
                                                 f"{y.ravel()[:4]}"))
    return found


def _refuses_keyword(error):
    msg = str(error)
    return isinstance(error, TypeError) and ("keyword argument 'out'" in msg or (
        "invalid combination" in msg and "out=" in msg))


def _is_cast(name, leaves, dts, layout, written):
    """Whether minigrad wrote PyTorch's own result (no out) cast to the out dtype."""
    for leaf, dt, w in zip(leaves, dts, written):
        want = np.array(leaf.detach().resolve_conj().numpy()).astype(dt)
        got = w[..., 1] if layout == "view" else w
        if got.shape != want.shape or got.dtype != want.dtype:
            return False
        if name not in UNDETERMINED and not _close(name, want, got):
            return False
    return True


def _close(name, x, y):
    if name in SIGN_FREE:  # singular vectors and eigenvectors: each one's sign or phase is free
        x, y = np.abs(x), np.abs(y)
    if x.dtype.kind in "fc":
        tol = 1e-2 if x.dtype == np.float16 else 1e-4
        return np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True)
    return np.array_equal(x, y)


def _brief(p):
    if isinstance(p, Exception):
        return f"{type(p).__name__}: {str(p)[:90]}"
    return ""
