"""Run every tutorial as a learner would, in small mode, and check the index and their form.

Each tutorial (`tutorials/NN_*.py`, the main path, and `tutorials/A1_*.py`, optional
appendices) runs in its own Python process with MINIGRAD_TUTORIAL_SMALL=1 (tiny sizes, a few
seconds each) and MINIGRAD_TUTORIAL_OUT pointing to a temporary folder, so the figures never
land in the repository. A tutorial checks its own numbers with asserts, so a zero exit status
means that every claim in it still holds.

The full-size runs, whose trained results (BLEU levels, the RNN gap, HAN accuracy) only hold
at full size, are marked `slow` and run only when asked for:

    python -m pytest tests/test_tutorials.py -m slow
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
MAIN = sorted(TUTORIALS.glob("[0-9][0-9]_*.py"))
APPENDICES = sorted(TUTORIALS.glob("A[0-9]_*.py"))
FILES = MAIN + APPENDICES
TIMEOUT = 600  # seconds for one tutorial in small mode; the whole set takes well under a minute
SLOW_TIMEOUT = 1800  # a full-size run trains real models


def test_tutorials_exist():
    assert MAIN, f"no tutorials found in {TUTORIALS}"
    numbers = [int(p.name[:2]) for p in MAIN]
    assert numbers == list(range(1, len(numbers) + 1)), (
        f"tutorials should be numbered 01, 02, ... without gaps or duplicates, got {numbers}")
    letters = [p.name[:2] for p in APPENDICES]
    assert letters == [f"A{i}" for i in range(1, len(letters) + 1)], (
        f"appendices should be numbered A1, A2, ... without gaps, got {letters}")


def test_index_lists_every_tutorial():
    index = (TUTORIALS / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in FILES if p.name not in index]
    assert not missing, f"tutorials/README.md does not list {missing}"
    # and it lists them in reading order
    positions = [index.index(p.name) for p in FILES]
    assert positions == sorted(positions), "tutorials/README.md lists the tutorials out of order"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_tutorial_form(path):
    text = path.read_text(encoding="utf-8")
    assert "# %% [markdown]" in text and re.search(r"^# %%\s*$", text, re.M), (
        f"{path.name} is not in jupytext percent format (markdown and code cells)")
    assert "Test yourself" in text, f"{path.name} has no 'Test yourself' section"
    assert re.search(r"^\s*assert\b", text, re.M), f"{path.name} checks nothing with assert"
    jupytext = pytest.importorskip("jupytext")
    notebook = jupytext.read(path)
    kinds = {cell.cell_type for cell in notebook.cells}
    assert kinds == {"markdown", "code"}, f"{path.name} opens as a notebook with cells {kinds}"


def run_tutorial(path, tmp_path, small, timeout):
    """Run one tutorial as a script; fail with its output if it exits with an error."""
    env = dict(os.environ)
    env.pop("MINIGRAD_TUTORIAL_SMALL", None)
    if small:
        env["MINIGRAD_TUTORIAL_SMALL"] = "1"
    env["MINIGRAD_TUTORIAL_OUT"] = str(tmp_path / "out")
    env["MPLBACKEND"] = "Agg"
    # the tutorials multiply small matrices: extra BLAS or Numba threads only compete for the
    # cores (on a loaded 2-core machine they made the set about ten times slower)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("NUMBA_NUM_THREADS", "1")
    start = time.perf_counter()
    try:
        result = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"{path.name} did not finish within {timeout} s\n"
                    f"--- stdout (end) ---\n{out[-3000:]}", pytrace=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        pytest.fail(f"{path.name} exited with status {result.returncode} after {seconds:.1f} s\n"
                    f"--- stderr ---\n{result.stderr[-6000:]}\n"
                    f"--- stdout (end) ---\n{result.stdout[-2000:]}", pytrace=False)
    figures = list((tmp_path / "out").glob("*.png")) if (tmp_path / "out").exists() else []
    print(f"{path.name}: {seconds:.1f} s, {len(figures)} figure(s)")
    return result


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_tutorial_runs(path, tmp_path):
    """As a script, in small mode. The fast suite runs every tutorial as a notebook instead
    (tests/test_tutorial_notebooks.py: the same cells and asserts, plus the inline figures), so
    that CI does not pay for each tutorial twice."""
    run_tutorial(path, tmp_path, small=True, timeout=TIMEOUT)


def _slow_selected(config):
    """True when the run asked for slow tests with -m (pyproject's addopts deselects them)."""
    expr = config.getoption("markexpr") or ""
    return "slow" in expr and "not slow" not in expr


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_tutorial_full_size(path, tmp_path, request):
    """The full-size run: every claim about trained models (BLEU, accuracy gaps) is asserted."""
    if not _slow_selected(request.config):
        pytest.skip("full-size tutorial runs take minutes; select them with -m slow")
    run_tutorial(path, tmp_path, small=False, timeout=SLOW_TIMEOUT)
