"""Per-op autograd overhead: forward + backward of one op on 4x4 float32 tensors, one thread.

    python bench/autograd_overhead.py [--rounds 5] [--reps 200] [--n 64] [--before PYTHON]
    python bench/autograd_overhead.py --worker minigrad|torch      # one library, one JSON line

Method. For each op a chain of N applications is built from a leaf and backpropagated
(`y.sum().backward()`); per-op cost = (median time of the N-chain - median time of the
1-chain) / (N - 1), so the final sum, the backward call and other fixed costs cancel. Inputs
are 4x4, where the arithmetic itself costs well under a microsecond: what is left is the
library's bookkeeping per op (creating the output, recording the node, the engine's walk, the
gradient's creation and accumulation).

Each library runs in its own process (their thread pools would otherwise interfere), every
process with one thread (NUMBA_NUM_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS = 1 and
`torch.set_num_threads(1)`), and the processes alternate round by round: minigrad, torch,
minigrad, torch, ... The figure reported is the median over rounds. `--before PYTHON` adds a
third process per round, another interpreter whose `minigrad` is an older checkout, so that
"before" and "after" are measured side by side under the same machine load.

Run it from outside the repository root (or through bench/run.py, which does): a worker imports
whichever `minigrad` its interpreter has installed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

OPS = ("add", "mul", "tanh", "exp", "matmul 4x4")


def _chains(lib):
    """(leaf x, leaf w, {op name: one link of the chain}) for `lib` ("minigrad" or "torch")."""
    import numpy as np
    rng = np.random.default_rng(0)
    # values near 1 keep a 64-long product chain away from denormals, whose cost would swamp
    # the bookkeeping being measured
    xa = rng.uniform(0.9, 1.1, (4, 4)).astype(np.float32)
    wa = np.eye(4, dtype=np.float32)
    if lib == "torch":
        import torch
        torch.set_num_threads(1)
        x = torch.tensor(xa, requires_grad=True)
        w = torch.tensor(wa, requires_grad=True)
    else:
        import minigrad
        x = minigrad.tensor(xa, requires_grad=True)
        w = minigrad.tensor(wa, requires_grad=True)
    links = {"add": lambda y: y + x, "mul": lambda y: y * x, "tanh": lambda y: y.tanh(),
             "exp": lambda y: y.exp(), "matmul 4x4": lambda y: y @ w}
    return x, w, links


def measure(lib, n=64, reps=200):
    """Per-op microseconds of forward + backward for each op of `OPS`, in this process."""
    import numpy as np
    x, w, links = _chains(lib)

    def run(fn, k):
        y = x
        for _ in range(k):
            y = fn(y)
        y.sum().backward()

    def timed(fn, k):
        ts = []
        for _ in range(reps):
            x.grad = w.grad = None
            t = time.perf_counter()
            run(fn, k)
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    out = {}
    with np.errstate(all="ignore"):  # an exp chain overflows to inf; its cost does not change
        for name in OPS:
            fn = links[name]
            for _ in range(5):
                run(fn, n)  # warm-up: caches, lazy imports, first-call compilation
            # two interleaved estimates, so a load spike hits one of them rather than the
            # difference between the 1-chain and the N-chain
            est = []
            for _ in range(2):
                t1, tn = timed(fn, 1), timed(fn, n)
                est.append((tn - t1) / (n - 1))
            out[name] = statistics.median(est) * 1e6
    return out


def _worker_main(lib, n, reps):
    if lib == "torch":
        import torch
        version = torch.__version__
    else:
        import minigrad
        version = minigrad.__file__
    print(json.dumps(dict(lib=lib, version=version, per_op_us=measure(lib, n, reps))))


def _one_thread_env():
    return dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
                OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")


def _spawn(python, lib, n, reps):
    here = os.path.abspath(__file__)
    # cwd outside the repository: the worker must import its interpreter's installed minigrad
    r = subprocess.run([python, here, "--worker", lib, "--n", str(n), "--reps", str(reps)],
                       capture_output=True, text=True, env=_one_thread_env(), cwd="/",
                       timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"autograd_overhead worker {lib} ({python}) failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])["per_op_us"]


def _torch_available(python):
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


def compare(rounds=5, n=64, reps=200, before=None, torch=True, python=sys.executable):
    """Alternate worker processes for `rounds` rounds; per library, per op: the median us."""
    columns = ([("before", before, "minigrad")] if before else []) + [("minigrad", python, "minigrad")]
    if torch and _torch_available(python):
        columns.append(("torch", python, "torch"))
    runs = {label: [] for label, _, _ in columns}
    for _ in range(rounds):
        for label, py, lib in columns:
            runs[label].append(_spawn(py, lib, n, reps))
    table = {label: {op: statistics.median(r[op] for r in rs) for op in OPS}
             for label, rs in runs.items()}
    spread = {label: {op: (min(r[op] for r in rs), max(r[op] for r in rs)) for op in OPS}
              for label, rs in runs.items()}
    return dict(method=__doc__.split("Method. ")[1].split("\n\n")[0].replace("\n", " "),
                chain_n=n, reps=reps, rounds=rounds, per_op_us=table, spread_us=spread,
                rows=[dict(op=op, per_op_us=table["minigrad"][op],
                           **{f"{lab}_us": table[lab][op] for lab in table if lab != "minigrad"})
                      for op in OPS])


def print_table(res):
    labels = list(res["per_op_us"])
    print(f"{'op':<12}" + "".join(f"{lab + ' us':>14}" for lab in labels)
          + ("" if "torch" not in labels else f"{'minigrad/torch':>16}"))
    for op in OPS:
        row = res["per_op_us"]
        line = f"{op:<12}" + "".join(f"{row[lab][op]:>14.2f}" for lab in labels)
        if "torch" in labels:
            line += f"{row['minigrad'][op] / row['torch'][op]:>16.2f}"
        print(line)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=64, help="chain length (default 64)")
    ap.add_argument("--reps", type=int, default=200, help="repeats per timing (default 200)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--before", metavar="PYTHON", help="interpreter of an older minigrad")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    args = ap.parse_args(argv)
    if args.n < 2 or args.reps < 1 or args.rounds < 1:
        ap.error("--n must be >= 2, --reps and --rounds >= 1")
    if args.worker:
        return _worker_main(args.worker, args.n, args.reps)
    res = compare(args.rounds, args.n, args.reps, args.before, not args.no_torch)
    print(f"forward+backward per op, 4x4 float32, one thread, chain of {args.n} minus chain "
          f"of 1; medians of {args.reps} repeats, then of {args.rounds} alternating rounds; "
          f"load average {os.getloadavg()[0]:.2f}")
    print_table(res)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
