"""Shared helpers for the tutorials: where figures go, and whether to run small.

    MINIGRAD_TUTORIAL_OUT    folder for figures and other files (default: tutorials/out,
                             found next to this file, so it is the same from any working folder)
    MINIGRAD_TUTORIAL_SMALL  "1" shrinks sizes so that every tutorial runs in a few seconds
"""
import os

import matplotlib

matplotlib.use("Agg")  # draw to files; no window is ever opened

OUT_DIR = os.environ.get("MINIGRAD_TUTORIAL_OUT",
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
SMALL = os.environ.get("MINIGRAD_TUTORIAL_SMALL") == "1"


def out_path(name):
    """The path of `name` inside the output folder, which is created if needed."""
    os.makedirs(OUT_DIR, exist_ok=True)
    return os.path.join(OUT_DIR, name)


def savefig(fig, name):
    """Write `fig` as a PNG called `name` (".png" is added if missing), close it, return the path."""
    import matplotlib.pyplot as plt

    if not name.endswith(".png"):
        name += ".png"
    path = out_path(name)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    print("saved", path)
    return path
