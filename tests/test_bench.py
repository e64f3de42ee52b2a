"""Smoke tests for the benchmarks in bench/: they run at tiny sizes and produce the expected
JSON. Timings are never asserted. The subprocesses get NUMBA_NUM_THREADS=1 so that a busy
machine (another process on one of the two cores) cannot stall Numba's 2-thread kernels for
milliseconds per call (docs/performance.md, section 1); OPENBLAS_CORETYPE is left as it is."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def _env():
    return dict(os.environ, NUMBA_NUM_THREADS="1")


@pytest.mark.slow   # 30-35 s: every section's quick run compiles and trains in its own processes
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


@pytest.mark.slow   # 10-15 s of training; the slow suite runs it
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


# ------------------------------------------------------------------ small models, memory --
def _bench_module(name):
    sys.path.insert(0, str(BENCH))
    import importlib
    return importlib.import_module(name)


@pytest.mark.slow   # about 10 s of training in two processes; the slow suite runs it
def test_small_models_quick(tmp_path):
    out = tmp_path / "s.json"
    r = subprocess.run([sys.executable, str(BENCH / "small_models.py"), "--quick", "--json", str(out)],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(out.read_text())
    libs = res["libs"]
    assert "minigrad" in libs
    for d in libs.values():
        assert d["median_step_ms"] > 0 and d["median_gen_s"] > 0
        assert d["n_params"] == libs["minigrad"]["n_params"]  # the same program in both
    if "torch" in libs:
        assert res["ratio_step"] > 0 and res["ratio_gen"] > 0
    assert "character-level GPT" in r.stdout


def test_small_models_worker_takes_the_products_serial_limit():
    # one quick step and two tokens, so that a quiet machine can compare the route's limits
    r = subprocess.run([sys.executable, str(BENCH / "small_models.py"), "--worker", "--lib",
                        "minigrad", "--quick", "--warmup-steps", "1", "--steps", "1",
                        "--gen-loops", "1", "--new-tokens", "2", "--serial-max-work", "0"],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["threads"].endswith("serial products < 0") and out["median_step_ms"] > 0


@pytest.mark.slow   # 10-15 s of training; the slow suite runs it
def test_memory_quick(tmp_path):
    out = tmp_path / "m.json"
    r = subprocess.run([sys.executable, str(BENCH / "memory.py"), "--quick", "--json", str(out)],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    e = json.loads(out.read_text())["configs"]["quick"]
    assert e["rows"]["minigrad"]["growth_mb"] > 0
    p = e["profile"]
    g = p["events"]["graph_forward"]
    assert g["saved"] and g["nodes"] > 10 and "CrossEntropy" in g["ops"]
    # the logits are booked somewhere (since nodes keep their input nodes, not input tensors,
    # the graph no longer holds them: CrossEntropy saves its log-probabilities instead)
    assert isinstance(g["marks"]["logits"], str) and g["marks"]["logits"]
    assert p["backward_peak"]["of"] >= g["nodes"] - 5  # one timeline row per node's backward
    if "torch" in e["rows"]:
        assert e["ratio"]["minigrad"] > 0 and p["torch"]["saved_mb"] > 0
    assert "memory profile of one minigrad step" in r.stdout


def test_library_is_the_module_itself():
    shims = _bench_module("lib_shims")
    import minigrad
    assert shims.library("minigrad") is minigrad
    with pytest.raises(ValueError, match="unknown library"):
        shims.library("numpy")


def test_graph_memory_books_each_buffer_once():
    import numpy as np
    mp = _bench_module("mem_profile")

    class T:  # a tensor as the walker sees it: an array and the node that made it
        def __init__(self, arr, grad_fn=None):
            self._array, self.grad_fn = arr, grad_fn

    class Op:
        def __init__(self, inputs, saved=(), **attrs):
            self.inputs, self.saved = inputs, saved
            self.next_functions = tuple((t.grad_fn, 0) for t in inputs)
            vars(self).update(attrs)

    class Exp(Op):
        pass

    class Mul(Op):
        pass

    class Sum(Op):
        pass

    w = T(np.ones(100))                                   # leaf: 800 bytes
    a = np.ones((10, 10))
    mul = Mul([w], saved=(w._array,))                     # saves only the leaf
    out_a = T(a, mul)
    b = np.ones(200)
    exp = Exp([out_a], saved=(b,), extra=(b[:5], np.zeros(3)))  # b via a view too; 24 more bytes
    out_b = T(b, exp)
    total = Sum([out_b, T(a[2:], mul)])                   # a view of a: the same buffer as a
    loss = T(np.zeros(()), total)
    g = mp.graph_memory(loss, marks=dict(a=out_a))
    assert g["leaves"] == 800
    assert g["saved"] == {"Exp": 1600 + 24}
    assert g["input_refs"] == {"Mul": 800}
    assert g["total"] == 1600 + 24 + 800 and g["nodes"] == 3
    assert g["ops"] == {"Mul": 1, "Exp": 1, "Sum": 1}
    assert g["marks"]["a"] == "input reference (output of Mul)"


def test_backward_timeline_records_and_restores():
    import tracemalloc
    import numpy as np
    import minigrad
    from minigrad import ops
    mp = _bench_module("mem_profile")
    before = ops.Mul.__dict__["backward"]
    x = minigrad.tensor(np.ones((64, 64), np.float32), requires_grad=True)
    loss = ((x * x).exp() * 2.0).sum()
    tracemalloc.start()
    try:
        with mp.BackwardTimeline() as tl:
            loss.backward()
    finally:
        tracemalloc.stop()
    assert ops.Mul.__dict__["backward"] is before
    assert [r[0] for r in tl.rows] == ["Sum", "Mul", "Exp", "Mul"]
    op, peak, i = tl.peak()
    assert peak >= 64 * 64 * 4 and op == tl.rows[i][0]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(1.0) * 2, rtol=1e-5)


def test_graph_memory_finds_saved_factors_backward_never_reads():
    import numpy as np
    import minigrad
    mp = _bench_module("mem_profile")
    x = minigrad.tensor(np.ones((8, 8), np.float32), requires_grad=True)
    h = x + 1.0                    # a non-leaf (an activation) that Add does not save
    c = minigrad.tensor(np.ones((8, 8), np.float32))
    g = mp.graph_memory((h @ c).sum())  # MatMul saves h, but dh = g @ c^T reads only c
    assert g["unneeded"].get("MatMul") == 8 * 8 * 4
    # Mul keeps only the operand the other one's gradient reads: h * 0.5 keeps nothing of h
    assert mp.graph_memory((h * 0.5).sum())["unneeded"] == {}
    w = minigrad.tensor(np.ones((8, 8), np.float32), requires_grad=True)
    g = mp.graph_memory((h * w).sum())  # both need gradients: everything saved is read
    assert g["unneeded"] == {}


def test_peak_rss_is_not_inherited_from_a_big_parent():
    # ru_maxrss of a child starts at its parent's peak (fork + exec), which once made the toy
    # row of bench/memory.py read 0 MB; VmHWM is the child's own
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import mem_profile as m; "
            "print(m.maxrss_mb())")
    parent = ("import subprocess, sys, numpy as np; big = np.ones(400 * 2**20 // 8); "
              f"print(subprocess.run([sys.executable, '-c', {code!r}, sys.argv[1]], "
              "capture_output=True, text=True, check=True).stdout)")
    r = subprocess.run([sys.executable, "-c", parent, str(BENCH)], capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert float(r.stdout.split()[-1]) < 300  # a bare interpreter with NumPy, not the 400 MB


def test_reset_peak_rss_starts_the_peak_from_the_current_size():
    mp = _bench_module("mem_profile")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import numpy as np, mem_profile as m; "
            "a = np.ones(200 * 2**20 // 8); del a; before = m.maxrss_mb(); "
            "ok = m.reset_peak_rss(); print(ok, before, m.maxrss_mb())")
    r = subprocess.run([sys.executable, "-c", code, str(BENCH)], capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    ok, before, after = r.stdout.split()
    assert float(before) > 200
    if ok == "True":
        assert float(after) < float(before) - 150
    assert mp.maxrss_mb() > 0


def test_run_by_default_runs_every_section():
    # `python bench/run.py` with no --sections prints every table: memory, small models (step
    # and sampling), decoding (greedy and beam) and the training step, each beside PyTorch's
    run = _bench_module("run")
    assert {"step", "decoding", "small", "memory", "ops", "coldstart", "peakmem"} <= set(run.SECTIONS)
    seen = []
    funcs = {s: (lambda quick, s=s: seen.append(s) or {}) for s in run.SECTIONS}
    import unittest.mock as um
    with um.patch.multiple(run, sec_kernels=funcs["kernels"], sec_autograd=funcs["autograd"],
                           sec_step=funcs["step"], sec_scaling=funcs["scaling"],
                           sec_decoding=funcs["decoding"], sec_profile=funcs["profile"]), \
            um.patch.dict(run.EXTRA_SECTIONS, {s: funcs[s] for s in run.EXTRA_SECTIONS}):
        run.main([])
    assert seen == run.SECTIONS


# ------------------------------------------------------------- per op and cold start --
def test_op_bench_medians_ratios_and_spreads(monkeypatch, capsys):
    op_bench = _bench_module("op_bench")
    times = {("minigrad", "numba", "unset"): [1.0, 3.0, 2.0],
             ("torch", None, None): [4.0, 4.0, 2.0],
             ("minigrad", "numpy", "unset"): [8.0, 8.0, 8.0],
             ("minigrad", "numba", "Haswell"): [2.0, 2.0, 2.0],
             ("minigrad", "numpy", "Haswell"): [1.0, 4.0, 2.0]}
    calls = []

    def fake_spawn(lib, backend, threads, reps, ops=None, coretype=None):
        calls.append((lib, backend, coretype))
        t = times[calls[-1]][calls.count(calls[-1]) - 1]
        names = [name for name, _ in op_bench.OPS]
        return dict(ms=dict.fromkeys(names, t), cpu_ms=dict.fromkeys(names, t / 2),
                    minflt=dict.fromkeys(names, 0.0),
                    nivcsw=dict.fromkeys(names, 0.5))
    monkeypatch.setattr(op_bench, "_spawn", fake_spawn)
    monkeypatch.setattr(op_bench, "_torch_available", lambda: True)
    res = op_bench.run(rounds=3, threads=(1,))
    # the processes alternate within a round, and every other round runs in reverse order
    first = [("minigrad", "numba", "unset"), ("torch", None, None),
             ("minigrad", "numpy", "unset"), ("minigrad", "numba", "Haswell"),
             ("minigrad", "numpy", "Haswell")]
    assert calls == first + first[::-1] + first
    row = res["threads"][1]["rows"][0]
    assert row["torch_ms"] == 4.0 and row["torch_range"] == [2.0, 4.0]
    unset, haswell = row["coretypes"]["unset"], row["coretypes"]["Haswell"]
    assert unset["minigrad_ms"] == 2.0 and unset["minigrad_range"] == (1.0, 3.0)
    # ratios are taken round by round: 1/4, 3/4, 2/2 and 1/8, 3/8, 2/8
    assert unset["ratio"] == 0.75 and unset["ratio_range"] == [0.25, 1.0]
    assert unset["numba_over_numpy"] == 0.25 and unset["numba_over_numpy_range"] == [0.125, 0.375]
    assert haswell["numba_over_numpy"] == 1.0 and haswell["numba_over_numpy_range"] == [0.5, 2.0]
    assert haswell["ratio"] == 0.5 and row["nivcsw"]["torch/None/None"] == 0.5
    assert unset["cpu_numba_over_numpy"] == 0.25
    assert unset["cpu_ratio"] == 0.75 and unset["cpu_ratio_range"] == [0.25, 1.0]   # (CPU: t/2)
    op_bench.print_table(res)
    out = capsys.readouterr().out
    assert "GELU" in out and "embedding" in out and "OPENBLAS_CORETYPE Haswell" in out
    assert "0.25 [0.12-0.38]" in out and "1.00 [0.50-2.00]" in out
    with pytest.raises(ValueError, match="coretypes"):
        op_bench.run(rounds=1, threads=(1,), coretypes=("unset", "unset"))


def test_op_bench_sets_the_kernel_set_in_the_child_environment_only(monkeypatch):
    op_bench = _bench_module("op_bench")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Sandybridge")
    env = op_bench.child_env(2, "unset")
    assert "OPENBLAS_CORETYPE" not in env and env["OPENBLAS_NUM_THREADS"] == "2"
    assert env["NUMBA_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "2"
    assert op_bench.child_env(1, "Haswell")["OPENBLAS_CORETYPE"] == "Haswell"
    assert op_bench.child_env(1, "Haswell", base={})["OPENBLAS_CORETYPE"] == "Haswell"
    assert os.environ["OPENBLAS_CORETYPE"] == "Sandybridge"   # this process: unchanged
    assert op_bench.schedule(("unset",), torch=False) == [("minigrad", "numba", "unset"),
                                                          ("minigrad", "numpy", "unset")]


@pytest.mark.slow
def test_op_bench_worker_times_every_op():
    op_bench = _bench_module("op_bench")
    out = op_bench.worker("minigrad", "numba", 1, reps=2)
    names = {name for name, _ in op_bench.OPS}
    assert set(out["ms"]) == set(out["cpu_ms"]) == set(out["minflt"]) == set(out["nivcsw"]) == names
    assert all(v > 0 for v in out["ms"].values())
    assert all(v >= 0 for v in out["minflt"].values())
    assert all(v >= 0 for v in out["nivcsw"].values())


@pytest.mark.slow
def test_cold_start_measures_a_first_step(tmp_path):
    cold_start = _bench_module("cold_start")
    t_import, t_step, cpu, loss, worker = cold_start.first_step(tmp_path)
    assert 0 < t_import < t_step and cpu > worker >= 0 and 0 < float(loss) < 100
    assert any(tmp_path.iterdir())   # the kernels were compiled into the given cache
    # with the cache now warm, the seeded step computes the same numbers
    assert cold_start.first_step(tmp_path)[3] == loss


# ------------------------------------------------------------ the FLOP floor, peak memory --
def test_step_flops_is_every_product_the_step_makes():
    """The floor's FLOP count (toy configuration: 9.25 GFLOP) is the sum over the products a
    step really makes, as ProductTimer counts them, and the timer puts the routes back."""
    import argparse
    from minigrad.ops import matmul as ops_matmul
    flop_floor, step_worker = _bench_module("flop_floor"), _bench_module("step_worker")
    assert round(flop_floor.step_flops(128, 4, 2, 512, 2000, 64, 20) / 1e9, 2) == 9.25
    args = argparse.Namespace(vocab=50, d_model=16, nhead=2, layers=1, ffn=32, dropout=0.1,
                              batch=3, len=5)
    step, _ = step_worker.minigrad_stepper(args)
    before = (ops_matmul.product, ops_matmul.product_add, ops_matmul.product_and_sum)
    with flop_floor.ProductTimer() as timer:
        step()
    assert timer.flops == flop_floor.step_flops(16, 2, 1, 32, 50, 3, 5)
    assert timer.calls > 0 and timer.seconds > 0
    assert (ops_matmul.product, ops_matmul.product_add, ops_matmul.product_and_sum) == before


@pytest.mark.slow
def test_memory_rounds_quick():
    """The peak-memory section end to end on a tiny model (the corpus takes ~20 s to make)."""
    res = _bench_module("memory_rounds").run(quick=True)
    m = res["runs"]["minigrad"][0]
    assert m["peak_mb"] >= m["growth_mb"] > 0 and len(m["growth_per_step_mb"]) == 2
    if "torch" in res["runs"]:
        assert len(res["ratio_peak"]) == 1 and res["ratio_peak"][0] > 0


def test_step_breakdown_parts_add_up_to_the_step(tmp_path):
    """bench/step_breakdown.py --tiny: the parts of the step (products, each op's own time,
    the rests, the optimizer's phases) add up to the step's time, each op's products to the
    products' time, every product shape has its time alone (hot and cold), and the wrappers
    are put back."""
    out = tmp_path / "b.json"
    subprocess.run([sys.executable, str(BENCH / "step_breakdown.py"), "--tiny", "--steps", "2",
                    "--warmup-steps", "1", "--json", str(out)], check=True, env=_env(),
                   capture_output=True, timeout=600)
    r = json.loads(out.read_text())
    # (the step also returns its loss as a float, outside its timed phases)
    assert sum(r["kinds"].values()) == pytest.approx(r["step_ms_mean"], rel=0.1)
    # the same parts again as their medians over the steps
    assert set(r["kinds_median"]) == set(r["kinds"]) and r["kinds_median"]["products"] > 0
    booked = sum(d["products"] for d in r["ops"].values())
    assert booked == pytest.approx(r["kinds"]["products"], rel=1e-6)
    assert r["ops"]["Linear"]["products"] > 0 and r["ops"]["Linear"]["calls"] > 0
    assert r["product_rows"] and all(row[5] > 0 and row[6] > 0 for row in r["product_rows"])
    assert r["products_cold_ms"] == pytest.approx(sum(row[6] for row in r["product_rows"]))
    assert round(r["step_gflop"] * 1e9) == _bench_module("flop_floor").step_flops(
        16, 2, 1, 32, 50, 3, 5)


def test_op_profiler_books_a_products_time_apart_from_its_op():
    sys.path.insert(0, str(BENCH))
    import numpy as np
    import minigrad
    from flop_floor import ProductTimer
    from op_profile import OpProfiler
    x = minigrad.tensor(np.ones((4, 3), np.float32), requires_grad=True)
    w = minigrad.tensor(np.ones((3, 2), np.float32), requires_grad=True)
    with OpProfiler() as prof, ProductTimer(on_time=prof.exclude) as timer:
        (x @ w).sum().backward()
    assert timer.calls == 3   # the forward and both gradients
    assert sum(prof.inner.values()) == pytest.approx(timer.seconds)
    assert set(op for op, _ in prof.inner) == {"MatMul"}
    assert prof.inner[("MatMul", True)] > 0 and prof.inner[("MatMul", False)] > 0


def test_dropout_switch_separate_arm_runs_the_residual_ops_unfused_and_restores():
    import minigrad as mg
    from minigrad.nn import fast_path
    sys.path.insert(0, str(BENCH))
    import dropout_switch
    saved = fast_path._drawing, fast_path.PositionalEncoding
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 5, 16)).astype(np.float32))
    emb, pos = mg.nn.Embedding(20, 16), mg.nn.PositionalEncoding(16, 32, 0.1)
    ids = np.arange(10).reshape(2, 5)

    def names():
        layer = mg.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True)
        return (type(layer(x).grad_fn).__name__,
                type(fast_path.embed_positions(emb, pos, ids, 4.0).grad_fn).__name__)
    assert names() == ("DropoutAddLayerNorm", "EmbedPositions")
    with dropout_switch._Unfused():
        assert names() == ("LayerNorm", "Dropout")
    assert (fast_path._drawing, fast_path.PositionalEncoding) == saved
