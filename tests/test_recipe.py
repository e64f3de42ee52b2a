"""The real-corpus recipe: the Multi30k-shaped corpus, batches by tokens, a shared vocabulary
with tied embeddings, checkpoint averaging and hypotheses written for sacreBLEU."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
from minigrad.translate import checkpoint as ckpt, cli, tsv
from minigrad.translate.averaging import average_weights, AveragingError
from minigrad.translate.checkpoint import snapshot_steps
from minigrad.translate.batching import plan_batches, token_batches
from minigrad.translate.captions import corpus_stats, generate_captions
from minigrad.translate.config import TrainConfig
from minigrad.translate.train import Trainer

TINY = dict(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
            dim_feedforward=32, epochs=2, warmup=20, checkpoint_every=0,
            valid_bleu_sentences=10, max_len=24, max_tokens=160)
FLAGS = ["--no-progress"] + [a for k, v in TINY.items() for a in ("--" + k.replace("_", "-"),
                                                                   str(v))]


@pytest.fixture(scope="module")
def captions():
    return generate_captions(300, 30, 30, seed=5)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, captions):
    return tsv.write_corpus(captions, tmp_path_factory.mktemp("captions"))


def _trainer(tmp_path, captions, name="run", **kw):
    return Trainer(TrainConfig(**{**TINY, **kw}), captions.train, captions.valid,
                   tmp_path / name, log=lambda *a: None, progress=False)


def _cli(*args):
    """`python -m minigrad.translate.cli ...` as a real process: (exit status, out, err)."""
    p = subprocess.run([sys.executable, "-m", "minigrad.translate.cli", *map(str, args)],
                       capture_output=True, text=True, env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    return p.returncode, p.stdout, p.stderr


def _train_flags(data_dir):
    return ["--train-file", data_dir["train"], "--valid-file", data_dir["valid"], *FLAGS]


# --- the corpus ------------------------------------------------------------------------------

def test_the_preset_has_the_shape_of_multi30k():
    c = generate_captions(seed=0)
    assert (len(c.train), len(c.valid), len(c.test)) == (29000, 1014, 1000)
    stats = corpus_stats(c.train)
    assert 5000 <= stats["src_types"] <= 7000 and 7000 <= stats["tgt_types"] <= 9500, stats
    assert 11.5 <= stats["src_mean_len"] <= 13.5 and 10.5 <= stats["tgt_mean_len"] <= 13.5
    sources = [s for split in (c.train, c.valid, c.test) for s, _ in split]
    assert len(set(sources)) == len(sources)          # the splits share no sentence
    assert all(s == s.lower() and s.endswith(" .") for s, _ in c.test)


def test_the_corpus_is_deterministic_for_a_seed():
    a, b, other = (generate_captions(200, 20, 20, seed=s) for s in (7, 7, 8))
    assert a == b and a.train != other.train
    with pytest.raises(ValueError, match="generate_captions"):
        generate_captions(-1, 0, 0)


def test_cli_data_preset_writes_the_splits(tmp_path):
    rc, out, err = _cli("data", "--preset", "multi30k-shape", "--out", tmp_path)
    assert rc == 0, err
    assert "29,000 / 1,014 / 1,000 pairs" in out
    c = tsv.read_corpus(tmp_path)
    assert c == generate_captions(seed=0)


# --- batches by tokens -----------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.tuples(st.integers(1, 30), st.integers(2, 30)), min_size=1,
                        max_size=120),
       budget=st.integers(30, 400), seed=st.integers(0, 2**32), epoch=st.integers(0, 5))
def test_token_batches_cover_every_pair_once_within_the_budget(lengths, budget, seed, epoch):
    examples = [([5] * s, [1] + [5] * (t - 2) + [2]) for s, t in lengths]
    if max(t for _, t in lengths) - 1 > budget:
        with pytest.raises(ValueError, match="max_tokens"):
            token_batches(examples, budget, seed, epoch)
        return
    batches = token_batches(examples, budget, seed, epoch)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(examples)))
    for b in batches:
        assert len(b) * max(len(examples[i][1]) - 1 for i in b) <= budget
    again = plan_batches(examples, 0, seed, epoch, max_tokens=budget)
    assert all(np.array_equal(x, y) for x, y in zip(batches, again))


def test_token_batches_are_bucketed_and_fill_the_budget():
    rng = np.random.default_rng(0)
    examples = [([4] * int(n), [1] + [4] * int(n) + [2]) for n in rng.integers(2, 40, 2000)]
    batches = token_batches(examples, 1000, seed=0, epoch=0)
    widths = [max(len(examples[i][1]) - 1 for i in b) for b in batches]
    real = sum(len(examples[i][1]) - 1 for b in batches for i in b)
    padded = sum(len(b) * w for b, w in zip(batches, widths))
    assert real / padded > 0.95                      # bucketing: little padding
    assert np.mean([len(b) * w for b, w in zip(batches, widths)]) > 900
    other = token_batches(examples, 1000, seed=0, epoch=1)
    assert [len(b) for b in batches] != [len(b) for b in other]   # reshuffled every epoch


def test_max_tokens_resume_is_exact(tmp_path, captions):
    whole = _trainer(tmp_path, captions, "whole")
    whole.fit(max_steps=30)
    assert len(plan_batches(whole.train_ex, 0, 0, 0, max_tokens=160)) < 30  # crosses an epoch
    first = _trainer(tmp_path, captions, "split")
    first.fit(max_steps=11)
    resumed = Trainer.resume(tmp_path / "split", captions.train, captions.valid,
                             log=lambda *a: None, progress=False)
    resumed.fit(max_steps=30)
    assert resumed.state["history"] == whole.state["history"]
    for (k, a), (_, b) in zip(whole.model.state_dict().items(),
                              resumed.model.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_max_tokens_errors_are_one_line(tmp_path, data_dir):
    rc, _, err = _cli("train", "--out", tmp_path / "a", *_train_flags(data_dir),
                      "--batch-size", "8")
    assert rc == 2 and err.count("\n") == 1 and "--max-tokens and --batch-size" in err
    rc, _, err = _cli("train", "--out", tmp_path / "b", *_train_flags(data_dir),
                      "--max-tokens", "5")
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("error: --max-tokens (5) is smaller than the longest target")


# --- shared vocabulary, tied embeddings ------------------------------------------------------

@pytest.mark.parametrize("tokenizer", ["word", "bpe"])
def test_share_vocab_and_tie_embeddings(tmp_path, captions, tokenizer):
    t = _trainer(tmp_path, captions, share_vocab=True, tie_embeddings=True,
                 tokenizer=tokenizer, bpe_merges=200)
    assert t.src_tok is t.tgt_tok
    words = {w for s, _ in captions.train[:20] for w in s.split()} | \
        {w for _, s in captions.train[:20] for w in s.split()}
    if tokenizer == "word":
        assert all(t.src_tok.token_to_id(w) != t.src_tok.unk_id for w in words)
    m = t.model
    assert m.src_embed.weight is m.tgt_embed.weight is m.generator.weight
    separate = _trainer(tmp_path, captions, "separate", share_vocab=True, tokenizer=tokenizer,
                        bpe_merges=200)
    d, v = 16, len(t.src_tok)
    assert separate.model.num_parameters() - m.num_parameters() == 2 * v * d
    t.fit(max_steps=3)
    model = ckpt.load_checkpoint(tmp_path / "run")
    from minigrad.translate.model import model_from_checkpoint
    loaded = model_from_checkpoint(model, tmp_path / "run")
    assert loaded.src_embed.weight is loaded.generator.weight
    np.testing.assert_array_equal(loaded.generator.weight.numpy(), m.generator.weight.numpy())


def test_tied_embeddings_learn(tmp_path, captions):
    t = _trainer(tmp_path, captions, share_vocab=True, tie_embeddings=True, dropout=0.0,
                 epochs=6)
    t.fit()
    losses = [l for _, l in t.state["history"]]
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])


def test_tie_embeddings_needs_a_shared_vocabulary(tmp_path, data_dir):
    rc, _, err = _cli("train", "--out", tmp_path / "r", *_train_flags(data_dir),
                      "--tie-embeddings")
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("error: --tie-embeddings needs one vocabulary") and "--share-vocab" in err


# --- the command line end to end: interrupt, resume, average, evaluate -------------------------

def test_recipe_flags_interrupt_resume_average_evaluate(tmp_path, data_dir):
    recipe = [*_train_flags(data_dir), "--share-vocab", "--tie-embeddings", "--keep-last", "3",
              "--checkpoint-every", "4", "--max-steps", "24"]
    rc, _, err = _cli("train", "--out", tmp_path / "whole", *recipe)
    assert rc == 0, err
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "NUMBA_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, "-m", "minigrad.translate.cli", "train", "--out",
                              str(tmp_path / "run"), *map(str, recipe)], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while ckpt.stamp(tmp_path / "run") is None:    # the run has claimed its directory
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130 and "Traceback" not in err, err
    stale = tmp_path / "run" / "checkpoints" / ".step_000008.npz.k1ll3d.tmp"  # a killed save
    stale.parent.mkdir(exist_ok=True)
    stale.write_bytes(b"half a file")
    rc, out, err = _cli("train", "--out", tmp_path / "run", "--resume", "--no-progress",
                        "--max-steps", "24")
    assert rc == 0, err
    a, b = ckpt.load_checkpoint(tmp_path / "whole"), ckpt.load_checkpoint(tmp_path / "run")
    assert a["progress"]["history"] == b["progress"]["history"]
    for k in a["model"]:
        np.testing.assert_array_equal(a["model"][k].numpy(), b["model"][k].numpy(), err_msg=k)
    assert snapshot_steps(tmp_path / "run") == snapshot_steps(tmp_path / "whole") == [16, 20, 24]
    assert not stale.exists()

    rc, out, err = _cli("average", "--checkpoint", tmp_path / "run", "--last", "3", "--out",
                        tmp_path / "avg")
    assert rc == 0 and "steps 16, 20, 24" in out, err
    snaps = [minigrad.load(tmp_path / "run" / "checkpoints" / f"step_{s:06d}.npz")["model"]
             for s in (16, 20, 24)]
    avg = ckpt.load_checkpoint(tmp_path / "avg")["model"]
    for k in avg:
        want = np.mean([s[k].numpy().astype(np.float64) for s in snaps], axis=0)
        np.testing.assert_allclose(avg[k].numpy(), want, rtol=1e-6, atol=1e-7, err_msg=k)
    rc, _, err = _cli("average", "--checkpoint", tmp_path / "run", "--last", "4", "--out",
                      tmp_path / "avg4")
    assert rc == 2 and err.count("\n") == 1 and "keeps 3 checkpoint(s) (16, 20, 24)" in err
    rc, _, err = _cli("train", "--out", tmp_path / "avg", "--resume", "--no-progress")
    assert rc == 2 and "averaged checkpoint" in err

    sacrebleu = pytest.importorskip("sacrebleu")
    hyp = tmp_path / "hyp.txt"
    rc, out, err = _cli("evaluate", "--checkpoint", tmp_path / "avg", "--test-file",
                        data_dir["test"], "--beam", "2", "--output", hyp)
    assert rc == 0, err
    lines = hyp.read_text(encoding="utf-8").split("\n")
    refs = [t for _, t in tsv.read_tsv(data_dir["test"])[0]]
    assert lines[-1] == "" and len(lines) - 1 == len(refs)
    printed = float(out.split("BLEU ")[1].split()[0])
    for tokenize in ("none", "13a"):
        score = sacrebleu.corpus_bleu(lines[:-1], [refs], tokenize=tokenize).score
        assert printed == pytest.approx(score, abs=0.005), tokenize


def test_average_refuses_different_shapes():
    a = {"w": np.zeros((2, 3), np.float32), "b": np.zeros(3, np.float32)}
    b = {"w": np.ones((3, 3), np.float32), "b": np.ones(3, np.float32)}
    with pytest.raises(AveragingError, match=r"w has shape \(3, 3\) in two but \(2, 3\) in one"):
        average_weights([a, b], ["one", "two"])
    with pytest.raises(AveragingError, match="different weights"):
        average_weights([a, {"w": a["w"]}], ["one", "two"])
    mean = average_weights([a, {"w": np.full((2, 3), 3.0, np.float32), "b": b["b"]}], ["1", "2"])
    np.testing.assert_array_equal(mean["w"].numpy(), np.full((2, 3), 1.5, np.float32))
    assert mean["w"].dtype == minigrad.float32


def test_help_names_the_recipe(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "average --checkpoint" in text and "--preset multi30k-shape" in text
    for sub, flag in (("average", "--last"), ("evaluate", "--output"), ("data", "--preset"),
                      ("train", "--max-tokens"), ("train", "--tie-embeddings"),
                      ("train", "--keep-last")):
        with pytest.raises(SystemExit) as e:
            cli.main([sub, "--help"])
        assert e.value.code == 0 and flag in capsys.readouterr().out, (sub, flag)


def test_a_shared_embedding_starts_at_unit_size_after_its_scale():
    """Xavier over 8,000 rows would give the shared matrix a std of about 0.016, so the token
    signal (times sqrt(d_model)) would be a fifth of the positional encoding's and a model on a
    large vocabulary learned to ignore its source (valid BLEU 0.9 after 1,700 steps on the
    preset, against 35 after 390 with this start). Separate embeddings keep Xavier."""
    from minigrad.models import Seq2SeqTransformer
    minigrad.manual_seed(0)
    d, vocab = 64, 8000
    tied = Seq2SeqTransformer(vocab, vocab, d_model=d, nhead=4, num_encoder_layers=1,
                              num_decoder_layers=1, share_embeddings=True, tie_output=True)
    rms = float(np.sqrt(np.mean(tied.src_embed.weight.numpy()[1:] ** 2)) * np.sqrt(d))
    assert 0.9 < rms < 1.1
    assert tied.generator.weight is tied.src_embed.weight and tied.tgt_embed is tied.src_embed
    assert not tied.src_embed.weight.numpy()[0].any()  # padding row stays zero
    separate = Seq2SeqTransformer(vocab, vocab, d_model=d, nhead=4, num_encoder_layers=1,
                                  num_decoder_layers=1)
    bound = np.sqrt(6 / (vocab + d))
    assert np.abs(separate.src_embed.weight.numpy()).max() <= bound
