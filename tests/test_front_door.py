"""minigrad's top level: one sorted `__all__` that lists every public name and only those,
PyTorch's module paths for the stand-ins in platform/, the optional packages loaded lazily
and the applications not advertised as parts of the core."""
import importlib
import importlib.util
import subprocess
import sys
import types

import pytest

import minigrad


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_all_is_sorted_and_without_duplicates():
    assert minigrad.__all__ == sorted(set(minigrad.__all__))


def test_all_lists_every_public_attribute_and_nothing_else():
    public = {n for n, v in vars(minigrad).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(minigrad.__all__)


def test_star_import_gives_every_name_of_all():
    namespace = {}
    exec("from minigrad import *", namespace)
    assert sorted(n for n in namespace if n != "__builtins__") == minigrad.__all__
    assert all(namespace[n] is getattr(minigrad, n) for n in minigrad.__all__)


def test_pytorch_module_paths_import():
    """`import minigrad.backends.cudnn as cudnn` gives what `minigrad.backends.cudnn` is."""
    for path, module in minigrad._PYTORCH_PATHS.items():
        imported = importlib.import_module(f"minigrad.{path}")
        attribute = minigrad
        for part in path.split("."):
            attribute = getattr(attribute, part)
        assert imported is module is attribute, path


def test_stand_ins_live_in_platform_and_keep_their_pytorch_names():
    assert minigrad.cuda.__name__ == "minigrad.platform.cuda"
    assert minigrad.FloatTensor.__module__ == "minigrad.platform.tensortypes"
    assert repr(minigrad.FloatTensor) == "<class 'minigrad.FloatTensor'>"
    assert isinstance(minigrad.device("cpu"), minigrad.device)
    from minigrad.cuda.amp import GradScaler
    assert issubclass(GradScaler, minigrad.amp.GradScaler)


def test_import_loads_no_layer_and_advertises_no_application():
    """In a fresh process (here other tests have imported everything): `import minigrad`
    imports no layer above the core, no optional package and no application, and the
    applications are not attributes until imported by name."""
    out = _run("import sys, minigrad; "
               "print(sorted(m for m in sys.modules if m.split('.')[1:2] and m.split('.')[1] in "
               "('nn', 'optim', 'models', 'utils', 'onnx', 'viz', 'translate', 'demos') "
               "and m.startswith('minigrad.')), 'translate' in dir(minigrad), "
               "hasattr(minigrad, 'demos'))")
    assert out == "[] False False"


@pytest.mark.parametrize("name", ["utils", "onnx"])
def test_optional_packages_are_lazy_attributes(name):
    """Once the package exists, `minigrad.utils.data` works after `import minigrad` alone;
    until then the attribute is absent (AttributeError, so hasattr is False)."""
    present = importlib.util.find_spec(f"minigrad.{name}") is not None
    assert name in minigrad._LAZY_SUBMODULES and (name in dir(minigrad)) == present
    if present:
        assert isinstance(getattr(minigrad, name), types.ModuleType)
    else:
        assert not hasattr(minigrad, name)
