"""Smoke tests for the benchmarks in bench/: they run at tiny sizes and produce the expected
JSON. Timings are never asserted. The subprocesses get NUMBA_NUM_THREADS=1 so that a busy
machine (another process on one of the two cores) cannot stall Numba's 2-thread kernels for
milliseconds per call (docs/performance.md, section 1); OPENBLAS_CORETYPE is left as it is."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def _env():
    return dict(os.environ, NUMBA_NUM_THREADS="1")


def test_run_quick_writes_json_and_png(tmp_path):
    out, png = tmp_path / "b.json", tmp_path / "b.png"
    # the kernels section is left out: bench_kernels waits up to 30 s per block for an idle
    # machine; its wiring is checked in-process below
    r = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--json", str(out),
                        "--png", str(png), "--sections", "autograd,step,scaling,decoding,profile"],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert png.stat().st_size > 1000
    for key in ("env", "autograd", "step", "scaling", "decoding", "profile"):
        assert key in res
    assert "OPENBLAS_CORETYPE" in res["env"]
    # the benchmarks opt into the allocator setting a training loop uses (minigrad.tune_malloc)
    assert res["env"]["malloc_tuned"]
    assert all(run["malloc_tuned"] for run in res["step"]["libs"]["minigrad"]["runs"])
    assert {r["op"] for r in res["autograd"]["rows"]} >= {"add", "mul", "exp", "matmul 4x4"}
    step = res["step"]
    assert "minigrad" in step["libs"]
    for lib, d in step["libs"].items():
        assert {"median_ms", "tokens_per_s", "peak_rss_growth_mb", "threads"} <= set(d)
    if step["torch_available"]:
        assert "ratio_time" in step and "ratio_memory" in step
    assert res["scaling"]["by_len"] and res["scaling"]["by_d_model"]
    assert all(0 <= p["attn_share"] <= 1.5 for p in res["scaling"]["by_len"])
    methods = {(r["method"], r["kv_cache"]) for r in res["decoding"]["rows"]}
    assert methods == {("greedy", True), ("greedy", False), ("beam 4", True), ("beam 4", False)}
    assert res["profile"]["rows"] and "fwd_ms" in res["profile"]["rows"][0]
    assert "training step" in r.stdout


def test_run_rejects_unknown_section():
    r = subprocess.run([sys.executable, str(BENCH / "run.py"), "--sections", "nope"],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120)
    assert r.returncode != 0 and "unknown section" in r.stderr


def test_kernels_section_wiring(monkeypatch, capsys):
    sys.path.insert(0, str(BENCH))
    import bench_kernels
    import run as bench_run
    fake = dict(env=dict(OPENBLAS_CORETYPE="x", numpy="1", numba="1", numba_threads=1,
                         threading_layer="omp", cpus=2, loadavg=0.0, other_cpu_use_around_blocks=[0.0]),
                rows=[dict(op="QK^T", shape="s", numba_us=1.0, numpy_us=2.0, speedup=2.0)],
                compile_s=dict(cold={"total": 1.0}, cached={"total": 0.1}))
    monkeypatch.setattr(bench_kernels, "run", lambda quick=False: fake)
    assert bench_run.sec_kernels(True) is fake
    assert "QK^T" in capsys.readouterr().out


def test_op_profiler_restores_ops():
    sys.path.insert(0, str(BENCH))
    import numpy as np
    import minigrad
    from minigrad import ops
    from op_profile import OpProfiler
    before = ops.Mul.__dict__["forward"]
    x = minigrad.tensor(np.ones((2, 2), np.float32), requires_grad=True)
    with OpProfiler() as prof:
        (x * x).sum().backward()
    assert ops.Mul.__dict__["forward"] is before
    assert prof.by_op()["Mul"]["calls"] == 1


def test_compare_archs_quick(tmp_path):
    out = tmp_path / "a.json"
    r = subprocess.run([sys.executable, str(BENCH / "compare_archs.py"), "--quick", "--json",
                        str(out)], capture_output=True, text=True, env=_env(), cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert [row["arch"] for row in res["rows"]] == ["rnn", "rnn-attention", "transformer"]
    for row in res["rows"]:
        assert row["steps"] > 0 and 0 <= row["test_bleu_greedy"] <= 100
