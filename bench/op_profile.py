"""Per-op timing of minigrad: wrap every `Op` subclass's `forward` and `backward`.

    with OpProfiler() as prof:
        ...one training step...
    prof.table()   # rows: op, forward ms, backward ms, calls, share

How it measures: every `Op` subclass defining its own `forward` / `backward` gets them
replaced by a wrapper that times the call with `time.perf_counter` and books it under the op's
class name (`type(ctx).__name__`) and module path (`current_module_path()` during forward,
the path noted on the node during backward). Times are exclusive: if an op's forward calls another op,
the inner time is booked to the inner op only. What is *not* inside forward/backward -- the
graph bookkeeping in `Op.apply`, the engine's topological sort and gradient summing,
the optimizer, gradient clipping -- shows up as "other (outside op forward/backward)" when the
caller passes the step's total time. The wrapper adds about 1 us per call.
"""
import time
from collections import defaultdict

from minigrad.autograd import engine as _engine
from minigrad.autograd.op import Op
from minigrad.grad_mode import current_module_path


def _all_subclasses(cls):
    out, stack = [], [cls]
    while stack:
        c = stack.pop()
        for s in c.__subclasses__():
            out.append(s)
            stack.append(s)
    return out


class OpProfiler:
    def __init__(self):
        self.fwd = defaultdict(float)     # (op, module_path) -> seconds
        self.bwd = defaultdict(float)
        self.calls = defaultdict(int)     # forward calls
        self._saved = []
        self._stack = []                  # child-time accumulators for exclusive timing
        self._frames = []                 # (op, forward?) of each op call in progress
        self.inner = defaultdict(float)   # (op, forward?) -> seconds booked by `exclude`

    def _wrap(self, fn, table, is_fwd):
        prof = self

        def wrapper(ctx, *args, **kwargs):
            op = type(ctx).__name__
            if is_fwd:  # the node remembers its module for the backward's booking
                ctx.profile_path = current_module_path()
            path = getattr(ctx, "profile_path", None)
            prof._stack.append(0.0)
            prof._frames.append((op, is_fwd))
            t0 = time.perf_counter()
            try:
                return fn(ctx, *args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                child = prof._stack.pop()
                prof._frames.pop()
                table[(op, path)] += dt - child
                if is_fwd:
                    prof.calls[(op, path)] += 1
                if prof._stack:
                    prof._stack[-1] += dt
        return wrapper

    def __enter__(self):
        # make sure every op module is imported so its Op subclasses exist
        import minigrad.ops  # noqa: F401
        import minigrad.nn  # noqa: F401
        import minigrad.nn.functional  # noqa: F401
        for cls in _all_subclasses(Op):
            for name, table, is_fwd in (("forward", self.fwd, True), ("backward", self.bwd, False)):
                if name in cls.__dict__:
                    raw = cls.__dict__[name]
                    fn = raw.__func__ if isinstance(raw, staticmethod) else raw
                    self._saved.append((cls, name, raw))
                    setattr(cls, name, staticmethod(self._wrap(fn, table, is_fwd)))
        return self

    def __exit__(self, *exc):
        for cls, name, raw in reversed(self._saved):
            setattr(cls, name, raw)
        self._saved = []
        return False

    def reset(self):
        self.fwd.clear()
        self.bwd.clear()
        self.calls.clear()
        self.inner.clear()

    def exclude(self, seconds):
        """Book `seconds` spent in the op call in progress (if any) as inner work of that op,
        outside its own time: a ProductTimer reports its products here (`on_time`), so that
        an op's own time is what it spends beside its matrix products."""
        if self._stack:
            self._stack[-1] += seconds
            self.inner[self._frames[-1]] += seconds

    # ---------------------------------------------------------------- reports --
    def by_op(self):
        """{op: {"fwd_ms", "bwd_ms", "calls"}} summed over module paths."""
        out = defaultdict(lambda: {"fwd_ms": 0.0, "bwd_ms": 0.0, "calls": 0})
        for (op, _), t in self.fwd.items():
            out[op]["fwd_ms"] += t * 1e3
        for (op, _), t in self.bwd.items():
            out[op]["bwd_ms"] += t * 1e3
        for (op, _), n in self.calls.items():
            out[op]["calls"] += n
        return dict(out)

    def total_ms(self):
        return (sum(self.fwd.values()) + sum(self.bwd.values())) * 1e3

    def attention_ms(self):
        """(whole attention blocks, attention core) in ms.

        Whole block: every op whose module path contains "attn" (in-projections, reshapes and
        permutes into heads, QK^T, scaling, masking, softmax, attention dropout, AV, out_proj).
        Core: only the MatMul, Softmax, MaskedFill and Dropout ops in those paths, or the one op
        that fuses the last three in training (MaskedSoftmaxDropout)."""
        core_ops = {"MatMul", "Softmax", "MaskedFill", "Dropout", "MaskedSoftmaxDropout"}
        whole = core = 0.0
        for table in (self.fwd, self.bwd):
            for (op, path), t in table.items():
                if path and "attn" in path:
                    whole += t
                    if op in core_ops:
                        core += t
        return whole * 1e3, core * 1e3

    def table(self, step_ms=None, top=15):
        """Rows sorted by forward+backward time; shares are of `step_ms` if given, else of the
        summed op time. With `step_ms`, an "other" row holds the time outside the ops."""
        ops = self.by_op()
        denom = step_ms if step_ms else self.total_ms()
        rows = []
        for op, d in sorted(ops.items(), key=lambda kv: -(kv[1]["fwd_ms"] + kv[1]["bwd_ms"])):
            rows.append(dict(op=op, fwd_ms=d["fwd_ms"], bwd_ms=d["bwd_ms"], calls=d["calls"],
                             share=(d["fwd_ms"] + d["bwd_ms"]) / denom if denom else 0.0))
        rows = rows[:top]
        if step_ms:
            other = step_ms - self.total_ms()
            rows.append(dict(op="other (outside op forward/backward)", fwd_ms=float("nan"),
                             bwd_ms=float("nan"), calls=0, share=other / step_ms, total_ms=other))
        return rows


def print_table(rows, file=None):
    print(f"{'op':<38}{'fwd ms':>9}{'bwd ms':>9}{'calls':>7}{'share':>8}", file=file)
    for r in rows:
        if r["op"].startswith("other"):
            print(f"{r['op']:<38}{r['total_ms']:>18.2f}{'':>7}{r['share']:>8.1%}", file=file)
        else:
            print(f"{r['op']:<38}{r['fwd_ms']:>9.2f}{r['bwd_ms']:>9.2f}{r['calls']:>7}"
                  f"{r['share']:>8.1%}", file=file)


assert hasattr(_engine, "run_backward")  # the engine this profiler's notes describe
