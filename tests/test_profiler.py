"""minigrad.profiler and minigrad.autograd.profiler: every op and backward node timed, ranges
nested, counts and times consistent, PyTorch's schedule, the chrome trace, no hooks left."""
import gzip
import json
import threading
import warnings

import pytest

import minigrad as mg
from minigrad.autograd import engine
from minigrad.autograd import op as autograd_op
from minigrad.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                               schedule, tensorboard_trace_handler)


def _no_hooks_left():
    return not autograd_op._enter_hooks and not autograd_op._apply_hooks \
        and not engine._backward_timers


def _chain(n):
    x = mg.randn(4, 4, requires_grad=True)
    y = x
    for _ in range(n):
        y = y + x
    return x, y


def test_counts_equal_the_ops_run_forward_and_backward():
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x, y = _chain(7)
        (y * 2).sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["Add"] == 7 and counts["Mul"] == 1 and counts["Sum"] == 1
    assert counts["AddBackward0"] == 7 and counts["MulBackward0"] == 1
    assert counts["SumBackward0"] == 1 and counts["AccumulateGrad"] == 1
    assert sum(counts.values()) == len(prof.events())


def test_counts_equal_an_independent_count_of_a_models_ops_and_nodes():
    from collections import Counter
    mg.manual_seed(0)
    model = mg.nn.Sequential(mg.nn.Linear(5, 8), mg.nn.GELU(), mg.nn.LayerNorm(8),
                             mg.nn.Linear(8, 2))
    x = mg.randn(3, 5)
    applied = Counter()
    handle = autograd_op.add_apply_hook(lambda cls, *_: applied.update([cls.__name__]))
    try:
        with profile() as prof:
            loss = mg.nn.functional.cross_entropy(model(x), mg.tensor([0, 1, 1]))
            loss.backward()
    finally:
        handle.remove()
    nodes, stack = Counter(), [loss.grad_fn]
    seen = set()
    while stack:  # every node the backward pass visits, each once
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        nodes.update([node.name()])
        stack.extend(node.next_nodes)
    events = Counter(e.name for e in prof.events())
    assert {k: v for k, v in events.items() if k in applied} == applied
    assert {k: v for k, v in events.items() if k not in applied} == nodes
    assert nodes["AccumulateGrad"] == len(list(model.parameters()))


def test_ranges_nest_and_totals_cover_self_times():
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            a = mg.ones(2, 3, requires_grad=True)
            with record_function("inner"):
                b = (a * 3).exp()
            c = b.sum()
        c.backward()
    events = prof.events()
    by_name = {e.name: e for e in events}
    assert by_name["outer"].cpu_parent is None
    assert by_name["inner"].cpu_parent is by_name["outer"]
    assert {c.name for c in by_name["inner"].cpu_children} == {"Mul", "Exp"}
    assert by_name["Sum"].cpu_parent is by_name["outer"]
    assert by_name["ExpBackward0"].cpu_parent is None  # backward ran outside the ranges
    assert by_name["Mul"].input_shapes == [[2, 3], []]  # a tensor, then the scalar 3
    for e in events:
        assert e.cpu_time_total >= e.self_cpu_time_total >= 0
        start, end = e.time_range.start, e.time_range.end
        for child in e.cpu_children:
            assert start <= child.time_range.start <= child.time_range.end <= end
    top = [e for e in events if e.cpu_parent is None]
    assert events.self_cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in top))
    for avg in prof.key_averages():
        assert avg.cpu_time_total >= avg.self_cpu_time_total
        assert avg.cpu_time == pytest.approx(avg.cpu_time_total / avg.count)


def test_group_by_input_shape_splits_the_rows():
    with profile(record_shapes=True) as prof:
        mg.ones(2) + mg.ones(2)
        mg.ones(3) + mg.ones(3)
        mg.ones(3) + mg.ones(3)
    rows = {(a.key, str(a.input_shapes)): a.count
            for a in prof.key_averages(group_by_input_shape=True)}
    assert rows[("Add", "[[2], [2]]")] == 1 and rows[("Add", "[[3], [3]]")] == 2
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" not in prof.key_averages().table()


def test_table_is_sorted_and_limited():
    with profile() as prof:
        with record_function("slow"):
            _chain(30)
        mg.ones(2).sum()
    averages = prof.key_averages()
    table = averages.table(sort_by="cpu_time_total", row_limit=2)
    lines = table.splitlines()
    assert lines[1].split()[:3] == ["Name", "Self", "CPU"]
    rows = lines[3:5]
    assert rows[0].split()[0] == "slow" and len([l for l in lines if l.startswith("-")]) == 3
    assert lines[-1].startswith("Self CPU time total:")
    totals = sorted((a.cpu_time_total for a in averages), reverse=True)
    assert rows[1].split()[0] == next(a.key for a in averages if a.cpu_time_total == totals[1])
    by_count = averages.table(sort_by="count").splitlines()[3].split()
    assert by_count[0] == "Add" and by_count[-1] == "30"
    on_device = averages.table(sort_by="cuda_time_total").splitlines()[3:-2]  # all zero:
    assert [r.split()[0] for r in on_device] == [a.key for a in averages]  # the order kept
    with pytest.raises(AttributeError, match="cannot sort by 'cuda_time_totl'"):
        averages.table(sort_by="cuda_time_totl")


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2, repeat=2),
                                dict(wait=0, warmup=2, active=1, repeat=0, skip_first=3),
                                dict(wait=3, warmup=1, active=2, skip_first=2, skip_first_wait=1)])
def test_schedule_actions_are_pytorchs(torch, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
    assert [ours(i).name for i in range(25)] == [theirs(i).name for i in range(25)]


def test_schedule_records_the_active_steps_of_a_step_loop():
    traces = []

    def ready(p):
        traces.append(sorted(e.name for e in p.events() if e.name.startswith("step")))

    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    assert [sched(i) for i in range(4)] == [ProfilerAction.NONE, ProfilerAction.WARMUP,
                                             ProfilerAction.RECORD,
                                             ProfilerAction.RECORD_AND_SAVE]
    with profile(schedule=sched, on_trace_ready=ready) as prof:
        for i in range(10):
            with record_function(f"step{i}"):
                mg.ones(2) * i
            prof.step()
    assert traces == [["step2", "step3"], ["step6", "step7"]]
    names = [e.name for e in prof.events()]
    assert names.count("ProfilerStep*") == 2 and names.count("Mul") == 2
    assert _no_hooks_left()


def test_acc_events_keeps_every_windows_events():
    for acc, expected in ((False, ["step6", "step7"]),
                          (True, ["step2", "step3", "step6", "step7"])):
        with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                     acc_events=acc) as prof:
            for i in range(10):
                with record_function(f"step{i}"):
                    mg.ones(2) * i
                prof.step()
        assert sorted(e.name for e in prof.events() if e.name.startswith("step")) == expected


def test_a_window_cut_short_by_the_exit_is_handed_on():
    traces = []
    with profile(schedule=schedule(wait=0, warmup=1, active=3),
                 on_trace_ready=lambda p: traces.append([e.name for e in p.events()])) as prof:
        for _ in range(2):  # step 0 warms up, step 1 records, step 2 opens, the block ends
            mg.ones(2).exp()
            prof.step()
    assert traces == [["ProfilerStep*", "Exp", "ProfilerStep*"]]


def test_chrome_trace_is_json_of_complete_events(tmp_path):
    with profile(record_shapes=True, schedule=schedule(wait=0, warmup=1, active=2)) as prof:
        for _ in range(2):
            with record_function("block"):
                x, y = _chain(3)
                y.sum().backward()
            prof.step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert events and all(e["ph"] == "X" for e in events)
    assert all(isinstance(e["ts"], float) and e["dur"] >= 0 for e in events)
    names = [e["name"] for e in events]
    assert names.count("Add") == 3 and names.count("AddBackward0") == 3
    assert "ProfilerStep#1" in names and "block" in names
    assert {e["cat"] for e in events} == {"cpu_op", "backward", "user_annotation"}
    block = events[names.index("block")]
    add = events[names.index("Add")]
    assert block["ts"] <= add["ts"] and add["ts"] + add["dur"] <= block["ts"] + block["dur"]
    assert add["args"]["Input Dims"] == [[4, 4], [4, 4]]


@pytest.mark.parametrize("gz", [False, True])
def test_tensorboard_trace_handler_writes_a_trace_file(tmp_path, gz):
    target = tmp_path / "logs"
    with profile(schedule=schedule(wait=0, warmup=1, active=1),
                 on_trace_ready=tensorboard_trace_handler(str(target), "worker",
                                                          use_gzip=gz)) as prof:
        for _ in range(2):  # warmup, record and save, then a warmup the exit drops
            mg.ones(3).relu()
            prof.step()
    files = sorted(target.iterdir())
    assert len(files) == 1 and files[0].name.startswith("worker.")
    assert files[0].name.endswith(".pt.trace.json.gz" if gz else ".pt.trace.json")
    text = gzip.open(files[0], "rt").read() if gz else files[0].read_text()
    assert [e["name"] for e in json.loads(text)["traceEvents"]] == ["ProfilerStep#1", "Relu"]


def test_no_hooks_are_left_after_exit_even_after_an_error():
    assert _no_hooks_left()
    with pytest.raises(ValueError):
        with profile():
            with record_function("outer"):
                _chain(2)
                raise ValueError("stop")
    assert _no_hooks_left()
    with profile():
        assert autograd_op._enter_hooks and engine._backward_timers
    assert _no_hooks_left()


def test_an_op_that_raises_still_closes_and_nests():
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            with pytest.raises(Exception):
                mg.ones(2, 3) @ mg.ones(2, 3)
            mg.ones(2).exp()
    by_name = {e.name: e for e in prof.events()}
    assert by_name["MatMul"].cpu_parent is by_name["outer"]
    assert by_name["Exp"].cpu_parent is by_name["outer"]
    assert by_name["MatMul"].time_range.end <= by_name["Exp"].time_range.start


def test_other_threads_are_not_recorded_and_do_not_disturb_the_nesting():
    started, release = threading.Event(), threading.Event()

    def worker():
        started.set()
        with record_function("in_thread"):
            while not release.is_set():
                mg.ones(2).sin()

    with profile() as prof:
        t = threading.Thread(target=worker)
        t.start()
        started.wait()
        with record_function("main"):
            _chain(5)
        release.set()
        t.join()
    names = [e.name for e in prof.events()]
    assert "in_thread" not in names and "Sin" not in names  # as PyTorch's profiler
    assert names.count("Add") == 5
    assert all(e.cpu_parent.name == "main" for e in prof.events() if e.name == "Add")
    assert {e.thread for e in prof.events()} == {threading.get_native_id()}


def test_create_graph_backward_nodes_are_timed():
    with profile() as prof:
        x = mg.tensor([1.0, 2.0], requires_grad=True)
        (g,) = mg.autograd.grad((x * x * x).sum(), x, create_graph=True)
        g.sum().backward()
        (x * x).sum().backward(create_graph=True)  # the general engine's leaves
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["MulBackward0"] >= 3 and counts["SumBackward0"] >= 3
    assert counts["AccumulateGrad"] == 2


def test_record_function_is_free_without_a_profiler_and_works_as_a_decorator():
    @record_function("double")
    def double(t):
        return t * 2

    assert double(mg.ones(2)).tolist() == [2.0, 2.0]  # no profiler: a plain call
    with profile() as prof:
        double(mg.ones(2))
    (event,) = [e for e in prof.events() if e.name == "double"]
    assert [c.name for c in event.cpu_children] == ["Mul"]


def test_the_older_autograd_profiler():
    from minigrad.autograd import profiler as legacy
    with legacy.profile(record_shapes=True) as prof:
        with pytest.raises(RuntimeError, match="has not finished"):
            prof.function_events
        with legacy.record_function("r"):
            mg.ones(2).exp()
    assert [e.name for e in prof.function_events] == ["r", "Exp"]
    assert "Exp" in prof.key_averages().table(sort_by="self_cpu_time_total")
    with legacy.profile(enabled=False) as off:
        mg.ones(2).exp()
    assert len(off.function_events) == 0 and _no_hooks_left()
    assert mg.autograd.profiler is legacy


def test_bad_and_unrecorded_options():
    with pytest.raises(RuntimeError, match="CPU only"):
        profile(activities=[ProfilerActivity.CUDA])
    with pytest.raises(RuntimeError, match="CPU only"):
        profile(use_cuda=True)
    with pytest.warns(UserWarning, match="profile_memory, with_stack is ignored"):
        profile(profile_memory=True, with_stack=True)
    with pytest.raises(AssertionError, match="active=0"):
        schedule(wait=0, warmup=0, active=0)
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            with profile():
                pass
    assert _no_hooks_left()
    with pytest.raises(RuntimeError, match="nothing has been recorded"):
        profile().events()
