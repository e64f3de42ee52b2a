"""minigrad benchmarks: kernels, autograd overhead, training step vs PyTorch, scaling,
decoding speed, a per-op profile, small models, memory, forward + backward per op vs PyTorch,
and the cold start. Prints tables, writes JSON and a PNG.

    python bench/run.py [--quick] [--json out.json] [--png out.png]
                        [--sections kernels,autograd,step,scaling,decoding,profile,small,
                                    memory,ops,coldstart,peakmem]

Every time is a median over repeats. The training-step comparison runs each library in its own
subprocess (bench/step_worker.py), alternating minigrad, torch, minigrad, torch, ... because
their thread pools interfere (docs/performance.md, section 1). Memory is the peak RSS
(VmHWM) growth of each worker process over its RSS right after importing its library --
the same measure for both libraries. Nothing here changes OPENBLAS_CORETYPE or thread
variables in this process; the values in effect are printed. The ops section's child
processes run minigrad under each OpenBLAS kernel set (OPENBLAS_CORETYPE removed, and set to
Haswell), set in their own environment only. Each section is a function of sections.py;
this file is the driver: its arguments, the environment it prints, the JSON and the plot.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import minigrad  # noqa: E402
from sections import (sec_autograd, sec_coldstart, sec_decoding, sec_kernels,  # noqa: E402
                      sec_memory, sec_ops, sec_peakmem, sec_profile, sec_scaling, sec_small,
                      sec_step)

SECTIONS = ["kernels", "autograd", "step", "scaling", "decoding", "profile", "small", "memory",
            "ops", "coldstart", "peakmem"]
# the sections that other bench/ modules measure (sections.py runs them)
EXTRA_SECTIONS = dict(small=sec_small, memory=sec_memory, ops=sec_ops, coldstart=sec_coldstart,
                      peakmem=sec_peakmem)


def _env_info():
    import numba
    info = dict(OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
                OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "(unset)"),
                OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "(unset)"),
                NUMBA_NUM_THREADS=os.environ.get("NUMBA_NUM_THREADS", "(unset)"),
                numba_threads=numba.get_num_threads(), cpus=os.cpu_count(),
                minigrad_backend=minigrad.get_backend(), malloc_tuned=minigrad._malloc.tuned,
                numpy=np.__version__,
                numba=numba.__version__, python=sys.version.split()[0],
                loadavg_start=list(os.getloadavg()))
    try:
        from threadpoolctl import threadpool_info
        info["blas_threads"] = [(p.get("internal_api"), p.get("num_threads"))
                                for p in threadpool_info()]
    except ImportError:
        pass
    return info


# ------------------------------------------------------------------ plot --
def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [k for k in ("scaling", "step", "profile") if k in results]
    if not panels:
        panels = ["none"]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, key in zip(axes[0], panels):
        if key == "scaling":
            s = results["scaling"]
            ax.plot([r["len"] for r in s["by_len"]], [r["ms_per_1k_tokens"] for r in s["by_len"]],
                    "o-", label="vs length (ms per 1k target tokens)")
            ax.plot([r["d_model"] for r in s["by_d_model"]], [r["median_ms"] for r in s["by_d_model"]],
                    "s-", label="vs d_model (ms per step)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("sequence length / d_model")
            ax.set_ylabel("milliseconds")
            ax.set_title("minigrad training-step scaling")
            ax.legend(fontsize=8)
        elif key == "step":
            libs = results["step"]["libs"]
            names = list(libs)
            ax.bar(names, [libs[n]["median_ms"] for n in names], color=["tab:blue", "tab:orange"][:len(names)])
            ax.set_ylabel("median ms per training step")
            ax.set_xlabel("library (each in its own process)")
            ax.set_title("toy Transformer training step")
        elif key == "profile":
            rows = [r for r in results["profile"]["rows"] if not r["op"].startswith("other")][:10]
            ax.barh([r["op"] for r in rows][::-1], [r["fwd_ms"] for r in rows][::-1], label="forward")
            ax.barh([r["op"] for r in rows][::-1], [r["bwd_ms"] for r in rows][::-1],
                    left=[r["fwd_ms"] for r in rows][::-1], label="backward")
            ax.set_xlabel("ms per step")
            ax.set_ylabel("op")
            ax.set_title("minigrad step profile (top 10 ops)")
            ax.legend(fontsize=8)
        else:
            ax.text(0.5, 0.5, "no plottable section run", ha="center")
            ax.set_title("minigrad benchmarks")
            ax.set_xlabel("-")
            ax.set_ylabel("-")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, a few seconds per section")
    ap.add_argument("--json", metavar="PATH", help="write all results as JSON")
    ap.add_argument("--png", metavar="PATH", help="write a plot (scaling, step, profile)")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated subset of {','.join(SECTIONS)}")
    args = ap.parse_args(argv)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        ap.error(f"unknown section(s) {bad}; choose from {SECTIONS}")
    minigrad.tune_malloc()  # the setting a training loop opts into, for the in-process sections
    env = _env_info()
    print(f"minigrad benchmarks  quick={args.quick}  backend={env['minigrad_backend']}  "
          f"OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}  OPENBLAS_NUM_THREADS="
          f"{env['OPENBLAS_NUM_THREADS']}  OMP_NUM_THREADS={env['OMP_NUM_THREADS']}  "
          f"numba threads {env['numba_threads']}  torch threads 2 (set_num_threads)  "
          f"cpus {env['cpus']}  load avg {env['loadavg_start'][0]:.2f}")
    if "blas_threads" in env:
        print(f"BLAS pools: {env['blas_threads']}")
    results = {"env": env, "quick": args.quick, "sections": sections}
    funcs = dict(kernels=sec_kernels, autograd=sec_autograd, step=sec_step, scaling=sec_scaling,
                 decoding=sec_decoding, profile=sec_profile, **EXTRA_SECTIONS)
    for s in SECTIONS:
        if s in sections:
            t = time.perf_counter()
            results[s] = funcs[s](args.quick)
            results[s + "_wall_s"] = time.perf_counter() - t
    results["env"]["loadavg_end"] = list(os.getloadavg())
    print(f"\nload average at end: {results['env']['loadavg_end']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=float))
    if args.png:
        plot(results, args.png)
    return results


if __name__ == "__main__":
    main()
