"""Every matrix product of one training step, timed per shape: minigrad, np.matmul, torch.

    python bench/gemm_shapes.py [--model toy|gpt] [--threads 1 2] [--rounds 3]
                                [--libs minigrad numpy torch] [--stat median|min]

The toy step (bench/step_worker.py: batch 64 x 20 = 1,280 tokens, d_model 128, 4 heads of 32,
FFN 512, vocabulary 2,000, 2+2 layers) makes 99 products through `Linear` (33 layers, each a
forward y = x W^T, an input gradient dX = g W and a weight gradient dW = g^T x) and 36 through
attention (6 attention blocks, each Q K^T and A V forward and both gradients of each). The table
lists each distinct product once with its operands laid out as in the step (a transposed
weight, a permuted view of the heads, ...) and how often the step makes it.

`--model gpt`: the small GPT of bench/small_models.py instead (batch 16 x 32 = 512 tokens,
n_embd 64, 2 layers of 4 heads of 16, each head its own bias-free key, query and value
Linear(64 -> 16), a projection 64 -> 64 and an MLP 64 -> 256 -> 64 with biases, a head over
the 46 characters of the generated text; attention's products are (16, 32, 16) by (16, 16,
32) and (16, 32, 32) by (16, 32, 16), one head at a time). A product with a bias is timed with
it: the forward as addmm, the input gradient with the bias gradient (the column sums of g).

Each library runs in its own process (their thread pools must not meet), one process per
(library, thread count); the processes alternate over `--rounds` rounds and each cell is the
median over rounds of a per-process median of many repeats (`--stat min`: the least of all
samples, a fairer figure on a busy machine, where a 2-thread kernel waits whenever either of
its threads is descheduled). One thread is timed in CPU time (time.process_time: what another
program's load does not inflate), two threads in wall time.
  minigrad: minigrad.ops.matmul's mm, addmm and mm_and_sum, the entries the matmul and
            linear ops call (NUMBA_NUM_THREADS = threads);
  numpy:    np.matmul on OpenBLAS's own threads (OPENBLAS_NUM_THREADS = threads), the bias
            added and summed by NumPy;
  torch:    torch.matmul, torch.addmm (and g.sum(0)) on torch.from_numpy views of the same
            arrays (torch.set_num_threads).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N, D, H, DK, FFN, V, B, T = 1280, 128, 4, 32, 512, 2000, 64, 20
# the small GPT: tokens, n_embd, head size, MLP width, characters, batch, block
GN, GD, GK, GF, GV, GB, GT = 512, 64, 16, 256, 46, 16, 32


def _linear(din, dout, rows=N, bias=False):
    """The three products of a Linear(din -> dout) over `rows` rows, with the step's layouts:
    {what: (a, b, bias or None, whether g's column sums are taken with dX)}."""
    def make(rng):
        import numpy as np
        x = rng.standard_normal((rows, din), dtype=np.float32)
        w = rng.standard_normal((dout, din), dtype=np.float32)
        g = rng.standard_normal((rows, dout), dtype=np.float32)
        b = rng.standard_normal(dout, dtype=np.float32) if bias else None
        return {"fwd x W^T" + (" + b" if bias else ""): (x, w.T, b, False),
                "dX = g W" + (" (+ db)" if bias else ""): (g, w, None, bias),
                "dW = g^T x": (g.T, x, None, False)}
    return make


def _heads(rng):
    """(B, H, T, DK) as attention sees it: a permuted view of (B, T, H, DK)."""
    import numpy as np
    return rng.standard_normal((B, T, H, DK), dtype=np.float32).transpose(0, 2, 1, 3)


def _attention_products(q, k, v, go, w):
    """Q K^T and A V forward and both gradients of each, as the matmul op makes them."""
    kt = k.swapaxes(-1, -2)
    named = {"QK^T fwd": (q, kt), "AV fwd": (w, v),
             "QK^T dQ = gS K": (w, k), "QK^T dK^T = Q^T gS": (q.swapaxes(-1, -2), w),
             "AV dA = gO V^T": (go, v.swapaxes(-1, -2)),
             "AV dV = A^T gO": (w.swapaxes(-1, -2), go)}
    return {k_: (a, b, None, False) for k_, (a, b) in named.items()}


def _attention(rng):
    import numpy as np
    q, k, v, go = (_heads(rng) for _ in range(4))  # go: the gradient of the output (B, H, T, DK)
    w = rng.standard_normal((B, H, T, T), dtype=np.float32)   # weights, or the scores' gradient
    return _attention_products(q, k, v, go, w)


def _gpt_head(rng):
    """One head of the small GPT: q, k, v are (B, T, hs) views of its Linear's (B*T, hs) rows."""
    import numpy as np
    q, k, v, go = (rng.standard_normal((GB, GT, GK), dtype=np.float32) for _ in range(4))
    w = rng.standard_normal((GB, GT, GT), dtype=np.float32)
    return _attention_products(q, k, v, go, w)


# (group, maker, products per step of each of its shapes), per model
MODELS = {
    "toy": [("attn proj 128->128", _linear(D, D), 24), ("FFN 128->512", _linear(D, FFN), 4),
            ("FFN 512->128", _linear(FFN, D), 4), ("output 128->2000", _linear(D, V), 1),
            ("attention", _attention, 6)],
    "gpt": [("head k/q/v 64->16", _linear(GD, GK, GN), 24),
            ("proj 64->64", _linear(GD, GD, GN, True), 2),
            ("MLP 64->256", _linear(GD, GF, GN, True), 2),
            ("MLP 256->64", _linear(GF, GD, GN, True), 2),
            ("lm head 64->46", _linear(GD, GV, GN, True), 1),
            ("attention", _gpt_head, 8)],
}


def products(seed=0, model="toy"):
    """[(name, a, b, per_step, bias, with_sums)] in table order, float32, the step's layouts:
    a @ b (+ bias), and with_sums: a.sum(axis=0) taken too (a Linear's bias gradient)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = []
    for group, make, count in MODELS[model]:
        for what, (a, b, bias, sums) in make(rng).items():
            out.append((f"{group}: {what}", a, b, count, bias, sums))
    return out


def _entry(lib):
    """call(a, b, bias, sums): one product as `lib` computes it in a step."""
    import numpy as np
    if lib == "minigrad":
        sys.path.insert(0, str(ROOT))
        from minigrad.ops import matmul as ops

        def call(a, b, bias, sums):
            if bias is not None:
                return ops.addmm(bias, a, b)
            return ops.mm_and_sum(a, b) if sums else ops.mm(a, b)
    elif lib == "numpy":
        def call(a, b, bias, sums):
            c = np.matmul(a, b)
            if bias is not None:
                c += bias
            return (c, a.sum(axis=0)) if sums else c
    else:
        import torch

        def call(a, b, bias, sums):
            if bias is not None:
                return torch.addmm(bias, a, b)
            c = torch.matmul(a, b)
            return (c, a.sum(0)) if sums else c
    return call


def _describe(a, b):
    def one(x):
        s = "x".join(map(str, x.shape))
        if x.ndim == 2:
            return s + ("" if x.flags.c_contiguous else "^T")
        return s
    return f"{one(a)} @ {one(b)}"


def worker(lib, threads, repeats, target_s, stat, model="toy"):
    """Time every product in this process; print {name: seconds per call} as JSON."""
    fn = _entry(lib)
    calls = []
    for name, a, b, _, bias, sums in products(model=model):
        if lib == "torch":
            import torch
            torch.set_num_threads(threads)
            a, b = torch.from_numpy(a), torch.from_numpy(b)
            bias = None if bias is None else torch.from_numpy(bias)
        calls.append((name, a, b, bias, sums))
    clock = time.process_time if threads == 1 else time.perf_counter
    # how many calls make one timed sample of about target_s, from a warm-up
    loops = {}
    for name, a, b, bias, sums in calls:
        for _ in range(3):
            fn(a, b, bias, sums)
        t = time.perf_counter()
        fn(a, b, bias, sums)
        loops[name] = max(1, int(target_s / max(time.perf_counter() - t, 1e-7)))
    samples = {name: [] for name, *_ in calls}
    for _ in range(repeats):  # round-robin, so that a burst of load hits every shape alike
        for name, a, b, bias, sums in calls:
            n = loops[name]
            t = clock()
            for _ in range(n):
                fn(a, b, bias, sums)
            samples[name].append((clock() - t) / n)
    pick = min if stat == "min" else statistics.median
    print(json.dumps({name: pick(s) for name, s in samples.items()}))


def _run(lib, threads, repeats, target_s, stat, model):
    env = dict(os.environ)
    env.update(NUMBA_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    if lib != "numpy":  # OpenBLAS's own pool stays at its default for minigrad (held at 1)
        env.pop("OPENBLAS_NUM_THREADS")
    cmd = [sys.executable, __file__, "--worker", lib, "--threads", str(threads),
           "--repeats", str(repeats), "--target-ms", str(target_s * 1e3), "--stat", stat,
           "--model", model]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"gemm_shapes: the {lib} worker ({threads} threads) failed: "
                 f"{run.stderr.strip().splitlines()[-1] if run.stderr.strip() else run.returncode}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="toy",
                    help="the toy Transformer's products or the small GPT's")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--libs", nargs="+", default=["minigrad", "numpy", "torch"],
                    choices=["minigrad", "numpy", "torch"])
    ap.add_argument("--rounds", type=int, default=3, help="processes per (library, threads)")
    ap.add_argument("--repeats", type=int, default=15, help="samples per shape in a process")
    ap.add_argument("--target-ms", type=float, default=4.0, help="length of one sample")
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="per-shape statistic over the samples (and over the processes)")
    ap.add_argument("--worker", choices=["minigrad", "numpy", "torch"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.threads[0], args.repeats, args.target_ms / 1e3,
                      args.stat, args.model)
    libs = list(args.libs)
    if "torch" in libs:
        try:
            import torch  # noqa: F401
        except ImportError:
            libs.remove("torch")
    runs = {}
    for _ in range(args.rounds):
        for threads in args.threads:
            for lib in libs:
                res = _run(lib, threads, args.repeats, args.target_ms / 1e3, args.stat,
                           args.model)
                for name, s in res.items():
                    runs.setdefault((lib, threads, name), []).append(s)
    pick = min if args.stat == "min" else statistics.median
    cell = {k: pick(v) for k, v in runs.items()}
    cols = [(lib, t) for t in args.threads for lib in libs]
    print(f"load average {os.getloadavg()[0]:.2f}; OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; {args.stat} of {args.rounds} "
          f"processes; 1 thread: CPU time, 2 threads: wall time")
    head = f"{'product':<40} {'shapes':<26} {'n':>3} " + " ".join(
        f"{lib[:5] + ' ' + str(t) + 't':>12}" for lib, t in cols)
    print("GFLOP/s per call (and ms per step for all n of them)")
    print(head)
    total = {c: 0.0 for c in cols}
    flops_step = 0.0
    for name, a, b, count, _, _ in products(model=args.model):
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        batch = max(1, a.size // (m * k))
        flop = 2.0 * batch * m * k * n
        flops_step += flop * count
        row = f"{name:<40} {_describe(a, b):<26} {count:>3} "
        for c in cols:
            s = cell[(c[0], c[1], name)]
            total[c] += s * count
            row += f" {flop / s / 1e9:6.1f} {s * count * 1e3:5.2f}"
        print(row)
    print(f"{'all products of one step':<40} {flops_step / 1e9:.2f} GFLOP {'':>12}" + "".join(
        f" {flops_step / total[c] / 1e9:6.1f} {total[c] * 1e3:5.1f}" for c in cols))


if __name__ == "__main__":
    main()
