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
