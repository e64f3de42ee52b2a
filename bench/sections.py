"""The sections of bench/run.py, one function each, `sec_NAME(quick)`, which prints its table
and returns its results (a dict that run.py writes to the JSON file): 1. kernels, 2. autograd
overhead, 3. the training step beside PyTorch, 4. scaling, 5. decoding, 6. the per-op profile,
and the sections that other bench/ modules measure (small models, memory, per op, cold start,
peak memory). The comparisons with PyTorch run each library in its own worker process
(bench/step_worker.py), alternated.
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import minigrad

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKER = str(HERE / "step_worker.py")


def _worker(lib, extra, timeout=1800, env=None):
    cmd = [sys.executable, WORKER, "--lib", lib, *map(str, extra)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(ROOT),
                       env=dict(os.environ, **env) if env else None)
    if r.returncode != 0:
        raise RuntimeError(f"step_worker {lib} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _torch_available():
    r = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    return r.returncode == 0


# ------------------------------------------------------------------ 1. kernels --
def sec_kernels(quick):
    import bench_kernels
    res = bench_kernels.run(quick=quick)
    print("\n== 1. kernels: Numba vs NumPy (us, medians) ==")
    bench_kernels._print(res)
    return res


# ------------------------------------------------------------- 2. autograd overhead --
def sec_autograd(quick):
    """Per-op cost of forward + backward on 4x4 float32 tensors, beside PyTorch's.

    See autograd_overhead.py: chains of N ops minus chains of 1, one thread, each library in
    its own process, alternating."""
    import autograd_overhead
    n, reps, rounds = (8, 20, 1) if quick else (64, 200, 5)
    res = autograd_overhead.compare(rounds=rounds, n=n, reps=reps)
    print(f"\n== 2. autograd overhead: forward+backward per op on 4x4 float32, one thread "
          f"(chain of {n} minus chain of 1, medians of {reps} repeats and {rounds} rounds) ==")
    autograd_overhead.print_table(res)
    return res


# ------------------------------------------------------------------ 3. step --
def _toy_args(quick):
    if quick:
        return dict(size=["--d-model", 32, "--nhead", 4, "--layers", 1, "--ffn", 64, "--vocab", 100,
                          "--batch", 8, "--len", 8],
                    steps=["--warmup-steps", 1, "--steps", 2], rounds=1)
    return dict(size=["--d-model", 128, "--nhead", 4, "--layers", 2, "--ffn", 512, "--vocab", 2000,
                      "--batch", 64, "--len", 20, "--dropout", 0.1],
                steps=["--warmup-steps", 3, "--steps", 10], rounds=3)


def sec_step(quick, threads=2):
    a = _toy_args(quick)
    have_torch = _torch_available()
    libs = ["minigrad", "torch"] if have_torch else ["minigrad"]
    runs = {lib: [] for lib in libs}
    cpu = []  # minigrad on one thread in CPU time, beside its one-thread floor
    for _ in range(a["rounds"]):
        for lib in libs:  # alternate the processes
            floor = ["--floor"] if lib == "minigrad" else []
            runs[lib].append(_worker(lib, a["size"] + a["steps"] + ["--threads", threads] + floor))
        cpu.append(_worker("minigrad", a["size"] + a["steps"] + ["--floor", "--cpu-time"],
                           env=ONE_THREAD))
    res = dict(config=" ".join(map(str, a["size"])), rounds=a["rounds"],
               torch_available=have_torch, libs={})
    print(f"\n== 3. training step, toy configuration ({res['config']}; dropout 0.1, Adam "
          f"(0.9, 0.98, 1e-9) + warm-up, label smoothing 0.1, clip 1.0) ==")
    print(f"each library in its own process, alternated, {a['rounds']} round(s) x "
          f"{a['steps'][3]} timed steps after {a['steps'][1]} warm-up steps; "
          f"memory = peak RSS (VmHWM) growth over RSS after importing the library")
    if not have_torch:
        print("(PyTorch not importable: its column is skipped)")
    print(f"{'library':<10}{'median ms':>11}{'min ms':>9}{'tokens/s':>11}{'peak RSS growth MB':>20}"
          f"{'peak RSS MB':>13}  threads")
    for lib in libs:
        steps = [t for r in runs[lib] for t in r["step_ms"]]
        med = statistics.median(steps)
        r0 = runs[lib][0]
        growth = statistics.median(r["peak_rss_growth_mb"] for r in runs[lib])
        peak = statistics.median(r["peak_rss_mb"] for r in runs[lib])
        thr = (f"numba {r0.get('numba_threads')}, backend {r0.get('backend')}" if lib == "minigrad"
               else f"torch {r0.get('torch_threads')} (interop {r0.get('torch_interop_threads')})")
        res["libs"][lib] = dict(median_ms=med, min_ms=min(steps), round_medians_ms=[r["median_ms"] for r in runs[lib]],
                                tokens_per_s=r0["batch"] * r0["len"] / (med / 1e3),
                                peak_rss_growth_mb=growth, peak_rss_mb=peak, threads=thr,
                                OPENBLAS_CORETYPE=r0["OPENBLAS_CORETYPE"], runs=runs[lib])
        d = res["libs"][lib]
        print(f"{lib:<10}{med:>11.1f}{min(steps):>9.1f}{d['tokens_per_s']:>11.0f}{growth:>20.0f}"
              f"{peak:>13.0f}  {thr}")
    print(f"OPENBLAS_CORETYPE={runs['minigrad'][0]['OPENBLAS_CORETYPE']}  load avg "
          f"{os.getloadavg()[0]:.2f}")
    if have_torch:
        m, t = res["libs"]["minigrad"], res["libs"]["torch"]
        res["ratio_time"] = m["median_ms"] / t["median_ms"]
        res["ratio_memory"] = m["peak_rss_growth_mb"] / max(t["peak_rss_growth_mb"], 1e-9)
        print(f"ratio of medians minigrad/torch: time {res['ratio_time']:.2f} (goal <= 0.64), "
              f"peak RSS growth {res['ratio_memory']:.2f} (goal <= 0.5)")
    from flop_floor import print_floor
    res["floor"] = print_floor(runs["minigrad"], f"{threads} threads, wall time")
    res["floor_one_thread_cpu"] = print_floor(cpu, "one thread, CPU time")
    return res


ONE_THREAD = {"NUMBA_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


# ------------------------------------------------------------------ 4. scaling --
def sec_scaling(quick):
    """minigrad step time against sequence length and d_model, each point in its own worker
    process with the per-op profiler on (adds ~1 us per op call). Attention share = time of all
    ops whose module path contains "attn" (the whole multi-head attention blocks: projections,
    head reshapes, QK^T, mask, softmax, attention dropout, AV, out_proj) over the step's time;
    "core" counts only MatMul/Softmax/MaskedFill/Dropout (fused in training: MaskedSoftmaxDropout)
    inside those blocks."""
    if quick:
        lens, dms = [8, 16], [16, 32]
        base = ["--nhead", 2, "--layers", 1, "--vocab", 100, "--warmup-steps", 1, "--steps", 2]
        tokens, batch_d = 64, 4
    else:
        lens, dms = [16, 32, 64, 128, 256], [64, 128, 256, 512]
        base = ["--nhead", 4, "--layers", 2, "--vocab", 2000, "--warmup-steps", 2, "--steps", 5]
        tokens, batch_d = 1024, 64
    res = dict(method=sec_scaling.__doc__.strip(), by_len=[], by_d_model=[],
               batch_rule=f"length sweep: batch = max(1, {tokens} // length) (about {tokens} "
                          f"target tokens per step), d_model 128 (quick: 32), FFN 4 x d_model; "
                          f"d_model sweep: batch {batch_d}, length {8 if quick else 20}, FFN 4 x d_model")
    dm0 = 32 if quick else 128
    for L in lens:
        b = max(1, tokens // L)
        r = _worker("minigrad", base + ["--d-model", dm0, "--ffn", 4 * dm0, "--len", L,
                                        "--batch", b, "--profile"])
        res["by_len"].append(dict(len=L, batch=b, median_ms=r["median_ms"],
                                  ms_per_1k_tokens=r["median_ms"] / (b * L) * 1000,
                                  attn_share=r["attn_share"], attn_core_share=r["attn_core_share"]))
    for d in dms:
        r = _worker("minigrad", base + ["--d-model", d, "--ffn", 4 * d, "--len", 8 if quick else 20,
                                        "--batch", batch_d, "--profile"])
        res["by_d_model"].append(dict(d_model=d, median_ms=r["median_ms"],
                                      attn_share=r["attn_share"], attn_core_share=r["attn_core_share"]))
    print("\n== 4. scaling (minigrad, median ms per training step) ==")
    print(res["batch_rule"])
    print(f"{'length':>7}{'batch':>7}{'ms/step':>10}{'ms/1k tok':>11}{'attn share':>12}{'attn core':>11}")
    for r in res["by_len"]:
        print(f"{r['len']:>7}{r['batch']:>7}{r['median_ms']:>10.1f}{r['ms_per_1k_tokens']:>11.1f}"
              f"{r['attn_share']:>12.1%}{r['attn_core_share']:>11.1%}")
    print(f"{'d_model':>7}{'':>7}{'ms/step':>10}{'':>11}{'attn share':>12}{'attn core':>11}")
    for r in res["by_d_model"]:
        print(f"{r['d_model']:>7}{'':>7}{r['median_ms']:>10.1f}{'':>11}{r['attn_share']:>12.1%}"
              f"{r['attn_core_share']:>11.1%}")
    print("attention share: ops under module paths containing 'attn' / step time "
          "(core: MatMul and mask + softmax + dropout only)")
    return res


# ------------------------------------------------------------------ 5. decoding --
def sec_decoding(quick):
    """Sentences per second, randomly initialised toy model (eval mode), eos_id=-1 so every
    sentence is decoded to the full max_len (no early stop)."""
    from minigrad.models import Seq2SeqTransformer, beam_search, greedy_decode
    minigrad.manual_seed(0)
    if quick:
        model = Seq2SeqTransformer(100, 100, 32, 4, 1, 1, 64, 0.1, max_len=64)
        B, S, max_len, reps = 4, 8, 5, 1
    else:
        model = Seq2SeqTransformer(2000, 2000, 128, 4, 2, 2, 512, 0.1, max_len=64)
        B, S, max_len, reps = 64, 20, 30, 3
    src = np.random.default_rng(0).integers(3, 100 if quick else 2000, (B, S))
    rows = []
    for name, fn in [("greedy", lambda c: greedy_decode(model, src, max_len, 1, -1, use_cache=c)),
                     ("beam 4", lambda c: beam_search(model, src, 4, max_len, 1, -1, use_cache=c))]:
        for cache in (True, False):
            fn(cache) if not quick else None  # warm-up (Numba compiles)
            ts = []
            for _ in range(reps):
                t = time.perf_counter()
                fn(cache)
                ts.append(time.perf_counter() - t)
            med = statistics.median(ts)
            rows.append(dict(method=name, kv_cache=cache, batch=B, max_len=max_len,
                             seconds=med, sentences_per_s=B / med))
    print(f"\n== 5. decoding: {B} source sentences of length {S}, {max_len} tokens each "
          f"(eos_id=-1, no early stop), medians of {reps} ==")
    print(f"{'method':<10}{'kv cache':>10}{'s / batch':>11}{'sentences/s':>13}")
    for r in rows:
        print(f"{r['method']:<10}{str(r['kv_cache']):>10}{r['seconds']:>11.3f}{r['sentences_per_s']:>13.1f}")
    cached = {r["method"]: r["seconds"] for r in rows if r["kv_cache"]}
    ratio = cached["beam 4"] / cached["greedy"]  # 4 hypotheses per sentence: 4x the work
    print(f"beam 4 / greedy time, with the cache: {ratio:.2f} (target <= 5)")
    return dict(method=sec_decoding.__doc__.strip(), src_len=S, rows=rows, beam_greedy_ratio=ratio)


# ------------------------------------------------------------------ 6. profile --
def sec_profile(quick):
    a = _toy_args(quick)
    # one thread in CPU time: what a busy machine inflates least, and the floor's own terms
    r = _worker("minigrad", a["size"] + a["steps"] + ["--profile", "--products", "--floor",
                                                      "--cpu-time"], env=ONE_THREAD)
    print(f"\n== 6. profile of one minigrad training step by op (d_model {a['size'][1]}; one thread, CPU time; mean over {r['steps']} steps, median step {r['median_ms']:.1f} ms) ==")
    print("forward/backward = exclusive time inside each op class's forward/backward "
          "(bench/op_profile.py); 'other' = graph bookkeeping, engine, optimizer, clipping")
    from op_profile import print_table
    print_table(r["profile"])
    from flop_floor import print_products
    rest = print_products(r)
    return dict(median_ms=r["median_ms"], rows=r["profile"], attn_share=r["attn_share"],
                product_ms=r["product_ms"], product_gflops=r["product_gflops"],
                numpy_peak_gflops=r["numpy_peak_gflops"], floor_ms=r["floor_ms"], rest_ms=rest,
                product_rows=r["product_rows"])


# ------------------------------------------------------ 7-8. small models and memory --
def sec_small(quick):
    """bench/small_models.py: the character-level GPT's step and sampling loop vs PyTorch."""
    import small_models
    return small_models.run(quick=quick)


def sec_memory(quick):
    """bench/memory.py: peak memory of training vs PyTorch, and minigrad's memory profile."""
    import memory
    return memory.run(quick=quick)


def sec_ops(quick):
    """bench/op_bench.py: forward + backward per op beside PyTorch, one and two threads, and
    minigrad's Numba backend beside its NumPy backend under both OpenBLAS kernel sets (each
    ratio's median with its spread over the rounds)."""
    import op_bench
    res = op_bench.run(quick=quick, threads=(1,) if quick else (1, 2),
                       coretypes=op_bench.CORETYPES)
    print("\n== 9. per op: forward + backward, float32, minigrad vs PyTorch, each in its own "
          "process, alternated ==")
    op_bench.print_table(res)
    return res


def sec_coldstart(quick):
    """bench/cold_start.py: from `python -c` to the end of the first training step with an
    empty Numba cache, and the import times of minigrad and PyTorch."""
    import cold_start
    res = cold_start.run(rounds=1 if quick else 3)
    print("\n== 10. cold start ==")
    cold_start.print_table(res)
    return res


def sec_peakmem(quick):
    """bench/memory_rounds.py: peak RSS of training on the real configuration (the generated
    29k-pair caption corpus), minigrad beside PyTorch, alternated rounds, the ratio's spread."""
    import memory_rounds
    return memory_rounds.run(rounds=1 if quick else 3, cold=not quick, quick=quick)
