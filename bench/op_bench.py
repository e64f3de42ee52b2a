"""Per-op benchmark: forward + backward of each op, minigrad beside PyTorch, float32.

    python bench/op_bench.py [--quick] [--threads 1,2] [--rounds 3] [--coretypes unset,Haswell]
                             [--op NAME]... [--json PATH]

Every op is written once against PyTorch's API (`torch.xxx`, `F.xxx`) and run with either
library (lib_shims.library). Shapes are the toy Transformer's and the small GPT's (batch 64 x
length 20 = 1,280 rows, d_model 128, 4 heads of 32, FFN 512, vocabulary 2,000). A timed call
is the forward, then `backward` of the output with a fixed gradient (or of the loss).

Each library runs in its own process (their thread pools would otherwise stall each other:
docs/performance.md), and a figure is the median over rounds of processes. A process is
limited to the given thread count by NUMBA_NUM_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS
and `torch.set_num_threads`.

OpenBLAS kernel sets. NumPy's OpenBLAS picks its kernels for the CPU it finds, unless
OPENBLAS_CORETYPE names a core type (some systems pin an older one, Haswell, on AVX-512
machines; NumPy's products then differ by up to 2x). Each setting of `coretypes` ("unset":
the variable removed; any other value: set to it) runs minigrad's two backends in child
processes of their own: the variable is only ever set in a child's environment, never in
this process. PyTorch does its products in MKL, which ignores the variable, so it runs once
per round.

Against noise (per-op times here moved by up to 1.7x between runs of the same code):
- the processes alternate within a round (minigrad, PyTorch, the NumPy backend, then the
  same under the next kernel set), and every other round runs them in reverse order, so a
  drift of the machine's speed hits every variant alike;
- within a process, each op's timed calls are cut into BLOCKS blocks, and the blocks of all
  ops are interleaved (the ops' order rotated block by block): a burst of load from another
  program, which lasts longer than one op's calls (the slow phases seen here lasted a good
  part of a process), is then shared among all ops instead of doubling one op's time;
- a block starts with a pause of SETTLE_S (10 ms; OP_BENCH_SETTLE_S changes it): after a
  parallel kernel returns, the worker threads of Numba's OpenMP pool spin for about 4 ms
  before they sleep (measured here), so without it a block's first calls would share the
  machine with the previous op's spinning threads, which only some ops (those after a
  parallel kernel) would pay; then one untimed call, so no block times the first touch of
  an op's data after the pause;
- ratios are taken round by round (each process against its own round's partner) and
  printed as the median with the rounds' spread (min-max) beside it;
- each process also records the calling thread's CPU time per call (`time.thread_time`):
  with one thread it leaves out the time other programs held the core, so the JSON's
  cpu_numba_over_numpy (round by round, like the others) still compares the backends on a
  busy machine (with two threads it misses the pool's other threads and counts the spin
  of waiting for them, so it says little there); the table's "CPU ratio" column is the
  same for minigrad over PyTorch;
- each process also records its minor page faults and involuntary context switches per
  call (`getrusage`), so a slow round can be told apart: preemption by other programs shows
  as context switches, fresh memory as page faults. (After the warm-up calls there were
  none of the latter here: glibc's mmap threshold has by then risen to the size of the
  ops' arrays, so fresh outputs come from memory already mapped.)

On a busy machine (other programs on both cores), two-thread figures mean nothing at the
OpenMP default: a 2-thread kernel waited 16-40 ms per call for its second thread here
(minigrad's and PyTorch's alike; presumably a pool thread that spins while it waits has used
up its share of the core). Run with OMP_WAIT_POLICY=passive there (the children inherit it,
and both libraries' OpenMP read it: the stalls went down to about 1 ms); the footer prints
the value in effect. On a quiet machine leave it unset: that is what users get.

A control row ("control: QK^T's products in NumPy") times batched QK^T's three products as
plain np.matmul calls on NumPy arrays: the same code in every process, whatever its library or
backend. Its Numba/NumPy ratio is thus the processes' environment alone (what the other ops of
a process leave behind them: its thread pools, the cores' state, its heap), not code: where an
op's Numba/NumPy ratio moves with the control's, the op's two backends are not the cause.
(Batched QK^T makes the same NumPy calls on both backends where OpenBLAS runs its AVX-512
kernels, and its Numba/NumPy ratio stood at 1.07-1.10 at two threads on a quiet machine.)

The tables give minigrad's time over PyTorch's (below 1: minigrad is faster) and the Numba
backend's time over the NumPy backend's (below 1: the kernels help), under each kernel set.
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

# the control row: batched QK^T's three products as plain np.matmul calls on NumPy arrays, the
# same code in every process whatever its library or backend (see the docstring)
CONTROL = "control: QK^T's products in NumPy"

# (name, shape as printed): the builders below make the inputs for each
OPS = [("GELU", "1280x512"), ("GELU tanh", "1280x512"), ("ReLU", "1280x512"),
       ("SiLU", "1280x512"), ("tanh", "1280x512"), ("sigmoid", "1280x512"),
       ("softmax, attention rows", "5120x20"), ("softmax, vocabulary rows", "1280x2000"),
       ("log_softmax, vocabulary rows", "1280x2000"), ("layer norm", "1280x128"),
       ("batched QK^T", "256x20x32"), ("causal masked_fill + softmax", "256x20x20"),
       ("cross-entropy, label smoothing 0.1", "1280x2000"), ("dropout p=0.1", "1280x512"),
       ("embedding", "2000x128, 64x20 ids"), (CONTROL, "256x20x32")]


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
    nq, nk, ng = (r.standard_normal(n).astype(np.float32)
                  for n in ((256, 20, 32), (256, 20, 32), (256, 20, 20)))

    def control():   # Q K^T, dQ = G K, dK^T = Q^T G, the results allocated as the op's are
        np.matmul(nq, nk.swapaxes(1, 2)), np.matmul(ng, nk), np.matmul(nq.swapaxes(1, 2), ng)
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
        CONTROL: control,
    }


BLOCKS = 6          # timed blocks per op in a process, interleaved with the other ops' blocks
SETTLE_S = float(os.environ.get("OP_BENCH_SETTLE_S", "0.01"))  # pause before each block
OP_BUDGET_S = 0.3   # timed seconds per op and process, beyond which an op gets fewer calls
CORETYPES = ("unset", "Haswell")   # OpenBLAS kernel sets: the variable removed, or set to this


def worker(lib_name, backend, threads, reps, ops=None):
    """Time every op (or those named in `ops`) in this process, `reps` calls each (fewer for
    an op slower than OP_BUDGET_S / reps, at least BLOCKS) in BLOCKS interleaved blocks;
    returns {"ms": {op: median ms}, "cpu_ms": {op: median CPU ms of this thread},
    "minflt": {op: page faults per call},
    "nivcsw": {op: involuntary context switches per call}}."""
    import resource
    sys.path.insert(0, str(HERE))
    from lib_shims import library
    lib = library(lib_name)
    if lib_name == "torch":
        lib.set_num_threads(threads)
    else:
        lib.kernels.set_backend(backend)
    lib.manual_seed(0)
    runs = {name: run for name, run in _builders(lib).items() if ops is None or name in ops}
    count = {}
    for name, run in runs.items():  # compilation, caches, the allocator's first blocks
        for _ in range(3):
            t0 = time.perf_counter()
            run()
        # an op of many milliseconds (the NumPy backend's) gets fewer calls, at least a
        # block's worth: its own noise is small beside its time
        count[name] = min(reps, max(BLOCKS, int(OP_BUDGET_S / (time.perf_counter() - t0))))
    names = list(runs)
    times = {name: [] for name in names}
    cpu = {name: [] for name in names}
    faults = dict.fromkeys(names, 0)
    switches = dict.fromkeys(names, 0)
    for b in range(BLOCKS):
        for name in names[b % len(names):] + names[:b % len(names)]:
            per = -(-count[name] // BLOCKS)
            n = min(per, count[name] - len(times[name]))
            if n <= 0:
                continue
            run = runs[name]
            time.sleep(SETTLE_S)  # the previous op's pool threads stop spinning (see above)
            run()
            u0 = resource.getrusage(resource.RUSAGE_SELF)
            for _ in range(n):
                c0, t0 = time.thread_time(), time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.thread_time() - c0)
            u1 = resource.getrusage(resource.RUSAGE_SELF)
            faults[name] += u1.ru_minflt - u0.ru_minflt
            switches[name] += u1.ru_nivcsw - u0.ru_nivcsw
    return dict(ms={n: statistics.median(t) * 1e3 for n, t in times.items()},
                cpu_ms={n: statistics.median(t) * 1e3 for n, t in cpu.items()},
                minflt={n: faults[n] / len(times[n]) for n in names},
                nivcsw={n: switches[n] / len(times[n]) for n in names})


def child_env(threads, coretype, base=None):
    """The environment of a benchmark process: `base` (default os.environ) with the thread
    counts set, and OPENBLAS_CORETYPE removed ("unset" or None) or set to `coretype`."""
    env = dict(os.environ if base is None else base, NUMBA_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype not in (None, "unset"):
        env["OPENBLAS_CORETYPE"] = coretype
    return env


def _spawn(lib_name, backend, threads, reps, ops=None, coretype=None):
    cmd = [sys.executable, __file__, "--worker", lib_name, "--backend", backend or "-",
           "--threads", str(threads), "--reps", str(reps)]
    if ops is not None:
        cmd += [a for name in ops for a in ("--op", name)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=child_env(threads, coretype),
                       cwd=str(ROOT), timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"op_bench worker {lib_name} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _torch_available():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def _spread(values):
    """(median, min, max) of a list of numbers."""
    return statistics.median(values), min(values), max(values)


def schedule(coretypes, torch=True):
    """The processes of one round, in order: (library, backend, kernel set). PyTorch runs
    once, after minigrad's Numba backend under the first kernel set."""
    out = []
    for i, ct in enumerate(coretypes):
        out.append(("minigrad", "numba", ct))
        if torch and i == 0:
            out.append(("torch", None, None))
        out.append(("minigrad", "numpy", ct))
    return out


def run(quick=False, threads=(1, 2), rounds=None, ops=None, coretypes=CORETYPES):
    """Alternate the processes for `rounds` rounds at each thread count (every other round in
    reverse order) under each OpenBLAS kernel set of `coretypes`; returns
    {"threads": {t: {"rows": [...]}}, ...}: per op, PyTorch's median time and, per kernel set,
    minigrad's and the NumPy backend's, with the ratios' medians and spreads over the rounds.
    `ops`: the names of the ops to time (default: all of OPS)."""
    if ops is not None:
        unknown = set(ops) - {name for name, _ in OPS}
        if unknown:
            raise ValueError(f"op_bench: unknown ops {sorted(unknown)}; "
                             f"choose among {[name for name, _ in OPS]}")
    coretypes = tuple(coretypes)
    if not coretypes or len(set(coretypes)) != len(coretypes):
        raise ValueError(f"op_bench: coretypes must be distinct and at least one, got "
                         f"{coretypes}")
    rounds = rounds or (1 if quick else 3)
    reps = 5 if quick else 30
    order = schedule(coretypes, torch=_torch_available())
    res = dict(rounds=rounds, reps=reps, blocks=BLOCKS, quick=quick, threads={},
               coretypes=list(coretypes),
               OPENBLAS_CORETYPE_parent=os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
               OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "(unset)"),
               loadavg_start=list(os.getloadavg()))
    for t in threads:
        runs = {v: [] for v in order}
        for r in range(rounds):
            for v in (order if r % 2 == 0 else order[::-1]):
                runs[v].append(_spawn(v[0], v[1], t, reps, ops, coretype=v[2]))
        rows = []
        for name, shape in OPS:
            if ops is not None and name not in ops:
                continue
            ms = {v: [p["ms"][name] for p in runs[v]] for v in order}
            row = dict(op=name, shape=shape, coretypes={},
                       minflt={f"{v[0]}/{v[1]}/{v[2]}": max(p["minflt"][name] for p in runs[v])
                               for v in order},
                       nivcsw={f"{v[0]}/{v[1]}/{v[2]}": max(p["nivcsw"][name] for p in runs[v])
                               for v in order})
            torch_ms = ms.get(("torch", None, None))
            if torch_ms:
                row["torch_ms"], *row["torch_range"] = _spread(torch_ms)
            for ct in coretypes:
                nb, npb = ms[("minigrad", "numba", ct)], ms[("minigrad", "numpy", ct)]
                d = dict(minigrad_ms=statistics.median(nb), minigrad_range=(min(nb), max(nb)),
                         numpy_backend_ms=statistics.median(npb))
                cpu = [(p["cpu_ms"][name], q["cpu_ms"][name]) for p, q in
                       zip(runs[("minigrad", "numba", ct)], runs[("minigrad", "numpy", ct)])]
                d["cpu_numba_over_numpy"], *d["cpu_numba_over_numpy_range"] = _spread(
                    [x / y for x, y in cpu])
                d["numba_over_numpy"], *d["numba_over_numpy_range"] = _spread(
                    [x / y for x, y in zip(nb, npb)])
                if torch_ms:
                    d["ratio"], *d["ratio_range"] = _spread(
                        [x / y for x, y in zip(nb, torch_ms)])
                    d["cpu_ratio"], *d["cpu_ratio_range"] = _spread(
                        [p["cpu_ms"][name] / q["cpu_ms"][name] for p, q in
                         zip(runs[("minigrad", "numba", ct)], runs[("torch", None, None)])])
                row["coretypes"][ct] = d
            rows.append(row)
        res["threads"][t] = dict(rows=rows)
    res["loadavg_end"] = list(os.getloadavg())
    return res


def _ratio(d, key):
    """'median [min-max]' of a ratio, or '-'."""
    if key not in d:
        return "-"
    lo, hi = d[key + "_range"]
    return f"{d[key]:.2f} [{lo:.2f}-{hi:.2f}]"


def print_table(res):
    for t, d in res["threads"].items():
        for ct in res["coretypes"]:
            print(f"\n-- {t} thread(s), OPENBLAS_CORETYPE {ct}, forward + backward, float32, "
                  f"medians of up to {res['reps']} calls and {res['rounds']} alternated "
                  f"round(s), ms --")
            print(f"{'op':36s} {'shape':>19s} {'minigrad':>9s} {'PyTorch':>9s} "
                  f"{'ratio [rounds]':>17s} {'NumPy bk':>9s} {'Numba/NumPy [rounds]':>21s}"
                  f"{'CPU ratio [rounds]':>21s}")
            for r in d["rows"]:
                c = r["coretypes"][ct]
                torch_ms = f"{r['torch_ms']:9.3f}" if "torch_ms" in r else f"{'-':>9s}"
                print(f"{r['op']:36s} {r['shape']:>19s} {c['minigrad_ms']:9.3f} {torch_ms} "
                      f"{_ratio(c, 'ratio'):>17s} {c['numpy_backend_ms']:9.3f} "
                      f"{_ratio(c, 'numba_over_numpy'):>21s}{_ratio(c, 'cpu_ratio'):>21s}")
    print(f"(ratio = minigrad / PyTorch (PyTorch uses MKL: the kernel set is OpenBLAS's, for "
          f"minigrad); Numba/NumPy = minigrad's two backends; CPU ratio = the ratio of the "
          f"calling thread's CPU times (with one thread it leaves out the time other programs "
          f"held the core; with two it says little); [rounds] = min-max of the "
          f"per-round ratios; OMP_WAIT_POLICY {res['OMP_WAIT_POLICY']}; load average "
          f"{res['loadavg_start'][0]:.2f} -> {res['loadavg_end'][0]:.2f})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 calls per op, one round")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, help="alternated rounds (default 3; quick 1)")
    ap.add_argument("--coretypes", default=",".join(CORETYPES),
                    help="comma-separated OpenBLAS kernel sets for minigrad's processes: "
                         "'unset' (the variable removed) or a core type such as Haswell")
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
    res = run(args.quick, tuple(int(t) for t in args.threads.split(",")), args.rounds, ops,
              tuple(c.strip() for c in args.coretypes.split(",") if c.strip()))
    print_table(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
