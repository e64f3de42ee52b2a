"""Benchmark minigrad.kernels: the Numba backend against the NumPy reference.

    python bench/bench_kernels.py [--quick] [--json PATH]

Shapes are the toy Transformer's (batch 64 x length 20 -> 1280 rows, d_model
128, 4 heads of 32, FFN 512, vocabulary 2000), float32. Prints medians in
microseconds and NumPy-time / Numba-time (> 1: Numba is faster).

Measurement care (docs/performance.md, sections 1 and 7): NumPy's matmul
runs on OpenBLAS's threads, the Numba kernels on Numba's OpenMP threads, and
calling one right after the other makes the two pools stall each other for
milliseconds. So each library is timed in its own block (warm-up first, a
pause before the block so the other pool's threads stop spinning), and the
blocks alternate over a few rounds so that load from other processes hits
both sides alike. First-call compile times are measured in a fresh
subprocess with an empty Numba cache.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import minigrad  # noqa: E402
from minigrad import kernels  # noqa: E402


def _cases():
    r = np.random.default_rng(0)
    f = np.float32

    def rand(*shape):
        return r.standard_normal(shape, dtype=f)

    q, k, p = rand(256, 20, 32), rand(256, 20, 32), rand(256, 20, 20)
    x, h, w1, w2, wo = rand(1280, 128), rand(1280, 512), rand(512, 128), rand(128, 512), rand(2000, 128)
    g_lg = rand(1280, 2000)
    att, voc = rand(3072, 24) * 4, rand(768, 2000) * 4
    att_g, voc_g = rand(3072, 24), rand(768, 2000)
    att_y, voc_y = kernels.softmax(att), kernels.softmax(voc)
    att_l, voc_l = kernels.log_softmax(att), kernels.log_softmax(voc)
    drop = rand(64, 20, 512)
    mm = kernels.matmul
    return [  # (group, name, shape label, callable)
        ("matmul", "QK^T", "(256,20,32)@(256,32,20)", lambda: mm(q, k.transpose(0, 2, 1))),
        ("matmul", "AV", "(256,20,20)@(256,20,32)", lambda: mm(p, q)),
        ("matmul", "FFN up", "(1280,128)@(128,512)", lambda: mm(x, w1.T)),
        ("matmul", "FFN down", "(1280,512)@(512,128)", lambda: mm(h, w2.T)),
        ("matmul", "logits", "(1280,128)@(128,2000)", lambda: mm(x, wo.T)),
        ("matmul", "logits dX", "(1280,2000)@(2000,128)", lambda: mm(g_lg, wo)),
        ("matmul", "W grad FFN", "(512,1280)@(1280,128)", lambda: mm(h.T, x)),
        ("matmul", "W grad logits", "(2000,1280)@(1280,128)", lambda: mm(g_lg.T, x)),
        ("softmax", "softmax fwd", "3072 x 24", lambda: kernels.softmax(att)),
        ("softmax", "softmax bwd", "3072 x 24", lambda: kernels.softmax_backward(att_y, att_g)),
        ("softmax", "softmax fwd", "768 x 2000", lambda: kernels.softmax(voc)),
        ("softmax", "softmax bwd", "768 x 2000", lambda: kernels.softmax_backward(voc_y, voc_g)),
        ("softmax", "log_softmax fwd+bwd", "3072 x 24",
         lambda: kernels.log_softmax_backward(kernels.log_softmax(att), att_g)),
        ("softmax", "log_softmax fwd+bwd", "768 x 2000",
         lambda: kernels.log_softmax_backward(kernels.log_softmax(voc), voc_g)),
        ("dropout", "dropout p=0.1", "64 x 20 x 512", lambda: kernels.dropout(drop, 0.1, 1)),
    ]


def _busy(dt=0.25):
    """Fraction of CPU time other processes used over dt seconds (Linux)."""
    def read():
        with open("/proc/stat") as f:
            v = [int(n) for n in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]   # total, idle + iowait
    try:
        t0, i0 = read()
        time.sleep(dt)
        t1, i1 = read()
    except OSError:
        return float("nan")
    return 1 - (i1 - i0) / max(1, t1 - t0)


def _wait_quiet(limit=0.25, patience=30.0):
    """Two-thread kernels get several times slower while another process
    holds a core, so wait (up to `patience` s) for an idle machine."""
    end = time.time() + patience
    busy = _busy()
    while busy > limit and time.time() < end:
        busy = _busy()
    return busy


def _block(cases, backend, reps, samples):
    """Time every case on one backend, back to back (one thread pool)."""
    kernels.set_backend(backend)
    samples.setdefault("busy", []).append(_wait_quiet())  # also lets the other pool sleep
    for _, _, _, fn in cases:
        for _ in range(3):
            fn()
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        samples.setdefault(backend, {}).setdefault(id(fn), []).extend(ts)
    samples["busy"].append(_busy(0.05))


def _compile_times():
    """First-call times in a fresh process with an empty Numba cache, then
    the same in a second process that loads the cache."""
    code = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
from minigrad import kernels
out = {"import": time.perf_counter() - t0}
if hasattr(kernels, "PARALLEL_MIN_WORK"):
    kernels.PARALLEL_MIN_WORK = 0   # time the parallel kernels, even on tiny inputs
x = np.ones((8, 8), np.float32)
for name, fn in [("matmul", lambda: kernels.matmul(x, x)),
                 ("softmax", lambda: kernels.softmax(x)),
                 ("softmax_backward", lambda: kernels.softmax_backward(x, x)),
                 ("log_softmax", lambda: kernels.log_softmax(x)),
                 ("log_softmax_backward", lambda: kernels.log_softmax_backward(x, x)),
                 ("dropout", lambda: kernels.dropout(x, 0.1, 0))]:
    t = time.perf_counter(); fn(); out[name] = time.perf_counter() - t
out["total"] = time.perf_counter() - t0
print(json.dumps(out))
"""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, MINIGRAD_BACKEND="numba",
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        res = {}
        for key in ("cold", "cached"):
            run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True)
            res[key] = json.loads(run.stdout.strip().splitlines()[-1])
    return res


def run(quick=False):
    """Run the benchmark; return {"env", "rows", "compile_s"} (times in us / s)."""
    backend = kernels.get_backend()
    cases = _cases()
    rounds, reps = (1, 10) if quick else (3, 30)
    samples = {}
    try:
        for _ in range(rounds):
            _block(cases, "numba", reps, samples)
            _block(cases, "numpy", reps, samples)
    finally:
        kernels.set_backend(backend)
    rows = []
    for group, name, shape, fn in cases:
        nb = float(np.median(samples["numba"][id(fn)])) * 1e6
        npy = float(np.median(samples["numpy"][id(fn)])) * 1e6
        rows.append(dict(group=group, op=name, shape=shape, numba_us=nb, numpy_us=npy,
                         speedup=npy / nb,
                         numba_min_us=float(np.min(samples["numba"][id(fn)])) * 1e6,
                         numpy_min_us=float(np.min(samples["numpy"][id(fn)])) * 1e6))
    import numba
    env = dict(OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
               numpy=np.__version__, numba=numba.__version__,
               numba_threads=numba.get_num_threads(), threading_layer=numba.threading_layer(),
               cpus=os.cpu_count(), loadavg=os.getloadavg()[0],
               other_cpu_use_around_blocks=[round(b, 2) for b in samples["busy"]])
    return dict(env=env, rows=rows, compile_s=_compile_times())


def _print(res):
    e = res["env"]
    print(f"OPENBLAS_CORETYPE={e['OPENBLAS_CORETYPE']}  numpy {e['numpy']}  numba {e['numba']} "
          f"({e['numba_threads']} threads, {e['threading_layer']})  cpus {e['cpus']}  "
          f"load avg at end {e['loadavg']:.2f}")
    print("CPU share used by other processes around the timed blocks: "
          + " ".join(f"{b:.0%}" for b in e["other_cpu_use_around_blocks"]))
    print(f"{'op':<22}{'shape':<26}{'numba us':>10}{'numpy us':>10}{'numpy/numba':>13}")
    for r in res["rows"]:
        print(f"{r['op']:<22}{r['shape']:<26}{r['numba_us']:>10.0f}{r['numpy_us']:>10.0f}"
              f"{r['speedup']:>12.2f}x")
    c = res["compile_s"]
    print("first call, empty Numba cache (s): " +
          "  ".join(f"{k} {v:.2f}" for k, v in c["cold"].items()))
    print("first call, cache filled (s):      " +
          "  ".join(f"{k} {v:.2f}" for k, v in c["cached"].items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args()
    minigrad.tune_malloc()  # as bench/run.py does: both measure under one allocator setting
    res = run(quick=args.quick)
    _print(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
