"""Peak RSS of training on the real configuration, minigrad beside PyTorch, round after round.

    python bench/memory_rounds.py [--rounds 3] [--steps 4] [--cold] [--variants] [--json out.json]

The real configuration: d_model 256, 4 heads, 3 + 3 layers, feed-forward 512, dropout 0.1,
batches of 128 sentences, the word vocabularies of the generated caption corpus at Multi30k's
size (29,000 training pairs; `translate.captions.generate_captions(seed=0)`, tokenized and
batched by the translator's own code: `build_tokenizers`, `plan_batches` of epoch 0). The
program is bench/memory.py's translator, written once against PyTorch's API and run by both
libraries, each in its own process; the processes alternate (minigrad, torch, minigrad, ...).

The steps are the first batches of epoch 0 with the epoch's largest batch (sentences x padded
target length) second, so that the peak of a whole epoch is reached after one ordinary step;
the steps after it show whether memory keeps growing once the peak batch has run (it does not:
see `growth_per_step_mb`). Each worker reports the peak RSS (VmHWM) of the whole process, the
figure a user sees, and its growth over the RSS right after importing the library.

`--cold` adds one minigrad round with an empty Numba cache (a fresh install, or a cache made
stale by an edited kernel): compiling kernels during the first steps is the one thing found to
make the peak differ between runs (docs/performance.md, section 6). `--variants` adds one
minigrad round under each other setting a run may have (`VARIANTS`): one Numba thread,
OpenBLAS's Haswell kernels, glibc's default allocator settings, the NumPy backend.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

CORPUS_VERSION = 1  # bump when the corpus, the tokenizers or the batching change


def corpus_batches(steps=4, seed=0, batch_size=128, max_len=64):
    """The real configuration's batches and vocabulary sizes, as the translator makes them.

    Returns dict(src=[...], tgt=[...], src_vocab=int, tgt_vocab=int, pairs=int)
    where src[i] is (B, S) and tgt[i] is (B, T + 1) int64 (<bos> ... <eos>, 0 = pad)."""
    import numpy as np
    from translate.batching import encode_pairs, make_batch, plan_batches
    from translate.captions import generate_captions
    from translate.config import TrainConfig
    from translate.model import build_tokenizers
    corpus = generate_captions(seed=seed)
    cfg = TrainConfig(d_model=256, num_encoder_layers=3, num_decoder_layers=3,
                      batch_size=batch_size, max_len=max_len, seed=seed)
    src_tok, tgt_tok = build_tokenizers(cfg, corpus.train)
    ex = [(s[:max_len], t[:max_len + 2]) for s, t in encode_pairs(corpus.train, src_tok, tgt_tok)]
    plan = plan_batches(ex, batch_size, seed, 0)
    size = [len(idx) * max(len(ex[j][1]) for j in idx) for idx in plan]
    big = max(range(len(plan)), key=size.__getitem__)
    order = [i for i in range(len(plan)) if i != big][:max(steps - 1, 1)]
    order.insert(1, big)  # one ordinary step runs first, as in any epoch
    src, tgt = [], []
    for i in order[:steps]:
        b = make_batch([ex[j] for j in plan[i]], tgt_tok.pad_id)
        src.append(b.src)
        tgt.append(np.concatenate([b.tgt_in, b.tgt_out[:, -1:]], axis=1))
    return dict(src=src, tgt=tgt, src_vocab=len(src_tok), tgt_vocab=len(tgt_tok),
                pairs=len(corpus.train))


def corpus_file(steps=4, seed=0):
    """An .npz of `corpus_batches` in the temporary directory, made once (about 40 s)."""
    import numpy as np
    path = Path(tempfile.gettempdir()) / f"minigrad-bench-corpus-v{CORPUS_VERSION}-s{seed}-n{steps}.npz"
    if not path.exists():
        d = corpus_batches(steps, seed)
        arrays = {f"src{i}": a for i, a in enumerate(d["src"])}
        arrays.update({f"tgt{i}": a for i, a in enumerate(d["tgt"])})
        tmp = path.with_suffix(f".{os.getpid()}.npz")
        np.savez(tmp, vocab=np.array([d["src_vocab"], d["tgt_vocab"], d["pairs"]]), **arrays)
        os.replace(tmp, path)
    return path


def load_corpus_file(path):
    """(batches [(src, tgt_in, tgt_out)], src_vocab, tgt_vocab) from `corpus_file`'s npz."""
    import numpy as np
    with np.load(path) as z:
        n = sum(k.startswith("src") for k in z.files)
        batches = [(z[f"src{i}"], z[f"tgt{i}"][:, :-1], z[f"tgt{i}"][:, 1:]) for i in range(n)]
        src_vocab, tgt_vocab, _ = (int(v) for v in z["vocab"])
    return batches, src_vocab, tgt_vocab


VARIANTS = {"one Numba thread": {"NUMBA_NUM_THREADS": "1"},
            "OPENBLAS_CORETYPE=Haswell": {"OPENBLAS_CORETYPE": "Haswell"},
            "no tune_malloc (glibc defaults)": {"MINIGRAD_NO_MALLOC_TUNING": "1"},
            "NumPy backend": {"MINIGRAD_BACKEND": "numpy"}}


def _worker(lib, config, data, threads, env_extra=None):
    cmd = [sys.executable, str(HERE / "memory.py"), "--worker", "rss", "--lib", lib,
           "--config", config, "--data", str(data), "--threads", str(threads)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=str(ROOT),
                       env=dict(os.environ, **(env_extra or {})))
    if r.returncode != 0:
        raise RuntimeError(f"memory worker {lib} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def run(rounds=3, steps=4, threads=2, cold=False, quick=False, variants=False):
    """Alternated rounds; returns the per-round peaks, the ratios and their spread."""
    from small_models import _torch_available
    config = "corpus-quick" if quick else "corpus"  # quick: a tiny model, the wiring only
    if quick:
        rounds, steps = 1, 2
    data = corpus_file(steps)
    libs = ["minigrad", "torch"] if _torch_available() else ["minigrad"]
    runs = {lib: [] for lib in libs}
    for _ in range(rounds):
        for lib in libs:
            runs[lib].append(_worker(lib, config, data, threads))
    res = dict(rounds=rounds, steps=steps, threads=threads, data=str(data), quick=quick,
               shapes=runs["minigrad"][0]["shapes"], loadavg=os.getloadavg()[0],
               runs={lib: [_summary(r) for r in rs] for lib, rs in runs.items()})
    if "torch" in runs:
        res["ratio_peak"] = [m["peak_mb"] / t["peak_mb"] for m, t in zip(runs["minigrad"], runs["torch"])]
        res["ratio_growth"] = [m["growth_mb"] / t["growth_mb"]
                               for m, t in zip(runs["minigrad"], runs["torch"])]
    res["variants"] = {}
    if cold:
        with tempfile.TemporaryDirectory() as empty:
            res["variants"]["empty Numba cache (compiles)"] = _summary(
                _worker("minigrad", config, data, threads, {"NUMBA_CACHE_DIR": empty}))
    for name, env in VARIANTS.items() if variants else ():
        res["variants"][name] = _summary(_worker("minigrad", config, data, threads, env))
    print_table(res)
    return res


def _summary(r):
    return dict(peak_mb=r["peak_mb"], growth_mb=r["growth_mb"], baseline_mb=r["baseline_mb"],
                growth_per_step_mb=r["growth_per_step_mb"], rss_end_mb=r["rss_end_mb"],
                malloc=r["malloc"], seconds=r["seconds"])


def _spread(xs):
    return f"median {statistics.median(xs):.3f}, range {min(xs):.3f}-{max(xs):.3f}"


def print_table(res):
    model = ("a tiny model (--quick: d_model 32, 1+1 layers" if res.get("quick") else
             "real configuration (d_model 256, 4 heads, 3+3 layers, FFN 512")
    print(f"\n== peak memory, {model}, batch 128, word vocabularies of the generated "
          f"29k-pair caption corpus) ==")
    print(f"steps (src, tgt_in): {res['shapes']} -- the epoch's largest batch second; each "
          f"library in its own process, {res['rounds']} alternated round(s), "
          f"{res['threads']} threads")
    print(f"{'round':<7}{'library':<10}{'peak RSS MB':>12}{'growth MB':>11}"
          f"{'growth after each step MB':>40}{'malloc free kept MB':>21}")
    for i in range(res["rounds"]):
        for lib, rs in res["runs"].items():
            r = rs[i]
            steps = " ".join(f"{x:.0f}" for x in r["growth_per_step_mb"])
            kept = (r["malloc"] or {}).get("free_kept_mb", float("nan"))
            print(f"{i + 1:<7}{lib:<10}{r['peak_mb']:>12.0f}{r['growth_mb']:>11.0f}{steps:>40}"
                  f"{kept:>21.0f}")
    if "ratio_peak" in res:
        print(f"minigrad / PyTorch, peak RSS: {_spread(res['ratio_peak'])} (goal <= 0.8 in "
              f"every round); growth: {_spread(res['ratio_growth'])}")
    torch_peak = statistics.median(r["peak_mb"] for r in res["runs"]["torch"]) \
        if "torch" in res["runs"] else None
    for name, r in res.get("variants", {}).items():
        ratio = f", {r['peak_mb'] / torch_peak:.3f} x PyTorch's median peak" if torch_peak else ""
        print(f"minigrad, {name}: peak RSS {r['peak_mb']:.0f} MB, growth {r['growth_mb']:.0f} "
              f"MB{ratio}")
    print(f"load average {res['loadavg']:.2f} (memory figures do not depend on the load)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=4, help="steps per process (the largest batch second)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cold", action="store_true", help="one more minigrad round, empty Numba cache")
    ap.add_argument("--variants", action="store_true",
                    help="one more minigrad round under each of VARIANTS")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    res = run(args.rounds, args.steps, args.threads, args.cold, variants=args.variants)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
