"""Cold start: the time from `python -c` to the end of the first training step of a one-layer
toy Transformer, with an empty Numba cache and with a warm one; and the import times of
minigrad and PyTorch.

    python bench/cold_start.py [--rounds 3] [--json PATH]
    python bench/cold_start.py --profile [--top 30]


Each figure is the wall time of a fresh interpreter, measured by this process from just before
it starts the child: the child reports the clock when `import minigrad` has returned and when
the first step (forward, label-smoothed loss, backward, gradient clipping, Adam) has ended.
"Cold" points NUMBA_CACHE_DIR at a new, empty directory, as on a fresh install or in CI, so
every kernel the step uses is compiled; "warm" runs again on the cache the cold run filled.
The import times are of `python -c "import minigrad"` and `python -c "import torch"`.
Medians over rounds, the rounds alternating the measurements. Beside each wall time, the
CPU seconds (user + system) of the child: on a machine shared with other work they show what
the process itself cost. They include those of the compile worker a cold child may start
(minigrad/kernels/compile_worker.py: where a core is free, a second process compiles one of
the driver's two block functions); MINIGRAD_COMPILE_WORKER=0 or 1 in the environment turns it
off or on whatever the load.

`--profile` runs the cold first step once more and lists where its compile time goes: every
compilation by a Numba dispatcher (a kernel, or a helper Numba compiles for it, such as its
error-message machinery) with its own seconds, the time of the compilations it started
itself (its callees) subtracted, so the column adds up to the total time spent compiling;
and those seconds by stage: Numba's front end, its lowering to LLVM IR, LLVM's function
passes, its module passes and its machine code (CPU seconds of the compiling thread).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the toy configuration of bench/step_worker.py with one encoder and one decoder layer
STEP = """
import sys, time
import minigrad
t_import = time.time()
import numpy as np
from minigrad import optim
from minigrad.models import Seq2SeqTransformer
from minigrad.nn.utils import clip_grad_norm_
minigrad.manual_seed(0)
V, B, L = 2000, 64, 20
model = Seq2SeqTransformer(V, V, 128, 4, 1, 1, 512, 0.1, max_len=256, pad_id=0)
model.train()
opt = optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
r = np.random.default_rng(0)
src = r.integers(3, V, (B, L))
tgt = r.integers(3, V, (B, L + 1))
loss = model.loss(src, tgt[:, :-1], tgt[:, 1:], 0.1)
opt.zero_grad()
loss.backward()
clip_grad_norm_(model.parameters(), 1.0)
opt.step()
t_step = time.time()
import resource
worker = resource.getrusage(resource.RUSAGE_CHILDREN)   # a compile worker's, if one ran
print(t_import, t_step, float(loss.item()), worker.ru_utime + worker.ru_stime)
"""


# Wraps Numba's Dispatcher.compile to time each compilation; a stack of the running ones
# subtracts a callee's time from its caller's, so that no second is counted twice. A second
# stack splits each compilation into its stages: Numba's front end (bytecode to IR, type
# inference, its own inlining, rewrites), the lowering of its IR to LLVM IR, and LLVM's three
# steps (parsing the module and the per-function passes, the module passes at -O3 after the
# callees are linked in, machine code), the seconds of each stage counted to the dispatcher
# whose compilation ran it.
PROFILE = """
import atexit, json, time
from numba.core import codegen as _cg, compiler_machinery as _cm, dispatcher as _dispatcher
from numba.core import inline_closurecall as _inl, lowering as _lowering
_stack, _frames, _names, _own, _total, _sigs, _stages = [], [], [], {}, {}, {}, {}
# _stack: the running compilations, each with the seconds of its callees; _frames: every
# running compilation or stage, each with the seconds of what runs directly inside it


def _timed(label, fn, *args, **kwargs):
    t0 = time.thread_time()
    _frames.append(0.0)
    try:
        return fn(*args, **kwargs)
    finally:
        dt = time.thread_time() - t0
        inside = _frames.pop()
        if _frames:
            _frames[-1] += dt
        st = _stages.setdefault(_names[-1] if _names else "(outside)", {})
        st[label] = st.get(label, 0.0) + dt - inside


def _wrap(owner, attr, label):
    fn = getattr(owner, attr)
    setattr(owner, attr, lambda *a, **k: _timed(label, fn, *a, **k))


_compile = _dispatcher.Dispatcher.compile


def _timed_compile(self, sig):
    f = self.py_func
    name = f"{f.__module__}.{f.__qualname__}"
    st = _stages.setdefault(name, {})
    before = sum(st.values())
    t0 = time.thread_time()
    _names.append(name)
    _stack.append(0.0)
    _frames.append(0.0)
    try:
        return _compile(self, sig)
    finally:
        dt = time.thread_time() - t0
        callees = _stack.pop()
        _frames.pop()
        _names.pop()
        if _stack:
            _stack[-1] += dt
        if _frames:
            _frames[-1] += dt
        _own[name] = _own.get(name, 0.0) + dt - callees
        _total[name] = _total.get(name, 0.0) + dt
        _sigs.setdefault(name, set()).add(str(sig))
        st["other"] = st.get("other", 0.0) + dt - callees - (sum(st.values()) - before)


_dispatcher.Dispatcher.compile = _timed_compile
_wrap(_cm.PassManager, "_runPass", "front end")
_wrap(_inl.InlineWorker, "inline_function", "front end")
_wrap(_lowering.Lower, "lower", "lowering")
_wrap(_cg.CPUCodeLibrary, "add_ir_module", "LLVM function passes")
_wrap(_cg.CPUCodeLibrary, "_optimize_final_module", "LLVM module passes")
_wrap(_cg.JITCodeLibrary, "_finalize_specific", "machine code")
atexit.register(lambda: print("PROFILE " + json.dumps(
    {k: [_own[k], _total[k], len(_sigs[k]), _stages.get(k, {})] for k in _own})))
"""
STAGES = ("front end", "lowering", "LLVM function passes", "LLVM module passes",
          "machine code", "other")


def _cpu_children():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def _time_child(code, env):
    """(wall seconds to the end of the child, its CPU seconds (user + system), the clock
    readings it printed as seconds since its start). On a busy machine the CPU seconds say
    what the wall time would be on a quiet one (the child mostly runs one thread here)."""
    cpu0, t0 = _cpu_children(), time.time()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(ROOT), timeout=900)
    wall, cpu = time.time() - t0, _cpu_children() - cpu0
    if r.returncode != 0:
        raise RuntimeError(f"cold_start child failed:\n{r.stderr[-3000:]}")
    words = r.stdout.split()
    marks = [float(v) - t0 for v in words[:2]] + words[2:4] if words else []
    return wall, cpu, marks


def first_step(cache_dir):
    """(seconds to `import minigrad` done, to the first step's end, the child's CPU seconds,
    the step's loss as printed, the CPU seconds of those of its compile worker: 0 if none ran)
    with this Numba cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    _, cpu, (t_import, t_step, loss, worker) = _time_child(STEP, env)
    return t_import, t_step, cpu, loss, float(worker)


def import_time(module):
    """(wall, CPU) seconds of `python -c "import module"`."""
    wall, cpu, _ = _time_child(f"import {module}", dict(os.environ))
    return wall, cpu


def profile(top=30):
    """Compile seconds per dispatcher in a cold first step: {name: (own, with callees,
    number of signatures)}, the step's wall time, and prints the table."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        cpu0, t0 = _cpu_children(), time.time()
        r = subprocess.run([sys.executable, "-c", PROFILE + STEP], capture_output=True,
                           text=True, env=env, cwd=str(ROOT), timeout=900)
        wall, cpu = time.time() - t0, _cpu_children() - cpu0
    if r.returncode != 0:
        raise RuntimeError(f"cold_start child failed:\n{r.stderr[-3000:]}")
    line = next(x for x in r.stdout.splitlines() if x.startswith("PROFILE "))
    table = json.loads(line[len("PROFILE "):])
    t_import, t_step = [float(v) - t0 for v in r.stdout.split()[:2]]
    own = sum(v[0] for v in table.values())
    print(f"cold first step: {t_step:.2f} s (import {t_import:.2f} s), CPU {cpu:.2f} s; "
          f"compiling: {own:.2f} s in {len(table)} dispatchers (load average "
          f"{os.getloadavg()[0]:.2f})")
    stages = {s: sum(v[3].get(s, 0.0) for v in table.values()) for s in STAGES}
    print("  by stage: " + ", ".join(f"{s} {t:.2f}" for s, t in stages.items()))
    short = ("front", "lower", "LLVM fn", "LLVM mod", "mc", "other")
    print(f"{'own s':>7} {'total s':>8} {'sigs':>4}  " + " ".join(f"{s:>8}" for s in short)
          + "  dispatcher")
    ranked = sorted(table.items(), key=lambda kv: -kv[1][0])
    for name, (o, t, n, st) in ranked[:top]:
        print(f"{o:7.2f} {t:8.2f} {n:4d}  " + " ".join(f"{st.get(s, 0.0):8.2f}" for s in STAGES)
              + f"  {name}")
    rest = ranked[top:]
    if rest:
        print(f"{sum(v[0] for _, v in rest):7.2f} {'':8s} {'':4s}  ({len(rest)} more)")
    return dict(table=table, stages=stages, step=t_step, import_=t_import, cpu=cpu)


def run(rounds=3):
    have_torch = subprocess.run([sys.executable, "-c", "import torch"],
                                capture_output=True).returncode == 0
    rows = {k: [] for k in ("cold_import", "cold_step", "cold_cpu", "cold_worker_cpu",
                            "warm_import", "warm_step", "warm_cpu", "import_minigrad",
                            "import_minigrad_cpu", "import_torch", "import_torch_cpu")}
    losses = set()
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
            for kind in ("cold", "warm"):   # the warm run reuses what the cold one compiled
                t_import, t_step, cpu, loss, worker = first_step(cache)
                rows[kind + "_import"].append(t_import)
                rows[kind + "_step"].append(t_step)
                rows[kind + "_cpu"].append(cpu)
                if kind == "cold":
                    rows["cold_worker_cpu"].append(worker)
                losses.add(loss)
        for module in ("minigrad", "torch") if have_torch else ("minigrad",):
            wall, cpu = import_time(module)
            rows["import_" + module].append(wall)
            rows[f"import_{module}_cpu"].append(cpu)
    res = {k: dict(median=statistics.median(v), min=min(v), max=max(v))
           for k, v in rows.items() if v}
    # a seeded step computes the same numbers whatever the cache holds (no fallback while
    # compiling): the printed losses of every cold and warm run are one string
    res.update(rounds=rounds, loadavg=list(os.getloadavg()), losses=sorted(losses),
               same_loss=len(losses) == 1)
    return res


def print_table(res):
    names = dict(cold_step="first step ends, empty Numba cache",
                 cold_import="  of which `import minigrad` (empty cache)",
                 cold_cpu="  CPU seconds of that process (user + sys)",
                 cold_worker_cpu="  of which its compile worker's (0: none ran)",
                 warm_step="first step ends, warm Numba cache",
                 warm_import="  of which `import minigrad` (warm cache)",
                 warm_cpu="  CPU seconds of that process (user + sys)",
                 import_minigrad='python -c "import minigrad"',
                 import_minigrad_cpu="  CPU seconds",
                 import_torch='python -c "import torch"',
                 import_torch_cpu="  CPU seconds")
    print(f"seconds from `python -c`, medians of {res['rounds']} round(s) [min - max]; one-layer "
          f"toy Transformer (d_model 128, FFN 512, vocabulary 2000, batch 64 x 20), Adam")
    for k, label in names.items():
        if k in res:
            d = res[k]
            print(f"{label:45s} {d['median']:6.2f}  [{d['min']:.2f} - {d['max']:.2f}]")
    print(f"first step's loss, every cold and warm run: {', '.join(res['losses'])} "
          f"({'identical' if res['same_loss'] else 'DIFFERENT'})")
    print(f"(load average {res['loadavg'][0]:.2f})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--profile", action="store_true",
                    help="compile seconds per kernel in one cold first step")
    ap.add_argument("--top", type=int, default=30, help="rows of the --profile table")
    args = ap.parse_args(argv)
    if args.profile:
        res = profile(args.top)
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2))
        return res
    res = run(args.rounds)
    print_table(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
