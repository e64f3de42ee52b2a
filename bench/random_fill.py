"""The random fills, minigrad against PyTorch: randn, rand, normal_ and bernoulli_(0.5) of
1e3, 1e5 and 5e6 elements in float32 and float64, after the same manual_seed (the same
numbers). Each library runs in its own process, on one thread (the machine is shared: CPU
time, not wall time), the two alternated, for `rounds` rounds; a process times each case
`calls` times and reports its median. Printed per case: each library's median over the
rounds with its spread (min-max), and the ratio minigrad/PyTorch.

    nice -n 19 python bench/random_fill.py [rounds]
"""
import json
import os
import statistics
import subprocess
import sys

SIZES = (1_000, 100_000, 5_000_000)
DTYPES = ("float32", "float64")
OPS = ("randn", "rand", "normal_", "bernoulli_")

CODE = """
import json, statistics, time
import {lib} as L
if "{lib}" == "torch":
    L.set_num_threads(1)
L.manual_seed(0)
ops = {{
    "randn": lambda n, dt, x: L.randn(n, dtype=dt),
    "rand": lambda n, dt, x: L.rand(n, dtype=dt),
    "normal_": lambda n, dt, x: x.normal_(),
    "bernoulli_": lambda n, dt, x: x.bernoulli_(0.5),
}}
out = {{}}
for n in {sizes}:
    calls = 60 if n <= 1000 else 15 if n <= 100000 else 4
    for dtype in {dtypes}:
        dt = getattr(L, dtype)
        x = L.empty(n, dtype=dt)
        for name in {ops}:
            f = ops[name]
            f(n, dt, x)   # compiles or warms up
            times = []
            for _ in range(calls):
                t0 = time.process_time()
                f(n, dt, x)
                times.append(time.process_time() - t0)
            out[f"{{name}} {{n}} {{dtype}}"] = statistics.median(times)
print(json.dumps(out))
"""


def run(lib):
    code = CODE.format(lib=lib, sizes=SIZES, dtypes=DTYPES, ops=OPS)
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(rounds=5):
    results = {"torch": [], "minigrad": []}
    for r in range(rounds):
        for lib in (("torch", "minigrad") if r % 2 == 0 else ("minigrad", "torch")):
            results[lib].append(run(lib))
    print(f"{rounds} rounds; per library: median over rounds [min-max], in ms")
    print(f"{'case':28s} {'minigrad':>24s} {'PyTorch':>24s} {'ratio':>6s}")
    for key in results["torch"][0]:
        cells = []
        for lib in ("minigrad", "torch"):
            ms = [r[key] * 1e3 for r in results[lib]]
            cells.append((statistics.median(ms), min(ms), max(ms)))
        text = [f"{m:8.3f} [{lo:7.3f}-{hi:7.3f}]" for m, lo, hi in cells]
        print(f"{key:28s} {text[0]:>24s} {text[1]:>24s} {cells[0][0] / cells[1][0]:6.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
