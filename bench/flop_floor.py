"""The FLOP floor of a Transformer training step, and how much of a step its products take.

- `step_flops(...)` counts the multiply-adds of every matrix product of one training step of
  the encoder-decoder Transformer (bench/step_worker.py's model), times two: the forward's
  products, each once more for the gradient of its input and once for its weight (three
  forward passes' worth; attention's Q K^T and A V products included, embeddings, norms,
  softmax and the optimizer left out). The toy configuration (d_model 128, 4 heads, 2 + 2
  layers, FFN 512, vocabulary 2,000, 64 x 20 tokens) makes 9.25 GFLOP.
- `numpy_peak_gflops()`: the best rate of a 2048 x 2048 x 2048 float32 `np.matmul` on
  OpenBLAS's own threads, the most this machine's BLAS gives NumPy.
- floor = step FLOPs / that peak: the time of a step that did nothing but its products, at
  the best rate they can run at. A step's ratio to it says what the rest costs.
- `ProductTimer`, while active, times every product minigrad's ops make (the three routes of
  `minigrad.ops.matmul`: `product`, `kernels.addmm`, `kernels.matmul_and_sum`) and counts
  their FLOPs, so a step splits into time in products and everything else.
- `print_floor` and `print_products`: the lines of bench/run.py's step and profile sections
  (bench/sections.py).
"""
from __future__ import annotations

import math
import statistics
import time


def step_flops(d_model, nhead, layers, ffn, vocab, batch, length, dec_layers=None):
    """FLOPs of the products of one forward + backward (2 x multiply-adds, 3 x forward)."""
    del nhead  # the heads split the same products: no effect on the count
    dec_layers = layers if dec_layers is None else dec_layers
    n, d, f = batch * length, d_model, ffn
    scores = 2 * 2 * batch * length * length * d        # Q K^T and A V over all heads
    enc = 2 * n * (4 * d * d + 2 * d * f) + scores      # q, k, v, out; FFN in and out
    dec = 2 * n * (8 * d * d + 2 * d * f) + 2 * scores  # self- and cross-attention, FFN
    out = 2 * n * d * vocab                             # the generator
    return 3 * (layers * enc + dec_layers * dec + out)


def numpy_peak_gflops(n=2048, reps=5, clock=time.perf_counter):
    """Best GFLOP/s of an n x n x n float32 np.matmul (OpenBLAS's own threads), timed by
    `clock` (time.process_time with one thread: CPU time, which other programs' load inflates
    far less than wall time)."""
    import numpy as np
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    c = np.empty((n, n), np.float32)
    np.matmul(a, b, out=c)  # OpenBLAS starts its threads and touches its buffers
    best = math.inf
    for _ in range(reps):
        t = clock()
        np.matmul(a, b, out=c)
        best = min(best, clock() - t)
    return 2 * n ** 3 / best / 1e9


def _product_flops(a, b):
    """2 x M x N x K x batch of a @ b (NumPy's broadcasting of the leading dims)."""
    batch = 1
    if a.ndim > 2 or b.ndim > 2:
        import numpy as np
        batch = math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    m = a.shape[-2] if a.ndim > 1 else 1
    n = b.shape[-1] if b.ndim > 1 else 1
    return 2 * m * n * a.shape[-1] * batch


def _shape_key(a, b):
    """"M x K @ K x N" with a "T" after an operand read transposed (a view of its transpose)."""
    def side(x):
        t = "T" if x.ndim >= 2 and x.strides[-2] < x.strides[-1] else ""
        return " x ".join(map(str, x.shape)) + t
    return f"{side(a)} @ {side(b)}"


class ProductTimer:
    """While active: seconds and FLOPs of every product the ops make (see the module doc),
    in total and by shape (`by_shape`: "M x K @ K x N" (x batch) -> [calls, seconds, flops]),
    timed by `clock` (time.thread_time for a one-thread step timed in CPU time: the products
    run in the calling thread then). `on_time(seconds)`, if given, is told each product's
    time (OpProfiler.exclude, to split an op's time into its products and the rest)."""

    def __init__(self, clock=time.perf_counter, on_time=None):
        self.clock, self.on_time = clock, on_time
        self.seconds, self.flops, self.calls = 0.0, 0, 0
        self.by_shape = {}
        self._saved = []

    def _wrap(self, fn, operands):
        timer = self

        def timed(*args, **kwargs):
            a, b = operands(args)
            t = timer.clock()
            try:
                return fn(*args, **kwargs)
            finally:
                dt, flops = timer.clock() - t, _product_flops(a, b)
                timer.seconds += dt
                timer.flops += flops
                timer.calls += 1
                if timer.on_time is not None:
                    timer.on_time(dt)
                row = timer.by_shape.setdefault(_shape_key(a, b), [0, 0.0, 0])
                row[0] += 1
                row[1] += dt
                row[2] += flops
        return timed

    def rows(self, per=1, peak_gflops=None):
        """[(shape, calls, ms, GFLOP/s, floor ms)] by time, each divided by `per` (steps);
        floor ms: those FLOPs at `peak_gflops` (None without a peak)."""
        out = [(k, c // per, t / per * 1e3, f / max(t, 1e-12) / 1e9,
                f / per / (peak_gflops * 1e6) if peak_gflops else None)
               for k, (c, t, f) in self.by_shape.items()]
        return sorted(out, key=lambda r: -r[2])

    def __enter__(self):
        from minigrad.ops import matmul as ops_matmul
        # the names the ops call every product through
        for mod, name, operands in ((ops_matmul, "product", lambda a: a[:2]),
                                    (ops_matmul, "product_add", lambda a: a[1:3]),
                                    (ops_matmul, "product_and_sum", lambda a: a[:2])):
            fn = getattr(mod, name)
            self._saved.append((mod, name, fn))
            setattr(mod, name, self._wrap(fn, operands))
        return self

    def __exit__(self, *exc):
        for mod, name, fn in reversed(self._saved):
            setattr(mod, name, fn)
        self._saved = []
        return False


def print_floor(runs, how):
    """Print and return the step's floor from step_worker.py --floor runs: the step's products
    at the best rate of a 2048^3 float32 np.matmul in each worker's own process."""
    ratios = [r["floor_ratio"] for r in runs]
    f = dict(step_gflop=runs[0]["step_gflop"], how=how,
             numpy_peak_gflops=[r["numpy_peak_gflops"] for r in runs],
             floor_ms=[r["floor_ms"] for r in runs], step_ms=[r["median_ms"] for r in runs],
             ratio=ratios, ratio_median=statistics.median(ratios),
             ratio_min_step=[r["floor_ratio_min"] for r in runs])
    print(f"FLOP floor, {how}: {f['step_gflop']:.2f} GFLOP per step (matrix products, forward "
          f"+ both gradients) at NumPy's peak, the best 2048^3 float32 matmul in each minigrad "
          f"worker: " + ", ".join(f"{g:.0f} GFLOP/s -> {ms:.1f} ms (step {s:.1f} ms)" for g, ms, s
                                  in zip(f["numpy_peak_gflops"], f["floor_ms"], f["step_ms"])))
    print(f"  minigrad step / floor: median {f['ratio_median']:.2f} (rounds "
          + ", ".join(f"{x:.2f}" for x in ratios) + "; fastest step of each round "
          + ", ".join(f"{x:.2f}" for x in f["ratio_min_step"]) + ") (goal <= 1.25)")
    return f


def print_products(r):
    """Print a step_worker.py --products --floor result: time in products, the rest, and each
    product shape beside its floor (its FLOPs at the peak); returns the ms outside the products."""
    rest = r["median_ms"] - r["product_ms"]
    print(f"matrix products (every gemm the ops call, {r['product_calls']} a step, "
          f"{r['product_gflop']:.2f} GFLOP): {r['product_ms']:.1f} ms, "
          f"{r['product_gflops']:.0f} GFLOP/s against NumPy's {r['numpy_peak_gflops']:.0f} "
          f"(floor {r['floor_ms']:.1f} ms); everything else: {rest:.1f} ms "
          f"({rest / r['median_ms']:.0%} of the step)")
    if "categories" in r:
        print("the step by kind (ms a step): " + ", ".join(
            f"{k} {v:.1f}" for k, v in r["categories"].items()))
    print(f"{'product (T: operand read transposed)':<44}{'calls':>6}{'ms':>8}{'GFLOP/s':>9}"
          f"{'floor ms':>9}")
    for shape, calls, ms, rate, floor in r["product_rows"]:
        print(f"{shape:<44}{calls:>6}{ms:>8.2f}{rate:>9.1f}{floor:>9.2f}")
    return rest
