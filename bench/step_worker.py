"""Time training steps of the toy Transformer in ONE library, in this process; print one JSON line.

    python bench/step_worker.py --lib minigrad|torch [--d-model 128] [--nhead 4] [--layers 2]
        [--ffn 512] [--vocab 2000] [--batch 64] [--len 20] [--dropout 0.1]
        [--warmup-steps 3] [--steps 10] [--threads 2] [--profile] [--floor] [--products]

A step: forward + label-smoothed (0.1) cross entropy, zero_grad, backward, clip_grad_norm_(1.0),
Adam(betas (0.9, 0.98), eps 1e-9) step, Noam warm-up scheduler step. The batch is random token
ids in 3..vocab-1 (no padding), source and target of the same length, fixed seed; the same batch
every step.

Memory: the peak resident set size of this process (mem_profile.maxrss_mb: VmHWM, which,
unlike ru_maxrss, is not inherited from the parent process), started again from the current
RSS after imports (before the model exists), and read after the timed steps. We report both and
their difference, "peak_rss_growth_mb": the most memory the model, optimizer state, activations
and gradients (and the library's allocator caches) added on top of the imported library. Both
libraries are measured the same way, each in its own process.

--profile (minigrad only) additionally times every op's forward/backward during the timed steps
(see op_profile.py) and reports the share of time in attention.

--floor measures NumPy's peak (the best 2048^3 float32 matmul, flop_floor.numpy_peak_gflops) in
this process right after the import, and reports the step's FLOP floor (flop_floor.step_flops at
that rate) and the step's ratio to it. --products (minigrad only) times every matrix product of
the timed steps (flop_floor.ProductTimer): the step split into products and everything else.
--cpu-time times the steps and the peak in this process's CPU time instead of wall time (for one
thread, NUMBA_NUM_THREADS=OPENBLAS_NUM_THREADS=1: a figure a busy machine inflates far less).
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _batch(args):
    import numpy as np
    r = np.random.default_rng(0)
    src = r.integers(3, args.vocab, (args.batch, args.len))
    tgt = r.integers(3, args.vocab, (args.batch, args.len + 1))
    tgt[:, 0] = 1  # <bos>
    return src, tgt[:, :-1], tgt[:, 1:]


def minigrad_stepper(args):
    import numpy as np
    import minigrad
    from minigrad import optim
    from minigrad.models import Seq2SeqTransformer
    from minigrad.nn.utils import clip_grad_norm_
    from minigrad.optim.lr_scheduler import WarmupScheduler
    if hasattr(minigrad, "manual_seed"):
        minigrad.manual_seed(0)
    model = Seq2SeqTransformer(args.vocab, args.vocab, args.d_model, args.nhead, args.layers,
                               args.layers, args.ffn, args.dropout,
                               max_len=max(256, args.len + 2), pad_id=0)
    model.train()
    opt = optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched = WarmupScheduler(opt, args.d_model, 4000, 1.0)
    src, tin, tout = _batch(args)
    clock = time.process_time if getattr(args, "cpu_time", False) else time.perf_counter
    phases = {"forward": [], "backward": [], "optimizer": []}  # ms of each step's parts

    def step():
        t0 = clock()
        loss = model.loss(src, tin, tout, 0.1)
        t1 = clock()
        opt.zero_grad()
        loss.backward()
        t2 = clock()
        clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        t3 = clock()
        for k, dt in zip(phases, (t1 - t0, t2 - t1, t3 - t2)):
            phases[k].append(dt * 1e3)
        return float(loss.item())
    step.phases = phases

    info = dict(backend=minigrad.get_backend(), numpy=np.__version__,
                malloc_tuned=minigrad._malloc.tuned)
    try:
        import numba
        info.update(numba=numba.__version__, numba_threads=numba.get_num_threads())
    except ImportError:
        pass
    return step, info


def torch_stepper(args):
    import math
    import torch
    from torch import nn
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    class PosEnc(nn.Module):
        def __init__(self, d, max_len, p):
            super().__init__()
            pos = torch.arange(max_len).unsqueeze(1)
            div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
            pe = torch.zeros(max_len, d)
            pe[:, 0::2] = torch.sin(pos * div)
            pe[:, 1::2] = torch.cos(pos * div)
            self.register_buffer("pe", pe)
            self.drop = nn.Dropout(p)

        def forward(self, x):
            return self.drop(x + self.pe[: x.shape[1]])

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            d = args.d_model
            self.src_embed = nn.Embedding(args.vocab, d, padding_idx=0)
            self.tgt_embed = nn.Embedding(args.vocab, d, padding_idx=0)
            self.pos = PosEnc(d, max(256, args.len + 2), args.dropout)
            self.transformer = nn.Transformer(d, args.nhead, args.layers, args.layers, args.ffn,
                                              args.dropout, batch_first=True, norm_first=False)
            self.generator = nn.Linear(d, args.vocab)
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

        def forward(self, src, tin):
            d = math.sqrt(self.transformer.d_model)
            mask = torch.triu(torch.ones(tin.shape[1], tin.shape[1], dtype=torch.bool), 1)
            h = self.transformer(self.pos(self.src_embed(src) * d), self.pos(self.tgt_embed(tin) * d),
                                 tgt_mask=mask, tgt_is_causal=True,
                                 src_key_padding_mask=src == 0, tgt_key_padding_mask=tin == 0,
                                 memory_key_padding_mask=src == 0)
            return self.generator(h)

    model = Model()
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    noam = lambda s: args.d_model ** -0.5 * min((s + 1) ** -0.5, (s + 1) * 4000 ** -1.5)  # noqa
    sched = torch.optim.lr_scheduler.LambdaLR(opt, noam)
    src, tin, tout = (torch.from_numpy(a) for a in _batch(args))
    lossf = nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)

    def step():
        logits = model(src, tin)
        loss = lossf(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        return float(loss.item())

    return step, dict(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                      torch_interop_threads=torch.get_num_interop_threads())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", choices=["minigrad", "torch"], required=True)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--nhead", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--len", type=int, default=20)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--warmup-steps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--profile", action="store_true", help="minigrad: per-op times, attention share")
    ap.add_argument("--floor", action="store_true", help="NumPy's matmul peak and the FLOP floor")
    ap.add_argument("--products", action="store_true", help="minigrad: time in matrix products")
    ap.add_argument("--cpu-time", action="store_true", help="time steps and peak in CPU time")
    args = ap.parse_args()

    from mem_profile import maxrss_mb, reset_peak_rss
    t_import = time.perf_counter()
    if args.lib == "minigrad":
        import minigrad  # import before the baseline so it is not counted
        # the allocator setting a training loop opts into (minigrad/_malloc.py says why)
        minigrad.tune_malloc()
    else:
        import torch  # noqa: F401
    clock = time.process_time if args.cpu_time else time.perf_counter
    floor = {}
    if args.floor:  # before the model exists, so that its arrays do not count as growth
        from flop_floor import numpy_peak_gflops, step_flops
        flops = step_flops(args.d_model, args.nhead, args.layers, args.ffn, args.vocab,
                           args.batch, args.len)
        peak = numpy_peak_gflops(clock=clock)
        floor = dict(step_gflop=flops / 1e9, numpy_peak_gflops=peak,
                     floor_ms=flops / (peak * 1e9) * 1e3)
    reset_peak_rss()  # importing the library is not part of the growth
    rss_import = maxrss_mb()
    step, info = (minigrad_stepper if args.lib == "minigrad" else torch_stepper)(args)
    for _ in range(args.warmup_steps):
        step()
    rss_warm = maxrss_mb()
    prof = products = None
    if args.profile:
        import op_profile
        if args.cpu_time:  # op_profile reads time.perf_counter: give it the steps' clock
            import types
            op_profile.time = types.SimpleNamespace(perf_counter=clock)
        prof = op_profile.OpProfiler().__enter__()
    if args.products:
        from flop_floor import ProductTimer
        products = ProductTimer(clock).__enter__()
    times, losses = [], []
    try:
        for _ in range(args.steps):
            t = clock()
            losses.append(step())
            times.append(clock() - t)
    finally:
        for ctx in (products, prof):
            if ctx is not None:
                ctx.__exit__(None, None, None)
    rss_peak = maxrss_mb()
    med = statistics.median(times)
    out = dict(lib=args.lib, d_model=args.d_model, len=args.len, batch=args.batch,
               steps=args.steps, warmup_steps=args.warmup_steps,
               clock="cpu" if args.cpu_time else "wall",
               step_ms=[t * 1e3 for t in times], median_ms=med * 1e3,
               tokens_per_s=args.batch * args.len / med, losses=losses[-3:],
               rss_after_import_mb=rss_import, rss_after_warmup_mb=rss_warm,
               peak_rss_mb=rss_peak, peak_rss_growth_mb=rss_peak - rss_import,
               peak_rss_growth_during_timed_mb=rss_peak - rss_warm,
               OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
               loadavg=os.getloadavg()[0], setup_s=time.perf_counter() - t_import, **info)
    if floor:
        out.update(floor, floor_ratio=out["median_ms"] / floor["floor_ms"],
                   floor_ratio_min=min(times) * 1e3 / floor["floor_ms"])
    if products is not None:
        n = args.steps
        out.update(product_ms=products.seconds / n * 1e3, product_gflop=products.flops / n / 1e9,
                   product_calls=products.calls // n,
                   product_gflops=products.flops / max(products.seconds, 1e-12) / 1e9,
                   product_rows=products.rows(per=n, peak_gflops=floor.get("numpy_peak_gflops")))
    phases = getattr(step, "phases", None)
    if phases:  # the timed steps' parts (the warm-up steps' are dropped)
        out["phase_ms"] = {k: statistics.median(v[-args.steps:]) for k, v in phases.items()}
    if prof is not None and products is not None:
        # the step by kind: products; the other ops' own time (op_profile's clock); clipping,
        # Adam and the scheduler; the rest (modules, graph, engine, gradient sums)
        ops_ms, opt_ms = prof.total_ms() / args.steps, out["phase_ms"]["optimizer"]
        out["categories"] = {"products": out["product_ms"],
                             "products' floor": out.get("floor_ms", float("nan")),
                             "other ops": ops_ms - out["product_ms"], "optimizer": opt_ms,
                             "rest": out["median_ms"] - ops_ms - opt_ms}
    if prof is not None:
        n = args.steps
        whole, core = prof.attention_ms()
        out.update(attn_ms=whole / n, attn_core_ms=core / n, ops_ms=prof.total_ms() / n,
                   attn_share=whole / n / out["median_ms"], attn_core_share=core / n / out["median_ms"],
                   profile=[{k: (v / n if k in ("fwd_ms", "bwd_ms", "total_ms") else v)
                             for k, v in r.items()}
                            for r in prof.table(step_ms=sum(times) * 1e3, top=15)])
        for r in out["profile"]:
            if r["op"].startswith("other"):
                r["calls"] = 0
            else:
                r["calls"] = r["calls"] // n
    print(json.dumps(out))


if __name__ == "__main__":
    main()
