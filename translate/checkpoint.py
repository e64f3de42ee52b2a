"""A training run's directory and its checkpoint:

    checkpoint.npz       everything needed to continue the run or use the model, in one file:
                         model, optimizer and schedule state, random state, progress, settings
                         and both tokenizers (minigrad.save: arrays + JSON, never pickle)
    config.json          the settings and the tokenizers again, for people to read;
    src_tokenizer.json   loading never reads these copies
    tgt_tokenizer.json
    metrics.jsonl        one JSON record per line, appended as training goes
    .lock                held by the one process that trains into the directory (files.py)
    checkpoints/step_000500.npz   with keep_last=N, the model weights of the last N
                         checkpoints (minigrad.save: {"format", "step", "model"}), which
                         averaging.py averages

The checkpoint is one file written atomically, so a reader sees one save or the next, never
the weights of one with the tokenizers of another. Loading checks every part of it and fails
with a CheckpointError naming the file; it changes nothing, except that it removes the
temporary files of saves that were killed, when no run holds the directory.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import numpy as np

import minigrad
from minigrad import random as mg_random
from minigrad.tensor import Tensor

from .config import TrainConfig
from .data import DataConfig
from .files import DirectoryLock, atomic_write_text, remove_stale_temps, try_lock
from .memory import estimate_weights, physical_memory
from .tokenizers import tokenizer_from_json

FORMAT, VERSION = "minigrad-translate-run", 2
CHECKPOINT, METRICS = "checkpoint.npz", "metrics.jsonl"
# every file a run writes, so that the temporary files of killed writes can be found
SNAPSHOTS, SNAPSHOT_FORMAT = "checkpoints", "minigrad-translate-weights"
_NAME = re.compile(r"step_(\d+)\.npz")
_TEMP = re.compile(r"\.step_\d+\.npz\.[A-Za-z0-9_]+\.tmp")    # a save that was killed
RUN_FILES = (CHECKPOINT, "config.json", "src_tokenizer.json", "tgt_tokenizer.json", METRICS,
             "loss_curve.png", "attention.png")


class CheckpointError(ValueError):
    """A checkpoint (or metrics file) that is damaged, crafted or does not fit; names the file."""


def save_checkpoint(directory, model, optimizer, scheduler, config: TrainConfig, progress: dict,
                    src_tok, tgt_tok, data: DataConfig | None = None, fingerprints=None):
    """Write the whole training state to `directory`; returns the new checkpoint's `stamp`."""
    directory = Path(directory)
    settings = {"train": dataclasses.asdict(config),
                "data": dataclasses.asdict(data) if data else None}
    state = {
        "format": FORMAT, "version": VERSION,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else {},
        "scheduler": scheduler.state_dict() if scheduler is not None else {},
        "rng": json.dumps(mg_random.get_rng_state().numpy().tolist()),
        "progress": progress,
        "settings": json.dumps(settings),
        "fingerprints": json.dumps(fingerprints or {}),
        "src_tok": src_tok.to_json(), "tgt_tok": tgt_tok.to_json(),
    }
    with DirectoryLock(directory):  # re-entrant: a Trainer's fit already holds it
        remove_stale_temps(directory, RUN_FILES)
        minigrad.save(state, directory / CHECKPOINT)
        atomic_write_text(directory / "config.json", json.dumps(settings, indent=2) + "\n")
        src_tok.save(directory / "src_tokenizer.json")
        tgt_tok.save(directory / "tgt_tokenizer.json")
    return stamp(directory)


def stamp(directory):
    """What identifies the checkpoint file now in `directory` (None if there is none): each
    save renames a new file into place, so a changed stamp means another save happened."""
    try:
        st = os.stat(Path(directory) / CHECKPOINT)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def load_checkpoint(directory) -> dict:
    """Read and check a checkpoint directory. Returns model, optimizer, scheduler (state
    dicts), rng, progress, config (TrainConfig), data (DataConfig or None), fingerprints,
    src_tok, tgt_tok and stamp."""
    directory = Path(directory)
    path = directory / CHECKPOINT
    if not path.exists():
        raise FileNotFoundError(f"checkpoint: no {CHECKPOINT} in {directory} (train a model "
                                f"first: minigrad-translate train --out {directory})")
    with try_lock(directory) as alone:
        if alone:  # no run is writing here, so temporary files are leftovers
            remove_stale_temps(directory, RUN_FILES)
    found = stamp(directory)
    try:
        raw = minigrad.load(path)
    except ValueError as e:
        raise CheckpointError(str(e)) from None
    except (AttributeError, TypeError, KeyError, IndexError, RecursionError) as e:
        raise CheckpointError(f"{path}: not a minigrad checkpoint, or a damaged one "
                              f"({type(e).__name__}: {e})") from None
    return {**_check(raw, path), "stamp": found}


def _check(raw, path) -> dict:
    """The parts of a loaded checkpoint, each checked, or a CheckpointError saying which."""
    def fail(what):
        raise CheckpointError(f"{path}: {what}")

    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        fail("not a checkpoint of minigrad-translate (or one written before checkpoints "
             "held their tokenizers: train again)")
    if raw.get("version") != VERSION:
        fail(f"checkpoint version {raw.get('version')!r}; this minigrad reads version {VERSION}")
    for key, kind in (("model", dict), ("optimizer", dict), ("scheduler", dict),
                      ("progress", dict), ("rng", str), ("settings", str),
                      ("fingerprints", str), ("src_tok", str), ("tgt_tok", str)):
        if not isinstance(raw.get(key), kind):
            fail(f"'{key}' is missing or not a {kind.__name__}")
    bad = [k for k, v in raw["model"].items() if not isinstance(v, (Tensor, np.ndarray))]
    if bad:
        fail(f"model weights {bad[:3]} are not arrays")
    out = {k: raw[k] for k in ("model", "optimizer", "scheduler")}
    out["rng"] = _json(raw["rng"], path, "random state")
    try:  # try it on a scratch generator: a bad state must fail here, not when resuming
        mg_random.Generator().set_state(out["rng"])
    except (TypeError, ValueError, KeyError, RuntimeError) as e:
        fail(f"bad random state ({e})")
    out["progress"] = _check_progress(raw["progress"], fail)
    settings = _json(raw["settings"], path, "settings")
    if not isinstance(settings, dict) or not isinstance(settings.get("train"), dict):
        fail("'settings' holds no training settings")
    try:
        out["config"] = TrainConfig.from_dict(settings["train"], f"{path}")
        data = settings.get("data")
        out["data"] = None if data is None else DataConfig.from_dict(data, f"{path}")
    except (ValueError, TypeError) as e:
        fail(f"bad settings: {e}")
    out["fingerprints"] = _json(raw["fingerprints"], path, "fingerprints")
    out["src_tok"] = tokenizer_from_json(raw["src_tok"], f"{path} (source tokenizer)")
    out["tgt_tok"] = tokenizer_from_json(raw["tgt_tok"], f"{path} (target tokenizer)")
    return out


def _json(text, path, what):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        problem = "nested too deeply" if isinstance(e, RecursionError) else e
        raise CheckpointError(f"{path}: the {what} is not valid JSON ({problem})") from None


def _check_progress(progress, fail) -> dict:
    """step, epoch, batch: whole numbers >= 0; history: [step, loss] pairs."""
    for key in ("step", "epoch", "batch"):
        value = progress.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            fail(f"progress '{key}' must be a whole number >= 0, got {value!r}")
    history, valid = progress.get("history", []), progress.get("valid", [])
    if not _rows(history, 2):
        fail("progress 'history' must be a list of [step, loss] pairs")
    if not _rows(valid, 3):
        fail("progress 'valid' must be a list of [step, loss, BLEU] triples")
    return {**progress, "history": [list(h) for h in history], "valid": [list(v) for v in valid]}


def _rows(rows, width):
    return isinstance(rows, list) and all(
        isinstance(r, (list, tuple)) and len(r) == width
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in r)
        for r in rows)


def restore_rng(state: dict) -> None:  # state["rng"]: the bytes as a list (or an old dict)
    """Put minigrad's generator back where it was when the checkpoint was written."""
    mg_random.set_rng_state(state["rng"])


# --- metrics.jsonl --------------------------------------------------------------------------

def read_metrics(path, log=print) -> list[dict]:
    """The records of a metrics file. A last line cut short (a crash mid-append) is skipped,
    and `log` says so; any other damage is a CheckpointError naming the file and line."""
    path = Path(path)
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    records = []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError(f"a {type(record).__name__}, not a record")
        except (ValueError, RecursionError) as e:
            if i == len(lines):  # no newline after it: the write was cut short
                log(f"{path}: skipped the last line, cut short by an interrupted write")
                break
            raise CheckpointError(f"{path}, line {i}: not a JSON record ({e})") from None
        records.append(record)
    return records


def check_model_size(state, directory, limit=None) -> None:
    """Refuse, before building it, a model that the checkpoint's settings describe as far
    bigger than the weights stored beside them (a crafted or damaged file), or than this
    machine's memory: building it first would try to allocate all of it."""
    config = state["config"]
    expected = estimate_weights(config, len(state["src_tok"]), len(state["tgt_tok"]))
    held = sum(int(np.prod(v.shape)) for v in state["model"].values())
    if expected > 4 * held + 1_000_000:
        raise CheckpointError(f"{directory}: the checkpoint's settings describe a model of about "
                              f"{expected:,} weights ({config.arch}, d_model {config.d_model}, "
                              f"{config.num_encoder_layers}+{config.num_decoder_layers} layers) "
                              f"but it holds "
                              f"{held:,}; the settings do not fit the weights")
    limit = physical_memory() if limit is None else limit
    if limit is not None and 4 * expected > 0.8 * limit:
        raise CheckpointError(f"{directory}: the model needs about {4 * expected / 2**30:,.1f} "
                              f"GB, more than this machine's {limit / 2**30:,.1f} GB allow")


def truncate_metrics(path, step: int, epoch: int, log=print) -> None:
    """Keep the records that a run at `step`, with `epoch` epochs validated, has written: a
    resumed run logs the later ones again. An epoch's last step and its validation share a step
    number, so a validation record of an epoch the checkpoint had not finished goes too."""
    def kept(r):
        if not isinstance(r.get("step"), (int, float)):
            return True
        if "valid_loss" in r and isinstance(r.get("epoch"), (int, float)) and r["epoch"] > epoch:
            return False
        return r["step"] <= step
    keep = [r for r in read_metrics(path, log) if kept(r)]
    if Path(path).exists():
        atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in keep))


def append_metrics(path, record: dict) -> None:
    """One JSON object per line; appending keeps earlier lines even if the run is killed."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


# --- weight snapshots: the last N checkpoints' weights, for averaging ---------------------

def snapshot_steps(run_dir) -> list[int]:
    """Steps of the weight snapshots kept in `run_dir`, oldest first."""
    folder = Path(run_dir) / SNAPSHOTS
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if (m := _NAME.fullmatch(p.name)))


def snapshot_path(run_dir, step) -> Path:
    return Path(run_dir) / SNAPSHOTS / f"step_{step:06d}.npz"


def keep_snapshot(run_dir, model, step: int, keep_last: int) -> None:
    """Write the model's weights of `step` (atomically), then delete all but the newest
    `keep_last` snapshots; the caller holds the run directory's lock."""
    folder = Path(run_dir) / SNAPSHOTS
    folder.mkdir(exist_ok=True)
    for p in folder.iterdir():
        if _TEMP.fullmatch(p.name):
            p.unlink(missing_ok=True)
    minigrad.save({"format": SNAPSHOT_FORMAT, "step": step, "model": model.state_dict()},
                  snapshot_path(run_dir, step))
    for old in snapshot_steps(run_dir)[:-keep_last]:
        snapshot_path(run_dir, old).unlink(missing_ok=True)


def drop_snapshots_after(run_dir, step: int) -> None:
    """Delete snapshots newer than `step`: a run started anew (step 0) or resumed from an
    earlier checkpoint writes them again."""
    for s in snapshot_steps(run_dir):
        if s > step:
            snapshot_path(run_dir, s).unlink(missing_ok=True)
