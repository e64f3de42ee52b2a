"""The systematic comparison with PyTorch: every elementwise, reduction, shape and in-place op of
the compatibility table, on every dtype, on 0-d, empty, contiguous and non-contiguous inputs.

Where tests/compat_cases_*.py run one program per API name on chosen inputs, this runs each op
as a function of its inputs over a grid: 9 dtypes x the input layouts below, in both libraries.
Two runs agree when both raise, or both return tensors of the same shape, dtype and values (NaN
equal to NaN), and, for float inputs, the same gradients of a fixed weighting of the outputs
(both raising in backward also agrees). What does not agree must be listed in
compat_notes.SWEEP_DIFFERENCES (deliberate) or compat_notes.SWEEP_GAPS (not yet fixed), which
tests/test_compat_sweep.py checks both ways, so neither list hides a fixed gap or a new one.
"""
from __future__ import annotations

import numpy as np

from compat_sweep_special import BINARY_SPECIAL, INPLACE_SPECIAL, UNARY_SPECIAL
from compat_sweep_tensor import BINARY_TENSOR, INPLACE_TENSOR, UNARY_TENSOR

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
FLOATS = ("float16", "float32", "float64")
GRAD_DTYPES = ("float32", "float64")  # float16 gradients: PyTorch's CPU rounding differs


def _values(dtype, shape, seed):
    """Small values each dtype holds exactly: zeros, negatives (signed types), a few larger."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 7, shape).astype(dtype)
    if dtype in FLOATS:
        v = rng.uniform(-2.5, 2.5, shape)
        v.flat[::5] = 0.0 if v.size else v.flat[::5]
        return v.astype(dtype)
    return rng.integers(-4, 7, shape).astype(dtype)


# layouts: name -> (base shape, how the op's input is made from the base tensor)
LAYOUTS = {
    "0-d": ((), lambda t: t),
    "empty": ((0, 3), lambda t: t),
    "contiguous": ((2, 3), lambda t: t),
    "transposed": ((3, 2), lambda t: t.transpose(0, 1)),
    "strided": ((2, 6), lambda t: t[:, ::2]),
}
SLOW_LAYOUTS = {
    **LAYOUTS,
    "3-d permuted": ((2, 3, 4), lambda t: t.permute(2, 0, 1)),
    "one element": ((1, 1), lambda t: t),
    "wide": ((3, 70), lambda t: t[:, 1::3]),
}


def _u(name, fn):
    return name, 1, fn


def _b(name, fn):
    return name, 2, fn


# Each op: (table name, number of tensor inputs, fn(lib, *tensors)). Binary ops take two
# tensors of the swept dtype and layout (the second one reversed, so the two differ).
UNARY = [
    _u("Tensor.abs", lambda L, x: x.abs()), _u("Tensor.__neg__", lambda L, x: -x),
    _u("Tensor.exp", lambda L, x: x.exp()), _u("Tensor.log", lambda L, x: x.log()),
    _u("Tensor.sqrt", lambda L, x: x.sqrt()), _u("Tensor.rsqrt", lambda L, x: x.rsqrt()),
    _u("Tensor.sin", lambda L, x: x.sin()), _u("Tensor.cos", lambda L, x: x.cos()),
    _u("Tensor.tanh", lambda L, x: x.tanh()), _u("Tensor.sigmoid", lambda L, x: x.sigmoid()),
    _u("Tensor.relu", lambda L, x: x.relu()), _u("Tensor.square", lambda L, x: x.square()),
    _u("Tensor.reciprocal", lambda L, x: x.reciprocal()),
    _u("Tensor.floor", lambda L, x: x.floor()), _u("Tensor.ceil", lambda L, x: x.ceil()),
    _u("Tensor.round", lambda L, x: x.round()), _u("Tensor.trunc", lambda L, x: x.trunc()),
    _u("Tensor.sign", lambda L, x: x.sign()), _u("Tensor.__pos__", lambda L, x: +x),
    _u("Tensor.isnan", lambda L, x: x.isnan()), _u("Tensor.isinf", lambda L, x: x.isinf()),
    _u("Tensor.isfinite", lambda L, x: x.isfinite()),
    _u("Tensor.logical_not", lambda L, x: x.logical_not()),
    _u("Tensor.__invert__", lambda L, x: ~x),
    _u("Tensor.clamp", lambda L, x: x.clamp(-1, 2)),
    _u("Tensor.clamp_min", lambda L, x: x.clamp_min(0)),
    _u("Tensor.clamp_max", lambda L, x: x.clamp_max(1)),
    _u("Tensor.pow (int exponent)", lambda L, x: x ** 2),
    _u("Tensor.pow (float exponent)", lambda L, x: x ** 0.5),
    _u("Tensor.__rpow__", lambda L, x: 2 ** x),
    _u("Tensor.__add__ (int)", lambda L, x: x + 1), _u("Tensor.__add__ (float)", lambda L, x: x + 1.5),
    _u("Tensor.__mul__ (float)", lambda L, x: x * 2.5), _u("Tensor.__rsub__", lambda L, x: 1 - x),
    _u("Tensor.__truediv__ (int)", lambda L, x: x / 2), _u("Tensor.__rtruediv__", lambda L, x: 3 / x),
    _u("Tensor.__floordiv__ (int)", lambda L, x: x // 2),
    _u("Tensor.__mod__ (int)", lambda L, x: x % 3),
    _u("Tensor.__eq__ (int)", lambda L, x: x == 1), _u("Tensor.__lt__ (float)", lambda L, x: x < 0.5),
    _u("Tensor.__and__ (int)", lambda L, x: x & 1),
    _u("Tensor.float", lambda L, x: x.float()), _u("Tensor.double", lambda L, x: x.double()),
    _u("Tensor.half", lambda L, x: x.half()), _u("Tensor.long", lambda L, x: x.long()),
    _u("Tensor.int", lambda L, x: x.int()), _u("Tensor.bool", lambda L, x: x.bool()),
    _u("Tensor.byte", lambda L, x: x.byte()),
    _u("F.gelu", lambda L, x: L.nn.functional.gelu(x)),
    _u("F.leaky_relu", lambda L, x: L.nn.functional.leaky_relu(x, 0.1)),
    _u("F.silu", lambda L, x: L.nn.functional.silu(x)),
    _u("F.softplus", lambda L, x: L.nn.functional.softplus(x)),
    _u("Tensor.erf", lambda L, x: x.erf()), _u("Tensor.erfc", lambda L, x: x.erfc()),
    _u("Tensor.erfinv", lambda L, x: (x / 3).erfinv()),
    _u("Tensor.log2", lambda L, x: x.log2()), _u("Tensor.log10", lambda L, x: x.log10()),
    _u("Tensor.exp2", lambda L, x: x.exp2()),
    _u("Tensor.nan_to_num", lambda L, x: (x / x).nan_to_num(posinf=5.0)),
    _u("Tensor.fmod (int)", lambda L, x: x.fmod(3)),
    _u("Tensor.asin", lambda L, x: (x / 3).asin()), _u("Tensor.acos", lambda L, x: (x / 3).acos()),
    _u("Tensor.atan", lambda L, x: x.atan()), _u("Tensor.sinh", lambda L, x: x.sinh()),
    _u("Tensor.cosh", lambda L, x: x.cosh()), _u("Tensor.asinh", lambda L, x: x.asinh()),
    _u("Tensor.acosh", lambda L, x: x.acosh()),
    _u("Tensor.atanh", lambda L, x: (x / 3).atanh()),
]
BINARY = [
    _b("Tensor.__add__", lambda L, x, y: x + y), _b("Tensor.__sub__", lambda L, x, y: x - y),
    _b("Tensor.__mul__", lambda L, x, y: x * y), _b("Tensor.__truediv__", lambda L, x, y: x / y),
    _b("Tensor.__pow__", lambda L, x, y: x ** y),
    _b("Tensor.__floordiv__", lambda L, x, y: x // y),
    _b("Tensor.__mod__", lambda L, x, y: x % y),
    _b("Tensor.fmod", lambda L, x, y: x.fmod(y)),
    _b("Tensor.atan2", lambda L, x, y: x.atan2(y)), _b("Tensor.hypot", lambda L, x, y: x.hypot(y)),
    _b("Tensor.logaddexp", lambda L, x, y: x.logaddexp(y)),
    _b("Tensor.logaddexp2", lambda L, x, y: x.logaddexp2(y)),
    _b("minigrad.maximum", lambda L, x, y: L.maximum(x, y)),
    _b("minigrad.minimum", lambda L, x, y: L.minimum(x, y)),
    _b("Tensor.__eq__", lambda L, x, y: x == y), _b("Tensor.__ne__", lambda L, x, y: x != y),
    _b("Tensor.__lt__", lambda L, x, y: x < y), _b("Tensor.__le__", lambda L, x, y: x <= y),
    _b("Tensor.__gt__", lambda L, x, y: x > y), _b("Tensor.__ge__", lambda L, x, y: x >= y),
    _b("Tensor.logical_and", lambda L, x, y: x.logical_and(y)),
    _b("Tensor.logical_or", lambda L, x, y: x.logical_or(y)),
    _b("Tensor.logical_xor", lambda L, x, y: x.logical_xor(y)),
    _b("Tensor.__and__", lambda L, x, y: x & y), _b("Tensor.__or__", lambda L, x, y: x | y),
    _b("Tensor.__xor__", lambda L, x, y: x ^ y),
    _b("minigrad.where", lambda L, x, y: L.where(x > y, x, y)),
    _b("Tensor.isclose", lambda L, x, y: x.isclose(y)),
    _b("minigrad.cat", lambda L, x, y: L.cat([x, y])),
    _b("minigrad.stack", lambda L, x, y: L.stack([x, y])),
    _b("Tensor.masked_fill", lambda L, x, y: x.masked_fill(y > x, 1)),
]
REDUCE = [
    _u(f"Tensor.{n}{' (dim=-1)' if d else ''}", (lambda n, d: lambda L, x: getattr(x, n)(
        **({"dim": -1} if d else {})))(n, d))
    for n in ("sum", "mean", "amax", "amin", "std", "var", "logsumexp", "all", "any",
              "argmax", "argmin", "max", "min", "norm")
    for d in (False, True) if not (n == "logsumexp" and not d)
] + [
    _u("Tensor.sum (keepdim)", lambda L, x: x.sum(dim=0, keepdim=True)),
    _u("Tensor.cumsum", lambda L, x: x.cumsum(-1)),
    _u("Tensor.prod", lambda L, x: x.prod()),
    _u("Tensor.prod (dim=-1)", lambda L, x: x.prod(-1)),
    _u("Tensor.prod (keepdim)", lambda L, x: x.prod(0, keepdim=True)),
    _u("Tensor.cumprod", lambda L, x: x.cumprod(-1)),
    _u("Tensor.cumprod (dim=0)", lambda L, x: x.cumprod(0)),
    _u("Tensor.cummax", lambda L, x: tuple(x.cummax(-1))),
    _u("Tensor.cummin (dim=0)", lambda L, x: tuple(x.cummin(0))),
    _u("Tensor.logcumsumexp", lambda L, x: x.logcumsumexp(-1)),
    _u("Tensor.median", lambda L, x: x.median()),
    _u("Tensor.median (dim=-1)", lambda L, x: tuple(x.median(-1))),
    _u("Tensor.count_nonzero", lambda L, x: x.count_nonzero(-1)),
    _u("Tensor.mode", lambda L, x: tuple(x.mode(-1))),
    _u("Tensor.nansum", lambda L, x: x.nansum(-1)),
    _u("Tensor.nanmean", lambda L, x: x.nanmean()),
    _u("Tensor.diff", lambda L, x: x.diff(dim=-1)),
    _u("Tensor.nanmedian", lambda L, x: x.nanmedian()),
    _u("Tensor.nanmedian (dim=-1)", lambda L, x: tuple(x.nanmedian(-1))),
    _u("Tensor.nanquantile", lambda L, x: x.nanquantile(0.3, -1)),
    _u("linalg.vector_norm", lambda L, x: L.linalg.vector_norm(x, 3, -1)),
    _u("linalg.vector_norm (inf)", lambda L, x: L.linalg.vector_norm(x, float("inf"))),
    _u("minigrad.var_mean", lambda L, x: L.var_mean(x, -1)),
    _u("minigrad.std_mean", lambda L, x: L.std_mean(x, 0, keepdim=True)),
    _u("Tensor.softmax", lambda L, x: x.softmax(-1)),
    _u("Tensor.log_softmax", lambda L, x: x.log_softmax(-1)),
    _u("Tensor.sort", lambda L, x: x.sort(dim=-1, stable=True)),
    _u("Tensor.argsort", lambda L, x: x.argsort(dim=-1, stable=True)),
    _u("Tensor.topk", lambda L, x: x.topk(1)),
    _u("Tensor.unique", lambda L, x: x.unique()),
    _u("Tensor.nonzero", lambda L, x: x.nonzero()),
]
SHAPE = [
    _u("Tensor.reshape", lambda L, x: x.reshape(-1)),
    _u("Tensor.flatten", lambda L, x: x.flatten()),
    _u("Tensor.t", lambda L, x: x.t()),
    _u("Tensor.transpose", lambda L, x: x.transpose(0, -1)),
    _u("Tensor.permute", lambda L, x: x.permute(*reversed(range(x.dim())))),
    _u("Tensor.unsqueeze", lambda L, x: x.unsqueeze(0)),
    _u("Tensor.squeeze", lambda L, x: x.squeeze()),
    _u("Tensor.flip", lambda L, x: x.flip(0)),
    _u("Tensor.roll", lambda L, x: x.roll(1, 0)),
    _u("Tensor.expand", lambda L, x: x.unsqueeze(0).expand(2, *x.shape)),
    _u("Tensor.repeat", lambda L, x: x.repeat(*([2] * x.dim()))),
    _u("Tensor.chunk", lambda L, x: x.chunk(2, -1)),
    _u("Tensor.split", lambda L, x: x.split(1, -1)),
    _u("Tensor.narrow", lambda L, x: x.narrow(-1, 0, 1)),
    _u("Tensor.select", lambda L, x: x.select(-1, 0)),
    _u("Tensor.tril", lambda L, x: x.tril()), _u("Tensor.triu", lambda L, x: x.triu(1)),
    _u("Tensor.clone", lambda L, x: x.clone()),
    _u("Tensor.contiguous", lambda L, x: x.contiguous()),
    _u("Tensor.__getitem__ (slice)", lambda L, x: x[..., 1:]),
    _u("Tensor.__getitem__ (mask)", lambda L, x: x[x == x]),
    _u("Tensor.index_select", lambda L, x: x.index_select(-1, L.tensor([0, 0]))),
    _u("Tensor.gather", lambda L, x: x.gather(-1, L.zeros(x.shape, dtype=L.int64))),
    _u("Tensor.masked_select", lambda L, x: x.masked_select(x == x)),
    _u("Tensor.view", lambda L, x: x.view(-1)),
    _u("Tensor.matmul", lambda L, x: x @ x.transpose(0, -1)),
    _u("Tensor.diagonal", lambda L, x: x.diagonal(0, 0, -1)),
    _u("Tensor.diag", lambda L, x: x.diag(1)), _u("Tensor.trace", lambda L, x: x.trace()),
    _u("Tensor.tile", lambda L, x: x.tile((2, 1))),
    _u("Tensor.take_along_dim", lambda L, x: x.take_along_dim(
        L.zeros(x.shape, dtype=L.int64), -1)),
    _u("Tensor.tensor_split", lambda L, x: x.tensor_split(3, -1)),
    _u("Tensor.rot90", lambda L, x: x.rot90(1, (0, -1))),
    # (PyTorch's isin raises on non-contiguous test elements, "view size is not compatible")
    _b("minigrad.isin", lambda L, x, y: L.isin(x, y.contiguous())),
    _b("minigrad.hstack", lambda L, x, y: L.hstack([x, y])),
    _b("minigrad.vstack", lambda L, x, y: L.vstack((x, y))),
]
INPLACE = [
    _b("Tensor.add_", lambda L, x, y: x.add_(y)), _b("Tensor.sub_", lambda L, x, y: x.sub_(y)),
    _b("Tensor.mul_", lambda L, x, y: x.mul_(y)), _b("Tensor.div_", lambda L, x, y: x.div_(y)),
    _b("Tensor.__iadd__", lambda L, x, y: x.__iadd__(y)),
    _b("Tensor.__imul__", lambda L, x, y: x.__imul__(y)),
    _b("Tensor.__itruediv__", lambda L, x, y: x.__itruediv__(y)),
    _b("Tensor.copy_", lambda L, x, y: x.copy_(y)),
    _u("Tensor.add_ (float)", lambda L, x: x.add_(0.5)),
    _u("Tensor.mul_ (int)", lambda L, x: x.mul_(2)),
    _u("Tensor.clamp_", lambda L, x: x.clamp_(-1, 1)),
    _u("Tensor.relu_", lambda L, x: x.relu_()),
    _u("Tensor.zero_", lambda L, x: x.zero_()),
    _u("Tensor.fill_", lambda L, x: x.fill_(1)),
    _u("Tensor.masked_fill_", lambda L, x: x.masked_fill_(x == x, 0)),
    _u("Tensor.tril_", lambda L, x: x.tril_()),
    _u("Tensor.__setitem__", lambda L, x: x.__setitem__((Ellipsis, 0), 1) or x),
] + [_u(f"Tensor.{m}", lambda L, x, m=m: getattr(x, m)()) for m in (
    "abs_", "neg_", "sign_", "exp_", "expm1_", "log_", "log1p_", "sqrt_", "rsqrt_", "sigmoid_",
    "tanh_", "sin_", "cos_", "reciprocal_", "square_", "floor_", "ceil_", "trunc_", "round_",
    "erf_", "erfc_", "erfinv_", "log2_", "log10_", "exp2_", "nan_to_num_", "asin_", "acos_",
    "atan_", "sinh_", "cosh_", "asinh_", "acosh_", "atanh_")] + [
    _u("Tensor.pow_", lambda L, x: x.pow_(2)),
    _u("Tensor.clamp_min_", lambda L, x: x.clamp_min_(0)),
    _u("Tensor.clamp_max_", lambda L, x: x.clamp_max_(1)),
    _b("Tensor.floor_divide_", lambda L, x, y: x.floor_divide_(y)),
    _b("Tensor.remainder_", lambda L, x, y: x.remainder_(y)),
    _b("Tensor.fmod_", lambda L, x, y: x.fmod_(y)),
    _b("Tensor.atan2_", lambda L, x, y: x.atan2_(y)),
    _b("Tensor.hypot_", lambda L, x, y: x.hypot_(y)),
    *[_b(f"Tensor.{m}", lambda L, x, y, m=m: getattr(x, m)(y)) for m in (
        "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_and_", "logical_or_",
        "logical_xor_", "bitwise_and_", "bitwise_or_", "bitwise_xor_")],
    _u("Tensor.logical_not_", lambda L, x: x.logical_not_()),
    _u("Tensor.bitwise_not_", lambda L, x: x.bitwise_not_()),
    _b("Tensor.addmm_", lambda L, x, y: x.addmm_(y.reshape(-1, 1), y.reshape(1, -1))
       if x.ndim == 2 and x.shape[0] == x.shape[1] else x.addmm_(x, x)),
]
INPLACE += INPLACE_SPECIAL + INPLACE_TENSOR
OPS = (UNARY + BINARY + REDUCE + SHAPE + INPLACE + UNARY_SPECIAL + BINARY_SPECIAL + UNARY_TENSOR
       + BINARY_TENSOR)
INPLACE_NAMES = {name for name, _, _ in INPLACE}


# --- running one op in one library ----------------------------------------------------------

def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def _leaves(lib, dtype, layout, n, layouts, grad):
    """n input tensors (views of leaves made from the same values in both libraries)."""
    shape, view = layouts[layout]
    leaves = []
    for i in range(n):
        v = _values(dtype, shape, seed=len(leaves) + 7 * i)
        if i == 1:
            v = v[::-1].copy() if v.ndim else v
        leaf = lib.tensor(v)
        if grad:
            leaf.requires_grad_(True)
        leaves.append(leaf)
    return leaves, [view(t) for t in leaves]


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flatten(o)]
    return [out]


def _error(e):
    return ("error", type(e).__name__)


def run(lib, op, dtype, layout, layouts=LAYOUTS):
    """(outputs, gradients) of one op in one library: outputs a list of (shape, dtype,
    values) or an ("error", type) pair; gradients likewise, or None where not compared."""
    name, n, fn = op
    grad = dtype in GRAD_DTYPES and name not in INPLACE_NAMES
    leaves, inputs = _leaves(lib, dtype, layout, n, layouts, grad)
    if name in INPLACE_NAMES:  # in place on a copy, which the op returns
        inputs = [inputs[0].clone()] + inputs[1:]
    try:
        outs = _flatten(fn(lib, *inputs))
    except Exception as e:  # noqa: BLE001  (the comparison is whether both raise)
        return _error(e), None
    got = []
    for o in outs:
        if hasattr(o, "dtype"):
            got.append((tuple(o.shape), _dtype_name(o), o.detach().numpy().copy()))
        else:
            got.append(((), type(o).__name__, np.asarray(o)))
    if not grad:
        return got, None
    floats = [o for o in outs if hasattr(o, "dtype") and _dtype_name(o) in FLOATS
              and o.requires_grad]
    if not floats:
        return got, None
    try:
        total = 0
        for i, o in enumerate(floats):
            w = np.linspace(0.5, 1.5, max(o.numel(), 1))[:o.numel()] + i
            total = total + (o * lib.tensor(w.reshape(tuple(o.shape)), dtype=o.dtype)).sum()
        total.backward()
    except Exception as e:  # noqa: BLE001
        return got, _error(e)
    # (PyTorch's gradient of ldexp's exponent is a ZeroTensor, which numpy() takes only forced)
    force = {"force": True} if lib.__name__ == "torch" else {}
    return got, [None if t.grad is None else t.grad.numpy(**force).copy() for t in leaves]


def _close(a, b):
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        rtol = {"float16": 2e-3, "float32": 2e-5}.get(str(b.dtype), 1e-9)
        return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                atol=rtol, equal_nan=True))
    return bool(np.array_equal(a, b))


def differs(ours, theirs):
    """Why two runs disagree ("" when they agree): "raises", "no error", "dtype", "shape",
    "values", "gradient" or "gradient raises"."""
    (got, ggrad), (want, wgrad) = ours, theirs
    if isinstance(want, tuple) or isinstance(got, tuple):
        if isinstance(want, tuple) and isinstance(got, tuple):
            return ""
        return "raises" if isinstance(got, tuple) else "no error"
    if len(got) != len(want):
        return "shape"
    for (gs, gd, gv), (ws, wd, wv) in zip(got, want):
        if gs != ws:
            return "shape"
        if gd != wd:
            return "dtype"
        if not _close(gv, wv):
            return "values"
    if isinstance(wgrad, tuple) or isinstance(ggrad, tuple):
        both = isinstance(wgrad, tuple) and isinstance(ggrad, tuple)
        return "" if both else "gradient raises" if isinstance(ggrad, tuple) else "gradient"
    if wgrad is not None and ggrad is not None:
        for g, w in zip(ggrad, wgrad):
            g = np.zeros_like(w) if g is None and w is not None else g
            w = np.zeros_like(g) if w is None and g is not None else w
            if g is not None and not _close(g, w):
                return "gradient"
    return ""


def sweep(torch, minigrad, ops=OPS, dtypes=DTYPES, layouts=LAYOUTS):
    """{(op name, dtype, layout): why} for every combination where the libraries disagree,
    and the number of combinations run."""
    found, count = {}, 0
    with np.errstate(all="ignore"):
        for op in ops:
            for dtype in dtypes:
                for layout in layouts:
                    count += 1
                    theirs = run(torch, op, dtype, layout, layouts)
                    ours = run(minigrad, op, dtype, layout, layouts)
                    why = differs(ours, theirs)
                    if why:
                        found[(op[0], dtype, layout)] = why
    return found, count
