"""The cost of views and of writes through them, minigrad against PyTorch, one thread.

    python bench/view_ops.py [--rounds 5] [--reps 2000] [--n 256]
    python bench/view_ops.py --worker minigrad|torch      # one library, one JSON line

Cases, on an (n, n) float32 tensor: `x.diagonal()` (a view in both), the same diagonal taken by
advanced indexing (`x[i, i]`, a gather: what minigrad's diagonal was before it became a view),
`x.t().reshape(-1)` (a copy) and `x.view(-1)` (a view), and, with a graph (x = leaf * 1), a
write through a view, `x.diagonal().mul_(2)` and `x[0].add_(1)`, which rebase x's graph.

Each library runs in its own process, every process with one thread, and the processes
alternate round by round (minigrad, torch, minigrad, ...); the figure is the median over
rounds of each round's median per call, in microseconds. On a shared machine the numbers are
noisy: compare them within one run only.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = ("diagonal (view)", "x[i, i] (gather)", "t().reshape(-1) (copy)", "view(-1)",
         "diagonal().mul_(2), graph", "x[0].add_(1), graph")


def _cases(lib, n):
    import numpy as np
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    if lib == "torch":
        import torch as m
        m.set_num_threads(1)
    else:
        import minigrad as m
    x = m.tensor(a)
    leaf = m.tensor(a, requires_grad=True)
    i = m.arange(n)

    def graph_write(view, write):
        y = leaf * 1
        write(view(y))
        return y
    return {
        "diagonal (view)": lambda: x.diagonal(),
        "x[i, i] (gather)": lambda: x[i, i],
        "t().reshape(-1) (copy)": lambda: x.t().reshape(-1),
        "view(-1)": lambda: x.view(-1),
        "diagonal().mul_(2), graph": lambda: graph_write(lambda t: t.diagonal(),
                                                         lambda v: v.mul_(2)),
        "x[0].add_(1), graph": lambda: graph_write(lambda t: t[0], lambda v: v.add_(1)),
    }


def measure(lib, n, reps):
    cases = _cases(lib, n)
    out = {}
    for name in CASES:
        fn = cases[name]
        for _ in range(reps // 10):  # warm up
            fn()
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(reps):
                fn()
            times.append((time.perf_counter() - start) / reps * 1e6)
        out[name] = statistics.median(times)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=2000)
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--worker", choices=("minigrad", "torch"))
    args = p.parse_args()
    if args.worker:
        print(json.dumps(measure(args.worker, args.n, args.reps)))
        return
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    results = {"minigrad": [], "torch": []}
    for _ in range(args.rounds):
        for lib in ("minigrad", "torch"):
            line = subprocess.run([sys.executable, __file__, "--worker", lib, "--n", str(args.n),
                                   "--reps", str(args.reps)], env=env, check=True,
                                  capture_output=True, text=True).stdout.strip().splitlines()[-1]
            results[lib].append(json.loads(line))
    print(f"microseconds per call, ({args.n}, {args.n}) float32, one thread, median of "
          f"{args.rounds} alternated rounds")
    print(f"{'case':30s} {'minigrad':>10s} {'torch':>10s}")
    for name in CASES:
        med = {lib: statistics.median(r[name] for r in results[lib]) for lib in results}
        print(f"{name:30s} {med['minigrad']:10.2f} {med['torch']:10.2f}")


if __name__ == "__main__":
    main()
