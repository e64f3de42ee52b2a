"""The compatibility table covers minigrad's whole public API, its names are PyTorch's, the
notes about differences and missing names are true, the runner catches a difference, and
docs/pytorch-api.md is what the table generates."""
import importlib
import types

import numpy as np
import pytest

import minigrad
from compat_notes import DIFFERENCES, MINIGRAD_ONLY_NAMES, NOT_SUPPORTED
from compat_table import PAGE, Case, compare, covered_names, f32, render_page

COVERED = set(covered_names())
PREFIXES = {"minigrad": "", "Tensor": "Tensor.", "F": "nn.functional.", "nn": "nn.",
            "optim": "optim.", "cuda": "cuda.", "backends": "backends."}


def exists(lib, name):
    """Whether a table name ("Tensor.sin", "F.kl_div", ...) names something in `lib`."""
    head, _, rest = name.partition(".")
    if head == "Tensor":  # an instance: the constructor sets some attributes (requires_grad)
        obj, path = lib.zeros(1, 1), rest
        if rest == "imag":  # a real tensor's imag raises (as PyTorch's): ask a complex one
            obj = lib.zeros(1, 1, dtype=lib.complex64)
    else:
        obj, path = lib, rest if head == "minigrad" else PREFIXES.get(head, head + ".") + rest
    for part in path.split("."):
        if not hasattr(obj, part) and isinstance(obj, types.ModuleType):
            try:  # a submodule loaded only on import, as torch.utils.tensorboard
                importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                return False
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def public(namespace, kinds=None):
    names = [n for n in dir(namespace) if not n.startswith("_")]
    return [n for n in names if not isinstance(getattr(namespace, n), types.ModuleType)
            and (kinds is None or isinstance(getattr(namespace, n), kinds))]


def _uncovered(prefix, names):
    return sorted(f"{prefix}{n}" for n in names
                  if f"{prefix}{n}" not in COVERED and f"{prefix}{n}" not in MINIGRAD_ONLY_NAMES)


def test_every_top_level_name_has_a_case():
    assert _uncovered("minigrad.", public(minigrad)) == []


def test_every_tensor_method_and_operator_has_a_case():
    dunders = {n for cls in minigrad.Tensor.__mro__[:-1] for n, v in vars(cls).items()
               if n.startswith("__") and n.endswith("__") and isinstance(v, types.FunctionType)}
    dunders -= {"__init__", "__repr__"}
    assert _uncovered("Tensor.", public(minigrad.Tensor) + sorted(dunders)) == []


def test_every_nn_name_has_a_case():
    nn = minigrad.nn
    assert _uncovered("F.", public(nn.functional, types.FunctionType)) == []
    assert _uncovered("nn.", public(nn)) == []
    assert _uncovered("nn.Module.", public(nn.Module)) == []
    assert _uncovered("nn.init.", [n for n in public(nn.init, types.FunctionType)
                                   if getattr(nn.init, n).__module__ == nn.init.__name__]) == []
    assert _uncovered("nn.utils.", [n for n in public(nn.utils, types.FunctionType)
                                    if n != "Tensor"]) == []


def test_every_special_name_has_a_case():
    assert _uncovered("special.", public(minigrad.special)) == []


def test_every_fft_name_has_a_case():
    assert _uncovered("fft.", public(minigrad.fft)) == []


def test_every_linalg_name_has_a_case():
    assert _uncovered("linalg.", public(minigrad.linalg)) == []


def test_every_optim_name_has_a_case():
    optim = minigrad.optim
    assert _uncovered("optim.", public(optim, type)) == []
    assert _uncovered("optim.lr_scheduler.", public(optim.lr_scheduler, type)) == []


def test_every_utils_name_has_a_case():
    from minigrad.utils import data, tensorboard
    assert _uncovered("utils.data.", public(data)) == []
    assert _uncovered("utils.tensorboard.", public(tensorboard)) == []
    writer = tensorboard.SummaryWriter
    assert _uncovered("utils.tensorboard.SummaryWriter.",
                      [n for n in public(writer) if n.startswith(("add_", "flush", "close"))]) == []


def test_every_distributions_name_has_a_case():
    from minigrad import distributions
    assert _uncovered("distributions.", public(distributions)) == []


def test_every_func_name_has_a_case():
    assert _uncovered("func.", public(minigrad.func)) == []
    assert _uncovered("nn.utils.stateless.", ["functional_call"]) == []


def test_every_onnx_name_has_a_case():
    onnx = pytest.importorskip("minigrad.onnx")
    assert _uncovered("onnx.", public(onnx)) == []
    assert _uncovered("onnx.errors.", public(onnx.errors, type)) == []


def test_every_profiler_name_has_a_case():
    assert _uncovered("profiler.", public(minigrad.profiler)) == []
    assert _uncovered("autograd.profiler.", public(minigrad.autograd.profiler)) == []


def test_table_names_exist_in_both_libraries(torch):
    missing = [(n, lib.__name__) for n in COVERED for lib in (torch, minigrad)
               if not exists(lib, n)]
    assert missing == []


def test_unsupported_names_are_really_absent():
    present = [p for _, _, paths in NOT_SUPPORTED for p in paths
               if exists(minigrad, p if p.startswith("Tensor.") else f"minigrad.{p}")]
    assert present == [], "now supported: add a case and drop it from NOT_SUPPORTED"


@pytest.mark.parametrize("title, text, check", DIFFERENCES, ids=[d[0][:40] for d in DIFFERENCES])
def test_documented_difference_holds(title, text, check, torch):
    if check is not None:
        check(torch, minigrad)


def test_page_is_current():
    assert PAGE.read_text() == render_page(), "run: python tests/compat_table.py"


# --- the runner itself must catch each kind of difference ---------------------------------------

def _differs(kind):
    def program(lib, x):
        mine = lib.__name__ == "minigrad"
        if kind == "value":
            return x * (1.01 if mine else 1.0)
        if kind == "dtype":
            return x.double() if mine else x
        if kind == "shape":
            return x.reshape(-1) if mine else x
        if kind == "gradient":  # same values, twice the gradient
            return x + (x - x.detach()) if mine else x * 1
        return [x, x] if mine else [x]
    return Case((kind,), program, (f32(2, 3),))


@pytest.mark.parametrize("kind", ["value", "dtype", "shape", "gradient", "count"])
def test_runner_catches_a_difference(kind, torch):
    with pytest.raises(AssertionError):
        compare(_differs(kind), torch, minigrad)


def test_runner_passes_equal_programs(torch):
    compare(Case(("same",), lambda lib, x: (x * 2).sum(1), (f32(2, 3),)), torch, minigrad)
    assert np.isfinite(1.0)
