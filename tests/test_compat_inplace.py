"""Every in-place method of the compatibility table against PyTorch, systematically: each
method, with each of its operand variants, on bool, int64, float32 and float64 tensors that are
contiguous, non-contiguous (a transposed view of another tensor), 0-d or empty, written with no
graph, inside a graph (a non-leaf whose gradient is then taken) and on a leaf that requires
grad. The same program runs in both libraries; both must raise, or both succeed with the same
values, dtypes, returned object and gradients."""
import numpy as np
import pytest
import torch

import minigrad as mg

DTYPES = ("bool", "int64", "float32", "float64")
LAYOUTS = ("contiguous", "non-contiguous", "0-d", "empty")
MODES = ("no graph", "graph", "leaf")


def values(shape, dtype, seed):
    """The same deterministic values for both libraries: quarters in [-2, 2] for floats (away
    from the clamp bounds and kinks below), small integers, or a bool pattern."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype == "int64":
        return np.asarray(rng.integers(-3, 4, shape), np.int64)
    return np.asarray(rng.integers(-7, 8, shape) / 4 + 0.125, dtype)


class Maker:
    """Operand tensors for one run in library L; floats require grad in the graph mode."""

    def __init__(self, L, grad):
        self.L, self.grad, self.made, self.seed = L, grad, [], 100

    def __call__(self, shape, dtype):
        self.seed += 1
        t = self.L.tensor(values(tuple(shape), dtype, self.seed))
        if self.grad and dtype.startswith("float"):
            t.requires_grad_(True)
            self.made.append(t)
        return t

    def index(self, n, k, shape):
        """An int64 index of `shape`: along its last dim, positions 0 and n - 1 of a dim of
        size n (distinct when n > 1, so that no two values race for one place)."""
        rows = np.broadcast_to(np.array([0, max(n - 1, 0)][:shape[-1]] if shape else 0), shape)
        return self.L.tensor(np.array(rows, np.int64))


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def last(t):
    """The size of the last dim (a 0-d tensor counts as one element)."""
    return t.shape[-1] if t.dim() else 1


def dims_before(t):
    return tuple(t.shape[:-1]) if t.dim() else ()


def index_k(t, k=2):
    """k positions along the last dim, inside it (none if it is empty)."""
    n = last(t)
    return [0, n - 1][:k] if n else []


def arith(op):
    return [
        ("int", lambda L, t, o: op(t, 2)),
        ("float", lambda L, t, o: op(t, 0.5)),
        ("bool", lambda L, t, o: op(t, True)),
        ("same dtype", lambda L, t, o: op(t, o(t.shape, dtype_name(t)))),
        ("float64 tensor", lambda L, t, o: op(t, o(t.shape, "float64"))),
        ("float32 0-d", lambda L, t, o: op(t, o((), "float32"))),
        ("int64 row", lambda L, t, o: op(t, o(t.shape[-1:], "int64"))),
        ("too big", lambda L, t, o: op(t, o((2,) + tuple(t.shape), "float32"))),
    ]


def alpha(op):
    return arith(op) + [("alpha", lambda L, t, o: op(t, o(t.shape, "float32"), alpha=2))]


def positive(op):  # divisors away from zero
    return [v for v in arith(op) if v[0] not in ("same dtype", "int64 row")] + [
        ("int64 row", lambda L, t, o: op(t, o(t.shape[-1:], "int64").abs() + 1))]


def scatter_variants(name, *extra, **kw):
    """`extra` and `kw`: what follows src (scatter_reduce_'s reduce and include_self)."""
    def idx(L, t, o):
        return o.index(last(t), 2, dims_before(t) + ((2 if last(t) else 0),))
    variants = [
        ("same dtype src", lambda L, t, o: getattr(t, name)(
            -1, idx(L, t, o), o(idx(L, t, o).shape, dtype_name(t)), *extra, **kw)),
        ("float src", lambda L, t, o: getattr(t, name)(-1, idx(L, t, o),
                                                       o(idx(L, t, o).shape, "float32"),
                                                       *extra, **kw)),
    ]
    if name == "scatter_":
        variants.append(("value", lambda L, t, o: t.scatter_(-1, idx(L, t, o), value=1.5)))
    return variants


def index_tensor(L, t):
    return L.tensor(index_k(t), dtype=L.int64)


OPS = {
    "add_": alpha(lambda t, x, **k: t.add_(x, **k)),
    "sub_": alpha(lambda t, x, **k: t.sub_(x, **k)),
    "mul_": arith(lambda t, x: t.mul_(x)),
    "div_": positive(lambda t, x: t.div_(x)),
    "__iadd__": arith(lambda t, x: t.__iadd__(x)),
    "__isub__": arith(lambda t, x: t.__isub__(x)),
    "__imul__": arith(lambda t, x: t.__imul__(x)),
    "__itruediv__": positive(lambda t, x: t.__itruediv__(x)),
    "copy_": [
        ("float64", lambda L, t, o: t.copy_(o(t.shape, "float64"))),
        ("int64", lambda L, t, o: t.copy_(o(t.shape, "int64"))),
        ("bool", lambda L, t, o: t.copy_(o(t.shape, "bool"))),
        ("float32 row", lambda L, t, o: t.copy_(o(t.shape[-1:], "float32"))),
        ("too big", lambda L, t, o: t.copy_(o((2,) + tuple(t.shape), "float32"))),
    ],
    "fill_": [
        ("int", lambda L, t, o: t.fill_(2)),
        ("float", lambda L, t, o: t.fill_(0.5)),
        ("bool", lambda L, t, o: t.fill_(True)),
        ("0-d float32", lambda L, t, o: t.fill_(o((), "float32"))),
        ("1-d", lambda L, t, o: t.fill_(o((2,), "float32"))),
    ],
    "zero_": [("", lambda L, t, o: t.zero_())],
    "clamp_": [
        ("int bounds", lambda L, t, o: t.clamp_(-1, 1)),
        ("float min", lambda L, t, o: t.clamp_(min=-0.3)),
        ("float max", lambda L, t, o: t.clamp_(max=0.3)),
    ],
    "clip_": [("float bounds", lambda L, t, o: t.clip_(-0.3, 0.7))],
    "relu_": [("", lambda L, t, o: t.relu_())],
    "lerp_": [
        ("float weight", lambda L, t, o: t.lerp_(o(t.shape, dtype_name(t)), 0.25)),
        ("tensor weight", lambda L, t, o: t.lerp_(o(t.shape, dtype_name(t)),
                                                  o(t.shape, dtype_name(t)))),
    ],
    "tril_": [("", lambda L, t, o: t.tril_()), ("1", lambda L, t, o: t.tril_(1))],
    "triu_": [("", lambda L, t, o: t.triu_()), ("-1", lambda L, t, o: t.triu_(-1))],
    "masked_fill_": [
        ("float", lambda L, t, o: t.masked_fill_(o(t.shape, "bool"), 0.5)),
        ("int", lambda L, t, o: t.masked_fill_(o(t.shape, "bool"), 2)),
        ("row mask", lambda L, t, o: t.masked_fill_(o(t.shape[-1:], "bool"), 1)),
        ("0-d float32 value", lambda L, t, o: t.masked_fill_(o(t.shape, "bool"),
                                                             o((), "float32"))),
    ],
    "fill_diagonal_": [
        ("float", lambda L, t, o: t.fill_diagonal_(1.5)),
        ("int wrapped", lambda L, t, o: t.fill_diagonal_(2, wrap=True)),
    ],
    "index_fill_": [
        ("float", lambda L, t, o: t.index_fill_(-1, index_tensor(L, t), 1.5)),
        ("int", lambda L, t, o: t.index_fill_(-1, index_tensor(L, t), 1)),
    ],
    "index_add_": [
        ("same dtype", lambda L, t, o: t.index_add_(
            -1, index_tensor(L, t), o(dims_before(t) + (len(index_k(t)),), dtype_name(t)))),
        ("float32 alpha", lambda L, t, o: t.index_add_(
            -1, index_tensor(L, t), o(dims_before(t) + (len(index_k(t)),), "float32"),
            alpha=2)),
    ],
    "index_put_": [
        ("value", lambda L, t, o: t.index_put_((index_tensor(L, t),), L.tensor(1.5))),
        ("accumulate", lambda L, t, o: t.index_put_(
            (index_tensor(L, t),), o((len(index_k(t)),) + tuple(t.shape[1:]), dtype_name(t)),
            accumulate=True)),
    ],
    "scatter_": scatter_variants("scatter_"),
    "scatter_add_": scatter_variants("scatter_add_"),
    # one variant: a second write to the tensor whose values PyTorch's scatter_reduce saved
    # makes its backward raise (see the compat notes); tests/test_scatter_reduce.py has the rest
    "scatter_reduce_": scatter_variants("scatter_reduce_", "amax")[:1],
    **{name: [("", lambda L, t, o, name=name: getattr(t, name)())] for name in (
        "abs_", "neg_", "sign_", "exp_", "expm1_", "log_", "log1p_", "sqrt_", "rsqrt_",
        "sigmoid_", "tanh_", "sin_", "cos_", "tan_", "reciprocal_", "square_", "floor_", "ceil_",
        "trunc_", "round_", "erf_", "erfc_", "erfinv_", "log2_", "log10_", "exp2_",
        "nan_to_num_", "asin_", "acos_", "atan_", "sinh_", "cosh_", "asinh_", "acosh_",
        "atanh_", "arcsin_", "arccos_", "arctan_", "arcsinh_", "arccosh_", "arctanh_")},
    **{name: [("same dtype", lambda L, t, o, name=name: getattr(t, name)(
        o(t.shape, dtype_name(t)))), ("float32", lambda L, t, o, name=name: getattr(t, name)(
            o(t.shape[-1:], "float32")))] for name in ("atan2_", "arctan2_")},
    # one variant: PyTorch's hypot_ saves its output, so a second write makes its backward
    # raise (the listed difference of an in-place write after another)
    "hypot_": [("float32", lambda L, t, o: t.hypot_(o(t.shape[-1:], "float32")))],
    "fmod_": positive(lambda t, x: t.fmod_(x)),
    **{name: [("same dtype", lambda L, t, o, name=name: getattr(t, name)(
        o(t.shape, dtype_name(t)))), ("float", lambda L, t, o, name=name: getattr(t, name)(0.5))]
       for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_")},
    **{name: [("same dtype", lambda L, t, o, name=name: getattr(t, name)(
        o(t.shape, dtype_name(t))))]
       for name in ("logical_and_", "logical_or_", "logical_xor_", "bitwise_and_", "bitwise_or_",
                    "bitwise_xor_")},
    "logical_not_": [("", lambda L, t, o: t.logical_not_())],
    "bitwise_not_": [("", lambda L, t, o: t.bitwise_not_())],
    "cumsum_": [("last", lambda L, t, o: t.cumsum_(-1))],
    "cumprod_": [("first", lambda L, t, o: t.cumprod_(0))],
    "addcmul_": [("same dtype", lambda L, t, o: t.addcmul_(o(t.shape, dtype_name(t)),
                                                           o(t.shape[-1:], dtype_name(t)),
                                                           value=2))],
    "addcdiv_": [("float32", lambda L, t, o: t.addcdiv_(o(t.shape, "float32"),
                                                        o(t.shape, "float32").abs() + 1))],
    "pow_": [("int", lambda L, t, o: t.pow_(2)), ("float", lambda L, t, o: t.pow_(0.5)),
             ("same dtype", lambda L, t, o: t.pow_(o(t.shape, dtype_name(t)).abs()))],
    "clamp_min_": [("float", lambda L, t, o: t.clamp_min_(-0.3))],
    "clamp_max_": [("int", lambda L, t, o: t.clamp_max_(1))],
    "remainder_": positive(lambda t, x: t.remainder_(x)),
    "addmm_": [("square", lambda L, t, o: t.addmm_(o(t.shape, dtype_name(t)),
                                                   o(t.shape[::-1], dtype_name(t)).t(),
                                                   beta=0.5))],
    "baddbmm_": [("batch of one", lambda L, t, o: t.baddbmm_(
        o((1,) + tuple(t.shape), dtype_name(t)), o((1,) + tuple(t.shape[-1:]) * 2,
                                                  dtype_name(t))))],
    # the special functions' and PyTorch's other names' in-place forms (special_methods.py)
    **{name: [("", lambda L, t, o, name=name: getattr(t, name)())] for name in (
        "lgamma_", "digamma_", "i0_", "sinc_", "logit_", "deg2rad_", "rad2deg_", "frac_",
        "absolute_", "negative_", "fix_")},
    "polygamma_": [("1", lambda L, t, o: t.polygamma_(1))],
    "mvlgamma_": [("1", lambda L, t, o: t.mvlgamma_(1))],
    "float_power_": [("int", lambda L, t, o: t.float_power_(2))],
    **{name: [("same dtype", lambda L, t, o, name=name: getattr(t, name)(
        o(t.shape, dtype_name(t)))), ("float32 row", lambda L, t, o, name=name: getattr(t, name)(
            o(t.shape[-1:], "float32")))] for name in (
        "xlogy_", "multiply_", "subtract_", "true_divide_", "greater_",
        "greater_equal_", "less_", "less_equal_", "not_equal_")},
    # one variant: PyTorch's copysign saves its result, so a second write makes its backward
    # raise (as hypot_'s above)
    "copysign_": [("float32 row", lambda L, t, o: t.copysign_(o(t.shape[-1:], "float32")))],
    "divide_": positive(lambda t, x: t.divide_(x)),
    **{name: [("same dtype", lambda L, t, o, name=name: getattr(t, name)(
        o(t.shape, dtype_name(t)).abs()))] for name in (
        "gcd_", "lcm_", "bitwise_left_shift_", "bitwise_right_shift_")},
    "heaviside_": [("same dtype", lambda L, t, o: t.heaviside_(o(t.shape, dtype_name(t))))],
    "addmv_": [("square", lambda L, t, o: t.addmv_(o(t.shape[-1:] * 2, dtype_name(t)),
                                                   o(t.shape[-1:], dtype_name(t)))
                if t.dim() == 1 else t.addmv_(t, t))],
    "addr_": [("outer", lambda L, t, o: t.addr_(o(t.shape[:1], dtype_name(t)),
                                                o(t.shape[1:2], dtype_name(t)), alpha=2))],
    "addbmm_": [("batch of two", lambda L, t, o: t.addbmm_(
        o((2,) + tuple(t.shape[:1]) + (3,), dtype_name(t)),
        o((2, 3) + tuple(t.shape[1:2]), dtype_name(t))))],
    # the scatter family's in-place forms (scatter_functions.py)
    "index_copy_": [("same dtype", lambda L, t, o: t.index_copy_(
        -1, index_tensor(L, t), o(dims_before(t) + (len(index_k(t)),), dtype_name(t))))],
    "masked_scatter_": [
        ("same dtype", lambda L, t, o: t.masked_scatter_(o(t.shape, "bool"),
                                                         o(t.shape, dtype_name(t)))),
        ("row mask", lambda L, t, o: t.masked_scatter_(o(t.shape[-1:], "bool"),
                                                       o(t.shape, dtype_name(t)))),
    ],
    "put_": [
        ("same dtype", lambda L, t, o: t.put_(index_tensor(L, t),
                                              o((len(index_k(t)),), dtype_name(t)))),
        ("accumulate", lambda L, t, o: t.put_(L.tensor([0, 0][:len(index_k(t))],
                                                       dtype=L.int64),
                                              o((len(index_k(t)),), dtype_name(t)),
                                              accumulate=True)),
    ],
    # prod only: PyTorch's amax and mean save their result, so the write makes their backward
    # raise (the listed difference of an in-place write of a saved output)
    "index_reduce_": [("prod", lambda L, t, o: t.index_reduce_(
        -1, index_tensor(L, t), o(dims_before(t) + (len(index_k(t)),), dtype_name(t)), "prod"))],
    "renorm_": [("2", lambda L, t, o: t.renorm_(2, 0, 1.0))],
    "sgn_": [("", lambda L, t, o: t.sgn_())],
    "ldexp_": [("int64", lambda L, t, o: t.ldexp_(o(t.shape, "int64")))],
    "nextafter_": [("same dtype", lambda L, t, o: t.nextafter_(o(t.shape, dtype_name(t))))],
    # the in-place shape changes: the tensor keeps its identity, its history continues
    "squeeze_": [("", lambda L, t, o: t.unsqueeze(0).squeeze_()),
                 ("dim", lambda L, t, o: t.squeeze_(0))],
    "unsqueeze_": [("0", lambda L, t, o: t.unsqueeze_(0)), ("-1", lambda L, t, o: t.unsqueeze_(-1))],
    "t_": [("", lambda L, t, o: t.t_())],
    "transpose_": [("0, -1", lambda L, t, o: t.transpose_(0, -1))],
    "swapdims_": [("-1, 0", lambda L, t, o: t.swapdims_(-1, 0))],
    "swapaxes_": [("0, -1", lambda L, t, o: t.swapaxes_(0, -1))],
    "__setitem__": [
        ("first row", lambda L, t, o: t.__setitem__(0, 1.5)),
        ("column tensor", lambda L, t, o: t.__setitem__((Ellipsis, 0), o(dims_before(t),
                                                                         "float64"))),
        ("mask", lambda L, t, o: t.__setitem__(o(t.shape, "bool"), 0)),
    ],
}


def program(L, op, dtype, layout, mode):
    """Run OPS[op] on a fresh tensor: what it returns and leaves, and the gradients."""
    shape = {"contiguous": (3, 4), "non-contiguous": (4, 3), "0-d": (), "empty": (0, 4)}[layout]
    floating = dtype.startswith("float")
    x = L.tensor(values(shape, dtype, 1))
    if mode != "no graph" and floating:
        x.requires_grad_(True)
    base = x if mode == "leaf" else x * 1 if x.requires_grad else x.clone()
    target = base.t() if layout == "non-contiguous" else base
    # an integer tensor never requires grad in minigrad; PyTorch lets one take a grad_fn from
    # a float operand that does (fill_, masked_fill_), a graph nothing can differentiate
    maker = Maker(L, grad=mode != "no graph" and floating)
    results = []
    for label, call in OPS[op]:
        try:
            returned = call(L, target, maker)
            results.append(("ok", label, returned is target, dtype_name(target),
                            target.requires_grad, target.detach().numpy().copy(),
                            base.detach().numpy().copy()))
        except (RuntimeError, TypeError, ValueError, IndexError) as e:
            results += [("raises", label, type(e).__name__), ("grads", label, [])]
            continue
        tracked = ([x] if x.requires_grad else []) + maker.made
        if floating and base.grad_fn is not None:
            w = L.tensor(values(tuple(base.shape), dtype, 2))
            wt = L.tensor(values(tuple(target.shape), dtype, 3))
            try:
                ((base * w).sum() + (target * wt).sum()).backward(retain_graph=True)
            except (RuntimeError, TypeError, ValueError, IndexError) as e:
                results.append(("grads", label, type(e).__name__))
                continue
        force = {"force": True} if L is torch else {}  # sgn_'s gradient is a ZeroTensor there
        results.append(("grads", label, [None if t.grad is None else t.grad.numpy(**force).copy()
                                         for t in tracked]))
        for t in tracked:
            t.grad = None
    return results


def compare(op, dtype, layout, mode):
    """The differences between PyTorch and minigrad for one case, as readable lines."""
    expected = program(torch, op, dtype, layout, mode)
    got = program(mg, op, dtype, layout, mode)
    where = f"{op} {dtype} {layout} {mode}"
    out = []
    for e, g in zip(expected, got):
        if e[0] == "raises" or g[0] == "raises":
            if e[0] != g[0]:
                out.append(f"{where} [{e[1]}]: PyTorch {e[0]} {e[2] if e[0] == 'raises' else ''}"
                           f", minigrad {g[0]} {g[2] if g[0] == 'raises' else ''}")
            continue
        if e[0] == "ok":
            if e[2:5] != g[2:5]:
                out.append(f"{where} [{e[1]}]: returned self, dtype, requires_grad {e[2:5]} "
                           f"vs {g[2:5]}")
            elif not all(np.allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True)
                         for a, b in zip(e[5:], g[5:])):
                out.append(f"{where} [{e[1]}]: values {e[5].tolist()}, {e[6].tolist()} vs "
                           f"{g[5].tolist()}, {g[6].tolist()}")
        elif isinstance(e[2], str) or isinstance(g[2], str):  # a backward that raised
            if type(e[2]) is not type(g[2]):
                out.append(f"{where} [{e[1]}]: backward gives {e[2]!r:.60} vs {g[2]!r:.60}")
        else:
            for i, (a, b) in enumerate(zip(e[2], g[2])):
                a = np.zeros_like(b) if a is None and b is not None else a
                b = np.zeros_like(a) if b is None and a is not None else b
                if a is not None and not np.allclose(a, b, rtol=1e-5, atol=1e-6,
                                                     equal_nan=True):
                    out.append(f"{where} [{e[1]}]: gradient {i} {a.tolist()} vs {b.tolist()}")
    if len(expected) != len(got):
        out.append(f"{where}: {len(expected)} results vs {len(got)}")
    return out


def cases():
    return [(d, lay, m) for d in DTYPES for lay in LAYOUTS for m in MODES
            if not (m == "leaf" and (lay != "contiguous" or not d.startswith("float")))]


# where minigrad's out-of-place op on bool differs, its in-place form does too: the dtype sweep
# (tests/test_compat_sweep.py) checks those against compat_notes.SWEEP_GAPS
BOOL_GAPS = {"abs_", "sign_", "square_", "floor_", "ceil_", "trunc_", "round_", "absolute_",
             "fix_"}
# PyTorch's cumsum_ and cumprod_ skip the int64-into-bool check on 0-d and empty bool tensors
# (and refuse the rest); minigrad refuses them all
BOOL_GAPS |= {"cumsum_", "cumprod_"}
# addr and addbmm of bool tensors raise, where PyTorch's compute with logical and/or (a gap of
# the out-of-place functions, which their in-place forms share)
BOOL_GAPS |= {"addr_", "addbmm_"}


# PyTorch's logical in-place ops, which have no derivative, leave a float tensor's gradient as if
# nothing had been written, and write into a leaf that requires grad; minigrad's gradient is
# that of the written 0s and 1s, zero, and it refuses the leaf as for every in-place op (a
# difference listed in compat_notes.DIFFERENCES): gradients and leaves are not compared
VALUES_ONLY = {"logical_and_", "logical_or_", "logical_xor_", "logical_not_"}
# PyTorch's backward of ldexp_ computes 2 ** e in the integer exponent's dtype: 0 where e < 0
# (a difference listed in compat_notes.DIFFERENCES)
VALUES_ONLY |= {"ldexp_"}
# PyTorch's index_copy_ of a 0-d tensor recorded in a graph cannot run backward (a shape
# error of its own backward); minigrad's gives index_copy's gradient
TORCH_0D_BACKWARD_FAILS = {"index_copy_"}
# PyTorch has no derivative for these in-place forms (its backward raises NotImplementedError,
# a difference listed in compat_notes.DIFFERENCES): their gradients are not compared
NO_TORCH_DERIVATIVE = {"asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_"}


@pytest.mark.parametrize("op", list(OPS))
def test_in_place_method_matches_pytorch(op):
    differences = [line for d, lay, m in cases() for line in compare(op, d, lay, m)
                   if not (d == "bool" and op in BOOL_GAPS)
                   and not (op in VALUES_ONLY and ("gradient" in line or " leaf [" in line))
                   and not (op in NO_TORCH_DERIVATIVE and "backward gives 'NotImplemented" in line)
                   and not (op in TORCH_0D_BACKWARD_FAILS and " 0-d graph " in line
                            and "backward gives 'RuntimeError' vs [" in line)]
    assert not differences, "\n".join(differences)


def test_the_table_lists_every_in_place_method():
    """Every in-place method minigrad has is compared here (the random fills excepted: their
    values come from a different generator (tests/test_tensor_random.py); and requires_grad_ and detach_, which change the
    graph, not values: the autograd and port tests compare them; and floor_divide_, whose
    gradient PyTorch does not define, a listed difference: the sweep compares its values; and
    the memory methods resize_, resize_as_, set_, as_strided_, share_memory_, which change
    the memory a tensor shows: tests/test_storage.py and test_multiprocessing.py compare
    them)."""
    names = {n for n in dir(mg.Tensor) if n.endswith("_") and not n.startswith("_")}
    assert names - set(OPS) == {"normal_", "uniform_", "requires_grad_", "detach_",
                                "floor_divide_", "bernoulli_", "random_", "exponential_",
                                "geometric_", "log_normal_", "cauchy_", "resize_", "resize_as_",
                                "set_", "as_strided_", "share_memory_"}
