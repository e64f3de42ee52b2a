"""rand and randn of 10**6 float32 numbers, minigrad against PyTorch, each library in its own
process, alternated: python bench/random_fill.py [rounds]. Best of 7 calls per process."""
import subprocess
import sys

CODE = """
import time
import {lib} as L
L.manual_seed(0)
for name in ("rand", "randn"):
    f = getattr(L, name)
    f(10 ** 6)
    best = min((lambda t0: (f(10 ** 6), time.perf_counter() - t0)[1])(time.perf_counter())
               for _ in range(7))
    print(name, round(best * 1e3, 2))
"""


def main(rounds=3):
    results = {}
    for _ in range(rounds):
        for lib in ("torch", "minigrad"):
            out = subprocess.run([sys.executable, "-c", CODE.format(lib=lib)], check=True,
                                 capture_output=True, text=True).stdout.split("\n")
            for line in filter(None, out):
                name, ms = line.split()
                results.setdefault((lib, name), []).append(float(ms))
    for (lib, name), ms in sorted(results.items()):
        print(f"{name:6s} {lib:9s} best {min(ms):7.2f} ms  (runs: {ms})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
