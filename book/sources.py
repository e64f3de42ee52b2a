"""Find the library source a tutorial uses, and write the book's pages that show that source.

The tutorial's code is parsed, not run: every name reached from an import of `minigrad`
(`mg.tensor`, `F.softmax`, `from minigrad.nn import Transformer`, `import_module("minigrad.x")`)
is looked up in the installed library, and the file and line that define it are recorded.
Library files named in the tutorial's text (`minigrad/kernels/tiled_matmul.py`) count too.
"""
from __future__ import annotations

import ast
import html
import importlib
import inspect
import re
from collections import defaultdict
from pathlib import Path

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from execute import package_dirs

NAMED_FILE = re.compile(r"`([\w/]+\.py)`")  # a file named in the text, checked to exist


def _aliases(tree) -> dict[str, tuple]:
    """{local name: (module imported, attributes taken from it)} for every import of minigrad.

    `import minigrad as mg` gives ("minigrad", ()), `from minigrad.nn import functional as F`
    gives ("minigrad.nn", ("functional",)): Python looks an imported name up as an attribute
    first, and the difference matters where a function shadows its module (kernels.softmax).
    """
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "minigrad":
                    names[a.asname or "minigrad"] = (a.name if a.asname else "minigrad", ())
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "minigrad":
            for a in node.names:
                names[a.asname or a.name] = (node.module, (a.name,))
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
            call = node.value
            func = getattr(call.func, "attr", getattr(call.func, "id", ""))
            if (func == "import_module" and call.args and isinstance(call.args[0], ast.Constant)
                    and str(call.args[0].value).startswith("minigrad")):
                names[node.targets[0].id] = (call.args[0].value, ())
    return names


def _chains(tree, aliases) -> set[tuple]:
    """(module, attributes) of every attribute chain or bare name rooted at an alias."""
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    found = set(aliases.values())
    for node in ast.walk(tree):
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in aliases:
            module, first = aliases[node.id]
            found.add((module, first + tuple(attrs[::-1])))
    return found


def _resolve(module: str, attrs: tuple):
    """The deepest module, class or function reached from `module` through `attrs`, or None."""
    try:
        obj = importlib.import_module(module)
    except ImportError:
        return None
    best = obj
    for attr in attrs:
        try:
            obj = getattr(obj, attr)
        except AttributeError:
            if not inspect.ismodule(obj):
                break
            try:  # a submodule not yet imported: `from minigrad.nn import scores`
                obj = importlib.import_module(f"{obj.__name__}.{attr}")
            except ImportError:
                break
        obj = getattr(obj, "py_func", obj)  # a Numba dispatcher: the Python function it compiles
        obj = inspect.unwrap(obj) if callable(obj) else obj
        if inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj):
            best = obj
        else:
            break
    return best


def repo_file(module, root: Path) -> str | None:
    """The repository path of an imported library module, through pyproject's package-dir.

    Works whether minigrad is installed from this checkout or copied into site-packages.
    """
    name, dirs = module.__name__, package_dirs(root)
    for pkg in sorted(dirs, key=len, reverse=True):  # the longest mapped package first
        if name == pkg or name.startswith(pkg + "."):
            parts = [dirs[pkg]] + name[len(pkg):].split(".")[1:]
            rel = "/".join(parts) + ("/__init__.py" if hasattr(module, "__path__") else ".py")
            return rel if (root / rel).is_file() else None
    return None


def _definition(obj, root: Path):
    """(repository-relative file, name, line) where `obj` is defined, or None outside the repo."""
    module = obj if inspect.ismodule(obj) else inspect.getmodule(obj)
    rel = repo_file(module, root) if module is not None else None
    if rel is None:
        return None
    try:
        line = 1 if inspect.ismodule(obj) else inspect.getsourcelines(obj)[1]
    except (TypeError, OSError):
        return None
    name = None if inspect.ismodule(obj) else obj.__qualname__
    return rel, name, line


def used_source(tutorial: Path, root: Path) -> dict[str, set]:
    """{file: {(name, line), ...}} of the library a tutorial uses; name None means the file."""
    text = tutorial.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(tutorial))
    used = defaultdict(set)
    for module, attrs in sorted(_chains(tree, _aliases(tree))):
        found = _resolve(module, attrs)
        where = _definition(found, root) if found is not None else None
        if where:
            used[where[0]].add(where[1:])
    for rel, names in list(used.items()):
        # a module counts by itself only where nothing in it is named; `import minigrad as mg`
        # alone says nothing about minigrad/__init__.py
        if any(n for n, _ in names) or rel.endswith("__init__.py"):
            names.discard((None, 1))
        if not names:
            del used[rel]
    folders = tuple(f + "/" for f in package_dirs(root).values())
    for rel in NAMED_FILE.findall(text):
        if rel.startswith(folders) and (root / rel).is_file():
            used[rel].add((None, 1))
    return dict(used)


def _md(text: str) -> str:
    """`text` with markdown's emphasis characters escaped (__init__.py is not bold "init")."""
    return re.sub(r"([_*])", r"\\\1", text)


def page_name(rel: str) -> str:
    """The book document that shows library file `rel`: nn/attention.py -> source/nn/attention."""
    return "source/" + rel[: -len(".py")]


def section(used: dict[str, set]) -> str:
    """The "Source used" markdown cell of a tutorial page (which lives in tutorials/)."""
    rows = []
    for rel in sorted(used):
        href = "../" + page_name(rel) + ".html"
        names = sorted((n, ln) for n, ln in used[rel] if n)
        links = ", ".join(f'<a href="{href}#L-{ln}"><code>{html.escape(n)}</code></a>'
                          for n, ln in names) or "the module as a whole"
        rows.append(f"| [{_md(rel)}](../{page_name(rel)}.md) | {links} |")
    return "\n".join([
        "## Source used", "",
        "The library files this tutorial calls into, as they were when the book was built. "
        "Each name links to the line that defines it.", "",
        "| file | what the tutorial uses from it |", "|---|---|", *rows])


def source_page(rel: str, root: Path, users: list[tuple[str, str]]) -> str:
    """A page showing library file `rel` with an anchor on every line (#L-12)."""
    code = (root / rel).read_text(encoding="utf-8")
    body = highlight(code, PythonLexer(), HtmlFormatter(
        linenos="inline", lineanchors="L", anchorlinenos=True, cssclass="highlight"))
    depth = "../" * rel.count("/") + "../"
    used_by = ", ".join(f"[{title}]({depth}tutorials/{stem}.ipynb)" for stem, title in users)
    return "\n".join([
        f"# {_md(rel)}", "",
        f"The repository's `{rel}` as it was when the book was built. Used by: {used_by}.", "",
        '```{raw} html', '<div class="highlight-python notranslate minigrad-source">',
        body, '</div>', '```', ""])


def source_index(users_of: dict[str, list[tuple[str, str]]]) -> str:
    """The page that lists every library file the tutorials use, and which tutorials use it."""
    rows = [f"| [{_md(rel)}]({page_name(rel)[len('source/'):]}.md) | "
            + ", ".join(f"[{s.split('_')[0]}](../tutorials/{s}.ipynb)" for s, _ in users) + " |"
            for rel, users in sorted(users_of.items())]
    toc = [page_name(rel)[len("source/"):] for rel in sorted(users_of)]
    return "\n".join([
        "# Library source used by the tutorials", "",
        "Every library file that a tutorial calls into, shown as it was when the book was built. "
        "The layers go from `minigrad/kernels/` up to `translate/` and `demos/`.", "",
        "| file | used by tutorial |", "|---|---|", *rows, "",
        "```{toctree}", ":hidden:", "", *toc, "```", ""])
