"""Small helpers shared by the test files."""
import re

import numpy as np
import pytest

import minigrad as mg


def raises(exc, text):
    """pytest.raises matching `text` literally (shapes are full of regex metacharacters)."""
    return pytest.raises(exc, match=re.escape(text))


def t64(arr, requires_grad=True):
    return mg.tensor(np.asarray(arr, dtype=np.float64), dtype=np.float64,
                     requires_grad=requires_grad)


def t32(arr, requires_grad=False):
    return mg.tensor(np.asarray(arr, dtype=np.float32), dtype=np.float32,
                     requires_grad=requires_grad)


def differentiable_ops():
    """Every op class: those of `minigrad.ops` (also those its package does not export, as
    convolution and pooling, loaded by `minigrad.nn`) and the fused ops of `minigrad.nn`'s
    layers (the GRU and LSTM gates), each of which needs a double-backward and a forward-mode
    rule."""
    import minigrad.nn  # noqa: F401  (defines the layers' fused ops)
    from minigrad.autograd.op import Op

    def below(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)
    ops = {v for v in vars(mg.ops).values() if isinstance(v, type) and issubclass(v, Op)}
    def own_op(c):
        module = c.__module__
        return (not c.__name__.startswith("_") and module.startswith(("minigrad.nn.", "minigrad.ops."))
                and not module.rsplit(".", 1)[1].startswith("_"))  # ops/_util's bases
    return ops | {c for c in below(Op) if own_op(c)}


def square_function(base=None):
    """A user's own op, x -> x * x with the backward 2 g x, written on `base`: minigrad's
    array-level `Op` (the default), its `autograd.Function` or PyTorch's (all read the saved
    input as `ctx.saved_tensors`). As an `Op` it has no double-backward or forward-mode rule,
    which the tests of those errors rely on."""
    if base is None:
        from minigrad.autograd.op import Op as base
    class Square(base):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * g * a

    return Square


def same_as_torch(torch, fn, *arrays, grad=True):
    """Run fn(lib, *tensors) in PyTorch and minigrad on tensors made from `arrays` (float ones
    requiring grad when `grad`): the results' dtypes and values and the inputs' gradients of a
    fixed weighting of the float results must agree, to float64's precision (float32's where
    a result is float32)."""
    out = []
    for lib in (torch, mg):
        xs = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        res = fn(lib, *xs)
        res = list(res) if isinstance(res, (tuple, list)) else [res]
        floats = [r for r in res if r.requires_grad]
        if floats:
            sum((r * lib.tensor(np.linspace(0.5, 2, max(r.numel(), 1))[:r.numel()].reshape(
                tuple(r.shape)), dtype=r.dtype)).sum() for r in floats).backward()
        out.append(([(str(r.dtype).replace("torch.", ""), r.detach().numpy()) for r in res],
                    [x.grad.numpy() for x in xs if x.grad is not None]))
    (want, want_g), (got, got_g) = out
    assert [d for d, _ in got] == [d for d, _ in want]
    tol = 2e-6 if "float32" in [d for d, _ in got] else 1e-12  # float32 rounding, done apart
    for (_, g), (_, w) in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)
    assert len(got_g) == len(want_g)
    for g, w in zip(got_g, want_g):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def assert_same_state(got, want, path="state"):
    """got equals want, a state dict's nested dicts, lists and tuples compared item by item and
    its floats to pytest.approx's default tolerance (approx itself takes flat mappings only)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), \
            f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_same_state(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), \
            f"{path}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_state(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want), f"{path}: {got!r} != {want!r}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"
