"""One toy-Transformer training step of minigrad split into its matrix products and everything else.

    python bench/step_breakdown.py [--steps 20] [--warmup-steps 3] [--json PATH] [--label NAME]
                                   [--tiny]

One thread (NUMBA_NUM_THREADS = OPENBLAS_NUM_THREADS = 1, set before NumPy loads), CPU time
(time.process_time: what other programs' load inflates least), the toy configuration of
bench/step_worker.py (d_model 128, 4 heads, 2 + 2 layers, FFN 512, vocabulary 2,000, 64 x 20
tokens, dropout 0.1, Adam, label smoothing 0.1, clipping). The step is timed in its phases
(forward with the loss, zero_grad, backward, clip_grad_norm_, Adam, the scheduler), and inside
them bench/op_profile.py times every op's forward and backward while flop_floor.ProductTimer
times every matrix product; each product's time is taken out of the op that made it. So:

    products        every gemm the ops call (their floor: their FLOPs at NumPy's peak)
    op X            op X's forward and backward beside its products (kernels, copies, checks)
    forward rest    the forward phase outside the ops: modules, Op.apply's bookkeeping
    backward rest   the backward phase outside the ops: the engine, gradient sums, AccumulateGrad
    clip, adam, ... the optimizer phases

Each figure is a mean over the timed steps, in ms, and as a share of the FLOP floor (the
step's 9.25 GFLOP at the best 2048^3 float32 matmul of this process, as bench/run.py's floor).
The parts of the step are also given as their medians over the steps: a loaded machine's
stalls land in a few steps and inflate the means (by 15 % at load 6), far less the medians
(which need not add up to the median step).
After the timed steps, the first product of each shape met in one more step is timed again
alone, its operands (copied with their strides) hot in cache, and again cold: after a write
of EVICT_MB, more than this machine's L2 and L3, has pushed its operands and its result's
memory out to RAM. So the products' time in the step lies between their time hot and cold,
and where it lies says how much of it is their operands' trip from memory. The profilers'
wrappers add a few us per op call and per product, booked to the op that makes the call (or
to "rest"). Timings on a loaded
machine are "busy": compare two versions by alternating this program's runs.
"""
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

PHASES = ("forward", "zero_grad", "backward", "clip", "adam", "scheduler")
TOY = dict(d_model=128, nhead=4, layers=2, ffn=512, vocab=2000, batch=64, len=20, dropout=0.1,
           peak_n=2048)
TINY = dict(d_model=16, nhead=2, layers=1, ffn=32, vocab=50, batch=3, len=5, dropout=0.1,
            peak_n=256)


def _stepper(args):
    """A step function filling `times[phase]` (seconds), and the model's objects."""
    import minigrad
    from minigrad import optim
    from minigrad.models import Seq2SeqTransformer
    from minigrad.nn.utils import clip_grad_norm_
    from minigrad.optim.lr_scheduler import WarmupScheduler
    from step_worker import _batch
    minigrad.manual_seed(0)
    model = Seq2SeqTransformer(args.vocab, args.vocab, args.d_model, args.nhead, args.layers,
                               args.layers, args.ffn, args.dropout, max_len=256, pad_id=0)
    model.train()
    opt = optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched = WarmupScheduler(opt, args.d_model, 4000, 1.0)
    src, tin, tout = _batch(args)
    clock = time.process_time
    times = {k: 0.0 for k in PHASES}

    def step():
        t = [clock()]
        loss = model.loss(src, tin, tout, 0.1)
        t.append(clock())
        opt.zero_grad()
        t.append(clock())
        loss.backward()
        t.append(clock())
        clip_grad_norm_(model.parameters(), 1.0)
        t.append(clock())
        opt.step()
        t.append(clock())
        sched.step()
        t.append(clock())
        for k, a, b in zip(PHASES, t, t[1:]):
            times[k] += b - a
        return float(loss.item())
    return step, times


_PRODUCT_NAMES = (("product", (0, 1)), ("product_add", (1, 2)), ("product_and_sum", (0, 1)))


def _copy(x):
    """A copy of array x with x's strides and offset in a copy of the array it views (the
    heads of attention are views into the packed projections, and their product's route
    and speed depend on that layout); of x alone, in its memory order, where x views no
    C-contiguous array."""
    import numpy as np
    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    if base is x or not base.flags.c_contiguous:
        return np.array(x, order="K")
    return np.ndarray(x.shape, x.dtype, buffer=base.copy(), strides=x.strides,
                      offset=x.ctypes.data - base.ctypes.data)


def _record_products(step):
    """Run `step` once, keeping a copy (`_copy`) of the arguments of the first product of each
    shape (flop_floor's key: shapes, and which operand is read transposed): {key: (fn, args)}."""
    import numpy as np
    from flop_floor import _shape_key
    from minigrad.ops import matmul as ops_matmul
    seen, saved = {}, []
    for name, (i, j) in _PRODUCT_NAMES:
        fn = getattr(ops_matmul, name)
        saved.append((name, fn))

        def recording(*a, _fn=fn, _i=i, _j=j):
            key = _shape_key(a[_i], a[_j])
            if key not in seen:
                seen[key] = (_fn, [_copy(x) if isinstance(x, np.ndarray) else x for x in a])
            return _fn(*a)
        setattr(ops_matmul, name, recording)
    try:
        step()
    finally:
        for name, fn in saved:
            setattr(ops_matmul, name, fn)
    return seen


EVICT_MB = 64   # written between the cold calls: more than the L2 and L3 of this machine


def _time_alone(recorded, clock, reps=20, cold_reps=7):
    """{key: (ms of one call hot, ms cold)}: each recorded product again and again, its
    operands hot in cache (the median of `reps` calls after one more), then cold (the median
    of `cold_reps` calls, each after a write of EVICT_MB, not timed)."""
    import numpy as np
    evict = np.zeros(EVICT_MB << 20, np.uint8)
    out = {}
    for key, (fn, a) in recorded.items():
        fn(*a)
        hot, cold = [], []
        for _ in range(reps):
            t = clock()
            fn(*a)
            hot.append(clock() - t)
        for _ in range(cold_reps):
            evict += 1
            t = clock()
            fn(*a)
            cold.append(clock() - t)
        out[key] = statistics.median(hot) * 1e3, statistics.median(cold) * 1e3
    return out


_KINDS = ("products", "ops beside their products", "forward rest (modules, apply)",
          "backward rest (engine, sums, accumulate)", "zero_grad", "clip", "adam", "scheduler")


def _totals(prof, products, times):
    """The running totals (s) the kinds of a step are differences of: products; the ops' own
    times forward and backward; their products forward and backward; and each phase."""
    inner_fwd = sum(s for (_, f), s in prof.inner.items() if f)
    return (products.seconds, sum(prof.fwd.values()), sum(prof.bwd.values()), inner_fwd,
            sum(prof.inner.values()) - inner_fwd, *(times[k] for k in PHASES))


def _kinds(t):
    """{kind: seconds} from the differences of two `_totals` (as breakdown's "kinds")."""
    products, fwd, bwd, inner_fwd, inner_bwd, *phase = t
    phase = dict(zip(PHASES, phase))
    return dict(zip(_KINDS, (products, fwd + bwd, phase["forward"] - fwd - inner_fwd,
                             phase["backward"] - bwd - inner_bwd, phase["zero_grad"],
                             phase["clip"], phase["adam"], phase["scheduler"])))


def breakdown(args):
    import minigrad
    minigrad.tune_malloc()  # as bench/step_worker.py: the setting a training loop opts into
    import op_profile
    from flop_floor import ProductTimer, numpy_peak_gflops, step_flops
    clock = time.process_time
    flops = step_flops(args.d_model, args.nhead, args.layers, args.ffn, args.vocab, args.batch,
                       args.len)
    peak = numpy_peak_gflops(n=args.peak_n, clock=clock)
    floor_ms = flops / (peak * 1e9) * 1e3
    step, times = _stepper(args)
    for _ in range(args.warmup_steps):
        step()
    recorded = _record_products(step)
    for k in times:
        times[k] = 0.0
    op_profile.time = types.SimpleNamespace(perf_counter=clock)  # the profiler on CPU time
    prof = op_profile.OpProfiler().__enter__()
    products = ProductTimer(clock, on_time=prof.exclude).__enter__()
    steps, marks = [], [_totals(prof, products, times)]
    try:
        for _ in range(args.steps):
            t = clock()
            step()
            steps.append(clock() - t)
            marks.append(_totals(prof, products, times))
    finally:
        products.__exit__(None, None, None)
        prof.__exit__(None, None, None)
    n = args.steps
    ms = lambda s: s / n * 1e3  # noqa: E731  (a total over the steps -> ms a step)
    # each kind's median over the steps: a busy machine's stalls land in a few steps and
    # inflate the means (by 15 % in a run at load 6), far less the medians
    per_step = [_kinds([b - a for a, b in zip(m0, m1)]) for m0, m1 in zip(marks, marks[1:])]
    kinds_median = {k: statistics.median(d[k] for d in per_step) * 1e3 for k in per_step[0]}
    ops = {}
    for table, fwd in ((prof.fwd, True), (prof.bwd, False)):
        for (op, _), s in table.items():
            d = ops.setdefault(op, {"fwd": 0.0, "bwd": 0.0, "products": 0.0, "calls": 0})
            d["fwd" if fwd else "bwd"] += ms(s)
    for (op, _), c in prof.calls.items():
        ops[op]["calls"] += c // n
    for (op, _), s in prof.inner.items():
        ops[op]["products"] += ms(s)
    fwd_ops = ms(sum(prof.fwd.values())) + ms(sum(s for (_, f), s in prof.inner.items() if f))
    bwd_ops = ms(sum(prof.bwd.values())) + ms(sum(s for (_, f), s in prof.inner.items()
                                                  if not f))
    phase = {k: ms(v) for k, v in times.items()}
    kinds = {"products": ms(products.seconds),
             "ops beside their products": sum(d["fwd"] + d["bwd"] for d in ops.values()),
             "forward rest (modules, apply)": phase["forward"] - fwd_ops,
             "backward rest (engine, sums, accumulate)": phase["backward"] - bwd_ops,
             "zero_grad": phase["zero_grad"], "clip": phase["clip"], "adam": phase["adam"],
             "scheduler": phase["scheduler"]}
    mean = ms(sum(steps))
    alone = _time_alone(recorded, clock)
    nan = (float("nan"), float("nan"))
    rows = [(k, c, t, g, fl, alone.get(k, nan)[0] * c, alone.get(k, nan)[1] * c)
            for k, c, t, g, fl in products.rows(per=n, peak_gflops=peak)]
    kinds["products"] = ms(products.seconds)
    return dict(products_alone_ms=sum(r[5] for r in rows),
                products_cold_ms=sum(r[6] for r in rows), label=args.label, steps=n,
                step_ms_mean=mean,
                step_ms_median=statistics.median(steps) * 1e3, floor_ms=floor_ms,
                numpy_peak_gflops=peak, step_gflop=flops / 1e9, ratio=mean / floor_ms,
                kinds=kinds, kinds_median=kinds_median, ops=ops, phases=phase,
                product_rows=rows,
                loadavg=os.getloadavg()[0])


def print_breakdown(r, file=None):
    f = r["floor_ms"]
    print(f"one step, one thread, CPU time ({r['label']}): {r['step_ms_mean']:.1f} ms mean "
          f"(median {r['step_ms_median']:.1f}) = {r['ratio']:.2f} x the FLOP floor "
          f"{f:.1f} ms ({r['step_gflop']:.2f} GFLOP at {r['numpy_peak_gflops']:.0f} GFLOP/s); "
          f"load avg {r['loadavg']:.1f} (busy)", file=file)
    med = r["kinds_median"]
    print(f"{'part (mean, and median over the steps)':<44}{'ms':>8}{'x floor':>9}{'median':>9}"
          f"{'x floor':>9}", file=file)
    for k, v in r["kinds"].items():
        print(f"{k:<44}{v:>8.2f}{v / f:>9.3f}{med[k]:>9.2f}{med[k] / f:>9.3f}", file=file)
    rest = r["step_ms_mean"] - r["kinds"]["products"]
    rest_med = sum(med.values()) - med["products"]
    print(f"{'everything but the products':<44}{rest:>8.2f}{rest / f:>9.3f}{rest_med:>9.2f}"
          f"{rest_med / f:>9.3f}", file=file)
    a = r["products_alone_ms"]
    print(f"{'the same products alone, operands in cache':<44}{a:>8.2f}{a / f:>9.3f}", file=file)
    a = r["products_cold_ms"]
    print(f"{'the same products alone, operands in RAM':<44}{a:>8.2f}{a / f:>9.3f}", file=file)
    print(f"\n{'op (beside its products)':<28}{'calls':>6}{'fwd ms':>8}{'bwd ms':>8}"
          f"{'sum':>8}{'x floor':>9}{'products ms':>13}", file=file)
    for op, d in sorted(r["ops"].items(), key=lambda kv: -(kv[1]["fwd"] + kv[1]["bwd"])):
        s = d["fwd"] + d["bwd"]
        print(f"{op:<28}{d['calls']:>6}{d['fwd']:>8.2f}{d['bwd']:>8.2f}{s:>8.2f}"
              f"{s / f:>9.3f}{d['products']:>13.2f}", file=file)
    print(f"\n{'product (T: read transposed)':<40}{'calls':>6}{'in step':>9}{'hot':>8}"
          f"{'cold':>8}{'floor':>8}  ms a step", file=file)
    for shape, calls, t, _, floor, hot, cold in r["product_rows"]:
        print(f"{shape:<40}{calls:>6}{t:>9.2f}{hot:>8.2f}{cold:>8.2f}{floor:>8.2f}", file=file)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup-steps", type=int, default=3)
    ap.add_argument("--json", help="also write the result as JSON here")
    ap.add_argument("--label", default="minigrad")
    ap.add_argument("--tiny", action="store_true", help="a tiny model (a smoke test)")
    args = ap.parse_args()
    for k, v in (TINY if args.tiny else TOY).items():
        setattr(args, k, v)
    r = breakdown(args)
    print_breakdown(r)
    if args.json:
        Path(args.json).write_text(json.dumps(r))


if __name__ == "__main__":
    main()
