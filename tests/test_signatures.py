"""A PyTorch program passes arguments by position and by name: every Python-level callable that
both libraries have (nn modules' constructors and forwards, nn.functional, nn.init, optimizers and
schedulers, data loading, distributions, torch's and Tensor's Python functions, Module's and
Optimizer's methods) must take PyTorch's positional parameters in PyTorch's order, accept each of
its keyword names, and default each to the same value. (PyTorch's functions written in C have no
signature to read; the compatibility table's programs call those.)"""
from __future__ import annotations

import inspect
import math

import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)

# out= is handled where results are written, not by each function's signature
IGNORED = {"out"}

# (label, parameter): defaults that differ in form only
EQUIVALENT_DEFAULTS = {
    # PyTorch's default is F.relu itself; minigrad's its name, which PyTorch accepts too
    ("nn.Transformer.__init__", "activation"), ("nn.TransformerEncoderLayer.__init__", "activation"),
    ("nn.TransformerDecoderLayer.__init__", "activation"),
    ("nn.ModuleList.__init__", "modules"),  # None and () both mean no modules
    ("torch.compile", "backend"),  # nothing is compiled
    ("torch.load", "pickle_module"),  # None means pickle in PyTorch
    ("utils.data.random_split", "generator"),  # each library's default generator
}


# keyword arguments listed in compat_notes.NOT_SUPPORTED (Embedding's max_norm, norm_type,
# scale_grad_by_freq and sparse; MultiheadAttention's add_bias_kv and add_zero_attn)
LISTED_UNSUPPORTED = {"nn.Embedding.__init__", "F.embedding", "nn.MultiheadAttention.__init__"}


def _params(fn, method):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (ValueError, TypeError):  # a builtin without a signature
        return None
    return params[1:] if method else params


def _pairs():
    """(label, PyTorch's callable, minigrad's, whether both are methods taking self first)."""
    def common(tmod, mmod, label, pick):
        for name in sorted(set(dir(tmod)) & set(dir(mmod))):
            if not name.startswith("_"):
                yield from pick(f"{label}.{name}", getattr(tmod, name), getattr(mmod, name))

    def classes(label, t, m):
        if isinstance(t, type) and isinstance(m, type):
            yield f"{label}.__init__", t.__init__, m.__init__, True
            if issubclass(t, torch.nn.Module) and t.forward is not torch.nn.Module.forward:
                yield f"{label}.forward", t.forward, m.forward, True

    def functions(label, t, m):
        if inspect.isfunction(t) and callable(m) and not isinstance(m, type):
            yield label, t, m, False

    def methods(label, t, m):
        if inspect.isfunction(t) and callable(m):
            yield label, t, m, True

    def both(label, t, m):
        yield from classes(label, t, m)
        yield from functions(label, t, m)

    import minigrad.distributions
    import minigrad.nn.functional
    import minigrad.nn.init
    import minigrad.nn.utils
    import minigrad.optim.lr_scheduler
    import minigrad.utils.data
    import torch.distributions
    import torch.nn.functional
    import torch.nn.init
    import torch.nn.utils
    import torch.optim.lr_scheduler
    import torch.utils.data
    yield from common(torch.nn, mg.nn, "nn", classes)
    yield from common(torch.nn.functional, mg.nn.functional, "F", functions)
    yield from common(torch.nn.init, mg.nn.init, "init", functions)
    yield from common(torch.nn.utils, mg.nn.utils, "nn.utils", functions)
    yield from common(torch.optim, mg.optim, "optim", classes)
    yield from common(torch.optim.lr_scheduler, mg.optim.lr_scheduler, "lr_scheduler", classes)
    yield from common(torch.utils.data, mg.utils.data, "utils.data", both)
    yield from common(torch.distributions, mg.distributions, "distributions", classes)
    yield from common(torch, mg, "torch", functions)
    yield from common(torch.Tensor, mg.Tensor, "Tensor", methods)
    yield from common(torch.nn.Module, mg.nn.Module, "Module", methods)
    yield from common(torch.optim.Optimizer, mg.optim.Optimizer, "Optimizer", methods)
    for name in ("backward", "grad"):
        yield f"autograd.{name}", getattr(torch.autograd, name), getattr(mg.autograd, name), False


def _differences(tfn, mfn, method):
    """What a call written for PyTorch's signature would find different in minigrad's."""
    tps, mps = _params(tfn, method), _params(mfn, method)
    if tps is None or mps is None:
        return []
    tps = [p for p in tps if p.name not in IGNORED]
    kinds = {p.kind for p in mps}
    mine = {p.name: p for p in mps}
    tpos = [p.name for p in tps if p.kind in POSITIONAL]
    mpos = [p.name for p in mps if p.kind in POSITIONAL]
    found = []
    for i, name in enumerate(tpos):
        if i < len(mpos) and mpos[i] != name:
            found.append(f"positional {i} is {mpos[i]!r}, PyTorch's {name!r}")
        elif i >= len(mpos) and P.VAR_POSITIONAL not in kinds:
            found.append(f"no positional {i} ({name!r})")
    for p in tps:
        if p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            continue
        if p.name not in mine:
            if P.VAR_KEYWORD not in kinds:
                found.append(f"no keyword {p.name!r}")
            continue
        ours = mine[p.name].default
        if (p.default is P.empty) != (ours is P.empty):
            found.append(f"{p.name!r} required in one library only")
        elif p.default is not P.empty and not _same_default(p.default, ours):
            found.append(f"{p.name!r} defaults to {ours!r}, PyTorch's {p.default!r}")
    return found


def _same_default(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:  # an object without a truth value for ==
        return a is b


def test_signatures_match_pytorch():
    checked, problems = 0, []
    for label, tfn, mfn, method in _pairs():
        found = [] if label in LISTED_UNSUPPORTED else _differences(tfn, mfn, method)
        found = [f for f in found if not any((label, name) in EQUIVALENT_DEFAULTS
                                             for name in _names_in(f))]
        checked += _params(tfn, method) is not None and _params(mfn, method) is not None
        problems += [f"{label}: {f}" for f in found]
    assert checked > 550, f"only {checked} signatures were compared"
    assert not problems, "\n".join(problems)


# --- the functions PyTorch writes in C: their keyword names are those of its operator schemas ---

# (name, keyword) pairs of a schema that PyTorch's Python functions do not take as documented
SCHEMA_ONLY = {
    ("sort", "reverse"),  # an overload for lists in TorchScript
    ("uniform_", "from"), ("uniform_", "to"),  # Python keywords: positional in any program
    ("expand", "implicit"),  # internal to PyTorch's tracer
    # PyTorch 2.13's CPU kernels refuse a product's out_dtype
    ("mm", "out_dtype"), ("bmm", "out_dtype"), ("addmm", "out_dtype"), ("baddbmm", "out_dtype"),
    # the documented names (src; sizes; tensor; B and L; tau and other; indices_or_sections)
    # are minigrad's, where PyTorch's binding takes the schema's (other; size; the_template;
    # input2; input2 and input3; sections...)
    ("copy_", "other"), ("resize_", "size"), ("resize_as_", "the_template"),
    ("cholesky_solve", "input2"), ("orgqr", "input2"),
    ("ormqr", "input2"), ("ormqr", "input3"),
    *((name, kw) for name in ("tensor_split", "dsplit", "hsplit", "vsplit")
      for kw in ("indices", "sections", "tensor_indices_or_sections")),
}


def _schema_keywords(name, first=False):
    """Every keyword of PyTorch's operator `name` on a tensor (its overloads together), except
    `out` and the named-dimension overloads; with `first`, the tensor's own name too (for
    functions whose first argument is not `self`)."""
    names = set()
    for schema in torch._C._jit_get_schemas_for_operator("aten::" + name):
        args = list(schema.arguments)
        if not args or str(args[0].type) != "Tensor" or not (first or args[0].name == "self"):
            continue
        if any(a.is_out or "Dimname" in str(a.type) for a in args):
            continue
        names |= {a.name for a in (args if first else args[1:])}
    return names - IGNORED - {"self"} - {kw for n, kw in SCHEMA_ONLY if n == name}


def _c_functions():
    """(label, schema name, minigrad's callable, whether a method, whether the first argument's
    name counts) for every function of PyTorch's written in C that minigrad has."""
    import minigrad.nn.functional
    import torch.nn.functional
    spaces = ((torch, mg, "torch", ""), (torch.Tensor, mg.Tensor, "Tensor", ""),
              (torch.nn.functional, mg.nn.functional, "F", ""),
              (torch.linalg, mg.linalg, "linalg", "linalg_"),
              (torch.special, mg.special, "special", "special_"), (torch.fft, mg.fft, "fft", "fft_"))
    for owner, mine, label, prefix in spaces:
        for name in sorted(set(dir(owner)) & set(dir(mine))):
            kind = type(getattr(owner, name)).__name__
            if name.startswith("_") or kind not in ("builtin_function_or_method",
                                                    "method_descriptor"):
                continue
            op = prefix + name if prefix else getattr(getattr(owner, name), "__name__", name)
            yield f"{label}.{name}", op, getattr(mine, name), label == "Tensor", bool(prefix)


def test_keywords_of_pytorchs_c_functions():
    """`torch.sum(x, dtype=...)`, `x.add(y, alpha=2)`, `x.div(y, rounding_mode="floor")`,
    `x.view(dtype=...)`, `linalg.lstsq(A, b=...)`: each keyword PyTorch's C functions and
    Tensor methods take."""
    checked, problems = 0, []
    for label, op, fn, method, first in _c_functions():
        wanted = _schema_keywords(op, first)
        params = _params(fn, method)
        if not wanted or params is None:
            continue
        checked += 1
        if any(p.kind == P.VAR_KEYWORD for p in params):
            continue
        missing = wanted - {p.name for p in params}
        if missing:
            problems.append(f"{label}: no keyword {sorted(missing)}")
    assert checked > 550, f"only {checked} functions were compared"
    assert not problems, "\n".join(problems)


def _names_in(finding):
    return [part.strip("'") for part in finding.split() if part.startswith("'")]


def test_the_comparison_finds_differences():
    def torch_like(input, weight, bias=None, *, eps=1e-5):
        pass

    def renamed(x, weight, bias=None, *, eps=1e-5):
        pass

    def other_default(input, weight, bias=None, *, eps=1e-6):
        pass

    def missing(input, weight):
        pass

    assert _differences(torch_like, torch_like, False) == []
    assert _differences(torch_like, renamed, False) == ["positional 0 is 'x', PyTorch's 'input'",
                                                       "no keyword 'input'"]
    assert _differences(torch_like, other_default, False) == [
        "'eps' defaults to 1e-06, PyTorch's 1e-05"]
    assert _differences(torch_like, missing, False) == ["no positional 2 ('bias')",
                                                       "no keyword 'bias'", "no keyword 'eps'"]


# --- the arguments this comparison made minigrad accept, doing what PyTorch's do ---------------

@pytest.mark.parametrize("name", ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_",
                                  "kaiming_uniform_", "kaiming_normal_", "trunc_normal_",
                                  "orthogonal_"])
def test_init_draws_from_the_generator_given(name):
    init = getattr(mg.nn.init, name)
    mg.manual_seed(0)
    a = init(mg.empty(5, 4), generator=mg.Generator().manual_seed(3))
    b = init(mg.empty(5, 4), generator=mg.Generator().manual_seed(3))
    after = mg.rand(3)
    mg.manual_seed(0)
    assert mg.equal(a, b) and mg.equal(after, mg.rand(3))  # the default stream is untouched
    assert not mg.equal(a, init(mg.empty(5, 4), generator=mg.Generator().manual_seed(4)))


def test_keyword_names_of_pytorch_calls(torch):
    import numpy as np
    x = np.arange(10.0, dtype=np.float32)
    for lib in (mg, torch):
        parts = lib.split(tensor=lib.tensor(x), split_size_or_sections=[3, 7], dim=0)
        assert [tuple(p.shape) for p in parts] == [(3,), (7,)]
        n = lib.tensor(x).norm(dtype=lib.float64)
        assert n.dtype == lib.float64 and abs(n.item() - np.sqrt((x ** 2).sum())) < 1e-9
        state = lib.get_rng_state()
        first = lib.rand(2)
        lib.set_rng_state(new_state=state)
        assert lib.equal(first, lib.rand(2))
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.warns(FutureWarning, match="grad_variables"):
            lib.autograd.backward(w * 3, grad_variables=lib.tensor([1.0, 1.0]))
        assert w.grad.tolist() == [3.0, 3.0]
        with pytest.raises(RuntimeError, match="both passed"), pytest.warns(FutureWarning):
            lib.autograd.backward(w * 3, lib.ones(2), grad_variables=lib.ones(2))
        loss = lib.nn.PoissonNLLLoss()
        assert abs(loss(log_input=lib.zeros(3), target=lib.ones(3)).item() - 1.0) < 1e-7
        lin = lib.nn.Linear(2, 1)
        assert tuple(lin(input=lib.ones(4, 2)).shape) == (4, 1)


_CALLS = [  # (what, a call of lib on x (2, 3) float32 and i (2,) int64): compared values/dtypes
    ("add alpha", lambda lib, x, i: x.add(x, alpha=2)),
    ("sub alpha", lambda lib, x, i: x.sub(other=x * 3, alpha=0.5)),
    ("div floor", lambda lib, x, i: x.div(x - 4, rounding_mode="floor")),
    ("div_ trunc", lambda lib, x, i: x.clone().div_(-0.75, rounding_mode="trunc")),
    ("int div_ floor", lambda lib, x, i: i.clone().div_(2, rounding_mode="floor")),
    ("sum dtype", lambda lib, x, i: x.sum(1, dtype=lib.float64)),
    ("int sum dtype", lambda lib, x, i: lib.sum(i, dtype=lib.float32)),
    ("mean dtype", lambda lib, x, i: i.mean(dtype=lib.float64)),
    ("softmax dtype", lambda lib, x, i: x.softmax(1, lib.float64)),
    ("log_softmax dtype", lambda lib, x, i: x.log_softmax(0, dtype=lib.float64)),
    ("round decimals", lambda lib, x, i: lib.round(x * 1.2345, decimals=2)),
    ("view dtype", lambda lib, x, i: x.view(lib.int32)),
    ("view dtype narrower", lambda lib, x, i: x.view(dtype=lib.int16)),
    ("view size", lambda lib, x, i: x.view(size=(3, 2))),
    ("max other", lambda lib, x, i: lib.max(x, other=x.flip(1))),
    ("repeat_interleave output_size", lambda lib, x, i: i.repeat_interleave(2, output_size=4)),
    ("gather sparse_grad", lambda lib, x, i: lib.gather(x, 1, (i - 1).view(2, 1).abs(),
                                                        sparse_grad=False)),
    ("expand size", lambda lib, x, i: x[:, :1].expand(size=(2, 4))),
    ("swapdims", lambda lib, x, i: x.swapdims(dim0=0, dim1=1)),
    ("mm mat2", lambda lib, x, i: x.mm(mat2=x.t())),
    ("dot tensor", lambda lib, x, i: lib.dot(x[0], tensor=x[1])),
    ("outer vec2", lambda lib, x, i: lib.outer(x[0], vec2=x[1])),
    ("zeros layout", lambda lib, x, i: lib.zeros(2, layout=lib.strided, pin_memory=False)),
    ("new_ones layout", lambda lib, x, i: x.new_ones(3, layout=lib.strided)),
    ("randint_like memory_format",
     lambda lib, x, i: lib.randint_like(x, 1, memory_format=lib.preserve_format)),
]


@pytest.mark.parametrize("what, call", _CALLS, ids=[c[0] for c in _CALLS])
def test_keywords_compute_as_pytorchs(what, call, torch):
    import numpy as np
    x = np.array([[1.5, -2.25, 3.0], [0.5, 1.0, -2.0]], np.float32)
    i = np.array([3, 0])
    ours = call(mg, mg.tensor(x), mg.tensor(i))
    theirs = call(torch, torch.tensor(x), torch.tensor(i))
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_layouts_and_pinned_memory(torch):
    for lib in (mg, torch):
        x = lib.ones(2)
        assert x.layout == lib.strided and x.layout != lib.sparse_coo and not x.is_sparse
        assert isinstance(lib.strided, lib.layout)
        with pytest.raises(RuntimeError):  # pinned memory needs an accelerator
            lib.empty(2, pin_memory=True)
        w = lib.ones(2).requires_grad_(requires_grad=True)
        assert w.requires_grad and lib.zeros(2).copy_(w, non_blocking=True).requires_grad
    with pytest.raises(NotImplementedError, match="layout=minigrad.sparse_coo"):
        mg.zeros(2, layout=mg.sparse_coo)
