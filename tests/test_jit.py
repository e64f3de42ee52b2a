"""minigrad.jit and minigrad.futures beside PyTorch's: a script that scripts, traces, forks
and sets the fusion switches runs and computes the same numbers; errors as PyTorch's."""
import warnings

import numpy as np
import pytest

import minigrad as mg


def _pair(torch, lib, seed=0):
    """A small model with the same weights in both libraries, in eval mode, and an input."""
    r = np.random.default_rng(seed)
    w1, b1 = r.standard_normal((8, 5)).astype(np.float32), r.standard_normal(8).astype(np.float32)
    w2 = r.standard_normal((3, 8)).astype(np.float32)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.Dropout(0.5), nn.Linear(8, 3, bias=False))
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor(w1))
        model[0].bias.copy_(lib.tensor(b1))
        model[3].weight.copy_(lib.tensor(w2))
    return model.eval(), lib.tensor(r.standard_normal((4, 5)).astype(np.float32))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PyTorch's tracer warnings
        return fn(*args, **kwargs)


def test_script_and_trace_compute_the_same_numbers(torch):
    outs = {}
    for lib in (torch, mg):
        model, x = _pair(torch, lib)
        scripted = lib.jit.script(model)
        traced = _quiet(lib.jit.trace, model, (x,))
        frozen = lib.jit.freeze(lib.jit.script(model))
        fn = _quiet(lib.jit.trace, lambda a, b: (a * b).sum(-1), (x, x))
        kw = _quiet(lib.jit.trace, lambda a: a.exp(), example_kwarg_inputs={"a": x})
        outs[lib] = [scripted(x), traced(x), frozen(x), fn(x, x), kw(x),
                     lib.jit.optimize_for_inference(lib.jit.script(model))(x)]
    for a, b in zip(outs[torch], outs[mg]):
        np.testing.assert_allclose(b.numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)
    model, _ = _pair(torch, mg)
    assert mg.jit.script(model) is model and mg.jit.script(model.forward) == model.forward


def test_trace_runs_the_function_once_with_is_tracing_true(torch):
    for lib in (torch, mg):
        seen = []

        def f(x):
            seen.append(lib.jit.is_tracing())
            return x + 1
        _quiet(lib.jit.trace, f, lib.ones(2), check_trace=False)
        assert seen == [True], lib
        assert not lib.jit.is_tracing() and not lib.jit.is_scripting()
    calls = []
    mg.jit.trace_module(mg.nn.Linear(2, 2), {"forward": mg.ones(1, 2)})
    mg.jit.trace_module(_Counter(calls), {"forward": mg.ones(1), "other": (mg.ones(1), 2)})
    assert calls == ["forward", "other"]


class _Counter(mg.nn.Module):
    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def forward(self, x):
        self.calls.append("forward")
        return x

    def other(self, x, k):
        self.calls.append("other")
        return x * k


def test_trace_and_script_errors_as_pytorch(torch):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
            lib.jit.trace(lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError):   # the example run's own error: shapes
            _quiet(lib.jit.trace, lib.nn.Linear(2, 2), lib.ones(3, 3))
        with pytest.raises(TypeError):
            lib.jit.script(3)
        with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
            lib.jit.freeze(lib.jit.script(lib.nn.Linear(2, 2)))
        with pytest.raises(ValueError, match="only supported 'STATIC' or 'DYNAMIC', got: X"):
            lib.jit.set_fusion_strategy([("X", 1)])
        with pytest.raises(Exception, match="unrecognized fuser option"):
            with lib.jit.fuser("bad"):
                pass


def test_save_and_load_refuse_with_what_to_do_instead(tmp_path):
    model = mg.jit.script(mg.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="state_dict"):
        mg.jit.save(model, tmp_path / "m.pt")
    assert not (tmp_path / "m.pt").exists()
    with pytest.raises(NotImplementedError, match="minigrad.load"):
        mg.jit.load(tmp_path / "m.pt")


def test_decorators_annotations_and_switches_as_pytorch(torch):
    for lib in (torch, mg):
        j = lib.jit

        @j.ignore
        def a(x):
            return x + 1

        @j.ignore(drop=True)
        def b(x):
            return x + 2

        @j.unused
        def c(x):
            return x + 3

        @j.export
        def d(x):
            return x + 4
        assert [a(1), b(1), c(1), d(1), j.script_if_tracing(lambda x: x * 5)(1)] == [2, 3, 4, 5, 5]
        assert j.annotate(list, []) == [] and tuple(j.Attribute(3, int)) == (3, int)
        assert j.Attribute(3, int).value == 3
        assert not j.onednn_fusion_enabled()
        j.enable_onednn_fusion(True)
        assert j.onednn_fusion_enabled()
        j.enable_onednn_fusion(False)
        before = j.set_fusion_strategy([("STATIC", 3)])
        assert before == [("STATIC", 2), ("DYNAMIC", 10)]
        assert j.set_fusion_strategy(before) == [("STATIC", 3)]
        with j.optimized_execution(False), j.fuser("fuser1"):
            pass
        assert isinstance(_quiet(j.script, lib.nn.Linear(1, 1)), j.ScriptModule) == (lib is torch)


def test_fork_and_futures_as_pytorch(torch):
    for lib in (torch, mg):
        fut = lib.jit.fork(lambda x, k=1: x + k, lib.ones(2), k=2)
        assert fut.done() and lib.jit.wait(fut).tolist() == [3.0, 3.0]
        assert fut.value().tolist() == [3.0, 3.0]
        with pytest.raises(ValueError, match="boom"):   # raised at the fork, as in eager mode
            lib.jit.fork(_boom, 1)
        F = lib.futures.Future
        f = F()
        assert not f.done()
        order = []
        f.add_done_callback(lambda fu: order.append(("cb", fu.value())))
        g = f.then(lambda fu: fu.value() + 1)
        f.set_result(3)
        assert order == [("cb", 3)] and g.wait() == 4 and f.wait() == 3
        with pytest.raises(RuntimeError, match="can only be marked completed once"):
            f.set_result(4)
        h = F()
        h.set_exception(ValueError("bad"))
        with pytest.raises(ValueError, match="bad"):
            h.wait()
        failed = f.then(_boom)
        with pytest.raises(RuntimeError, match="error when running the callback: ValueError: boom"):
            failed.wait()
        both = lib.futures.collect_all([f, g])
        assert [x.wait() for x in both.wait()] == [3, 4]
        assert lib.futures.wait_all([f, g]) == [3, 4]
        assert lib.jit.Future is F


def _boom(_):
    raise ValueError("boom")


def test_vmap_and_ndimension_as_pytorch(torch):
    r = np.random.default_rng(1)
    a, b = r.standard_normal((4, 3)), r.standard_normal((4, 3))
    got = mg.vmap(mg.dot)(mg.tensor(a), mg.tensor(b))
    want = torch.vmap(torch.dot)(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.numpy())
    got = mg.vmap(lambda x: x.sum(), in_dims=1)(mg.tensor(a))
    np.testing.assert_allclose(got.numpy(), torch.vmap(lambda x: x.sum(), in_dims=1)(
        torch.tensor(a)).numpy())
    assert mg.ones(2, 3, 1).ndimension() == torch.ones(2, 3, 1).ndimension() == 3
    assert mg.vmap is mg.func.vmap and "vmap" in dir(mg)


@pytest.mark.parametrize("name", ["script", "trace", "fork", "wait", "freeze",
                                  "optimize_for_inference", "set_fusion_strategy"])
def test_deprecation_warnings_where_pytorch_warns(torch, name):
    for lib in (torch, mg):
        j = lib.jit
        model = lib.nn.Linear(2, 2).eval()
        calls = {"script": lambda: j.script(model), "trace": lambda: j.trace(model, lib.ones(1, 2)),
                 "fork": lambda: j.fork(abs, 1), "wait": lambda: j.wait(_quiet(j.fork, abs, 1)),
                 "freeze": lambda: j.freeze(_quiet(j.script, model)),
                 "optimize_for_inference": lambda: j.optimize_for_inference(
                     _quiet(j.script, model)),
                 "set_fusion_strategy": lambda: j.set_fusion_strategy([("STATIC", 2),
                                                                       ("DYNAMIC", 10)])}
        with pytest.warns(DeprecationWarning, match=f"jit.{name}` is deprecated"):
            calls[name]()
