"""Checkpoint averaging: the mean of the weights of a run's last N checkpoints.

Averaging the parameters of the last few checkpoints (Vaswani et al. average the last 5 or 20)
smooths out the noise of the final steps and usually gains a little BLEU for free. A run
trained with `keep_last=N` keeps the model weights of its last N checkpoints beside its full
checkpoint, one file a step (checkpoint.py writes and prunes them):

    checkpoints/step_000500.npz   {"format", "step", "model"}: weights only (minigrad.save)

`average_run` averages the newest of them and writes a run directory that `translate` and
`evaluate` read as they read a trained run (the settings, tokenizers and data of the run's own
checkpoint, the averaged weights in place of its own); resuming from it is refused.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import minigrad
from minigrad.tensor import Tensor

from . import checkpoint as ckpt
from .checkpoint import SNAPSHOT_FORMAT, drop_snapshots_after, snapshot_path, snapshot_steps
from .files import LOCK_NAME, DirectoryLock


class AveragingError(ValueError):
    """Checkpoints that cannot be averaged (too few, damaged, or of different shapes)."""


def load_snapshot(path) -> dict:
    """The weights of one snapshot file, checked: {name: float array}."""
    try:
        raw = minigrad.load(path)
    except (ValueError, AttributeError, TypeError, KeyError, IndexError) as e:
        raise AveragingError(f"average: {path} is not a readable checkpoint ({e})") from None
    if not isinstance(raw, dict) or raw.get("format") != SNAPSHOT_FORMAT \
            or not isinstance(raw.get("model"), dict):
        raise AveragingError(f"average: {path} is not a weights snapshot of minigrad-translate")
    weights = {}
    for name, value in raw["model"].items():
        if not isinstance(value, (Tensor, np.ndarray)):
            raise AveragingError(f"average: {path}: weight {name!r} is not an array")
        weights[name] = value.numpy() if isinstance(value, Tensor) else value
    return weights


def average_weights(snapshots: list[dict], names: list[str]) -> dict:
    """The element-wise mean of state dicts (summed in float64, returned in each weight's
    dtype); every one must have the same names and shapes, or an AveragingError says which."""
    if not snapshots:
        raise AveragingError("average: no checkpoints to average")
    first = snapshots[0]
    for weights, name in zip(snapshots[1:], names[1:]):
        if set(weights) != set(first):
            diff = sorted(set(weights) ^ set(first))
            raise AveragingError(f"average: {name} and {names[0]} hold different weights "
                                 f"({', '.join(diff[:3])}); they are not of one model")
        for k, v in weights.items():
            if v.shape != first[k].shape:
                raise AveragingError(f"average: {k} has shape {tuple(v.shape)} in {name} but "
                                     f"{tuple(first[k].shape)} in {names[0]}; cannot average "
                                     f"checkpoints of different models")
    return {k: Tensor._wrap((sum(w[k].astype(np.float64) for w in snapshots) / len(snapshots))
                            .astype(v.dtype)) for k, v in first.items()}


def _held(out_dir) -> str | None:
    """What `out_dir` holds that writing there would replace (None: nothing)."""
    if not out_dir.exists():
        return None
    if not out_dir.is_dir():
        return "a file"
    if ckpt.stamp(out_dir) is not None:
        return "a checkpoint"
    names = sorted(p.name for p in out_dir.iterdir() if p.name != LOCK_NAME)
    return f"files ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" if names else None


def average_run(run_dir, last: int, out_dir, overwrite: bool = False) -> list[int]:
    """Average the weights of the newest `last` snapshots of `run_dir` into a run directory
    `out_dir` that translate and evaluate can read; returns the averaged steps. A non-empty
    `out_dir` is replaced only with `overwrite` (a training run there then loses its
    snapshots and metrics with its checkpoint, and cannot be resumed)."""
    from .model import model_from_checkpoint  # the model is built only when averaging
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    if out_dir.resolve() == run_dir.resolve():
        raise AveragingError(f"average: --out must not be the run's own directory {run_dir} "
                             f"(its checkpoint would be replaced)")
    held = _held(out_dir)
    if held == "a file" or (held and not overwrite):
        raise AveragingError(f"average: {out_dir} already holds {held}; choose another --out"
                             + ("" if held == "a file" else " (or --overwrite to replace it)"))
    state = ckpt.load_checkpoint(run_dir)
    steps = snapshot_steps(run_dir)
    if len(steps) < last:
        raise AveragingError(f"average: {run_dir} keeps {len(steps)} checkpoint(s) "
                             f"({', '.join(map(str, steps)) or 'none'}), {last} asked for; "
                             f"train with --keep-last {last} (or more)")
    steps = steps[-last:]
    paths = [snapshot_path(run_dir, s) for s in steps]
    averaged = average_weights([load_snapshot(p) for p in paths], [str(p) for p in paths])
    model = model_from_checkpoint(state, run_dir)
    try:
        model.load_state_dict(averaged)
    except (RuntimeError, ValueError) as e:
        raise AveragingError(f"average: the checkpoints of {run_dir} do not fit the model its "
                             f"settings describe: {e}") from None
    progress = {**state["progress"], "averaged": steps}
    with DirectoryLock(out_dir):  # not while a training run writes there
        (out_dir / ckpt.METRICS).unlink(missing_ok=True)
        drop_snapshots_after(out_dir, 0)
        ckpt.save_checkpoint(out_dir, model, None, None, state["config"], progress,
                             state["src_tok"], state["tgt_tok"], state["data"],
                             state["fingerprints"])
    return steps
