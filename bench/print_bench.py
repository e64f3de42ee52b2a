"""How long `repr(t)` takes: minigrad against PyTorch, on the tensors a learner prints.

    python bench/print_bench.py [--rounds 5] [--reps 20]
    python bench/print_bench.py --worker minigrad|torch      # one library, one JSON line

Cases: a 1000x1000 float32 tensor (summarized: only its corners are formatted), a 30x30 one
(900 values, each formatted), a summarized int64 one and a complex one. Each library runs in its own process,
one thread, and the processes alternate round by round; the figure is the median over rounds
of each round's median over `reps` calls, in milliseconds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = ("1000x1000 summarized", "30x30", "1000x1000 int64 summarized", "complex 20x20")


def _tensors(lib):
    import numpy as np
    rng = np.random.default_rng(0)
    m = __import__(lib)
    return {"1000x1000 summarized": m.tensor(rng.standard_normal((1000, 1000), np.float32)),
            "30x30": m.tensor(rng.standard_normal((30, 30), np.float32)),
            "1000x1000 int64 summarized": m.tensor(rng.integers(-99, 99, (1000, 1000))),
            "complex 20x20": m.tensor((rng.standard_normal((20, 20))
                                       + 1j * rng.standard_normal((20, 20))).astype(np.complex64))}


def worker(lib, reps):
    if lib == "torch":
        import torch
        torch.set_num_threads(1)
    out = {}
    for name, t in _tensors(lib).items():
        repr(t)  # warm up
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            repr(t)
            times.append(time.perf_counter() - start)
        out[name] = statistics.median(times) * 1e3
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--worker")
    a = p.parse_args()
    if a.worker:
        return worker(a.worker, a.reps)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    seen = {"minigrad": [], "torch": []}
    for _ in range(a.rounds):
        for lib in seen:
            line = subprocess.run([sys.executable, __file__, "--worker", lib, "--reps",
                                   str(a.reps)], env=env, capture_output=True, text=True,
                                  check=True).stdout.strip().splitlines()[-1]
            seen[lib].append(json.loads(line))
    print(f"{'case':28s} {'minigrad ms':>12s} {'torch ms':>10s}")
    for case in CASES:
        mg_ms, torch_ms = (statistics.median(r[case] for r in seen[lib]) for lib in seen)
        print(f"{case:28s} {mg_ms:12.3f} {torch_ms:10.3f}")


if __name__ == "__main__":
    main()
