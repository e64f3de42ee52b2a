"""Shared helpers for the tutorials: where figures go, how they are shown, and whether to run small.

    MINIGRAD_TUTORIAL_OUT    folder for figures and other files (default: tutorials/out,
                             found next to this file, so it is the same from any working folder)
    MINIGRAD_TUTORIAL_SMALL  "1" shrinks sizes so that every tutorial runs in a few seconds

Run as a script, a tutorial draws with matplotlib's file-only "Agg" backend and every figure
becomes a PNG in the output folder. Opened as a notebook (a Jupyter kernel is running), the
figure is also shown inline, below the cell that drew it.
"""
import os

import matplotlib


def _in_jupyter():
    """True inside a Jupyter kernel (not in a plain script or a terminal IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


INLINE = _in_jupyter()
if not INLINE:
    matplotlib.use("Agg")  # a script only writes files; no window is ever opened

OUT_DIR = os.environ.get("MINIGRAD_TUTORIAL_OUT",
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
SMALL = os.environ.get("MINIGRAD_TUTORIAL_SMALL") == "1"


def out_path(name):
    """The path of `name` inside the output folder, which is created if needed."""
    os.makedirs(OUT_DIR, exist_ok=True)
    return os.path.join(OUT_DIR, name)


def savefig(fig, name):
    """Write `fig` as a PNG called `name` (".png" is added if missing), show it inline under
    Jupyter, and close it. Nothing is returned, so a cell that ends with it shows no stray path."""
    import matplotlib.pyplot as plt

    if not name.endswith(".png"):
        name += ".png"
    path = out_path(name)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)  # closed, so Jupyter does not show it a second time at the end of the cell
    # show the saved file rather than the figure object: that works whatever backend is active
    # (a library plotting helper may have switched matplotlib to "Agg" in the meantime)
    show_image(path)


def show_image(path):
    """Show a PNG that something else wrote (a Graphviz drawing, a library plot) inline under
    Jupyter; as a script just say where it is."""
    if INLINE:
        from IPython.display import Image, display

        display(Image(filename=path))
    print("saved", path)
