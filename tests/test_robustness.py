"""Nothing lost, nothing silently wrong: the guarantees, one test each.

Read the test names as the list of promises:

  numbers          a loss never broadcasts a target of the wrong shape; gather and index_select
                   never wrap a negative index; softmax over nothing is an error naming the op
  state            load_state_dict (modules, optimizers, schedulers) loads all or nothing
  training runs    Ctrl-C (or SIGTERM) at any moment of a step, then --resume, gives the same
                   losses and weights, to the bit, as a run never interrupted; one directory
                   holds one run (a lock naming the holder, recovered when stale); a checkpoint
                   is one file; --overwrite starts afresh; temporary files of killed saves are
                   removed; a torn metrics line is skipped; --resume refuses changed settings
  the command      every error is one line, never a traceback (bad flags, NaN losses, crafted
                   checkpoints, memory estimates, empty sentences, odd TSV files)

The interrupt and concurrency tests run real processes and send real signals.
"""
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.optim.lr_scheduler import StepLR, WarmupScheduler
from minigrad.translate import checkpoint as ckpt
from minigrad.translate import cli
from minigrad.translate.data import DataConfig
from minigrad.translate.tokenizers import WordTokenizer
from minigrad.translate.memory import check_memory
from minigrad.translate.config import TrainConfig
from minigrad.translate.inference import translate
from minigrad.translate.model import load_trained
from minigrad.translate.train import Trainer
from minigrad.translate.tsv import TsvError, read_tsv
from helpers import raises


# --- numbers --------------------------------------------------------------------------------

def test_loss_target_shapes_follow_pytorch_or_fail_clearly():
    logits = mg.randn(4, 3)
    ids = np.array([0, 2, 1, 1])
    # (N, 1) used to broadcast inside the fused op: a (4, 4) "none" loss, a wrong mean
    with raises(ValueError, "cross_entropy: input of shape minigrad.Size([4, 3]) and target of "
                            "shape (4, 1) do not match: class ids for this input have shape "
                            "minigrad.Size([4])"):
        F.cross_entropy(logits, ids[:, None])
    with raises(ValueError, "nll_loss: input of shape minigrad.Size([4, 3]) and target of shape (1, 4)"):
        F.nll_loss(logits.log_softmax(-1), ids[None])
    with raises(ValueError, "target of shape (4, 3, 1) do not match"):
        F.cross_entropy(mg.randn(4, 5, 3), np.zeros((4, 3, 1), np.int64))
    with raises(ValueError, "input of shape minigrad.Size([3]) and target of shape (2,)"):
        F.cross_entropy(mg.randn(3), np.array([0, 1]))
    with raises(TypeError, "cross_entropy: target must hold class ids (integers) of shape "
                           "minigrad.Size([4])"):
        F.cross_entropy(logits, ids.astype(np.float32))  # float and not the input's shape
    with raises(IndexError, "nll_loss: target 3 is out of range for 3 classes"):
        F.nll_loss(logits, np.array([0, 3, 1, 1]))
    with raises(ValueError, "pos_weight of shape (2, 3) does not broadcast"):
        F.binary_cross_entropy_with_logits(mg.randn(3), mg.zeros(3), pos_weight=mg.ones(2, 3))
    # the layouts PyTorch accepts all work: (C,) with () or (1,), (N, C, d) with (N, d),
    # and class probabilities of the input's shape
    assert F.cross_entropy(mg.randn(3), np.array([1])).shape == ()
    assert F.nll_loss(mg.randn(2, 3, 5), np.zeros((2, 5), np.int64), reduction="none").shape \
        == (2, 5)
    probs = np.full((4, 3), 1 / 3, np.float32)
    assert F.cross_entropy(logits, probs, reduction="none").shape == (4,)


def test_gather_and_index_select_refuse_negative_and_float_indices():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with raises(IndexError, "gather: index out of range for dim 1 of size 3 (got -1)"):
        x.gather(1, np.array([[-1], [0]]))  # used to read the last column silently
    with raises(TypeError, "gather: index must hold integers, got dtype float64"):
        x.gather(1, np.array([[0.7], [0.0]]))
    with raises(ValueError, "gather: index of shape (3, 1) is larger than the input of shape "
                            "(2, 3) at dim 0"):
        x.gather(1, np.zeros((3, 1), np.int64))
    with raises(IndexError, "index_select: index -1 is out of range for dim 0 of size 2"):
        x.index_select(0, np.array([-1]))
    with raises(TypeError, "index_select: index must hold integers, got dtype bool"):
        x.index_select(0, np.array([True, False]))


def test_softmax_over_an_empty_dim_names_the_op():
    for op in ("softmax", "log_softmax"):
        with raises(ValueError, f"{op}: dim -1 of the input of shape (2, 0) has size 0"):
            getattr(mg.zeros(2, 0), op)(-1)
        assert getattr(mg.zeros(0, 3), op)(-1).shape == (0, 3)  # an empty batch is fine
    attn = nn.MultiheadAttention(8, 2, batch_first=True)
    q, kv = mg.randn(1, 3, 8), mg.zeros(1, 0, 8)
    with raises(ValueError, "softmax: dim -1 of the input of shape (1, 2, 3, 0) has size 0"):
        attn(q, kv, kv)  # attention with zero keys


# --- state ----------------------------------------------------------------------------------

def _snapshot(tensors):
    return [t.numpy().copy() for t in tensors]


def test_load_state_dict_is_all_or_nothing():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    before = _snapshot(model.parameters())
    good = {k: v.numpy() + 1 for k, v in model.state_dict().items()}
    for key, value, problem in [
            ("1.bias", np.array(["a", "b"]), "1.bias: checkpoint dtype <U1 cannot be stored in "
                                             "float32"),
            ("1.bias", np.array([1e300, 0.0]), "1.bias: float64 values overflow float32"),
            ("1.bias", np.array([1 + 2j, 0]), "cannot be stored in float32"),
            ("1.weight", np.zeros((2, 5)), "size mismatch for 1.weight: copying a param with "
             "shape (2, 5) from checkpoint, the shape in current model is (2, 4)")]:
        with raises(RuntimeError, problem):
            model.load_state_dict({**good, key: value})
        for a, b in zip(before, model.parameters()):  # the earlier keys were not copied
            np.testing.assert_array_equal(a, b.numpy())
    model[1].bias._array.flags.writeable = False  # np.copyto would fail half-way through
    with raises(RuntimeError, "1.bias: the model's array is read-only"):
        model.load_state_dict(good)
    for a, b in zip(before, model.parameters()):
        np.testing.assert_array_equal(a, b.numpy())
    model[1].bias._array.flags.writeable = True
    model.load_state_dict(good)
    np.testing.assert_array_equal(model[0].weight.numpy(), before[0] + 1)

    opt = optim.Adam(model.parameters(), lr=0.1)
    sum(p.sum() for p in model.parameters()).backward()
    opt.step()
    saved = opt.state_dict()
    opt.step()
    after_two = {k: v["exp_avg"].numpy().copy() for k, v in opt.state_dict()["state"].items()}
    broken = opt.state_dict()
    broken["state"][3]["exp_avg"] = np.array(["x", "y"])  # the last parameter's state
    with raises(ValueError, "Adam.load_state_dict: state 'exp_avg' has dtype <U1"):
        opt.load_state_dict(broken)
    bad_lr = {**saved, "param_groups": [{**saved["param_groups"][0], "lr": -1.0}]}
    with raises(ValueError, "Adam: invalid learning rate: -1.0"):
        opt.load_state_dict(bad_lr)
    for k, v in opt.state_dict()["state"].items():  # still the state after two steps
        np.testing.assert_array_equal(v["exp_avg"].numpy(), after_two[k])
        assert v["step"] == 2
    assert opt.param_groups[0]["lr"] == 0.1

    sched = StepLR(opt, step_size=2)
    for bad, problem in [({**sched.state_dict(), "last_epoch": "3"}, "'last_epoch' should be"),
                         ({**sched.state_dict(), "gama": 0.5}, "unknown key 'gama'"),
                         ({**sched.state_dict(), "base_lrs": [0.1, 0.2]}, "'base_lrs' should")]:
        with raises(ValueError, problem):
            sched.load_state_dict(bad)
        assert sched.last_epoch == 0 and sched.base_lrs == [0.1]
    warm = WarmupScheduler(opt, d_model=16, warmup_steps=4)
    with raises(ValueError, "'last_epoch' must be a whole number >= -1, got 2.5"):
        warm.load_state_dict({**warm.state_dict(), "last_epoch": 2.5})


# --- training runs and checkpoints ----------------------------------------------------------
# A tiny model on 160 built-in pairs: 10 batches an epoch, ~20 ms a step, dropout on.

TINY = dict(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32,
            batch_size=16, epochs=2, warmup=20, checkpoint_every=0, valid_bleu_sentences=5,
            max_len=20, dropout=0.1)
FLAGS = ["--n-train", "160", "--n-valid", "20", "--no-progress"] + [
    a for k, v in TINY.items() for a in ("--" + k.replace("_", "-"), str(v))]


def _quiet(*args, **kwargs):
    pass


@pytest.fixture(scope="module")
def tiny_pairs():
    return DataConfig(n_train=160, n_valid=20).load()


def _run(out, *extra):
    """minigrad-translate train, in this process: (exit status, stdout, stderr)."""
    out_buf, err_buf = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
        rc = cli.main(["train", "--out", str(out), *FLAGS, *extra])
    return rc, out_buf.getvalue(), err_buf.getvalue()


def _resume(out, *extra):
    out_buf, err_buf = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
        rc = cli.main(["train", "--out", str(out), "--resume", "--no-progress", *extra])
    return rc, out_buf.getvalue(), err_buf.getvalue()


def _same_run(a, b):
    """Two checkpoint directories hold the same losses and weights, to the bit."""
    sa, sb = ckpt.load_checkpoint(a), ckpt.load_checkpoint(b)
    assert sa["progress"]["history"] == sb["progress"]["history"]
    assert sa["model"].keys() == sb["model"].keys()
    for k in sa["model"]:
        np.testing.assert_array_equal(sa["model"][k].numpy(), sb["model"][k].numpy(), err_msg=k)


# Starts Python with SIGINT ignored or at its default, as a shell script's background job or an
# interactive shell would: a process inherits that across exec, whoever started the test runner.
_WITH_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, getattr(signal, sys.argv[1]));"
                " os.execv(sys.executable, [sys.executable, *sys.argv[2:]])")


@contextlib.contextmanager
def _child(*args, sigint="SIG_DFL"):
    """A Python process running this repository's minigrad, unbuffered, started with SIGINT's
    disposition `sigint` (not the test runner's); killed on the way out if it is still running
    (a failing test must not leave a training behind)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-c", _WITH_SIGINT, sigint, *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


# Signals sent at chosen moments of a step, from inside a child process: each scenario trains a
# fresh run, is interrupted, and reports which step its checkpoint holds.
MOMENTS = r'''
import json, os, signal, sys
import minigrad
from minigrad.translate import checkpoint as ckpt, train as train_mod
from minigrad.translate.config import TrainConfig
from minigrad.translate.data import DataConfig
from minigrad.translate.train import Trainer

config, root, max_steps = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
train, valid = DataConfig(n_train=160, n_valid=20).load()

def sender(trainer, when, sig, times):
    sent = []
    def send():  # once, when `when` steps are done
        if trainer.state["step"] == when and not sent:
            sent.append(sig)
            for _ in range(times):
                os.kill(os.getpid(), sig)
    return send

def in_forward(t, send):  # after the loss: dropout has drawn its seeds from the generator
    loss = t.model.loss
    def patched(*args):
        out = loss(*args)
        send()
        return out
    t.model.loss = patched

def in_backward(t, send):  # a gradient hook halfway through the backward pass
    params = list(t.model.parameters())
    params[len(params) // 2].register_hook(lambda g: send())

def in_optimizer(t, send):  # inside Adam's step: some parameters updated, others not yet
    for name in ("_update_compiled", "_step_arrays"):  # one parameter, or a batch of them
        def patched(*args, _update=getattr(t.optimizer, name), **kwargs):
            out = _update(*args, **kwargs)
            send()
            return out
        setattr(t.optimizer, name, patched)

def in_scheduler(t, send):
    step = t.scheduler.step
    def patched():
        step()
        send()
    t.scheduler.step = patched

def in_save(t, send):  # inside the periodic checkpoint (checkpoint_every=4)
    save = ckpt.minigrad.save
    def patched(obj, path):
        send()
        save(obj, path)
    ckpt.minigrad.save = patched
    return lambda: setattr(ckpt.minigrad, "save", save)

def in_validation(t, send):  # inside the end-of-epoch validation
    loss = train_mod.validation_loss
    def patched(*args, **kw):
        send()
        return loss(*args, **kw)
    train_mod.validation_loss = patched
    return lambda: setattr(train_mod, "validation_loss", loss)

SCENARIOS = [  # name, where, steps done when the signal comes, signal, how many
    ("forward", in_forward, 2, signal.SIGINT, 1),
    ("backward", in_backward, 3, signal.SIGINT, 1),
    ("optimizer", in_optimizer, 5, signal.SIGINT, 1),
    ("scheduler", in_scheduler, 6, signal.SIGINT, 1),
    ("save", in_save, 4, signal.SIGINT, 1),
    ("validation", in_validation, 10, signal.SIGINT, 1),
    ("sigterm", in_forward, 7, signal.SIGTERM, 1),
    ("twice", in_optimizer, 8, signal.SIGINT, 2),
]
for name, where, when, sig, times in SCENARIOS:
    cfg = dict(config, checkpoint_every=4 if name in ("save", "twice") else 0)
    t = Trainer(TrainConfig(**cfg), train, valid, os.path.join(root, name), log=lambda *a: None,
                progress=False)
    undo = where(t, sender(t, when, sig, times))
    try:
        t.fit(max_steps=max_steps)
        result = {"finished": True}
    except KeyboardInterrupt as e:
        result = {"signum": e.signum, "forced": e.forced}
    finally:
        if undo:
            undo()
    saved = ckpt.load_checkpoint(os.path.join(root, name))["progress"]["step"]
    print(json.dumps({"name": name, **result, "saved_step": saved}))
'''


def test_interrupt_at_any_moment_of_a_step_then_resume_matches_an_uninterrupted_run(
        tmp_path, tiny_pairs):
    """Real signals in a child process at eight moments of a step (dropout on); each resumed
    run ends with the losses and weights, to the bit, of a run that was never interrupted."""
    steps = 14  # crosses the end of epoch 1 (step 10)
    train, valid = tiny_pairs
    whole = Trainer(TrainConfig(**TINY), train, valid, tmp_path / "whole", log=_quiet,
                    progress=False)
    whole.fit(max_steps=steps)
    with _child("-c", MOMENTS, json.dumps(TINY), str(tmp_path), str(steps)) as child:
        out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    reports = {r["name"]: r for r in map(json.loads, out.splitlines())}
    # a signal takes effect when the step it interrupted is complete; the validation at the
    # end of epoch 1 completes too; a second signal stops at once and saves nothing
    expected = {"forward": 3, "backward": 4, "optimizer": 6, "scheduler": 7, "save": 4,
                "validation": 10, "sigterm": 8, "twice": 8}
    for name, saved in expected.items():
        r = reports[name]
        assert r["signum"] == (signal.SIGTERM if name == "sigterm" else signal.SIGINT), name
        assert r["forced"] == (name == "twice"), name
        assert r["saved_step"] == saved, name
        resumed = Trainer.resume(tmp_path / name, train, valid, log=_quiet, progress=False)
        resumed.fit(max_steps=steps)
        assert resumed.state["history"] == whole.state["history"], name
        _same_run(tmp_path / name, tmp_path / "whole")


def _wait_for_line(child, text):
    """Read the child's stdout up to the first line containing `text` (the event to act on)."""
    seen = []
    for line in child.stdout:
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"the child ended without printing {text!r}: {''.join(seen)}"
                         f"{child.stderr.read()}")


def test_ctrl_c_to_the_command_then_resume_matches_an_uninterrupted_run(tmp_path):
    """SIGINT from outside, mid-training, to `minigrad-translate train` itself, started (as a
    background job of a script is) with SIGINT ignored: it still stops at a step boundary."""
    limit = ["--epochs", "12", "--max-steps", "110"]
    assert _run(tmp_path / "whole", *limit)[0] == 0
    with _child("-m", "minigrad.translate.cli", "train", "--out", str(tmp_path / "run"),
                *FLAGS, *limit, sigint="SIG_IGN") as child:
        _wait_for_line(child, "epoch  1 ")  # training, 100 steps (seconds) before its end
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    stopped = int(re.search(r"interrupted at step (\d+)", out).group(1))
    assert 10 <= stopped < 110 and "Traceback" not in err
    rc, out, err = _resume(tmp_path / "run", "--max-steps", "110")
    assert rc == 0, err
    assert f"resuming {tmp_path / 'run'} at step {stopped}" in out
    _same_run(tmp_path / "run", tmp_path / "whole")


# The command, with a signal sent to itself while it builds the model: before training, so
# before the trainer's own handlers exist (a signal from outside could not hit that moment
# reliably).
EARLY = r'''
import os, sys
from minigrad.translate import cli, train
build, sig = train.build_model, int(sys.argv[1])
def signalled_build(*args, **kwargs):
    os.kill(os.getpid(), sig)
    return build(*args, **kwargs)
train.build_model = signalled_build
sys.exit(cli.main(sys.argv[2:]))
'''


@pytest.mark.parametrize("inherited, sig", [("SIG_IGN", signal.SIGINT),
                                            ("SIG_DFL", signal.SIGINT),
                                            ("SIG_DFL", signal.SIGTERM)])
def test_an_early_signal_stops_the_command_whatever_it_inherited(tmp_path, inherited, sig):
    """Ctrl-C (or SIGTERM) before training starts: exit status 128 + signal and one line,
    whether the process was started with SIGINT ignored (nohup, a script's background job) or
    not; never a traceback, a silent death by the signal or an ignored Ctrl-C; nothing written."""
    run = tmp_path / "run"
    with _child("-c", EARLY, str(int(sig)), "train", "--out", str(run), *FLAGS,
                sigint=inherited) as child:
        out, err = child.communicate(timeout=120)
    assert child.returncode == 128 + sig, (child.returncode, err)
    assert err == f"interrupted by {signal.Signals(sig).name}\n" and "training pairs" not in out
    assert not run.exists() or not any(p.name != ".lock" for p in run.iterdir())


class _Killed(BaseException):
    """Stands for SIGKILL in-process: nothing after it runs, nothing catches it."""


def test_a_kill_after_an_epochs_validation_record_validates_that_epoch_once(tmp_path,
                                                                           tiny_pairs,
                                                                           monkeypatch):
    """Killed right after epoch 1's validation line is written (its checkpoint, of step 10, was
    written before the validation): --resume validates epoch 1 again, replacing the line."""
    train, valid = tiny_pairs
    t = Trainer(TrainConfig(**dict(TINY, checkpoint_every=5)), train, valid, tmp_path / "run",
                log=_quiet, progress=False)
    append = ckpt.append_metrics

    def killed_after_validation(path, record):
        append(path, record)
        if "valid_loss" in record:
            raise _Killed

    monkeypatch.setattr(ckpt, "append_metrics", killed_after_validation)
    with pytest.raises(_Killed):
        t.fit()
    monkeypatch.setattr(ckpt, "append_metrics", append)
    resumed = Trainer.resume(tmp_path / "run", train, valid, log=_quiet, progress=False)
    assert resumed.state["step"] == 10
    resumed.fit()
    records = ckpt.read_metrics(tmp_path / "run" / ckpt.METRICS, _quiet)
    assert [r["epoch"] for r in records if "valid_loss" in r] == [1, 2]


def test_one_directory_holds_one_run(tmp_path):
    """A second training into a busy directory fails naming the first one's pid; readers see
    whole checkpoints while it saves; a killed run's lock does not stand in the way."""
    run = tmp_path / "run"
    with _child("-m", "minigrad.translate.cli", "train", "--out", str(run), *FLAGS,
                "--epochs", "1000", "--checkpoint-every", "1") as first:
        deadline = time.monotonic() + 60
        while not ((run / ".lock").exists() and ckpt.stamp(run)
                   and (run / ".lock").read_text().strip() == str(first.pid)):
            assert first.poll() is None and time.monotonic() < deadline, "no lock taken"
            time.sleep(0.05)
        for extra in (["--overwrite"], []):
            rc, _, err = _run(run, *extra)
            assert rc == 2 and err.count("\n") == 1
            assert f"{run} is in use by a training run (pid {first.pid})" in err
        rc, _, err = _resume(run)
        assert rc == 2 and f"(pid {first.pid})" in err
        for _ in range(5):  # one file per checkpoint: weights and tokenizers always fit
            model, src_tok, tgt_tok, config = load_trained(run)
            assert model.src_embed.weight.shape[0] == len(src_tok)
            time.sleep(0.02)
        first.kill()
        first.communicate()
    assert (run / ".lock").read_text().strip() == str(first.pid)  # stale: its owner is dead
    step = ckpt.load_checkpoint(run)["progress"]["step"]
    rc, out, err = _resume(run, "--max-steps", str(step + 2))
    assert rc == 0, err
    assert ckpt.load_checkpoint(run)["progress"]["step"] == step + 2


def test_a_checkpoint_is_one_file_read_as_one_unit(tmp_path, tiny_pairs):
    """The tokenizers live inside checkpoint.npz; the JSON copies beside it are for people, so
    replacing them (a reader between two saves of different runs) changes nothing loaded."""
    train, valid = tiny_pairs
    Trainer(TrainConfig(**TINY), train, valid, tmp_path / "a", log=_quiet,
            progress=False).fit(max_steps=1)
    other = WordTokenizer.fit(["completely different words"])
    other.save(tmp_path / "a" / "src_tokenizer.json")
    model, src_tok, _, _ = load_trained(tmp_path / "a")
    assert len(src_tok) > len(other) and "farmer" in src_tok.tokens


def test_a_torn_last_metrics_line_is_skipped_and_other_damage_named(tmp_path):
    run = tmp_path / "run"
    assert _run(run, "--max-steps", "12")[0] == 0  # the epoch record of step 10
    metrics = run / "metrics.jsonl"
    with open(metrics, "a") as f:
        f.write('{"step": 11, "epoch": 2, "lo')  # the process died mid-append
    rc, out, err = _resume(run, "--max-steps", "13")
    assert rc == 0, err
    assert f"{metrics}: skipped the last line, cut short by an interrupted write" in out
    assert [json.loads(line)["step"] for line in metrics.read_text().splitlines()] == [10]
    metrics.write_text('{"step": 10}\nnot json\n{"step": 12}\n')
    rc, _, err = _resume(run, "--max-steps", "14")
    assert rc == 2 and err.startswith(f"error: {metrics}, line 2: not a JSON record")


def test_overwrite_starts_the_run_afresh(tmp_path):
    run = tmp_path / "run"
    assert _run(run, "--max-steps", "25", "--epochs", "3")[0] == 0  # epoch records 10, 20
    assert _run(run, "--max-steps", "12", "--seed", "1")[0] == 2  # no silent replacement
    assert _run(run, "--max-steps", "12", "--seed", "1", "--overwrite")[0] == 0
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [10]
    state = ckpt.load_checkpoint(run)
    assert state["progress"]["step"] == 12 and state["config"].seed == 1
    assert [s for s, _ in state["progress"]["history"]] == list(range(1, 13))


def test_average_refuses_to_replace_what_its_out_directory_holds(tmp_path):
    """`average --out DIR` replaces a training run (or any file) DIR holds only with
    --overwrite, as `train` does; the run stays resumable otherwise."""
    source, run = tmp_path / "source", tmp_path / "run"
    assert _run(source, "--max-steps", "4", "--keep-last", "2", "--checkpoint-every", "2")[0] == 0
    assert _run(run, "--max-steps", "2")[0] == 0
    before = ckpt.stamp(run)
    average = ["average", "--checkpoint", str(source), "--last", "2"]
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    for out, held in ((run, "a checkpoint"), (tmp_path / "notes", "files (todo.txt)"),
                      (tmp_path / "notes" / "todo.txt", "a file")):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert cli.main([*average, "--out", str(out)]) == 2
        assert err.getvalue() == (f"error: average: {out} already holds {held}; choose another "
                                  f"--out" + ("" if held == "a file" else
                                              " (or --overwrite to replace it)") + "\n")
    assert ckpt.stamp(run) == before
    assert _resume(run, "--max-steps", "3")[0] == 0
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main([*average, "--out", str(run), "--overwrite"]) == 0
    assert ckpt.load_checkpoint(run)["progress"]["averaged"] == [2, 4]


def test_temp_files_of_killed_saves_are_removed_by_the_next_load_or_save(tmp_path):
    run = tmp_path / "run"
    assert _run(run, "--max-steps", "2")[0] == 0
    stale = [run / ".checkpoint.npz.k1ll3d00.tmp", run / ".src_tokenizer.json.x8y2z7q1.tmp"]
    unrelated = run / ".notes.txt.abcdefgh.tmp"  # not a file a run writes: left alone
    for path in stale + [unrelated]:
        path.write_bytes(b"\0" * 100_000)
    load_trained(run)
    assert not any(p.exists() for p in stale) and unrelated.exists()
    stale[0].write_bytes(b"\0" * 100_000)
    assert _resume(run, "--max-steps", "3")[0] == 0
    assert not stale[0].exists() and unrelated.exists()


def test_resume_refuses_changed_settings_and_data(tmp_path):
    run = tmp_path / "run"
    assert _run(run, "--max-steps", "2")[0] == 0
    rc, _, err = _resume(run, "--d-model", "32")
    assert rc == 2 and err == (f"error: --d-model is 16 in the run in {run}, not 32: only "
                               f"epochs, time_limit, checkpoint_every, valid_bleu_sentences, "
                               f"keep_last may change\n")
    rc, _, err = _resume(run, "--n-train", "200")
    assert rc == 2 and err == (f"error: resume: these 200 training pairs are not the ones the "
                               f"run in {run} trained on (the built-in corpus (160 training and "
                               f"20 validation pairs, seed 0)); resume with the same data\n")
    rc, out, err = _resume(run, "--max-steps", "3", "--epochs", "3", "--d-model", "16")
    assert rc == 0, err  # the same value, and a setting that may change
    assert "settings: transformer d_model 16, 2 heads" in out and "epochs 3" in out
    assert "data: the built-in corpus (160 training and 20 validation pairs, seed 0)" in out

    data = tmp_path / "data"
    assert cli.main(["data", "--out", str(data), "--n-train", "160", "--n-valid", "20",
                     "--n-test", "10"]) == 0
    tsv_run = tmp_path / "tsv_run"
    assert _run(tsv_run, "--train-file", str(data / "train.tsv"), "--max-steps", "2")[0] == 0
    rc, _, err = _resume(tsv_run, "--train-file", str(data / "valid.tsv"))
    assert rc == 2 and "these 20 training pairs are not the ones the run in" in err
    os.rename(data / "train.tsv", tmp_path / "moved.tsv")  # the same pairs elsewhere: fine
    rc, out, err = _resume(tsv_run, "--train-file", str(tmp_path / "moved.tsv"),
                           "--max-steps", "3")
    assert rc == 0 and f"data: {tmp_path / 'moved.tsv'}" in out, err
    lines = (tmp_path / "moved.tsv").read_text().splitlines(keepends=True)
    (tmp_path / "moved.tsv").write_text("".join(lines[1:]))  # the same file, other pairs
    rc, _, err = _resume(tsv_run)
    assert rc == 2 and "159 training pairs are not the ones the run in" in err


# --- every error is one line ----------------------------------------------------------------

@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("trained") / "run"
    assert _run(run, "--max-steps", "2")[0] == 0
    return run


def _crafted(tmp_path, trained, change):
    """A copy of the trained checkpoint with `change(state)` applied to its stored parts."""
    out = tmp_path / "crafted"
    out.mkdir()
    state = mg.load(trained / "checkpoint.npz")
    change(state)
    mg.save(state, out / "checkpoint.npz")
    return out


def _settings_with(key=None, value=None, **more):
    def change(state):
        settings = json.loads(state["settings"])
        settings["train"].update({key: value} if key else {}, **more)
        state["settings"] = json.dumps(settings)
    return change


def _raw_checkpoint(meta):
    def make(tmp_path, trained):
        out = tmp_path / "crafted"
        out.mkdir()
        np.savez(out / "checkpoint.npz", __minigrad__=np.array(meta))
        return out
    return make


CRAFTED = {
    "metadata that is a JSON list": (_raw_checkpoint("[1, 2]"), "not an object"),
    "metadata nested 5,000 deep": (_raw_checkpoint("[" * 5000 + "]" * 5000),
                                   "is truncated or corrupt"),
    "an unknown setting": (lambda p, t: _crafted(p, t, _settings_with("colour", "red")),
                           "colour in"),
    "a setting out of range": (lambda p, t: _crafted(p, t, _settings_with("batch_size", 0)),
                               "batch_size must be >= 1, got 0"),
    "a deeply nested config": (lambda p, t: _crafted(
        p, t, lambda s: s.update(settings="[" * 5000 + "]" * 5000)), "nested too deeply"),
    "tokenizers that do not fit the weights": (lambda p, t: _crafted(
        p, t, lambda s: s.update(src_tok=WordTokenizer.fit(["a b c"]).to_json())),
        "weights do not fit the model"),
    "a bad random state": (lambda p, t: _crafted(p, t, lambda s: s.update(rng='{"x": 1}')),
                           "bad random state"),
    "settings of a huge model with tiny weights": (lambda p, t: _crafted(
        p, t, _settings_with(d_model=4096, num_encoder_layers=64, num_decoder_layers=64)),
        "a model of about 12,923,109,376 weights (transformer, d_model 4096, 64+64 layers) but "
        "it holds 24,237; the settings do not fit the weights"),
    "a bad progress record": (lambda p, t: _crafted(
        p, t, lambda s: s["progress"].update(step=-3)), "progress 'step' must be"),
}


@pytest.mark.parametrize("case", CRAFTED)
def test_a_crafted_checkpoint_is_one_line_error(case, tmp_path, trained, capsys):
    make, message = CRAFTED[case]
    crafted = make(tmp_path, trained)
    commands = [["translate", "the cat sleeps", "--checkpoint", str(crafted)]]
    if "huge" in case:  # every reader of checkpoints checks before it builds
        commands += [["evaluate", "--checkpoint", str(crafted)],
                     ["train", "--out", str(crafted), "--resume", "--no-progress"]]
    for command in commands:
        assert cli.main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


BAD_COMMANDS = {
    "--batch-size 0": (["train", "--batch-size", "0"], "error: --batch-size must be >= 1, got 0"),
    "--max-len 20000": (["train", "--max-len", "20000"], "--max-len must be <= 1024, got 20000"),
    "--nhead not dividing --d-model": (["train", "--d-model", "30", "--nhead", "4"],
                                       "--d-model (30) must be divisible by nhead (4)"),
    "--dropout 1": (["train", "--dropout", "1"], "--dropout must be < 1.0, got 1.0"),
    "--lr-factor nan": (["train", "--lr-factor", "nan"], "--lr-factor must be a finite float"),
    "--epochs abc": (["train", "--epochs", "abc"], "argument --epochs: invalid int value: 'abc'"),
    "--resume and --overwrite": (["train", "--resume", "--overwrite"], "choose one"),
    "--beam 0": (["translate", "x", "--beam", "0"], "argument --beam: must be between 1 and 64"),
    "--limit -1": (["evaluate", "--limit", "-1"], "argument --limit: must be >= 0, got -1"),
    "--minutes 0": (["demo", "--minutes", "0"], "argument --minutes: must be between 0.01"),
    "--n-test 0": (["evaluate", "--n-test", "0"], "argument --n-test: must be between 1"),
    "--max-steps 0": (["train", "--max-steps", "0"], "argument --max-steps: must be >= 1"),
}


@pytest.mark.parametrize("case", BAD_COMMANDS)
def test_a_bad_flag_is_one_line_error(case, tmp_path, capsys):
    argv, message = BAD_COMMANDS[case]
    if argv[0] == "train":
        argv = argv + ["--out", str(tmp_path / "run")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_errors_reach_the_terminal_as_one_line_without_traceback(tmp_path, trained):
    crafted = _raw_checkpoint("[" * 5000 + "]" * 5000)(tmp_path, trained)
    for argv in (["translate", "a b", "--checkpoint", str(crafted)],
                 ["translate", "", "--checkpoint", str(trained)]):
        with _child("-m", "minigrad.translate.cli", *argv) as child:
            out, err = child.communicate(timeout=120)
        assert child.returncode == 2 and err.count("\n") == 1 and "Traceback" not in err, err


def test_minigrad_viz_errors_are_one_line(tmp_path, capsys):
    from minigrad.translate import graph_demo
    for argv, message in ((["--layers", "0"], "argument --layers: must be between 1 and 12"),
                          (["--out", str(tmp_path / "g.xyz")], "must end in .svg, .png or .pdf"),
                          (["--max-depth", "x"], "argument --max-depth: not an int: 'x'")):
        assert graph_demo.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_a_nan_loss_stops_with_advice_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
    original = Trainer.train_step

    def blows_up_at_step_6(self, batch):
        loss = original(self, batch)
        return float("nan") if self.state["step"] == 5 else loss

    monkeypatch.setattr(Trainer, "train_step", blows_up_at_step_6)
    run = tmp_path / "run"
    rc, _, err = _run(run, "--checkpoint-every", "4", "--max-steps", "9")
    assert rc == 2 and err.count("\n") == 1
    assert (f"error: train: the loss became nan at step 6; {run} keeps the last good checkpoint "
            f"(step 4). Try a lower --lr-factor (now 1) or a --clip-norm (now 1)") in err
    assert ckpt.load_checkpoint(run)["progress"]["step"] == 4


def test_a_step_that_would_not_fit_in_memory_is_refused_with_its_estimate(tmp_path, capsys):
    tsv = tmp_path / "long.tsv"
    words = " ".join(["word"] * 10_000)
    tsv.write_text(f"{words}\t{words}\nshort one\tkurukiya\n")
    argv = ["train", "--out", str(tmp_path / "run"), "--train-file", str(tsv), "--max-len",
            "1024", "--d-model", "1024", "--nhead", "256", "--batch-size", "64", "--no-progress"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"error: train: a step would need about [\d,.]+ GB for batches of 2 "
                        r"sentences of up to 1,024 source and 1,026 target tokens, more than "
                        r"this machine's [\d,.]+ GB allow; lower --batch-size or --max-len "
                        r"\(or the model's size\)\n",
                        err), err
    config = TrainConfig(**{**TINY, "max_len": 1024})
    with raises(MemoryError, "more than this machine's 1.0 GB allow"):
        check_memory(config, [(list(range(1024)), list(range(1026)))] * 500, 1000, 1000,
                     limit=2**30)
    with raises(MemoryError, "for batches of 1 sentences of up to 3 source"):  # the weights
        check_memory(TrainConfig(d_model=4096, nhead=4, dim_feedforward=65536),
                     [([5, 6, 7], [1, 5, 2])], 1000, 1000, limit=2**30)
    check_memory(TrainConfig(), [([5] * 16, [5] * 18)] * 128, 1000, 1000, limit=2**30)


def test_an_empty_sentence_is_an_error_not_a_translation(trained, capsys):
    for sentence in ("", "   "):
        assert cli.main(["translate", sentence, "--checkpoint", str(trained)]) == 2
        assert capsys.readouterr().err == ("error: translate: the sentence is empty; there is "
                                           "nothing to translate\n")
    model, src_tok, tgt_tok, _ = load_trained(trained)
    with raises(ValueError, "translate: sentence 1 ('') is empty"):
        translate(model, src_tok, tgt_tok, ["the cat sleeps", ""])


def test_tsv_line_endings_byte_order_marks_and_control_characters(tmp_path):
    path = tmp_path / "mac.tsv"
    path.write_bytes(b"a b\tx y\rc d\tz w\r")  # CR-only line endings: one line of 2 tabs
    with raises(TsvError, "mac.tsv, line 1: a carriage return (CR) at column 8: the file seems "
                          "to use CR-only line endings"):
        read_tsv(path)
    path = tmp_path / "joined.tsv"  # two files concatenated: a BOM at the seam
    path.write_bytes(b"\xef\xbb\xbfa b\tx y\n\xef\xbb\xbfc d\tz w\n")
    pairs, _ = read_tsv(path)
    assert pairs == [("a b", "x y"), ("c d", "z w")]
    assert "\ufeffc" not in WordTokenizer.fit([s for s, _ in pairs]).tokens
    path.write_bytes(b"a b\tx y\nc\x00d\tz\n")
    with raises(TsvError, "joined.tsv, line 2: control character U+0000 at column 2"):
        read_tsv(path)
    assert read_tsv(path, skip_bad_lines=True) == ([("a b", "x y")], 1)
