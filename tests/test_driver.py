"""The driver's own parts: how it shares the work among calls, what its calls refuse, and the
worker process that compiles one of its block functions on an empty cache.

The ops it runs are tested against their NumPy references (and the parallel kernel against
its serial twin, bit for bit) in the kernels' own test files."""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import float64, njit
from numba.core.errors import TypingError

from minigrad.kernels import compile_worker, driver_blocks
from minigrad.kernels.views import flat


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 5000), nblk=st.integers(1, 8), unit=st.sampled_from([1, 16, 64, 102]))
def test_shares_cover_the_range_once_cut_at_multiples_of_the_unit(n, nblk, unit):
    shares = [driver_blocks._share(k, nblk, n, unit) for k in range(nblk)]
    covered = [i for lo, hi in shares for i in range(lo, hi)]
    assert covered == list(range(n))
    assert all(lo % unit == 0 or lo == n for lo, _ in shares)
    units = -(-n // unit)   # the shares are equal runs of whole units, the last ones shorter
    assert all(hi - lo <= -(-units // nblk) * unit for lo, hi in shares)


def test_a_block_function_is_never_handed_a_strided_array():
    # the blocks are compiled for C-contiguous arrays, and read whatever memory they are given
    x = np.zeros((4, 8), np.float32)
    nothing, mask = np.empty((0, 0), np.float32), np.empty((0, 0), np.bool_)
    with pytest.raises(TypingError, match="C-contiguous"):
        driver_blocks.run_serial(0, 0, driver_blocks.ELEMENTWISE, 0, 1, x[:, ::2], x, x,
                                 nothing, nothing, nothing, nothing, mask,
                                 np.empty(0, np.int64), np.empty(0), np.uint64(0),
                                 np.uint64(0), np.float32(1), 0.0)


@njit
def _flat_copy_and_negate(x, lo, hi):
    v = flat(x, lo, hi)
    out = v.copy()
    for i in range(len(v)):   # writes through the view land in x
        v[i] = -v[i]
    return out


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data())
def test_flat_is_the_run_of_elements_of_a_c_contiguous_array(shape, data):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    lo = data.draw(st.integers(0, x.size))
    hi = data.draw(st.integers(lo, x.size))
    want = x.reshape(-1)[lo:hi].copy()
    got = _flat_copy_and_negate(x, lo, hi)
    assert got.dtype == x.dtype and got.shape == (hi - lo,)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x.reshape(-1)[lo:hi], -want)


def test_flat_refuses_an_array_that_is_not_c_contiguous():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(TypingError):
        _flat_copy_and_negate(x[:, ::2], 0, 4)
    with pytest.raises(TypingError):
        _flat_copy_and_negate(x.T, 0, 4)


# The compile worker, on a small cached function in a package of its own (the driver's block
# functions take seconds to compile: the cold first step's benchmark times that path)
_PROBE = '''from numba import float64, njit


@njit(cache=True)
def twice(x):
    return 2.0 * x


def compile_twice():
    twice.get_compile_result(float64(float64))   # (as the driver asks for its blocks)


def fail():
    raise RuntimeError("probe: refusing")


def chatter():
    print("probe: from the worker", flush=True)
    twice.get_compile_result(float64(float64))


def linger():
    import time
    time.sleep(60)
'''
# the package's __init__ leaves a mark of each process that runs it
_MARK = '''import os
open(os.path.join(os.path.dirname(__file__), f"ran-{os.getpid()}"), "w").close()
'''


# each test of the worker runs with each kind: a copy of this process (Linux) and a new one
_KINDS = ["fork", "new"] if compile_worker.FORK else ["new"]


@pytest.fixture(params=_KINDS)
def probe(request, tmp_path, monkeypatch):
    monkeypatch.setattr(compile_worker, "FORK", request.param == "fork")
    top = f"worker_probe_{tmp_path.name.replace('-', '_')}"
    (tmp_path / top / "kern").mkdir(parents=True)
    (tmp_path / top / "__init__.py").write_text(_MARK)
    (tmp_path / top / "kern" / "__init__.py").write_text("")
    (tmp_path / top / "kern" / "probe.py").write_text(_PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path)] + sys.path))
    monkeypatch.setenv("MINIGRAD_COMPILE_WORKER", "1")   # whatever the machine's load
    module = importlib.import_module(f"{top}.kern.probe")
    yield module
    for name in [m for m in sys.modules if m.split(".")[0] == top]:
        sys.modules.pop(name)


def test_a_worker_fills_the_cache_and_this_process_loads_its_code(probe):
    sig = float64(float64)
    top = probe.__name__.partition(".")[0]
    assert not compile_worker.cached(probe.twice, sig)
    worker = compile_worker.start(probe.__name__, "compile_twice", bare=top)
    assert worker is not None and compile_worker.finish(worker)
    assert compile_worker.cached(probe.twice, sig)
    probe.twice.get_compile_result(sig)
    assert probe.twice(1.5) == 3.0
    assert sum(probe.twice.stats.cache_hits.values()) == 1   # loaded, not compiled here
    assert not probe.twice.stats.cache_misses
    # the worker imported the module without running the package's __init__ (this process did)
    marks = os.listdir(os.path.dirname(sys.modules[top].__file__))
    assert [m for m in marks if m.startswith("ran-")] == [f"ran-{os.getpid()}"]


def test_a_failed_worker_or_one_importing_another_file_reports_it(probe, monkeypatch):
    assert not compile_worker.finish(compile_worker.start(probe.__name__, "fail"))
    if not compile_worker.FORK:   # (a copy imports nothing)
        monkeypatch.setattr(probe, "__file__", probe.__file__ + ".elsewhere")
        assert not compile_worker.finish(compile_worker.start(probe.__name__, "compile_twice"))
        assert not compile_worker.cached(probe.twice, float64(float64))


def test_a_worker_prints_nothing_here_and_repeats_nothing_of_this_process(probe, capfd):
    print("before the worker", end="")   # (buffered here when the copy is made)
    worker = compile_worker.start(probe.__name__, "chatter")
    assert compile_worker.finish(worker)
    print()
    out, err = capfd.readouterr()
    assert out == "before the worker\n" and "probe" not in err
    assert compile_worker.cached(probe.twice, float64(float64))


def test_a_worker_still_running_at_the_timeout_is_stopped(probe, monkeypatch):
    monkeypatch.setattr(compile_worker, "TIMEOUT", 0.2)
    worker = compile_worker.start(probe.__name__, "linger")
    assert not compile_worker.finish(worker)
    assert worker.returncode is not None and worker.returncode != 0


def test_a_worker_only_where_a_core_is_free_or_asked_for(probe, monkeypatch):
    monkeypatch.delenv("MINIGRAD_COMPILE_WORKER")
    monkeypatch.setattr(compile_worker, "_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 0.3, 0.3))   # a core idles at times
    assert compile_worker.enabled()
    monkeypatch.setattr(os, "getloadavg", lambda: (2.1, 0.3, 0.3))   # both cores busy
    assert not compile_worker.enabled()
    assert compile_worker.start(probe.__name__, "compile_twice") is None
    monkeypatch.setattr(compile_worker, "_cores", lambda: 1)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert not compile_worker.enabled()   # one core: nothing to share
    monkeypatch.setenv("MINIGRAD_COMPILE_WORKER", "1")
    assert compile_worker.enabled()
    monkeypatch.setenv("MINIGRAD_COMPILE_WORKER", "0")
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert not compile_worker.enabled()
    assert compile_worker.start(probe.__name__, "compile_twice") is None
    assert not compile_worker.finish(None)


def test_a_stopped_worker_is_waited_for(probe):
    worker = compile_worker.start(probe.__name__, "compile_twice")
    compile_worker.stop(worker)
    assert worker.returncode is not None
    compile_worker.stop(None)


def test_no_worker_without_a_python_to_run(probe, monkeypatch):
    monkeypatch.setattr(sys, "executable", "/opt/app/bin/server")   # Python embedded in an app
    assert not compile_worker.enabled()
    assert compile_worker.start(probe.__name__, "compile_twice") is None


def test_a_function_without_a_cache_counts_as_cached():
    # (no worker can help a function Numba does not cache: it is compiled here)
    assert compile_worker.cached(njit(lambda x: x), float64(float64))


_COLD_DRIVER = """
import numpy as np
from minigrad.kernels import driver, reference
x = np.random.default_rng(0).standard_normal((40, 24)).astype(np.float32)
w, b = np.ones(24, np.float32), np.zeros(24, np.float32)
y = driver.layer_norm_numba(x, w, b, 1e-5, parallel=False)[0]
np.testing.assert_allclose(y, reference.layer_norm(x, w, b, 1e-5)[0], rtol=1e-5, atol=1e-5)
stats = driver._fast_block.stats
assert sum(stats.cache_hits.values()) == 1 and not stats.cache_misses, stats
assert sum(driver._block.stats.cache_misses.values()) == 1
print("ok")
"""


@pytest.mark.slow
def test_on_an_empty_cache_the_driver_loads_the_fast_block_its_worker_compiled(tmp_path):
    # a process of its own: this one's block functions are compiled already
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), MINIGRAD_COMPILE_WORKER="1")
    r = subprocess.run([sys.executable, "-c", _COLD_DRIVER], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
