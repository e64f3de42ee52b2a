"""The folders are layers and imports point down only: kernels -> core -> nn -> models -> apps.

Every module's source is parsed (imports inside functions included) and each import that
names a minigrad package is checked against the layer table below, so the rule is tested
rather than hoped for.
"""
import ast
import pathlib
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# package -> layer; a higher layer may import a lower one, never the other way round.
# The two applications sit side by side and do not import each other.
LAYERS = {
    "minigrad.kernels": 0,
    "minigrad": 1,
    "minigrad.ops": 1,
    "minigrad.onnx": 1,
    "minigrad.platform": 1,
    "minigrad.nn": 2,
    "minigrad.nn.utils": 2,
    "minigrad.optim": 2,
    "minigrad.utils": 2,
    "minigrad.utils.data": 2,
    "minigrad.utils.data._utils": 2,
    "minigrad.utils.tensorboard": 2,
    "minigrad.models": 3,
    "minigrad.translate": 4,
    "minigrad.demos": 4,
}


def package_dirs():
    """{package: folder} from pyproject's package-dir (the same mapping pip installs)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = {pkg: ROOT / folder for pkg, folder in config["package-dir"].items()}
    for pkg in config["packages"]:  # sub-packages that follow their parent's folder
        if pkg not in dirs:
            parent, _, leaf = pkg.rpartition(".")
            dirs[pkg] = dirs[parent] / leaf
    return dirs


def modules():
    """Yield (module name, package, path) for every module of the installed packages."""
    for pkg, folder in package_dirs().items():
        for path in sorted(folder.glob("*.py")):
            name = pkg if path.stem == "__init__" else f"{pkg}.{path.stem}"
            yield name, pkg, path


def layer_of(module):
    """The layer of a dotted module name: its longest package prefix in LAYERS."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return prefix, LAYERS[prefix]
    return None, None


def imports_of(path, package):
    """Absolute names of the minigrad modules that `path` imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's own package
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # `from minigrad import nn` imports minigrad.nn
                yield node.lineno, f"{target}.{alias.name}"


def upward_imports():
    bad = []
    for name, package, path in modules():
        own, own_layer = layer_of(package)
        for line, target in imports_of(path, package):
            if not target.startswith("minigrad"):
                continue
            other, other_layer = layer_of(target)
            if other_layer is None or other == own:
                continue
            if other_layer > own_layer or (other_layer == own_layer and other_layer == 4):
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                bad.append(f"{where}:{line} ({own}) imports {target} ({other})")
    return bad


def test_every_package_has_a_layer_and_a_folder():
    dirs = package_dirs()
    assert set(dirs) == set(LAYERS), "pyproject's packages and this test's layer table differ"
    for pkg, folder in dirs.items():
        assert (folder / "__init__.py").is_file(), f"{pkg}: no {folder}/__init__.py"


def test_imports_point_down_only():
    assert upward_imports() == []


def test_the_checker_catches_an_upward_import(tmp_path, monkeypatch):
    """The check above can fail: a core module importing nn is reported."""
    fake = tmp_path / "minigrad"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "bad.py").write_text("def f():\n    from minigrad.nn import Linear\n")
    monkeypatch.setattr(sys.modules[__name__], "package_dirs", lambda: {"minigrad": fake})
    bad = upward_imports()
    assert bad and all(b.startswith(f"{fake / 'bad.py'}:2 (minigrad) imports minigrad.nn")
                       for b in bad)


@pytest.mark.parametrize("module, absent", [
    ("minigrad", ("minigrad.nn", "minigrad.optim", "minigrad.models", "minigrad.translate",
                  "minigrad.utils", "tensorboard")),
    ("minigrad.nn", ("minigrad.models", "minigrad.translate", "minigrad.demos")),
    ("minigrad.models", ("minigrad.translate", "minigrad.demos")),
])
def test_importing_a_layer_loads_nothing_above_it(module, absent):
    code = (f"import sys, {module}; "
            f"print([m for m in {absent!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_upper_layers_are_attributes_of_minigrad():
    """As `torch.optim` after `import torch`: loaded on first use, not at import; the
    applications are imported by name only."""
    code = ("import minigrad as mg; "
            "print(mg.optim.AdamW.__name__, mg.nn.Transformer.__name__, mg.models.GAT.__name__, "
            "hasattr(mg, 'translate'), hasattr(mg, 'demos'), mg.utils.data.DataLoader.__name__); "
            "import minigrad.translate; print(mg.translate.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["AdamW", "Transformer", "GAT", "False", "False", "DataLoader",
                                  "minigrad.translate"]
    import minigrad
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        minigrad.nonexistent
