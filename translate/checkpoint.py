"""Checkpoints of a training run, one directory each:

    checkpoint.npz         model, optimizer and schedule state, random state, progress
                           (minigrad.save: NumPy arrays + JSON, never pickle, written atomically)
    config.json            the run's settings (also inside checkpoint.npz)
    src_tokenizer.json     the tokenizers, readable beside the checkpoint
    tgt_tokenizer.json

Every file is written to a temporary name and renamed into place, so a crash (or Ctrl-C) in
the middle of a save leaves the previous checkpoint whole.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import minigrad
from minigrad import random as mg_random

from .corpus import atomic_write_text
from .tokenizers import load_tokenizer

CHECKPOINT = "checkpoint.npz"


def save_checkpoint(directory, model, optimizer, scheduler, config: dict, progress: dict,
                    src_tok, tgt_tok) -> Path:
    """Write the whole training state to `directory` (created if needed)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else {},
        "scheduler": scheduler.state_dict() if scheduler is not None else {},
        "rng": json.dumps(mg_random.get_rng_state()),
        "progress": progress,
        "config": json.dumps(config),
    }
    src_tok.save(directory / "src_tokenizer.json")
    tgt_tok.save(directory / "tgt_tokenizer.json")
    atomic_write_text(directory / "config.json", json.dumps(config, indent=2) + "\n")
    minigrad.save(state, directory / CHECKPOINT)
    return directory / CHECKPOINT


def load_checkpoint(directory) -> dict:
    """Read a checkpoint directory: returns its state dict plus both tokenizers."""
    directory = Path(directory)
    path = directory / CHECKPOINT
    if not path.exists():
        raise FileNotFoundError(f"checkpoint: no {CHECKPOINT} in {directory} (train a model "
                                f"first: minigrad-translate train --out {directory})")
    state = minigrad.load(path)
    state["config"] = json.loads(state["config"])
    state["rng"] = json.loads(state["rng"])
    state["src_tok"] = load_tokenizer(directory / "src_tokenizer.json")
    state["tgt_tok"] = load_tokenizer(directory / "tgt_tokenizer.json")
    return state


def restore_rng(state: dict) -> None:
    """Put minigrad's generator back where it was when the checkpoint was written."""
    mg_random.set_rng_state(state["rng"])


def truncate_metrics(path, step: int) -> None:
    """Drop metric lines logged after `step`: a resumed run will log those steps again."""
    path = Path(path)
    if not path.exists():
        return
    keep = [line for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line).get("step", 0) <= step]
    atomic_write_text(path, "".join(line + "\n" for line in keep))


def append_metrics(path, record: dict) -> None:
    """One JSON object per line; appending keeps earlier lines even if the run is killed."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())
