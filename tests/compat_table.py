"""The PyTorch compatibility table: one small program per API name, run through PyTorch and
through minigrad, comparing results, dtypes and gradients.

Each case is written once as `program(lib, *inputs)`, where `lib` is the `torch` module or the
`minigrad` module, so it reads like ordinary PyTorch code. NumPy arrays given as inputs (`A`)
become tensors in each library; the runner compares every tensor the program returns (shape,
dtype, values), then backpropagates a fixed random weighting of the float outputs and compares
the gradients of the inputs and of any tensor the program passed to `watch` (a layer's
parameters, say). Random results are compared by shape and dtype only.

The cases live in compat_cases_*.py, grouped by kind. tests/test_compat_api.py runs them;
tests/test_compat_coverage.py checks that every public name of minigrad has one and that
docs/pytorch-api.md, which `python tests/compat_table.py` writes from this table, is current.
"""
from __future__ import annotations

import dataclasses
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "pytorch-api.md"


class A:
    """An input array: a tensor in each library, a leaf that requires grad when `grad`."""

    def __init__(self, array, grad=False):
        self.array, self.grad = np.asarray(array), grad


_rng = np.random.default_rng(12)


def f32(*shape, grad=True, low=-2.0, high=2.0):
    return A(_rng.uniform(low, high, shape).astype(np.float32), grad)


def f64(*shape, grad=True, low=-2.0, high=2.0):
    return A(_rng.uniform(low, high, shape), grad)


def ints(*shape, high=5, low=0):
    return A(_rng.integers(low, high, shape))


def bools(*shape):
    return A(_rng.random(shape) < 0.5)


@dataclasses.dataclass
class Case:
    """names: the API names the program exercises ("minigrad.sin", "Tensor.sin", "F.kl_div",
    "nn.Linear", ...); compare: "values", "meta" (shape and dtype) or "raises" (both raise,
    minigrad's message matching `match`)."""

    names: tuple
    program: object
    inputs: tuple = ()
    compare: str = "values"
    rtol: float = 1e-5
    atol: float = 1e-6
    match: str = ""

    @property
    def id(self):
        return self.names[0]


def case(*names, inputs=(), **kw):
    """Decorator form: @case("minigrad.sin", "Tensor.sin", inputs=(f32(3),))."""
    def register(program):
        return Case(tuple(names), program, tuple(inputs), **kw)
    return register


# --- running a case in one library -------------------------------------------------------------

_watched = []


def watch(*tensors):
    """Called by a program: compare these tensors' gradients too (e.g. a layer's weights)."""
    _watched.extend(tensors)


def _to_lib(lib, x):
    if not isinstance(x, A):
        return x
    t = lib.tensor(x.array)
    return t.requires_grad_(True) if x.grad else t


def _is_tensor(lib, x):
    return isinstance(x, lib.Tensor)


def _leaves(lib, out):
    """The program's result as a flat list of tensors and plain values."""
    if _is_tensor(lib, out):
        return [out]
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _leaves(lib, o)]
    if isinstance(out, dict):
        return [leaf for k in sorted(out) for leaf in _leaves(lib, out[k])]
    return [out]


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def run(lib, c: Case, weights_seed=0):
    """(leaves, gradients) of case `c` in library `lib` (torch or minigrad)."""
    inputs = [_to_lib(lib, x) for x in c.inputs]
    _watched.clear()
    lib.manual_seed(0)
    out = c.program(lib, *inputs)
    leaves = _leaves(lib, out)
    watched = list(_watched)
    tracked = [t for t in inputs if _is_tensor(lib, t) and t.requires_grad] + watched
    grads = []
    rng = np.random.default_rng(weights_seed)
    outs = [t for t in leaves if _is_tensor(lib, t) and t.requires_grad and t.grad_fn is not None]
    if tracked and outs:
        total = None
        for o in outs:
            w = lib.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype_name(o)))
            term = (o * w).sum()
            total = term if total is None else total + term
        total.backward()
        grads = [None if t.grad is None else np.array(t.grad.detach().numpy()) for t in tracked]
    return [_plain(lib, v) for v in leaves], grads


def _plain(lib, v):
    """A tensor as (array, dtype name); anything else as itself."""
    if _is_tensor(lib, v):
        return ("tensor", np.array(v.detach().numpy()), dtype_name(v))
    if isinstance(v, tuple) and not isinstance(v, str):  # torch.Size and shape tuples
        return tuple(int(n) for n in v)
    return v


def _kind(v):
    """bool, int, float, ... (a Python number's kind, since bool is an int subclass)."""
    for kind in (bool, int, float):
        if isinstance(v, kind):
            return kind.__name__
    return type(v).__name__


# calls whose error is deliberately minigrad's own: without a GPU or a distributed backend it
# raises one RuntimeError saying so, where PyTorch's CPU build fails in other ways
_OWN_ERRORS = {"cuda.set_device", "distributed.init_process_group"}


def compare(c: Case, torch, minigrad):
    """Run case `c` in both libraries and assert that they agree."""
    if c.compare == "raises":
        import re
        import pytest
        from error_cases import builtin_type
        with pytest.raises(Exception) as expected:
            run(torch, c)
        with pytest.raises(Exception) as info:
            run(minigrad, c)
        assert re.search(c.match, str(info.value)), f"minigrad's error: {info.value}"
        kind = builtin_type(expected.value)  # the type a PyTorch program's `except` names
        # an AssertionError is PyTorch's `assert` (or its CPU build's "not compiled with CUDA"),
        # which minigrad replaces by an error of its own, as for the GPU calls in _OWN_ERRORS
        if kind is not AssertionError and not set(c.names) & _OWN_ERRORS:
            assert isinstance(info.value, kind), f"minigrad raises {info.value!r}, PyTorch {kind}"
        return
    expected, expected_grads = run(torch, c)
    got, got_grads = run(minigrad, c)
    assert len(got) == len(expected), f"{len(got)} results, PyTorch gives {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        where = f"result {i}"
        if isinstance(e, tuple) and e and e[0] == "tensor":
            assert isinstance(g, tuple) and g[:1] == ("tensor",), f"{where}: not a tensor: {g!r}"
            assert g[1].shape == e[1].shape, f"{where}: shape {g[1].shape}, PyTorch {e[1].shape}"
            assert g[2] == e[2], f"{where}: dtype {g[2]}, PyTorch {e[2]}"
            if c.compare == "values":
                np.testing.assert_allclose(g[1], e[1], rtol=c.rtol, atol=c.atol, equal_nan=True,
                                           err_msg=where)
        else:
            assert _kind(g) == _kind(e), f"{where}: {g!r}, PyTorch {e!r}"
            if c.compare == "values" and _kind(e) == "float":
                np.testing.assert_allclose(g, e, rtol=c.rtol, atol=c.atol, err_msg=where)
            elif c.compare == "values":
                assert g == e, f"{where}: {g!r}, PyTorch {e!r}"
    assert len(got_grads) == len(expected_grads), "gradients computed in one library only"
    for i, (e, g) in enumerate(zip(expected_grads, got_grads)):
        e = np.zeros_like(g) if e is None and g is not None else e
        g = np.zeros_like(e) if g is None and e is not None else g
        if e is not None:
            assert g.shape == e.shape, f"gradient {i}: shape {g.shape}, PyTorch {e.shape}"
            np.testing.assert_allclose(g, e, rtol=max(c.rtol, 1e-4), atol=max(c.atol, 1e-5),
                                       err_msg=f"gradient of tracked tensor {i}")


# --- the table, and the page made from it --------------------------------------------------------

def all_cases():
    import compat_cases_aliases
    import compat_cases_autograd
    import compat_cases_creation
    import compat_cases_distributions
    import compat_cases_functions
    import compat_cases_inplace
    import compat_cases_layers
    import compat_cases_linalg
    import compat_cases_math
    import compat_cases_nn
    import compat_cases_numeric
    import compat_cases_rnn
    import compat_cases_platform
    import compat_cases_shape
    import compat_cases_special
    import compat_cases_training
    import compat_cases_utils
    import compat_cases_conv  # its inputs draw from the shared stream after the others'
    import compat_cases_cnn_layers  # after conv's, so that theirs stay the same
    import compat_cases_tensor  # added after conv's, so that their inputs stay the same
    import compat_cases_losses  # after conv's, so that conv's inputs stay the ones they were
    import compat_cases_func  # after the losses', so that their inputs stay the same
    import compat_cases_modules  # after func's, so that the others' inputs stay the same
    import compat_cases_spectral  # with a stream of its own
    import compat_cases_distributions_more  # last, so that the others' inputs stay the same
    import compat_cases_profiler  # draws no inputs
    import compat_cases_complex  # with a stream of its own
    import compat_cases_storage  # with a stream of its own
    return (compat_cases_creation.CASES + compat_cases_math.CASES + compat_cases_shape.CASES
            + compat_cases_nn.CASES + compat_cases_layers.CASES + compat_cases_rnn.CASES + compat_cases_training.CASES
            + compat_cases_utils.CASES + compat_cases_platform.CASES
            + compat_cases_autograd.CASES + compat_cases_distributions.CASES
            + compat_cases_inplace.CASES + compat_cases_numeric.CASES + compat_cases_linalg.CASES
            + compat_cases_aliases.CASES + compat_cases_functions.CASES
            + compat_cases_special.CASES + compat_cases_conv.CASES
            + compat_cases_cnn_layers.CASES + compat_cases_tensor.CASES
            + compat_cases_losses.CASES + compat_cases_func.CASES
            + compat_cases_modules.CASES
            + compat_cases_spectral.CASES
            + compat_cases_distributions_more.CASES + compat_cases_profiler.CASES
            + compat_cases_complex.CASES
            + compat_cases_storage.CASES)


def covered_names():
    return sorted({n for c in all_cases() for n in c.names})


def _groups(names):
    groups = {}
    for n in names:
        groups.setdefault(n.rsplit(".", 1)[0], []).append(n.rsplit(".", 1)[1])
    return [(g, groups[g]) for g in sorted(groups, key=_group_order)]


def _title(group):
    if group == "minigrad":
        return "`torch.*` as `minigrad.*`"
    if group == "Tensor":
        return "`torch.Tensor` as `minigrad.Tensor`"
    if group == "F":
        return "`torch.nn.functional` as `minigrad.nn.functional`"
    return f"`torch.{group}` as `minigrad.{group}`"


def render_page():
    """docs/pytorch-api.md: the names the table covers, the common names it lacks, and the
    deliberate differences, from the table and from compat_notes.py."""
    from compat_notes import DIFFERENCES, MINIGRAD_ONLY, NOT_SUPPORTED
    cases = all_cases()
    working = sorted({n for c in cases if c.compare != "raises" for n in c.names})
    refusing = sorted({n for c in cases for n in c.names} - set(working))
    lines = ["# PyTorch API coverage", "",
             "<!-- generated by `python tests/compat_table.py` from the compatibility table in",
             "     tests/compat_cases_*.py; tests/test_compat_coverage.py fails when it is "
             "stale -->",
             "",
             "minigrad follows PyTorch's names and semantics, so a PyTorch program runs on it by",
             "changing its imports (`import minigrad as torch`). Every name below is checked by",
             "`tests/test_compat_api.py`, which runs a small program through PyTorch and through",
             "minigrad and compares the results, their dtypes and the gradients.",
             "",
             f"{len(working) + len(refusing)} names are compared by {len(cases)} programs.", "",
             "## Supported", ""]
    for group, members in _groups(working):
        lines += [f"### {_title(group)}", "", ", ".join(f"`{n}`" for n in members), ""]
    lines += ["## Present, with one clear error when used", "",
              "These names exist so that code mentioning them imports; using them raises an "
              "error that says what to do instead:", ""]
    lines += [", ".join(f"`{n}`" for n in refusing), ""]
    lines += ["## Not supported", "",
              "Names that educational PyTorch code uses and minigrad does not have (yet):", ""]
    lines += [f"- {name}: {why}" for name, why, _ in NOT_SUPPORTED] + [""]
    lines += ["## Deliberate differences", ""]
    lines += [f"{i}. **{title}** {text}" for i, (title, text, _) in enumerate(DIFFERENCES, 1)]
    lines += _sweep_lines()
    lines += ["", "## minigrad only", ""]
    lines += [f"- {name}: {why}" for name, why in MINIGRAD_ONLY] + [""]
    return "\n".join(lines)


def _sweep_lines():
    """The page's account of the dtype sweep (tests/compat_sweep.py) and what it finds."""
    from compat_notes import SWEEP_DIFFERENCES, SWEEP_GAPS
    from compat_sweep import DTYPES, LAYOUTS, OPS
    lines = ["", "## Every op on every dtype", "",
             f"`tests/test_compat_sweep.py` runs {len(OPS)} elementwise, reduction, shape and "
             f"in-place ops on {len(DTYPES)} dtypes and {len(LAYOUTS)} input layouts (0-d, "
             f"empty, contiguous, transposed, strided) through both libraries: "
             f"{len(OPS) * len(DTYPES) * len(LAYOUTS):,} runs comparing errors, shapes, dtypes, "
             f"values and gradients. Where they differ by design:", ""]
    lines += [f"- {text}" for *_, text in SWEEP_DIFFERENCES]
    lines += ["", "Where minigrad does not yet do what PyTorch does:", ""]
    lines += [f"- {text}" for *_, text in SWEEP_GAPS]
    return lines + _out_lines()


def _out_lines():
    """The page's account of the generated out= comparison (tests/out_arg_table.py)."""
    from compat_notes import OUT_DIFFERENCES
    from out_arg_table import LAYOUTS, OUT_DTYPES
    from minigrad.out_names import OUT_NAMES
    import minigrad
    from out_arg_table import _function
    total = sum(len(v) for v in OUT_NAMES.values())
    have = sum(_function(minigrad, ns, n) is not None for ns, v in OUT_NAMES.items() for n in v)
    lines = ["", "## out=", "",
             f"The {total} functions of `torch`, `torch.linalg`, `torch.special`, `torch.fft` "
             f"and `torch.nn.functional` that take `out=` in PyTorch (read from PyTorch into "
             f"`minigrad/out_names.py`): minigrad has {have} of them, and each takes it. "
             f"`tests/test_out_arg.py` calls those of them that one of its generated argument "
             f"lists fits (at least 300; the rest take out= through the same wrapper) with "
             f"out= of {len(OUT_DTYPES)} dtypes in "
             f"{len(LAYOUTS)} layouts (the result's shape, empty, another shape to resize, a "
             f"non-contiguous view; every pair in the slow run) in both libraries, comparing "
             f"values, dtypes, the resize warning and errors. Beyond the two differences above "
             f"(in the numbered list):", ""]
    lines += [f"- {text}" for *_, text in OUT_DIFFERENCES]
    return lines


def _group_order(group):
    order = ["minigrad", "Tensor", "F", "nn", "nn.init", "nn.utils", "nn.utils.rnn",
             "nn.utils.parametrize", "nn.utils.parametrizations", "nn.utils.prune", "optim",
             "optim.lr_scheduler", "cuda", "backends"]
    return (order.index(group) if group in order else len(order), group)


if __name__ == "__main__":
    PAGE.parent.mkdir(exist_ok=True)
    PAGE.write_text(render_page())
    print(f"wrote {PAGE.relative_to(ROOT)}")
