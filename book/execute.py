"""Run one tutorial as a notebook, keep the result in a cache, and show the figures it saved.

A tutorial is a jupytext "percent" file. It runs in a Jupyter kernel started in `tutorials/`
(where Jupyter would run it, so `_common.py` is found) and its outputs are kept in the
notebook. The cache key covers everything that can change those outputs: the tutorial,
`_common.py`, every library source file and the mode (small or full), so an unchanged
tutorial is never run twice and a changed library is never shown with stale numbers.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
from jupyter_client import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}
# the inline backend: if a tutorial leaves the backend alone, its figures come back as outputs
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colour codes in IPython tracebacks
# the line `_common.savefig` prints (and tutorial 1 prints for the rendered graph)
SAVED_LINE = re.compile(r"^saved (\S.*\.png)\s*$", re.M)


class TutorialFailed(Exception):
    """A tutorial raised while it ran: the message names the tutorial, its cell and the line."""


@dataclass
class Mode:
    """How the tutorials run: small (tiny sizes, seconds each) or full, and their time limit."""

    small: bool = True
    timeout: int = 900  # seconds for one cell

    @property
    def name(self):
        return "small" if self.small else "full"


def package_dirs(root: Path) -> dict[str, str]:
    """{package: folder} from pyproject.toml's package-dir, e.g. {"minigrad.nn": "nn", ...}."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["setuptools"]["package-dir"]


def library_digest(root: Path) -> str:
    """One hash of every library source file, so a change anywhere invalidates the cache."""
    h = hashlib.sha256()
    folders = sorted(set(package_dirs(root).values()))
    for folder in folders:
        if any(folder.startswith(other + "/") for other in folders):
            continue  # nn/optim is already inside nn
        for path in sorted((root / folder).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def cache_key(tutorial: Path, mode: Mode, lib_digest: str) -> str:
    """The key of a tutorial's executed notebook: its text, `_common.py`, the exercise
    checkers, the library, the mode and this file (which post-processes the outputs)."""
    h = hashlib.sha256()
    checkers = sorted(tutorial.parent.glob("_exercises*.py"))
    for path in (tutorial, tutorial.parent / "_common.py", *checkers, Path(__file__)):
        if path.exists():
            h.update(path.read_bytes())
    h.update(lib_digest.encode())
    h.update(mode.name.encode())
    return h.hexdigest()


def source_digest(tutorial: Path) -> str:
    """A hash of what a published full-size run depends on besides the library: the tutorial
    and `_common.py`. A published run is shown while this digest is unchanged."""
    h = hashlib.sha256()
    for path in (tutorial, tutorial.parent / "_common.py"):
        if path.exists():
            h.update(path.read_bytes())
    return h.hexdigest()


def cell_line(tutorial: Path, notebook, index: int) -> int:
    """The line of `tutorial` where cell `index` starts (1-based), found by walking the cells."""
    lines = tutorial.read_text(encoding="utf-8").splitlines()
    pos = 0
    for i, cell in enumerate(notebook.cells[: index + 1]):
        first = next((ln for ln in cell.source.splitlines() if ln.strip()), "")
        if cell.cell_type == "markdown":
            first = ("# " + first).rstrip()
        for j in range(pos, len(lines)):
            if lines[j].rstrip() == first.rstrip():
                pos = j
                break
        if i == index:
            return pos + 1
        pos += 1
    return 0


def _failure(tutorial: Path, notebook, index, err: Exception) -> TutorialFailed:
    """One line naming the tutorial, the cell that failed (and its line in the file), the error."""
    if index is None:
        return TutorialFailed(f"tutorial {tutorial.name} failed before its first cell: {err}")
    cell = notebook.cells[index]
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    line = cell_line(tutorial, notebook, index)
    if errors:
        value = (str(errors[0]["evalue"]).strip().splitlines() or [""])[0]
        what = f"{errors[0]['ename']}: {value}".rstrip(": ")
        # IPython names the line inside the cell: "Cell In[4], line 7" (the last one is the raise)
        trace = ANSI.sub("", "\n".join(errors[0].get("traceback", [])))
        in_cell = re.findall(r"Cell In\[\d+\], line (\d+)", trace)
        if in_cell and line:
            line += int(in_cell[0]) - 1
    else:
        what = str(err).strip().splitlines()[0]
    code_no = sum(c.cell_type == "code" for c in notebook.cells[: index + 1])
    return TutorialFailed(f"tutorial {tutorial.name} failed in code cell {code_no} "
                          f"at line {line} of the file: {what}")


def run(tutorial: Path, mode: Mode, out_dir: Path):
    """Execute `tutorial` in a fresh kernel and return the notebook with its outputs.

    Figures the tutorial saves go to `out_dir`; raises TutorialFailed if any cell raises.
    """
    notebook = jupytext.read(tutorial)
    notebook.metadata["kernelspec"] = dict(KERNEL)
    env = dict(os.environ)
    env["MINIGRAD_TUTORIAL_OUT"] = str(out_dir)
    env["MPLBACKEND"] = INLINE_BACKEND
    if mode.small:
        env["MINIGRAD_TUTORIAL_SMALL"] = "1"
    else:
        env.pop("MINIGRAD_TUTORIAL_SMALL", None)
    started = {"index": None}
    with tempfile.TemporaryDirectory(prefix="minigrad-book-") as sockets:
        # local sockets rather than TCP ports: private to this user, and no kernel warning
        km = KernelManager(kernel_name=KERNEL["name"], transport="ipc",
                           ip=os.path.join(sockets, "kernel"))
        client = NotebookClient(notebook, km=km, timeout=mode.timeout,
                                resources={"metadata": {"path": str(tutorial.parent)}})
        client.on_cell_start = lambda cell, cell_index: started.update(index=cell_index)
        try:
            client.execute(env=env)
        except (CellExecutionError, CellTimeoutError) as err:
            raise _failure(tutorial, notebook, started["index"], err) from None
        finally:
            if km.has_kernel:  # a kernel manager we made is ours to stop, not nbclient's
                km.shutdown_kernel(now=True)
    return notebook


def _has_image(cell) -> bool:
    return any(k.startswith("image/") for o in cell.get("outputs", [])
               for k in o.get("data", {}))


def show_saved_figures(notebook, root: Path) -> int:
    """Under each code cell that saved PNGs but shows no image, show them; return how many.

    Today's tutorials draw to files and print "saved PATH"; a tutorial that shows its figures
    inline is left as it is. Absolute paths in text outputs become repository-relative.
    """
    added = 0
    prefix = str(root) + os.sep
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        streams = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream"]
        text = "".join(o["text"] for o in streams)
        paths = [Path(p) for p in SAVED_LINE.findall(text)]
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                o["text"] = o["text"].replace(prefix, "")
            elif "text/plain" in o.get("data", {}):
                o["data"]["text/plain"] = o["data"]["text/plain"].replace(prefix, "")
        paths = [p for p in paths if p.is_file()]
        if _has_image(cell) or not paths:
            continue
        # myst-nb takes an image's alt text from the cell's metadata
        cell.metadata.setdefault("mystnb", {})["image"] = {
            "alt": "figure " + ", ".join(p.stem for p in paths)}
        for path in paths:
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            cell.outputs.append(nbformat.v4.new_output(
                "display_data", data={"image/png": data, "text/plain": f"<{path.name}>"}))
            added += 1
    return added


def executed(tutorial: Path, mode: Mode, cache_dir: Path, out_dir: Path, root: Path,
             lib_digest: str, rerun: bool = False):
    """The executed notebook of `tutorial`, from the cache when nothing it depends on changed.

    Returns (notebook, ran) where `ran` tells whether the tutorial was executed now.
    """
    key = cache_key(tutorial, mode, lib_digest)
    cached = cache_dir / mode.name / (tutorial.stem + ".ipynb")
    if cached.exists() and not rerun:
        notebook = nbformat.read(cached, as_version=4)
        if notebook.metadata.get("minigrad_book", {}).get("key") == key:
            return notebook, False
    notebook = run(tutorial, mode, out_dir)
    show_saved_figures(notebook, root)
    notebook.metadata["minigrad_book"] = {"key": key, "mode": mode.name}
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    nbformat.write(notebook, tmp)
    tmp.replace(cached)  # atomic: an interrupted build never leaves half a cache entry
    return notebook, True
