"""Execute every tutorial as a Jupyter notebook and count the figures it shows inline.

Each `tutorials/*.py` is converted with jupytext and run cell by cell in a fresh kernel by
nbclient, in small mode, with the notebook's own folder as the working folder (as Jupyter
does). A failing `assert` in any cell fails the test. Every figure a tutorial saves must also
appear inline: the number of image outputs equals the number of PNG files written.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
FILES = sorted(TUTORIALS.glob("[0-9][0-9]_*.py")) + sorted(TUTORIALS.glob("A[0-9]_*.py"))
TIMEOUT = 600  # seconds for one cell


def image_outputs(notebook):
    """How many outputs of the executed notebook are pictures."""
    return sum(1 for cell in notebook.cells if cell.cell_type == "code"
               for out in cell.get("outputs", [])
               if any(k.startswith("image/") for k in out.get("data", {})))


# Four quick notebooks run in the fast suite, the others with the slow suite (each starts a
# kernel and runs its tutorial: 5-25 s on a 2-core machine, over two minutes in all).
FAST = {"03_inside_the_engine", "04_backward_rules", "06_self_attention",
        "10_layer_norm_vs_batch_norm"}
NOTEBOOKS = [p if p.stem in FAST else pytest.param(p, marks=pytest.mark.slow) for p in FILES]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in FILES])
def test_notebook_shows_its_figures(path, tmp_path, monkeypatch):
    out_dir = tmp_path / "out"
    # the kernel is a child process and inherits these
    monkeypatch.setenv("MINIGRAD_TUTORIAL_SMALL", "1")
    monkeypatch.setenv("MINIGRAD_TUTORIAL_OUT", str(out_dir))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # Jupyter's inline backend, as a learner has
    notebook = jupytext.read(path)
    client = nbclient.NotebookClient(notebook, timeout=TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(TUTORIALS)}})
    start = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{path.name} failed as a notebook:\n{str(e)[-4000:]}", pytrace=False)
    seconds = time.perf_counter() - start
    images = image_outputs(notebook)
    pngs = sorted(p.name for p in out_dir.glob("*.png")) if out_dir.exists() else []
    print(f"{path.name}: {seconds:.1f} s, {images} inline image(s), {len(pngs)} PNG file(s)")
    assert images >= 1, f"{path.name} shows no figure inline"
    assert images == len(pngs), (
        f"{path.name} shows {images} figure(s) inline but saved {len(pngs)}: {pngs}")
