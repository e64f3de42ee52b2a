"""Full-size runs kept in the repository, so that the default (small) book shows real results.

Small mode shrinks datasets and training to seconds, which is right for checking that every
tutorial runs but wrong for the pages whose text discusses trained results (BLEU, attention
maps of a trained model, BERT and HAN accuracies). For those tutorials the executed notebook of
a full-size run is committed in book/published/ (`python book/build.py --publish NAME`), and
every build shows it instead of a small run for as long as the tutorial and
`tutorials/_common.py` are unchanged. When either changes, the build says so and falls back to
a small run, so a page never shows outputs of code that is no longer on it.

The library is deliberately not part of that check: a full-size run takes minutes, and a
change anywhere in the library would otherwise hide every published run. Each page names the
library commit its run was made with.
"""
from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

import execute

FOLDER = Path(__file__).resolve().parent / "published"


@dataclass
class Run:
    """A published run of one tutorial, and whether it still matches the tutorial's text."""

    notebook: object
    current: bool
    commit: str


def path_of(tutorial: Path, folder: Path = FOLDER) -> Path:
    return folder / (tutorial.stem + ".ipynb")


def load(tutorial: Path, folder: Path = FOLDER) -> Run | None:
    """The published full-size run of `tutorial`, or None if there is none."""
    path = path_of(tutorial, folder)
    if not path.exists():
        return None
    notebook = nbformat.read(path, as_version=4)
    meta = notebook.metadata.get("minigrad_book", {})
    current = (meta.get("mode") == "full"
               and meta.get("source") == execute.source_digest(tutorial))
    return Run(notebook, current, meta.get("commit", "unknown"))


def head_commit(root: Path) -> str:
    """The short commit of the checkout, with "+changes" when its library has edits."""
    def git(*args):
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    folders = sorted(set(execute.package_dirs(root).values()))
    return commit + ("+changes" if git("status", "--porcelain", "--", *folders) else "")


def publish(tutorial: Path, root: Path, cache_dir: Path, out_dir: Path, lib_digest: str,
            folder: Path = FOLDER) -> Path:
    """Run `tutorial` at full size (or take its current full-mode cache entry) and save it in
    `folder` with the digest of its source; return the saved file."""
    start = time.perf_counter()
    notebook, ran = execute.executed(tutorial, execute.Mode(small=False), cache_dir, out_dir,
                                     root, lib_digest)
    meta = notebook.metadata["minigrad_book"]
    meta["source"] = execute.source_digest(tutorial)
    meta["library"] = lib_digest  # a cached full run was made with this very library too
    meta["commit"] = head_commit(root)
    if ran:
        meta["seconds"] = round(time.perf_counter() - start)
    folder.mkdir(parents=True, exist_ok=True)
    path = path_of(tutorial, folder)
    nbformat.write(notebook, path)
    return path
