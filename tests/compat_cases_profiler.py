"""Compatibility cases: the profiler. Times differ from run to run and minigrad's events are its
own ops (`Mul`, `MulBackward0`), not aten's, so these compare structure: the user's ranges and
their nesting, counts, the table's columns, which steps a schedule records, the trace files."""
import json
import os
import tempfile
import warnings

from compat_table import case

CASES = []
add = CASES.append


def _ranges(events, names):
    """(name, parent's name, count) of the events named in `names`, sorted."""
    return sorted((e.name, e.cpu_parent.name if e.cpu_parent else "", e.count)
                  for e in events if e.name in names)


@add
@case("profiler.profile", "profiler.record_function", "profiler.ProfilerActivity",
      "profiler.supported_activities", "autograd.profiler.EventList",
      "autograd.profiler.FunctionEvent")
def _(lib):
    P = lib.profiler
    a = lib.ones(2, 3, requires_grad=True)
    with P.profile(activities=[P.ProfilerActivity.CPU], record_shapes=True,
                   profile_memory=False, with_stack=False) as prof:
        with P.record_function("outer"):
            with P.record_function("inner"):
                y = (a * 2).sum()
        y.backward()
    averages = prof.key_averages()
    kinds = [isinstance(averages, lib.autograd.profiler.EventList),
             all(isinstance(e, lib.autograd.profiler.FunctionEvent) for e in prof.events())]
    counts = {e.key: e.count for e in averages}
    table = averages.table(sort_by="cpu_time_total", row_limit=10).splitlines()
    shaped = prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total")
    return (y, a.grad, _ranges(prof.events(), ("outer", "inner")), counts["outer"],
            counts["inner"], all(e.cpu_time_total >= e.self_cpu_time_total for e in averages),
            table[1].split(), table[-1].split(":")[0], shaped.splitlines()[1].split()[-2:],
            kinds, [a.name for a in P.supported_activities()])


@add
@case("profiler.schedule", "profiler.ProfilerAction", "profiler.profile")
def _(lib):
    P = lib.profiler
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plans = [P.schedule(wait=1, warmup=1, active=2, repeat=2),
                 P.schedule(wait=2, warmup=1, active=1, skip_first=3),
                 P.schedule(wait=0, warmup=0, active=3)]
    actions = [[s(i).name for i in range(14)] for s in plans]
    traces = []

    def ready(prof):
        traces.append(sorted(e.name for e in prof.events()
                             if e.name.startswith(("ProfilerStep", "step"))))

    with P.profile(schedule=plans[0], on_trace_ready=ready) as prof:
        for i in range(10):
            with P.record_function(f"step{i}"):
                lib.ones(2) * i
            prof.step()
    return actions, traces, P.ProfilerAction.RECORD_AND_SAVE.value


@add
@case("profiler.tensorboard_trace_handler")
def _(lib):
    P = lib.profiler
    with tempfile.TemporaryDirectory() as folder:
        with P.profile(schedule=P.schedule(wait=0, warmup=1, active=1),
                       on_trace_ready=P.tensorboard_trace_handler(folder, "worker")) as prof:
            for _ in range(2):
                with P.record_function("region"):
                    lib.ones(3).exp()
                prof.step()
        (name,) = os.listdir(folder)
        with open(os.path.join(folder, name)) as f:
            events = json.load(f)["traceEvents"]
    region = [e["ph"] for e in events if e.get("name") == "region"]
    return name.startswith("worker.") and name.endswith(".pt.trace.json"), region


@add
@case("autograd.profiler.profile", "autograd.profiler.record_function")
def _(lib):
    prof_module = lib.autograd.profiler
    a = lib.ones(3, requires_grad=True)
    with prof_module.profile(record_shapes=True) as prof:
        for _ in range(3):
            with prof_module.record_function("loop"):
                (a * a).sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    return a.grad, counts["loop"], _ranges(prof.function_events, ("loop",))
