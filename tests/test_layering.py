"""The folders are layers and imports point down only: kernels -> core -> nn -> models -> apps.

Every module's source is parsed (imports inside functions included) and each import that
names a minigrad package is checked against the layer table below, so the rule is tested
rather than hoped for. Inside a layer the modules import each other without cycles, and the
layers above the core use only its public names.
"""
import ast
import functools
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
    "minigrad.autograd": 1,
    "minigrad.ops": 1,
    "minigrad.onnx": 1,
    "minigrad.platform": 1,
    "minigrad.multiprocessing": 1,
    "minigrad.nn": 2,
    "minigrad.nn.utils": 2,
    "minigrad.nn.modules": 2,
    "minigrad.distributions": 2,
    "minigrad.func": 2,
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


@functools.lru_cache(maxsize=None)
def _parsed(path, mtime_ns):
    return ast.parse(path.read_text(), filename=str(path))


def parse(path):
    """The module's syntax tree, parsed once per version of the file for all the tests here."""
    return _parsed(path, path.stat().st_mtime_ns)


def imports_of(path, package):
    """Absolute names of the minigrad modules that `path` imports."""
    tree = parse(path)
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


def module_graph():
    """{module: {module it imports: first line}} over every module of the installed packages.

    `from package import name` is an import of the submodule `package.name` when there is one,
    else of `package` (whose `__init__` defines the name).
    """
    found = {name: (pkg, path) for name, pkg, path in modules()}
    graph = {}
    for name, (pkg, path) in found.items():
        edges = graph[name] = {}
        tree = parse(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, pkg)
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in found]
                targets = subs + ([base] if len(subs) < len(node.names) else [])
            else:
                continue
            for target in targets:
                while target and target not in found:  # a name inside a module: the module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.setdefault(target, node.lineno)
    return graph


def _absolute(node, package):
    """The absolute module name an `ast.ImportFrom` names."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    return ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan, without recursion)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


# Imports that close a cycle on purpose. Tensor's methods are grouped by kind in modules that
# Tensor inherits from; they use tensor.py's names at call time, and two of them hand a call to
# a module built on Tensor (legacy tensor types, sampling).
ALLOWED_CYCLE_EDGES = {
    ("minigrad.tensor_convert", "minigrad.tensor"),
    ("minigrad.tensor_math", "minigrad.tensor"),
    ("minigrad.tensor_logic", "minigrad.tensor"),
    ("minigrad.tensor_order", "minigrad.tensor"),
    ("minigrad.tensor_linalg", "minigrad.tensor"),
    ("minigrad.tensor_operators", "minigrad.tensor"),
    ("minigrad.tensor_shape", "minigrad.tensor"),
    ("minigrad.tensor_write", "minigrad.tensor"),
    ("minigrad.tensor_shape_inplace", "minigrad.tensor"),
    ("minigrad.tensor_random", "minigrad.tensor"),
    ("minigrad.tensor_random", "minigrad.linalg_checks"),  # dtype names in its errors
    ("minigrad.tensor_convert", "minigrad.platform.tensortypes"),  # Tensor.type(LongTensor)
    ("minigrad.tensor_storage", "minigrad.multiprocessing.reductions"),  # share_memory_
    ("minigrad.tensor_order", "minigrad.sampling"),        # Tensor.multinomial
    ("minigrad.tensor_math", "minigrad.composite"),        # Tensor.lerp, addcmul, addcdiv
    ("minigrad.tensor_linalg", "minigrad.composite"),      # Tensor.addmm, baddbmm
    ("minigrad.tensor_math", "minigrad.matrix_parts"),     # Tensor.diagonal, diag, trace
    ("minigrad.tensor_math", "minigrad.statistics"),       # Tensor.median, count_nonzero
    ("minigrad.tensor_math", "minigrad.tensor_assembly"),  # Tensor.tile
    ("minigrad.tensor_math", "minigrad.order_statistics"),  # Tensor.mode, nanmedian
    ("minigrad.tensor_linalg", "minigrad.linalg_det"),       # Tensor.det, slogdet, logdet
    ("minigrad.tensor_linalg", "minigrad.linalg_inverse"),   # Tensor.inverse
    ("minigrad.tensor_linalg", "minigrad.linalg_pinv"),      # Tensor.pinverse
    ("minigrad.tensor_linalg", "minigrad.linalg_matrix_exp"),  # Tensor.matrix_exp
    ("minigrad.tensor_linalg", "minigrad.linalg_products"),  # Tensor.matrix_power
    ("minigrad.tensor_linalg", "minigrad.linalg_legacy"),    # Tensor.cholesky, svd, qr, ...
    ("minigrad.tensor_linalg", "minigrad.linalg_cholesky_solve"),  # Tensor.cholesky_solve
    ("minigrad.tensor_linalg", "minigrad.linalg_householder"),  # Tensor.orgqr, geqrf, ormqr
    ("minigrad.tensor_linalg", "minigrad.matrix_vector"),    # Tensor.mv, addmv, addr, inner, ...
    ("minigrad.tensor_math", "minigrad.aliases"),          # Tensor.subtract, divide, fliplr, ...
    ("minigrad.tensor_math", "minigrad.special"),          # Tensor.round(decimals=)
    ("minigrad.tensor_operators", "minigrad.functional"),  # Tensor.div(rounding_mode=)
    ("minigrad.tensor_functions", "minigrad.functional"),  # Tensor.where
    ("minigrad.tensor_shape", "minigrad.linalg_checks"),   # dtype names in view(dtype)'s errors
    ("minigrad.tensor_math", "minigrad.gamma_functions"),  # Tensor.polygamma
    ("minigrad.tensor_linalg", "minigrad.tensor_products"),  # Tensor.cross, kron
    ("minigrad.tensor_math", "minigrad.nan_reductions"),   # Tensor.nansum, nanmean
    ("minigrad.tensor_math", "minigrad.differences"),      # Tensor.diff
}


def cycles_inside_layers(graph, allowed=frozenset()):
    """Cycles among the modules of one layer, once the `allowed` edges are left out."""
    same_layer = {
        name: [t for t in edges if layer_of(t)[1] == layer_of(name)[1] and (name, t) not in allowed]
        for name, edges in graph.items()}
    return cycles(same_layer)


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


def test_no_import_cycle_inside_a_layer():
    graph = module_graph()
    assert cycles_inside_layers(graph, ALLOWED_CYCLE_EDGES) == []
    stale = [edge for edge in ALLOWED_CYCLE_EDGES if edge[1] not in graph.get(edge[0], {})]
    assert stale == [], "allowed edges that no longer exist: remove them from the list"


def test_dtypes_is_a_leaf():
    """The dtype names and the promotion table import nothing of minigrad, so every module may
    use them (the operators' dispatch, which needs Tensor and ops, lives beside the operators)."""
    assert module_graph()["minigrad.dtypes"] == {}


def test_the_cycle_checker_catches_a_planted_cycle(tmp_path, monkeypatch):
    """A cycle closed by an import inside a function is found, and so is a longer one."""
    fake = tmp_path / "minigrad"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "a.py").write_text("from . import b\n")
    (fake / "b.py").write_text("from .c import f\n")
    (fake / "c.py").write_text("def f():\n    from minigrad.a import g\n")
    (fake / "d.py").write_text("from minigrad import a, b, c\n")  # imports into the cycle only
    monkeypatch.setattr(sys.modules[__name__], "package_dirs", lambda: {"minigrad": fake})
    graph = module_graph()
    assert cycles_inside_layers(graph) == [["minigrad.a", "minigrad.b", "minigrad.c"]]
    assert cycles_inside_layers(graph, {("minigrad.c", "minigrad.a")}) == []


def private_core_names():
    """Imports, by modules above the core, of a private name of the core (or a private core
    module), and attribute reads like `autograd._state` on an imported core module."""
    bad, core_modules = [], {name for name, _, _ in modules()}
    for name, package, path in modules():
        if layer_of(package)[1] <= LAYERS["minigrad"]:
            continue
        tree = parse(path)
        core_aliases = set()  # local names bound to core modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                if layer_of(base)[1] != LAYERS["minigrad"]:
                    continue
                for a in node.names:
                    target = f"{base}.{a.name}"
                    if _private(target):
                        bad.append(f"{name}:{node.lineno} imports {target}")
                    if target in core_modules:
                        core_aliases.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if layer_of(a.name)[1] == LAYERS["minigrad"]:
                        if _private(a.name):
                            bad.append(f"{name}:{node.lineno} imports {a.name}")
                        core_aliases.add(a.asname or a.name.split(".")[0])
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in core_aliases and _private(node.attr)):
                bad.append(f"{name}:{node.lineno} reads {node.value.id}.{node.attr}")
    return bad


def _private(dotted):
    return any(p.startswith("_") and not p.startswith("__") for p in dotted.split("."))


def test_no_module_above_the_core_uses_a_private_name_of_the_core():
    assert private_core_names() == []


def test_the_private_name_checker_can_fail(tmp_path, monkeypatch):
    core, nn = tmp_path / "minigrad", tmp_path / "nn"
    for folder in (core, nn):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (core / "tensor.py").write_text("_data = None\n")
    (core / "autograd.py").write_text("_state = None\n")
    (nn / "bad.py").write_text("from minigrad.tensor import _data\nfrom minigrad import autograd\n"
                               "def f():\n    return autograd._state\n")
    monkeypatch.setattr(sys.modules[__name__], "package_dirs",
                        lambda: {"minigrad": core, "minigrad.nn": nn})
    assert private_core_names() == ["minigrad.nn.bad:1 imports minigrad.tensor._data",
                                    "minigrad.nn.bad:4 reads autograd._state"]
