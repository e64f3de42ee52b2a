"""The translator's training loop and command line: learning, checkpoints, resuming, Ctrl-C."""
import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from minigrad.translate import corpus, tsv
from minigrad.translate import cli
from minigrad.translate.config import TrainConfig
from minigrad.translate.model import load_trained
from minigrad.translate.train import Trainer

TINY = dict(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32,
            batch_size=16, epochs=2, warmup=20, checkpoint_every=0, valid_bleu_sentences=10,
            max_len=20)


@pytest.fixture(scope="module")
def pairs():
    c = corpus.generate_corpus(160, 20, 20, seed=3)
    return c.train, c.valid, c.test


def _trainer(tmp_path, pairs, name="run", **kw):
    train, valid, _ = pairs
    return Trainer(TrainConfig(**{**TINY, **kw}), train, valid, tmp_path / name,
                   log=lambda *a: None, progress=False)


def test_a_few_steps_lower_the_loss(tmp_path, pairs):
    t = _trainer(tmp_path, pairs, dropout=0.0, epochs=8)
    t.fit()
    losses = [l for _, l in t.state["history"]]
    assert np.mean(losses[-5:]) < 0.9 * np.mean(losses[:5])


def test_same_seed_same_numbers(tmp_path, pairs):
    a = _trainer(tmp_path, pairs, "a")
    a.fit(max_steps=6)
    b = _trainer(tmp_path, pairs, "b")
    b.fit(max_steps=6)
    assert a.state["history"] == b.state["history"]


def test_resume_continues_exactly_like_an_uninterrupted_run(tmp_path, pairs):
    whole = _trainer(tmp_path, pairs, "whole")
    whole.fit(max_steps=17)  # crosses an epoch boundary (10 batches an epoch)
    first = _trainer(tmp_path, pairs, "split")
    first.fit(max_steps=7)
    train, valid, _ = pairs
    resumed = Trainer.resume(tmp_path / "split", train, valid, log=lambda *a: None, progress=False)
    assert resumed.state["step"] == 7
    resumed.fit(max_steps=17)
    assert resumed.state["history"] == whole.state["history"]
    for (k, a), (_, b) in zip(whole.model.state_dict().items(), resumed.model.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_ctrl_c_mid_step_finishes_the_step_saves_and_resume_matches(tmp_path, pairs,
                                                                     monkeypatch):
    """SIGINT in the middle of step 6 (after dropout drew its seeds): the step completes, the
    checkpoint holds step 6, and the resumed run is the uninterrupted one."""
    whole = _trainer(tmp_path, pairs, "whole")
    whole.fit(max_steps=9)
    t = _trainer(tmp_path, pairs, "interrupted")
    original = Trainer.train_step

    def interrupt_during_step_6(self, batch):
        if self.state["step"] == 5:
            os.kill(os.getpid(), signal.SIGINT)
        return original(self, batch)

    monkeypatch.setattr(Trainer, "train_step", interrupt_during_step_6)
    with pytest.raises(KeyboardInterrupt):
        t.fit()
    monkeypatch.setattr(Trainer, "train_step", original)
    train, valid, _ = pairs
    resumed = Trainer.resume(tmp_path / "interrupted", train, valid, log=lambda *a: None,
                             progress=False)
    assert resumed.state["step"] == 6
    resumed.fit(max_steps=9)
    assert resumed.state["history"] == whole.state["history"]


def test_checkpoint_files_and_metrics(tmp_path, pairs):
    t = _trainer(tmp_path, pairs, epochs=1, checkpoint_every=4)
    t.fit()
    out = tmp_path / "run"
    for name in ("checkpoint.npz", "config.json", "src_tokenizer.json", "tgt_tokenizer.json",
                 "metrics.jsonl"):
        assert (out / name).exists(), name
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert any("valid_bleu" in r for r in records)
    assert not list(out.glob("*.tmp*")) and not list(out.glob(".*tmp*"))
    model, src_tok, tgt_tok, config = load_trained(out)
    assert config.d_model == 16 and not model.training


def test_cli_data_train_translate_evaluate(tmp_path, capsys):
    data = tmp_path / "data"
    assert cli.main(["data", "--out", str(data), "--n-train", "120", "--n-valid", "10",
                     "--n-test", "10"]) == 0
    run = tmp_path / "run"
    args = ["train", "--out", str(run), "--train-file", str(data / "train.tsv"),
            "--valid-file", str(data / "valid.tsv"), "--d-model", "16", "--nhead", "2",
            "--num-encoder-layers", "1", "--num-decoder-layers", "1", "--dim-feedforward", "32",
            "--epochs", "1", "--batch-size", "16", "--no-progress", "--valid-bleu-sentences", "5"]
    assert cli.main(args) == 0
    assert cli.main(args) == 2  # an existing checkpoint is not overwritten without --overwrite
    assert "already holds a checkpoint" in capsys.readouterr().err
    png = tmp_path / "attn.png"
    src = tsv.read_tsv(data / "test.tsv")[0][0][0]
    assert cli.main(["translate", src, "--checkpoint", str(run), "--attention", str(png)]) == 0
    assert png.exists() and png.stat().st_size > 1000
    assert cli.main(["evaluate", "--checkpoint", str(run), "--test-file", str(data / "test.tsv"),
                     "--beam", "2"]) == 0
    assert "BLEU" in capsys.readouterr().out


def test_cli_reports_bad_tsv_lines(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a b\tc d\nno tab here\n", encoding="utf-8")
    assert cli.main(["train", "--out", str(tmp_path / "r"), "--train-file", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.tsv" in err and "line 2" in err


def test_every_subcommand_has_help(capsys):
    for sub in ("data", "train", "translate", "evaluate", "demo"):
        with pytest.raises(SystemExit) as e:
            cli.main([sub, "--help"])
        assert e.value.code == 0
        assert "--" in capsys.readouterr().out


def test_rnn_architectures_train_through_the_same_loop(tmp_path, pairs):
    for arch in ("rnn", "rnn-attention"):
        t = _trainer(tmp_path, pairs, arch, arch=arch)
        t.fit(max_steps=3)
        assert len(t.state["history"]) == 3


def test_a_run_directory_is_claimed_refused_or_continued(tmp_path, pairs):
    """overwrite=False refuses a directory holding a run; resume changes only what may change
    and only with the same pairs; a trainer never saves over a checkpoint it did not write."""
    from minigrad.translate.checkpoint import CheckpointError
    from minigrad.translate.config import ConfigError
    from minigrad.translate.train import RunExistsError
    train, valid, _ = pairs
    _trainer(tmp_path, pairs).fit(max_steps=2)
    with pytest.raises(RunExistsError, match="already holds a checkpoint"):
        Trainer(TrainConfig(**TINY), train, valid, tmp_path / "run", log=lambda *a: None,
                progress=False, overwrite=False).fit(max_steps=1)
    with pytest.raises(ConfigError, match="resume: d_model is 16 in the run in .*, not 32"):
        Trainer.resume(tmp_path / "run", train, valid, log=lambda *a: None, d_model=32)
    with pytest.raises(ValueError, match="159 training pairs are not the ones the run"):
        Trainer.resume(tmp_path / "run", train[1:], valid, log=lambda *a: None)
    a = Trainer.resume(tmp_path / "run", train, valid, log=lambda *a: None, progress=False,
                       epochs=3, d_model=16)
    b = Trainer.resume(tmp_path / "run", train, valid, log=lambda *a: None, progress=False)
    assert a.config.epochs == 3 and b.config.epochs == 2
    a.fit(max_steps=3)
    with pytest.raises(CheckpointError, match="another run saved a checkpoint there"):
        b.fit(max_steps=3)  # b read the step-2 checkpoint, which a has replaced


def test_reading_a_checkpoint_lets_go_of_the_directory(tmp_path, pairs):
    """A reader tidies leftover temporary files under the directory's lock, then releases it:
    a process that reads a run (a notebook translating with it) never keeps a trainer out."""
    from minigrad.translate.checkpoint import CHECKPOINT, load_checkpoint
    from minigrad.translate.files import LOCK_NAME
    _trainer(tmp_path, pairs).fit(max_steps=1)
    leftover = tmp_path / "run" / f".{CHECKPOINT}.k1ll3d.tmp"
    leftover.write_bytes(b"left by a killed save")
    load_checkpoint(tmp_path / "run")
    assert not leftover.exists()
    probe = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
             "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')")
    r = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "run" / LOCK_NAME)],
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "free", r.stderr[-2000:]


def test_train_config_checks_every_setting():
    from minigrad.translate.config import ConfigError
    for bad, message in [(dict(batch_size=0), "batch_size must be >= 1, got 0"),
                         (dict(dropout=1.0), "dropout must be < 1.0"),
                         (dict(d_model=10, nhead=4), "d_model (10) must be divisible by nhead"),
                         (dict(arch="lstm"), "arch must be one of transformer, rnn, rnn-attention"),
                         (dict(epochs=2.5), "epochs must be an int, got 2.5"),
                         (dict(lr_factor=float("inf")), "lr_factor must be a finite float"),
                         (dict(seed=True), "seed must be an int, got True")]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            TrainConfig(**bad)
    with pytest.raises(ConfigError, match="colour in the stored config: not a setting"):
        TrainConfig.from_dict({"colour": "red"})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a glibc setting")
def test_the_trainer_opts_into_the_training_allocator_setting(tmp_path):
    """`import minigrad` leaves malloc alone; a Trainer, a long training loop, opts in."""
    code = ("import minigrad, minigrad.translate.train as t; from minigrad.translate import corpus;"
            "c = corpus.generate_corpus(20, 2, 0, seed=0); before = minigrad._malloc.tuned;"
            f"t.Trainer(t.TrainConfig(d_model=8, nhead=2), c.train, c.valid, {str(tmp_path)!r});"
            "print(before, minigrad._malloc.tuned)")
    env = {k: v for k, v in os.environ.items() if k != "MINIGRAD_NO_MALLOC_TUNING"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    assert out.stdout.split()[-2:] == ["False", "True"]
