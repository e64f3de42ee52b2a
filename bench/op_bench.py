"""Per-op benchmark: forward + backward of each op, minigrad beside PyTorch, float32.

    python bench/op_bench.py [--quick] [--threads 1,2] [--rounds 3] [--op NAME]... [--json PATH]

Every op is written once against PyTorch's API (`torch.xxx`, `F.xxx`) and run with either
library (lib_shims.library). Shapes are the toy Transformer's and the small GPT's (batch 64 x
length 20 = 1,280 rows, d_model 128, 4 heads of 32, FFN 512, vocabulary 2,000). A timed call
is the forward, then `backward` of the output with a fixed gradient (or of the loss), after
three untimed warm-up calls; each op's time is the median of its repeats.

Each library runs in its own process (their thread pools would otherwise stall each other:
docs/performance.md), the processes alternate round by round (minigrad, PyTorch, minigrad's
NumPy backend, again...), and a figure is the median over rounds. A process is limited to the
given thread count by NUMBA_NUM_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
`torch.set_num_threads`; OPENBLAS_CORETYPE is left as it is and printed.

The table gives minigrad's time over PyTorch's (below 1: minigrad is faster) and the Numba
backend's time over the NumPy backend's (below 1: the kernels help).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# (name, shape as printed): the builders below make the inputs for each
OPS = [("GELU", "1280x512"), ("GELU tanh", "1280x512"), ("ReLU", "1280x512"),
       ("SiLU", "1280x512"), ("tanh", "1280x512"), ("sigmoid", "1280x512"),
       ("softmax, attention rows", "5120x20"), ("softmax, vocabulary rows", "1280x2000"),
       ("log_softmax, vocabulary rows", "1280x2000"), ("layer norm", "1280x128"),
       ("batched QK^T", "256x20x32"), ("causal masked_fill + softmax", "256x20x20"),
       ("cross-entropy, label smoothing 0.1", "1280x2000"), ("dropout p=0.1", "1280x512"),
       ("embedding", "2000x128, 64x20 ids")]
VARIANTS = (("minigrad", "numba"), ("torch", None), ("minigrad", "numpy"))


def _builders(lib):
    """{op name: a function running forward + backward once}, inputs made here, seeded."""
    F = lib.nn.functional
    r = np.random.default_rng(0)

    def leaf(*shape, scale=1.0):
        return lib.tensor((r.standard_normal(shape) * scale).astype(np.float32),
                          requires_grad=True)

    def const(*shape):
        return lib.tensor(r.standard_normal(shape).astype(np.float32))

    def fwd_bwd(fn, *leaves, grad=None):
        def run():
            for t in leaves:
                t.grad = None
            y = fn()
            y.backward(grad) if grad is not None else y.backward()
        return run

    h, gh = leaf(1280, 512), const(1280, 512)
    att, g_att = leaf(5120, 20, scale=4), const(5120, 20)
    voc, g_voc = leaf(1280, 2000, scale=4), const(1280, 2000)
    ln_x, ln_w, ln_b, g_ln = leaf(1280, 128), leaf(128), leaf(128), const(1280, 128)
    q, k, g_qk = leaf(256, 20, 32), leaf(256, 20, 32), const(256, 20, 20)
    s, g_s = leaf(256, 20, 20), const(256, 20, 20)
    causal = lib.tensor(np.triu(np.ones((20, 20), bool), 1))
    target = lib.tensor(r.integers(0, 2000, 1280))
    table, ids, g_emb = leaf(2000, 128), lib.tensor(r.integers(0, 2000, (64, 20))), const(64, 20, 128)
    return {
        "GELU": fwd_bwd(lambda: F.gelu(h), h, grad=gh),
        "GELU tanh": fwd_bwd(lambda: F.gelu(h, approximate="tanh"), h, grad=gh),
        "ReLU": fwd_bwd(lambda: F.relu(h), h, grad=gh),
        "SiLU": fwd_bwd(lambda: F.silu(h), h, grad=gh),
        "tanh": fwd_bwd(lambda: lib.tanh(h), h, grad=gh),
        "sigmoid": fwd_bwd(lambda: lib.sigmoid(h), h, grad=gh),
        "softmax, attention rows": fwd_bwd(lambda: F.softmax(att, dim=-1), att, grad=g_att),
        "softmax, vocabulary rows": fwd_bwd(lambda: F.softmax(voc, dim=-1), voc, grad=g_voc),
        "log_softmax, vocabulary rows": fwd_bwd(lambda: F.log_softmax(voc, dim=-1), voc,
                                                grad=g_voc),
        "layer norm": fwd_bwd(lambda: F.layer_norm(ln_x, (128,), ln_w, ln_b), ln_x, ln_w, ln_b,
                              grad=g_ln),
        "batched QK^T": fwd_bwd(lambda: q @ k.transpose(-2, -1), q, k, grad=g_qk),
        "causal masked_fill + softmax": fwd_bwd(
            lambda: F.softmax(s.masked_fill(causal, float("-inf")), dim=-1), s, grad=g_s),
        "cross-entropy, label smoothing 0.1": fwd_bwd(
            lambda: F.cross_entropy(voc, target, label_smoothing=0.1), voc),
        "dropout p=0.1": fwd_bwd(lambda: F.dropout(h, 0.1, training=True), h, grad=gh),
        "embedding": fwd_bwd(lambda: F.embedding(ids, table), table, grad=g_emb),
    }


def worker(lib_name, backend, threads, reps, ops=None):
    """Time every op (or those named in `ops`) in this process; returns {op: median ms}."""
    sys.path.insert(0, str(HERE))
    from lib_shims import library
    lib = library(lib_name)
    if lib_name == "torch":
        lib.set_num_threads(threads)
    else:
        lib.kernels.set_backend(backend)
    lib.manual_seed(0)
    out = {}
    for name, run in _builders(lib).items():
        if ops is not None and name not in ops:
            continue
        for _ in range(3):
            run()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times) * 1e3
    return out


def _spawn(lib_name, backend, threads, reps, ops=None):
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, __file__, "--worker", lib_name, "--backend", backend or "-",
           "--threads", str(threads), "--reps", str(reps)]
    if ops is not None:
        cmd += [a for name in ops for a in ("--op", name)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"op_bench worker {lib_name} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _torch_available():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def run(quick=False, threads=(1, 2), rounds=None, ops=None):
    """Alternate the variants' processes for `rounds` rounds at each thread count; returns
    {"threads": {t: {"rows": [...]}}, ...} with each op's medians and ratios. `ops`: the
    names of the ops to time (default: all of OPS)."""
    if ops is not None:
        unknown = set(ops) - {name for name, _ in OPS}
        if unknown:
            raise ValueError(f"op_bench: unknown ops {sorted(unknown)}; "
                             f"choose among {[name for name, _ in OPS]}")
    rounds = rounds or (1 if quick else 3)
    reps = 5 if quick else 30
    variants = [v for v in VARIANTS if v[0] != "torch" or _torch_available()]
    res = dict(rounds=rounds, reps=reps, quick=quick, threads={},
               OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
               loadavg_start=list(os.getloadavg()))
    for t in threads:
        runs = {v: [] for v in variants}
        for _ in range(rounds):
            for v in variants:
                runs[v].append(_spawn(v[0], v[1], t, reps, ops))
        rows = []
        for name, shape in OPS:
            if ops is not None and name not in ops:
                continue
            med = {v: statistics.median(r[name] for r in runs[v]) for v in variants}
            spread = {v: (min(r[name] for r in runs[v]), max(r[name] for r in runs[v]))
                      for v in variants}
            row = dict(op=name, shape=shape, minigrad_ms=med[("minigrad", "numba")],
                       numpy_backend_ms=med[("minigrad", "numpy")],
                       minigrad_range=spread[("minigrad", "numba")])
            row["numba_over_numpy"] = row["minigrad_ms"] / row["numpy_backend_ms"]
            if ("torch", None) in med:
                row["torch_ms"] = med[("torch", None)]
                row["torch_range"] = spread[("torch", None)]
                row["ratio"] = row["minigrad_ms"] / row["torch_ms"]
            rows.append(row)
        res["threads"][t] = dict(rows=rows)
    res["loadavg_end"] = list(os.getloadavg())
    return res


def print_table(res):
    for t, d in res["threads"].items():
        print(f"\n-- {t} thread(s), forward + backward, float32, medians of {res['reps']} calls "
              f"and {res['rounds']} alternated round(s), ms --")
        print(f"{'op':36s} {'shape':>20s} {'minigrad':>9s} {'PyTorch':>9s} {'ratio':>6s} "
              f"{'NumPy bk':>9s} {'Numba/NumPy':>11s}")
        for r in d["rows"]:
            torch_ms = f"{r['torch_ms']:9.3f}" if "torch_ms" in r else f"{'-':>9s}"
            ratio = f"{r['ratio']:6.2f}" if "ratio" in r else f"{'-':>6s}"
            print(f"{r['op']:36s} {r['shape']:>20s} {r['minigrad_ms']:9.3f} {torch_ms} {ratio} "
                  f"{r['numpy_backend_ms']:9.3f} {r['numba_over_numpy']:11.2f}")
    print(f"(ratio = minigrad / PyTorch; Numba/NumPy = minigrad's two backends; "
          f"OPENBLAS_CORETYPE={res['OPENBLAS_CORETYPE']}; load average "
          f"{res['loadavg_start'][0]:.2f} -> {res['loadavg_end'][0]:.2f})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 calls per op, one round")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, help="alternated rounds (default 3; quick 1)")
    ap.add_argument("--op", action="append", dest="ops", metavar="NAME",
                    help="time this op only (repeatable; default: every op)")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--worker", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--backend", default="numba", help=argparse.SUPPRESS)
    ap.add_argument("--reps", type=int, default=30, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    ops = args.ops
    if args.worker:
        print(json.dumps(worker(args.worker, args.backend, int(args.threads), args.reps, ops)))
        return None
    res = run(args.quick, tuple(int(t) for t in args.threads.split(",")), args.rounds, ops)
    print_table(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
