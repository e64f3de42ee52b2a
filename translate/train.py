"""Training a translator: the loop, validation, checkpoints and resuming.

One step is teacher forcing: the decoder reads the reference target shifted right (<bos> y1 ..
y_{n-1}) and is scored on predicting y1 .. y_n <eos>, all positions at once, with label-smoothed
cross entropy that ignores padding. Adam with the warm-up schedule updates the weights after the
gradients are clipped to a maximum norm.
"""
from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np

import minigrad
from minigrad import optim
from minigrad.nn.utils import clip_grad_norm_
from minigrad.optim.lr_scheduler import WarmupScheduler

from . import checkpoint as ckpt
from .batching import encode_pairs, iterate_batches, plan_batches
from .checkpoint import drop_snapshots_after, keep_snapshot
from .config import RESUMABLE, ConfigError, TrainConfig
from .data import fingerprint
from .files import DirectoryLock
from .inference import evaluate_bleu
from .interrupts import DeferredInterrupts, Interrupted
from .memory import check_memory
from .model import build_model, build_tokenizers

__all__ = ["RunExistsError", "Trainer", "validation_loss"]


class RunExistsError(FileExistsError):
    """A fresh run was asked not to replace the run already in its directory."""


@minigrad.no_grad()
def validation_loss(model, examples, batch_size, pad_id, label_smoothing=0.0):
    """Mean per-token cross entropy on held-out pairs (dropout off)."""
    was = model.training
    model.eval()
    total = count = 0.0
    for _, batch in iterate_batches(examples, batch_size, pad_id, shuffle=False):
        n = batch.n_tokens
        total += model.loss(batch.src, batch.tgt_in, batch.tgt_out, label_smoothing).item() * n
        count += n
    model.train(was)
    return total / max(count, 1)


class Trainer:
    """Runs training epochs with progress bars, metrics, checkpoints and Ctrl-C handling.

    While `fit` runs, the trainer holds `out_dir`'s lock: no other process trains there. A new
    Trainer starts a new run on its first `fit`, replacing the one in `out_dir` (or refusing,
    with overwrite=False); `Trainer.resume` continues one. A signal (Ctrl-C, SIGTERM) stops it
    at the end of the current step with a checkpoint, so that resuming gives the same numbers,
    to the bit, as a run never stopped.
    """

    def __init__(self, config: TrainConfig, train_pairs, valid_pairs, out_dir,
                 tokenizers=None, log=print, progress=True, overwrite=True, data=None):
        if not isinstance(config, TrainConfig):
            raise TypeError(f"Trainer: config must be a TrainConfig, got {type(config).__name__}")
        if not train_pairs:
            raise ValueError("Trainer: there are no training pairs")
        self.config, self.out_dir, self.log, self.progress = config, Path(out_dir), log, progress
        self.overwrite, self.data = overwrite, data
        self.valid_pairs = valid_pairs
        self.fingerprints = {"train": fingerprint(train_pairs), "valid": fingerprint(valid_pairs)}
        self.src_tok, self.tgt_tok = tokenizers or build_tokenizers(config, train_pairs)
        self.pad_id = self.tgt_tok.pad_id
        self.train_ex = self._encode(train_pairs)
        longest = max(len(t) - 1 for _, t in self.train_ex)
        if config.max_tokens and config.max_tokens < longest:
            raise ConfigError("TrainConfig", "max_tokens", f"({config.max_tokens}) is smaller "
                              f"than the longest target, {longest} tokens with <eos>; raise it "
                              f"or lower --max-len")
        self.valid_ex = self._encode(valid_pairs)
        check_memory(config, self.train_ex, len(self.src_tok), len(self.tgt_tok))
        minigrad.tune_malloc()  # a training loop's allocator setting, before its big arrays
        self.model = build_model(config, len(self.src_tok), len(self.tgt_tok))
        self.optimizer = optim.Adam(self.model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        self.scheduler = WarmupScheduler(self.optimizer, config.d_model, config.warmup,
                                         config.lr_factor)
        self.state = {"step": 0, "epoch": 0, "batch": 0, "history": []}
        self.metrics_path = self.out_dir / ckpt.METRICS
        self._stamp = None  # the checkpoint on disk that self.state continues (None: a new run)
        self._saved_step = None

    def _encode(self, pairs):
        ex = encode_pairs(pairs, self.src_tok, self.tgt_tok)
        limit = self.config.max_len
        return [(s[:limit], t[:limit + 2]) for s, t in ex]

    @classmethod
    def resume(cls, out_dir, train_pairs, valid_pairs, log=print, progress=True, **changes):
        """Continue the run saved in `out_dir` exactly where its checkpoint left it. `changes`
        may set the settings in RESUMABLE (epochs, time_limit, ...); others must not differ."""
        return cls.from_checkpoint(ckpt.load_checkpoint(out_dir), out_dir, train_pairs,
                                   valid_pairs, log=log, progress=progress, **changes)

    @classmethod
    def from_checkpoint(cls, state, out_dir, train_pairs, valid_pairs, log=print,
                        progress=True, data=None, **changes):
        """`resume` for a checkpoint already read with `checkpoint.load_checkpoint`; `data`
        says where the pairs now come from (by default, where the run's came from)."""
        old = state["config"]
        if state["progress"].get("averaged"):
            raise ckpt.CheckpointError(f"{out_dir}: an averaged checkpoint is for translating and "
                                       f"evaluating; resume the run it was averaged from")
        unknown = [k for k in changes if not hasattr(old, k)]
        if unknown:
            raise ConfigError("resume", unknown[0], "is not a setting")
        fixed = [k for k, v in changes.items() if k not in RESUMABLE and getattr(old, k) != v]
        if fixed:
            raise ConfigError("resume", fixed[0], f"is {getattr(old, fixed[0])!r} in the run in "
                                                  f"{out_dir}, not {changes[fixed[0]]!r}: only "
                                                  f"{', '.join(RESUMABLE)} may change")
        source = state["data"].describe() if state["data"] else "pairs given from Python"
        for split, pairs in (("training", train_pairs), ("validation", valid_pairs)):
            saved = state["fingerprints"].get(split[:5])
            if saved is not None and saved != fingerprint(pairs):
                raise ValueError(f"resume: these {len(pairs):,} {split} pairs are not the ones "
                                 f"the run in {out_dir} trained on ({source}); resume with the "
                                 f"same data")
        ckpt.check_model_size(state, out_dir)
        config = dataclasses.replace(old, **changes)
        self = cls(config, train_pairs, valid_pairs, out_dir,
                   tokenizers=(state["src_tok"], state["tgt_tok"]), log=log, progress=progress,
                   data=data or state["data"])
        try:
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])
        except (RuntimeError, ValueError, KeyError, TypeError) as e:
            raise ckpt.CheckpointError(f"{out_dir}: the checkpoint's weights do not fit the model "
                                       f"that its settings and tokenizers describe: {e}") from None
        self.state = dict(state["progress"])
        self._stamp, self._saved_step = state["stamp"], self.state["step"]
        ckpt.restore_rng(state)
        return self

    def save(self):
        """Write a checkpoint of the current state (at a step boundary) to `out_dir`."""
        with DirectoryLock(self.out_dir):
            self._check_unchanged()
            # the weights first: if a kill falls between the two writes, the run resumes from
            # the previous checkpoint, which drops this snapshot and writes it again
            if self.config.keep_last and self.state["step"]:
                keep_snapshot(self.out_dir, self.model, self.state["step"], self.config.keep_last)
            self._stamp = ckpt.save_checkpoint(
                self.out_dir, self.model, self.optimizer, self.scheduler, self.config,
                self.state, self.src_tok, self.tgt_tok, self.data, self.fingerprints)
        self._saved_step = self.state["step"]
        return self.out_dir / ckpt.CHECKPOINT

    def _check_unchanged(self):
        """The checkpoint in out_dir must still be the one this trainer read or wrote last."""
        if self._stamp is not None and ckpt.stamp(self.out_dir) != self._stamp:
            raise ckpt.CheckpointError(
                f"{self.out_dir}: another run saved a checkpoint there since this trainer read "
                f"or wrote its own; not overwriting it (resume again to continue)")

    def _claim(self):
        """Make `out_dir` this run's: a new run replaces what is there (or refuses, without
        overwrite) and starts with a checkpoint of step 0 and no metrics; a continuing run
        drops the metrics logged after its checkpoint."""
        if self._stamp is None:
            if ckpt.stamp(self.out_dir) is not None and not self.overwrite:
                raise RunExistsError(f"{self.out_dir} already holds a checkpoint; resume it "
                                     f"(--resume) or start again (--overwrite)")
            self.metrics_path.unlink(missing_ok=True)
            drop_snapshots_after(self.out_dir, 0)
            self.save()
        else:
            self._check_unchanged()
            ckpt.truncate_metrics(self.metrics_path, self.state["step"], self.state["epoch"],
                                  self.log)
            drop_snapshots_after(self.out_dir, self.state["step"])

    def train_step(self, batch):
        """One optimisation step; returns the (label-smoothed) loss."""
        loss = self.model.loss(batch.src, batch.tgt_in, batch.tgt_out, self.config.label_smoothing)
        self.optimizer.zero_grad()
        loss.backward()
        if self.config.clip_norm:
            clip_grad_norm_(self.model.parameters(), self.config.clip_norm)
        self.optimizer.step()
        self.scheduler.step()
        return loss.item()

    def fit(self, max_steps=None):
        """Train until `config.epochs` (or `max_steps`, or the time limit); returns the state."""
        cfg = self.config
        with DirectoryLock(self.out_dir), DeferredInterrupts() as interrupts:
            self._claim()
            self.model.train()
            start = time.perf_counter()
            try:
                while self.state["epoch"] < cfg.epochs:
                    interrupts.check()
                    if self._run_epoch(start, max_steps, interrupts):
                        break
                interrupts.check()
            except Interrupted as e:
                e.reported = True
                if e.forced:  # mid-step: the state is not one to save
                    self.log(f"\nstopped at once: {self.out_dir} keeps its checkpoint of step "
                             f"{self._saved_step}")
                    raise
                self.save()
                self.log(f"\ninterrupted at step {self.state['step']}: checkpoint written to "
                         f"{self.out_dir}; continue with --resume")
                raise
            self.save()
        return self.state

    def _run_epoch(self, start, max_steps, interrupts):
        """Train the rest of the current epoch; True when a step or time limit stopped it."""
        from tqdm import tqdm
        cfg, st = self.config, self.state
        plan = plan_batches(self.train_ex, cfg.batch_size, cfg.seed, st["epoch"],
                            max_tokens=cfg.max_tokens)
        bar = tqdm(total=len(plan), initial=st["batch"], disable=not self.progress,
                   desc=f"epoch {st['epoch'] + 1}/{cfg.epochs}", leave=False, dynamic_ncols=True)
        tokens, t0 = 0, time.perf_counter()
        for i, batch in iterate_batches(self.train_ex, cfg.batch_size, self.pad_id, cfg.seed,
                                        st["epoch"], start=st["batch"],
                                        max_tokens=cfg.max_tokens):
            interrupts.check()  # a step boundary: the state is whole
            lr = self.optimizer.param_groups[0]["lr"]
            loss = self.train_step(batch)
            if not math.isfinite(loss):
                bar.close()
                raise FloatingPointError(
                    f"train: the loss became {loss} at step {st['step'] + 1}; {self.out_dir} "
                    f"keeps the last good checkpoint (step {self._saved_step}). Try a lower "
                    f"--lr-factor (now {cfg.lr_factor:g}) or a --clip-norm (now "
                    f"{cfg.clip_norm:g}), starting again with --overwrite")
            st["step"] += 1
            st["batch"] = i + 1
            tokens += batch.n_tokens
            speed = tokens / max(time.perf_counter() - t0, 1e-9)
            st["history"].append([st["step"], loss])  # exact: resumed runs compare to the bit
            bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{speed:,.0f}", lr=f"{lr:.2e}")
            bar.update(1)
            if st["step"] % 50 == 0:
                ckpt.append_metrics(self.metrics_path, {"step": st["step"], "epoch": st["epoch"] + 1,
                                                        "loss": loss, "lr": lr, "tokens_per_s": speed})
            if cfg.checkpoint_every and st["step"] % cfg.checkpoint_every == 0:
                self.save()
            out_of_time = cfg.time_limit and time.perf_counter() - start > cfg.time_limit
            if (max_steps is not None and st["step"] >= max_steps) or out_of_time:
                bar.close()
                return True
        bar.close()
        st["epoch"] += 1
        st["batch"] = 0
        self._end_epoch(speed if tokens else 0.0)
        return False

    def _end_epoch(self, speed):
        """Validation loss and BLEU, logged to the console and the metrics file."""
        cfg, st = self.config, self.state
        vloss = validation_loss(self.model, self.valid_ex, cfg.batch_size, self.pad_id)
        sample = self.valid_pairs[:cfg.valid_bleu_sentences]
        bleu = evaluate_bleu(self.model, self.src_tok, self.tgt_tok, sample,
                             max_len=cfg.max_len)[0] if sample else float("nan")
        recent = [l for _, l in st["history"][-50:]]
        record = {"step": st["step"], "epoch": st["epoch"], "train_loss": float(np.mean(recent)),
                  "valid_loss": vloss, "valid_bleu": bleu, "tokens_per_s": speed}
        st.setdefault("valid", []).append([st["step"], vloss, bleu])
        ckpt.append_metrics(self.metrics_path, record)
        self.log(f"epoch {st['epoch']:>2}  step {st['step']:>5}  train loss {record['train_loss']:.3f}  "
                 f"valid loss {vloss:.3f}  valid BLEU {bleu:5.1f}  {speed:,.0f} tok/s")
