"""`out=` compared with PyTorch: the generated table of every function that takes it
(tests/out_arg_table.py), then the rules one by one (autograd, versions, views, aliasing,
tuples, creation, errors)."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import out_arg_table as table
from compat_notes import OUT_DIFFERENCES
from minigrad.out_names import OUT_NAMES

torch = pytest.importorskip("torch")

_ALL_NAMES = [(ns, n) for ns, names in OUT_NAMES.items() for n in names
              if table._function(mg, ns, n) is not None]


def test_the_names_are_pytorchs():
    import out_names_gen
    assert out_names_gen.out_names() == {k: list(v) for k, v in OUT_NAMES.items()}, \
        "minigrad/out_names.py is stale: run python tests/out_names_gen.py"


def test_every_name_minigrad_has_takes_out():
    import inspect
    for ns, name in _ALL_NAMES:
        fn = table._function(mg, ns, name)
        assert "out" in inspect.signature(fn).parameters, f"{ns}.{name}"


_RESOLVED = {}


def _resolved():
    if not _RESOLVED:
        for ns, name in _ALL_NAMES:
            _RESOLVED[(ns, name)] = table.resolve(torch, mg, ns, name)
    return _RESOLVED


def test_the_table_is_broad():
    found = [k for k, v in _resolved().items() if v is not None]
    assert len(found) >= 300, f"only {len(found)} of {len(_ALL_NAMES)} functions compared"


def _explained(name, dtypes_, kind):
    if kind in ("casts", "accepts"):  # the two numbered differences on the page
        return True
    return any(name in names and all(d in dts for d in dtypes_.split(","))
               for names, dts, _ in OUT_DIFFERENCES)


def _disagreements(full, namespaces=None):
    unexplained, used = [], set()
    for (ns, name), args in _resolved().items():
        if args is None or (namespaces is not None and ns not in namespaces):
            continue
        for dts, layout, kind, text in table.compare(torch, mg, ns, name, args, full):
            if _explained(name, dts, kind):
                used.update(i for i, (names, d, _) in enumerate(OUT_DIFFERENCES)
                            if name in names and kind == "differs")
            else:
                unexplained.append(f"{ns}.{name} out {dts} {layout}: {text}")
    return unexplained, used


@pytest.mark.parametrize("namespaces", [("torch",), ("linalg", "special", "fft",
                                                     "nn.functional")])
def test_out_agrees_with_pytorch(namespaces):
    """Every function, every out dtype, every layout in the result's dtype: the same values,
    dtype, warning and error, or a difference compat_notes lists."""
    unexplained, _ = _disagreements(False, namespaces)
    assert not unexplained, "\n".join(unexplained[:40])


@pytest.mark.slow
def test_out_agrees_with_pytorch_on_the_full_grid():
    """Every out dtype in every layout; and every entry of OUT_DIFFERENCES explains some."""
    unexplained, used = _disagreements(True)
    assert not unexplained, "\n".join(unexplained[:40])
    stale = [OUT_DIFFERENCES[i][0] for i in range(len(OUT_DIFFERENCES)) if i not in used]
    assert not stale, f"compat_notes.OUT_DIFFERENCES explains nothing for {stale}"


# --- the rules one by one -------------------------------------------------------------------

def _both(fn):
    """fn(lib) in each library: (torch's outcome, minigrad's)."""
    return [fn(lib) for lib in (torch, mg)]


def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e), str(e)
    return None


def test_autograd_is_refused_as_in_pytorch():
    for lib in (torch, mg):
        x = lib.ones(3, requires_grad=True)
        kind, msg = _error(lambda: lib.add(x, 1, out=lib.empty(3)))
        assert kind is RuntimeError and "functions with out=... arguments don't support " \
            "automatic differentiation, but one of the arguments requires grad" in msg
        out = lib.empty(3, requires_grad=True)
        kind, msg = _error(lambda: lib.mul(lib.ones(3), 2, out=out))
        assert kind is RuntimeError and "don't support automatic differentiation" in msg
        with lib.no_grad():  # outside grad mode both are allowed
            assert lib.add(x, 1, out=lib.empty(3)).tolist() == [2.0] * 3
            assert lib.mul(lib.ones(3), 2, out=out).tolist() == [2.0] * 3
            assert out.requires_grad


def test_cat_of_tensors_that_require_grad_is_refused():
    for lib in (torch, mg):
        xs = [lib.ones(2, requires_grad=True), lib.ones(2)]
        assert _error(lambda: lib.cat(xs, out=lib.empty(0)))[0] is RuntimeError


def test_the_write_bumps_the_version_and_fails_a_saved_backward():
    for lib in (torch, mg):
        w = lib.ones(3, requires_grad=True)
        buf = lib.ones(3)
        y = (w * buf).sum()  # saves buf for the gradient of w
        v0 = buf._version
        with lib.no_grad():
            lib.add(lib.zeros(3), 5, out=buf)
        assert buf._version > v0
        assert _error(y.backward)[0] is RuntimeError


def test_non_contiguous_out_writes_into_its_base():
    def run(lib):
        base = lib.zeros(3, 4)
        out = base.t()[1:3]  # (2, 3), a transposed slice
        r = lib.mul(lib.arange(6.0).reshape(2, 3), 2, out=out)
        assert r is out and not out.is_contiguous()
        return base.numpy().copy()
    a, b = _both(run)
    np.testing.assert_array_equal(a, b)


def test_out_aliasing_an_input():
    """(matmul into one of its inputs is left out: PyTorch 2.13 writes zeros, minigrad the
    product)"""
    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0])
        lib.add(a, a[[2, 1, 0]], out=a)
        x = lib.arange(6.0).reshape(2, 3)
        lib.cumsum(x, 1, out=x)
        y = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        lib.where(y > 2, y * 10, y, out=y)
        return [a.tolist(), x.tolist(), y.tolist()]
    a, b = _both(run)
    assert a == b


def test_zero_d_and_empty_outs():
    def run(lib):
        x = lib.tensor([[1.0, 5.0], [3.0, 2.0]])
        s = lib.empty(())
        lib.sum(x, (0, 1), out=s)
        e = lib.empty(0)
        lib.sin(lib.empty(0, 3), out=e)
        z = lib.zeros(())
        lib.mul(lib.tensor(2.0), 3, out=z)
        return [(tuple(t.shape), t.tolist()) for t in (s, e, z)]
    a, b = _both(run)
    assert a == b


_TUPLE_CALLS = (  # (call, whether the second result is indices)
    (lambda lib, x, o: lib.max(x, 1, out=o), True),
    (lambda lib, x, o: lib.sort(x, 1, out=o), True),
    (lambda lib, x, o: lib.topk(x, 2, out=o), True),
    (lambda lib, x, o: lib.kthvalue(x, 2, 1, out=o), True),
    (lambda lib, x, o: lib.cummax(x, 1, out=o), True),
    (lambda lib, x, o: lib.aminmax(x, dim=1, out=o), False),
)


@pytest.mark.parametrize("call,indices", _TUPLE_CALLS)
def test_tuple_outs_return_the_named_tuple_of_outs(call, indices):
    got = []
    for lib in (torch, mg):
        x = lib.tensor([[1.0, 5.0, 2.0], [3.0, 2.0, 7.0]])
        outs = (lib.empty(0), lib.empty(0, dtype=lib.long) if indices else lib.empty(0))
        r = call(lib, x, outs)
        assert r[0] is outs[0] and r[1] is outs[1] and hasattr(r, "_fields") or lib is torch
        got.append([o.tolist() for o in outs])
    assert got[0] == got[1]


def test_tuple_out_of_the_wrong_length_or_a_tensor_for_a_tuple():
    for lib in (torch, mg):
        x = lib.ones(2, 3)
        assert _error(lambda: lib.max(x, 1, out=lib.empty(0)))[0] is TypeError
        assert _error(lambda: lib.max(x, 1, out=(lib.empty(0),)))[0] in (TypeError,
                                                                        RuntimeError)


def test_dtype_errors_name_both_dtypes():
    for lib in (torch, mg):
        kind, msg = _error(lambda: lib.add(lib.ones(2), 1, out=lib.empty(2, dtype=lib.long)))
        assert issubclass(kind, RuntimeError)  # minigrad's is also a TypeError, as cat's is
        assert "result type Float can't be cast to the desired output type Long" in msg
        kind, msg = _error(lambda: lib.add(lib.ones(2, dtype=lib.long), 1,
                                           out=lib.empty(2, dtype=lib.bool)))
        assert "result type Long can't be cast to the desired output type Bool" in msg
    for lib in (torch, mg):  # an allowed cast computes, then casts
        out = lib.empty(2, dtype=lib.float64)
        assert lib.add(lib.tensor([1, 2]), 1, out=out).tolist() == [2.0, 3.0]


def test_resize_warns_only_when_out_had_elements():
    for lib in (torch, mg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.empty(3)
            lib.add(lib.ones(2), 1, out=out)
            lib.add(lib.ones(2, 2), 1, out=lib.empty(0))
            lib.zeros(5, out=lib.empty(2))  # creation functions resize silently
        msgs = [str(w.message) for w in caught]
        assert len(msgs) == 1, msgs
        assert msgs[0].startswith("An output with one or more elements was resized since it "
                                  "had shape [3], which does not match the required output "
                                  "shape [2]")
        assert list(out.shape) == [2]


def test_creation_functions_take_outs_dtype():
    def run(lib):
        r = []
        r.append(lib.zeros(2, 3, out=lib.empty(0, dtype=lib.long)))
        r.append(lib.arange(5, out=lib.empty(0, dtype=lib.float64)))
        r.append(lib.eye(3, out=lib.empty(0, dtype=lib.int32)))
        r.append(lib.full((2,), 7, out=lib.empty(0, dtype=lib.int16)))
        r.append(lib.linspace(0, 1, 5, out=lib.empty(0, dtype=lib.float64)))
        return [(str(t.dtype).split(".")[-1], t.tolist()) for t in r]
    a, b = _both(run)
    assert a == b
    for lib in (torch, mg):
        kind, msg = _error(lambda: lib.zeros(3, dtype=lib.float32,
                                             out=lib.empty(0, dtype=lib.long)))
        assert kind is RuntimeError and "does not match dtype of out parameter" in msg
    for lib in (torch, mg):  # random draws: the shape and dtype of out
        t = lib.randn(4, out=lib.empty(0, dtype=lib.float64))
        assert tuple(t.shape) == (4,) and str(t.dtype).endswith("float64")


def test_reductions_compute_in_outs_dtype():
    """(cumsum, which takes dtype=, casts its input first; sum and mean, which take none in
    minigrad, cast their result: see compat_notes)"""
    def run(lib):
        x = lib.tensor([1.5, 2.5, 3.5])
        s = lib.sum(x, 0, out=lib.empty((), dtype=lib.float64))
        c = lib.cumsum(x, 0, out=lib.empty(0, dtype=lib.long))
        m = lib.mean(x, 0, out=lib.empty((), dtype=lib.float64))
        return [(str(t.dtype).split(".")[-1], t.tolist()) for t in (s, c, m)]
    a, b = _both(run)
    assert a == b


def test_namespaces():
    def run(lib):
        a = lib.tensor([[4.0, 1.0], [1.0, 3.0]])
        x = lib.linalg.solve(a, lib.tensor([1.0, 2.0]), out=lib.empty(0))
        n = lib.special.ndtr(lib.tensor([0.0, 1.0]), out=lib.empty(2))
        f = lib.fft.rfft(lib.tensor([1.0, 2.0, 3.0, 4.0]), out=lib.empty(0, dtype=lib.complex64))
        y = lib.nn.functional.normalize(a, dim=1, out=lib.empty(0))
        s = lib.linalg.slogdet(a, out=(lib.empty(0), lib.empty(0)))
        return [np.asarray(t.numpy()).round(5).tolist() for t in (x, n, f, y, *s)]
    a, b = _both(run)
    assert a == b


def test_out_must_be_a_tensor():
    for lib in (torch, mg):
        assert _error(lambda: lib.add(lib.ones(2), 1, out=[1.0, 2.0]))[0] is TypeError
