"""Peak memory of training, minigrad beside PyTorch, and a profile of where minigrad's goes.

    python bench/memory.py [--quick] [--configs toy,real] [--rounds 2] [--json out.json]

The program is an encoder-decoder Transformer translator written once against PyTorch's API
(`make_translator(torch, ...)`: `nn.Transformer`, embeddings, a sinusoidal position table,
label-smoothed cross entropy, Adam with a warm-up schedule, gradient clipping, the usual loop);
the minigrad run passes `minigrad` as `torch` (`lib_shims.library`). Two configurations:
- toy: bench/step_worker.py's (d_model 128, 4 heads, 2+2 layers, FFN 512, vocabulary 2,000,
  batch 64 x 20 tokens, no padding);
- real: the real-corpus run of issue 16 (d_model 256, 4 heads, 3+3 layers, FFN 512,
  vocabularies 5,921 and 7,859, 128 sentences a batch like the translator's default). Batches
  are random token ids with padding, cut from 29,000 sentence pairs of realistic lengths
  (English log-normal, mean 13 and sd 4.5 words, 4..40, German within a few words of it, plus <bos>/<eos>),
  sorted by length and cut into batches as the translator's bucketing does; two steps: a
  typical batch, then the longest one (the peak of a real run comes from it).

Measures, each library in its own process, processes alternated for `--rounds` rounds:
- peak RSS growth: the peak RSS (VmHWM, reset right after importing the library, before any
  model exists) minus the RSS at that moment; the same measure for both libraries. (Not
  ru_maxrss: a child process inherits its parent's, which hid the whole toy run.) minigrad runs twice: with the
  allocator setting a training loop opts into (`minigrad.tune_malloc()`, as the translator's
  trainer and bench/step_worker.py) and with MINIGRAD_NO_MALLOC_TUNING=1 (glibc's defaults), to
  show what the tuning costs (that variant runs in the first round only). glibc's mallinfo2
  at the end tells memory kept free by malloc. For PyTorch, a saved-tensors hook also sums
  the bytes its autograd saves for backward in the profiled step.
- profile (minigrad only, one process, tracemalloc on): one step of the longest batch taken
  apart -- parameters, gradients and Adam state; the graph's arrays after the forward (saved by
  each op type for backward, or only held because the graph references input tensors); the
  logits and their gradient copies; the peak inside backward and the op where it happens;
  what is still referenced after backward (alive until the loop's next `loss = ...`); kernel
  scratch; traced NumPy bytes against RSS (the allocator's share).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from memory_report import print_tables  # noqa: E402

CONFIGS = {
    "toy": dict(d_model=128, nhead=4, layers=2, ffn=512, src_vocab=2000, tgt_vocab=2000,
                dropout=0.1, batch=64, fixed_len=20, steps=4),
    "real": dict(d_model=256, nhead=4, layers=3, ffn=512, src_vocab=5921, tgt_vocab=7859,
                 dropout=0.1, batch=128, fixed_len=None, steps=2, pairs=29_000),
    "quick": dict(d_model=32, nhead=4, layers=1, ffn=64, src_vocab=300, tgt_vocab=400,
                  dropout=0.1, batch=16, fixed_len=None, steps=3),
    # the generated caption corpus's batches and vocabularies (bench/memory_rounds.py, --data)
    "corpus": dict(d_model=256, nhead=4, layers=3, ffn=512, dropout=0.1, batch=128,
                   fixed_len=None),
    "corpus-quick": dict(d_model=32, nhead=4, layers=1, ffn=64, dropout=0.1, batch=128,
                         fixed_len=None),
}
PAD, BOS, EOS = 0, 1, 2


def batches(cfg, seed=0):
    """Token batches (src (B, S), tgt_in (B, T), tgt_out (B, T)) as int64 NumPy arrays, 0 = pad.

    Fixed length (toy): the same random batch every step, as step_worker.py. Otherwise
    realistic lengths, bucketed; the steps are typical batches with the longest one second."""
    import numpy as np
    rng = np.random.default_rng(seed)
    B, n = cfg["batch"], cfg["steps"]
    if cfg["fixed_len"]:
        L = cfg["fixed_len"]
        src = rng.integers(3, cfg["src_vocab"], (B, L))
        tgt = rng.integers(3, cfg["tgt_vocab"], (B, L + 1))
        tgt[:, 0] = BOS
        return [(src, tgt[:, :-1], tgt[:, 1:])] * n
    pairs = cfg.get("pairs", 40 * B)
    # right-skewed like real captions: log-normal with mean 13 and sd 4.5 words
    src_len = np.clip(np.rint(rng.lognormal(2.508, 0.337, pairs)), 4, 40).astype(int)
    tgt_len = np.clip(src_len + np.rint(rng.normal(-0.5, 2, pairs)).astype(int), 3, 40)
    order = np.lexsort((rng.random(pairs), tgt_len, src_len))
    cuts = [order[i:i + B] for i in range(0, pairs - B + 1, B)]
    picks = [cuts[i] for i in rng.choice(len(cuts) - 1, n - 1, replace=False)]
    picks.insert(1, cuts[-1])  # the longest batch second: one step runs before it

    def pad(lengths, vocab, bos):
        out = np.zeros((len(lengths), max(lengths) + 1), np.int64)
        for i, k in enumerate(lengths):
            ids = rng.integers(3, vocab, k)
            out[i, :k + 1] = np.r_[BOS, ids] if bos else np.r_[ids, EOS]
        return out

    res = []
    for idx in picks:
        src = pad(src_len[idx], cfg["src_vocab"], bos=False)
        tgt = pad(tgt_len[idx] + 1, cfg["tgt_vocab"], bos=True)  # <bos> w1 .. wk <eos>
        res.append((src, tgt[:, :-1], tgt[:, 1:]))
    return res


def make_translator(torch, src_vocab, tgt_vocab, d_model, nhead, layers, ffn, dropout,
                    max_len=256, seed=0, **_):
    """The translator, written against PyTorch's API; `torch` may be minigrad.

    Returns train(batches, probe=None): the usual training loop over (src, tgt_in, tgt_out)
    NumPy batches; `probe(event, logits, loss)` is called after "forward", "backward", "step"."""
    nn = torch.nn
    torch.manual_seed(seed)

    class PositionalEncoding(nn.Module):
        def __init__(self):
            super().__init__()
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(x + self.pe[: x.shape[1]])

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(src_vocab, d_model, padding_idx=PAD)
            self.tgt_embed = nn.Embedding(tgt_vocab, d_model, padding_idx=PAD)
            self.pos = PositionalEncoding()
            self.transformer = nn.Transformer(d_model, nhead, layers, layers, ffn, dropout,
                                              batch_first=True)
            self.generator = nn.Linear(d_model, tgt_vocab)

        def forward(self, src, tgt):
            scale = math.sqrt(d_model)
            T = tgt.shape[1]
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True: future
            h = self.transformer(self.pos(self.src_embed(src) * scale),
                                 self.pos(self.tgt_embed(tgt) * scale),
                                 tgt_mask=mask, tgt_is_causal=True,
                                 src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt == PAD,
                                 memory_key_padding_mask=src == PAD)
            return self.generator(h)

    model = Seq2Seq()
    criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    noam = lambda s: d_model ** -0.5 * min((s + 1) ** -0.5, (s + 1) * 4000 ** -1.5)  # noqa: E731
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam)

    def train(data, probe=None):
        model.train()
        for src, tgt_in, tgt_out in data:
            src, tgt_in, tgt_out = (torch.tensor(a, dtype=torch.long) for a in (src, tgt_in, tgt_out))
            logits = model(src, tgt_in)
            loss = criterion(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            if probe:
                probe("forward", logits, loss)
            optimizer.zero_grad()
            loss.backward()
            if probe:
                probe("backward", logits, loss)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            if probe:
                probe("step", logits, loss)
    return model, optimizer, train


# ------------------------------------------------------------------ workers --
def rss_worker(args):
    """Peak RSS growth of training in this process; one JSON line. For PyTorch also the bytes
    its autograd saves for backward in the profiled step (unique storages seen by a
    saved-tensors hook, a public API; the hook keeps sizes only, so it changes no memory)."""
    import contextlib
    from mem_profile import malloc_stats, maxrss_mb, reset_peak_rss, rss_mb
    from lib_shims import library
    torch = library(args.lib)
    if args.lib == "torch":
        torch.set_num_threads(args.threads or 2)
    else:  # the allocator setting a training loop opts into; MINIGRAD_NO_MALLOC_TUNING=1 skips it
        torch.tune_malloc()
    reset_peak_rss()  # the peak from here on: importing the library is not training
    base = maxrss_mb()
    cfg, data = _config_and_batches(args)
    big = _profiled(data)
    model, _, train = make_translator(torch, **cfg)
    per_step, storages, saved = [], {}, {}
    hooks = contextlib.nullcontext()
    if args.lib == "torch":
        params = {p.untyped_storage().data_ptr() for p in model.parameters()}

        def pack(t):
            st = t.untyped_storage()
            if st.data_ptr() not in params:  # weights are not activations (minigrad's count skips them too)
                storages[st.data_ptr()] = st.nbytes()
            return t
        hooks = torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t)

    def probe(event, logits, loss):
        if event == "step":
            per_step.append(maxrss_mb())
            storages.clear()
        elif event == "forward" and len(per_step) == big and args.lib == "torch":
            saved.update(saved_mb=sum(storages.values()) / 2**20, saved_storages=len(storages))

    t = time.perf_counter()
    with hooks:
        train(data, probe=probe)
    out = dict(lib=args.lib, config=args.config, baseline_mb=base, peak_mb=maxrss_mb(),
               growth_mb=maxrss_mb() - base, growth_per_step_mb=[p - base for p in per_step],
               rss_end_mb=rss_mb(), malloc=malloc_stats(), seconds=time.perf_counter() - t,
               shapes=[[list(a.shape) for a in b[:2]] for b in data],
               malloc_tuning=args.lib == "minigrad" and
               os.environ.get("MINIGRAD_NO_MALLOC_TUNING") != "1", **saved)
    print(json.dumps(out))


def profile_worker(args):
    """One minigrad step of the longest batch taken apart (see the module docstring)."""
    if args.lib != "minigrad":
        raise SystemExit("memory.py: the profile is of minigrad only")
    import tracemalloc
    import numpy as np
    from mem_profile import (MB, BackwardTimeline, graph_memory, kernel_scratch_bytes,
                             malloc_stats, maxrss_mb, numpy_bytes, rss_mb)
    from lib_shims import library
    torch = library("minigrad")
    torch.tune_malloc()
    cfg = CONFIGS[args.config]
    data = batches(cfg)
    big = _profiled(data)
    tracemalloc.start()  # from here on every NumPy array is traced
    stages = dict(import_=dict(rss_mb=rss_mb(), numpy_mb=numpy_bytes() / MB))
    model, optimizer, train = make_translator(torch, **cfg)
    stages["model"] = dict(rss_mb=rss_mb(), numpy_mb=numpy_bytes() / MB)
    prof, timeline, peaks, step = {}, BackwardTimeline(), [], [0]

    def probe(event, logits, loss):
        """Acts at the end of the step before `big` (what the loop carries into it) and at
        every event of step `big`; the loop itself runs unchanged, so the previous step's
        `loss` and `logits` are alive during the profiled forward, as in any training loop."""
        k = step[0]
        step[0] += event == "step"
        if k == big - 1 and event == "step":
            stages["warm"] = dict(rss_mb=rss_mb(), numpy_mb=numpy_bytes() / MB,
                                  previous_graph_mb=graph_memory(loss)["total"] / MB,
                                  kernel_scratch_mb=kernel_scratch_bytes() / MB)
        elif k == big:
            cur, peak = tracemalloc.get_traced_memory()
            peaks.append(peak)
            prof[event] = dict(numpy_mb=numpy_bytes() / MB, traced_mb=cur / MB,
                               peak_mb=peak / MB, rss_mb=rss_mb())
            if event == "forward":
                prof["graph_forward"] = graph_memory(loss, marks=dict(logits=logits))
                prof["logits"] = dict(shape=list(logits.shape), mb=logits.numpy().nbytes / MB)
                timeline.__enter__()
            elif event == "backward":
                timeline.__exit__(None, None, None)
                prof["graph_backward"] = graph_memory(loss)
        else:
            return
        tracemalloc.reset_peak()

    try:
        train(data[:big + 1], probe=probe)
    finally:
        timeline.__exit__(None, None, None)
    params = list(model.parameters())
    state = [v for s in optimizer.state.values() for v in s.values() if hasattr(v, "numpy")]
    op, peak, i = timeline.peak()
    first = [(name, cur / MB, pk / MB) for name, cur, pk in timeline.rows[:3]]
    out = dict(config=args.config, shape=[list(a.shape) for a in data[big][:2]],
               params_mb=sum(p.numpy().nbytes for p in params) / MB,
               grads_mb=sum(p.grad.numpy().nbytes for p in params if p.grad is not None) / MB,
               adam_state_mb=sum(np.asarray(v.numpy()).nbytes for v in state) / MB,
               stages=stages, events=prof, step_traced_peak_mb=max(peaks + [peak]) / MB,
               backward_peak=dict(op=op, mb=peak / MB, index=i, of=len(timeline.rows)),
               backward_first_ops=first, kernel_scratch_mb=kernel_scratch_bytes() / MB,
               malloc=malloc_stats(), maxrss_mb=maxrss_mb())
    tracemalloc.stop()
    print(json.dumps(out))


def _config_and_batches(args):
    """The worker's configuration and batches: from `--data` (an .npz of
    memory_rounds.corpus_file, which also gives the vocabulary sizes), or made up."""
    cfg = dict(CONFIGS[args.config])
    if args.config.startswith("corpus"):
        if not args.data:
            raise SystemExit(f"memory.py: --config {args.config} needs --data")
        from memory_rounds import load_corpus_file
        data, cfg["src_vocab"], cfg["tgt_vocab"] = load_corpus_file(args.data)
        return cfg, data
    return cfg, batches(cfg)


def _profiled(data):
    """Index of the step to profile: the largest batch that has at least one step before it."""
    return 1 + max(range(len(data) - 1), key=lambda i: data[i + 1][1].size)


# ------------------------------------------------------------- orchestrator --
def _run(mode, lib, config, threads, env_extra=None):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", mode, "--lib", lib,
           "--config", config, "--threads", str(threads)]
    env = dict(os.environ, **(env_extra or {}))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"memory worker {mode} {lib} {config} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


VARIANTS = [("minigrad", "minigrad", None),
            ("minigrad, no tune_malloc", "minigrad", {"MINIGRAD_NO_MALLOC_TUNING": "1"}),
            ("torch", "torch", None)]


def run(quick=False, configs=None, rounds=None, threads=None):
    from small_models import _torch_available
    configs = configs or (["quick"] if quick else ["toy", "real"])
    rounds = rounds or (1 if quick else 2)
    threads = threads or (1 if quick else 2)
    variants = [v for v in VARIANTS if (v[1] != "torch" or _torch_available())
                and not (quick and v[2])]  # quick: no allocator variant
    res = dict(method=__doc__.split("\n\n", 2)[2].strip(), rounds=rounds, configs={})
    for config in configs:
        runs = {name: [] for name, _, _ in variants}
        for i in range(rounds):
            for name, lib, env in variants:
                if env and i:  # the allocator variant once: it only explains the first row
                    continue
                runs[name].append(_run("rss", lib, config, threads, env))
        rows = {}
        for name, rs in runs.items():
            rows[name] = dict(growth_mb=statistics.median(r["growth_mb"] for r in rs),
                              rounds_mb=[r["growth_mb"] for r in rs],
                              baseline_mb=rs[0]["baseline_mb"], rss_end_mb=rs[-1]["rss_end_mb"],
                              malloc=rs[-1]["malloc"], per_step_mb=rs[-1]["growth_per_step_mb"])
        entry = dict(config=CONFIGS[config], shapes=runs[variants[0][0]][0]["shapes"], rows=rows,
                     profile=_run("profile", "minigrad", config, threads))
        if "torch" in rows:
            entry["profile"]["torch"] = dict(saved_mb=runs["torch"][0]["saved_mb"])
        if "torch" in rows:
            t = rows["torch"]["growth_mb"]
            entry["ratio"] = {k: v["growth_mb"] / t for k, v in rows.items() if k != "torch"}
        res["configs"][config] = entry
    res["loadavg"] = os.getloadavg()[0]
    print_tables(res)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one tiny configuration, one round")
    ap.add_argument("--configs", help="comma-separated: toy, real (default both)")
    ap.add_argument("--rounds", type=int, help="alternated rounds (default 2; quick 1)")
    ap.add_argument("--threads", type=int, help="torch.set_num_threads (default 2; quick 1)")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--worker", choices=["rss", "profile"], help=argparse.SUPPRESS)
    ap.add_argument("--lib", choices=["minigrad", "torch"], default="minigrad",
                    help=argparse.SUPPRESS)
    ap.add_argument("--config", choices=sorted(CONFIGS), default="toy", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return (rss_worker if args.worker == "rss" else profile_worker)(args)
    configs = args.configs.split(",") if args.configs else None
    bad = [c for c in configs or () if c not in ("toy", "real")]
    if bad:
        ap.error(f"unknown configuration(s) {bad}; choose from toy, real")
    res = run(args.quick, configs, args.rounds, args.threads)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
