"""`mark_dirty` on a view of another tensor: a custom Function writing in place into `x[0]`
rebases the base's graph and the view's, as a write through a view does, side by side with
PyTorch (minigrad/autograd/function.py's `_rebase_dirty_view`)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck


def scale_(lib):
    """x *= w in place (w a number tensor), with the gradients of both; backward reads the
    output (x * w, saved with its graph) so that it can be differentiated again."""
    class Scale_(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            x.mul_(w)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x, w)
            return x

        @staticmethod
        def backward(ctx, g):
            y, w = ctx.saved_tensors
            return g * w, (g * y / w).sum()
    return Scale_


def add_(lib):
    class Add_(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            x.add_(w)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g
    return Add_


def _program(lib, a, w, pick):
    x = a * 1
    v0 = x._version
    y = pick(x)
    out = scale_(lib).apply(y, w)
    return x, y, out, x._version - v0


PICKS = {"row": lambda x: x[0], "column of the transpose": lambda x: x.t()[1],
         "narrowed": lambda x: x[:, 1:], "flattened": lambda x: x.view(-1)}


@pytest.mark.parametrize("pick", sorted(PICKS))
def test_the_base_and_the_view_are_rebased_as_pytorch(torch, pick):
    seen = []
    for lib in (torch, mg):
        a = lib.tensor(np.arange(6.0).reshape(2, 3) - 2, requires_grad=True)
        w = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        x, y, out, bumps = _program(lib, a, w, PICKS[pick])
        row = [out is y, bumps, y._version, x.tolist(), x.grad_fn.name().split("::")[-1]]
        (x.sum() + (out * 10).sum()).backward()
        row += [a.grad.tolist(), w.grad.tolist()]
        seen.append(row)
    assert seen[0] == seen[1]


def test_gradcheck_through_a_dirty_view(torch):
    rng = np.random.default_rng(5)
    a = mg.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True)
    w = mg.tensor(rng.uniform(0.5, 1.5, ()), requires_grad=True)

    def f(a, w):
        x = a * 1
        out = scale_(mg).apply(x[1:, ::2], w)
        return x * x + out.sum()
    assert gradcheck(f, (a, w))
    assert gradgradcheck(f, (a, w))
    ta, tw = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (a, w))

    def g(a, w):
        x = a * 1
        out = scale_(torch).apply(x[1:, ::2], w)
        return x * x + out.sum()
    assert torch.autograd.gradgradcheck(g, (ta, tw))


def test_a_base_without_grad_gets_the_function_graph(torch):
    seen = []
    for lib in (torch, mg):
        p, w = lib.zeros(2, 2), lib.ones(2, requires_grad=True)
        r = add_(lib).apply(p[1], w)
        row = [p.requires_grad, p.is_leaf, r.is_leaf]
        (p * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        seen.append(row + [w.grad.tolist(), p.tolist()])
    assert seen[0] == seen[1] == [True, False, False, [3.0, 4.0], [[0.0, 0.0], [1.0, 1.0]]]


def test_refused_as_pytorch(torch):
    for lib in (torch, mg):
        leaf = lib.ones(2, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                               "being used in an in-place operation"):
            scale_(lib).apply(leaf[0], lib.tensor(3.0))
        pieces = (lib.zeros(4, 2) * 1).unbind(0)
        with pytest.raises(RuntimeError, match="This view is the output of a function that "
                                               "returns multiple views"):
            add_(lib).apply(pieces[0], lib.ones(2, requires_grad=True))
        with lib.no_grad():  # nothing recorded: the write is plain
            x = lib.ones(2, 2, requires_grad=True)
            scale_(lib).apply(x[0], lib.tensor(3.0))
            assert x.tolist() == [[3.0, 3.0], [1.0, 1.0]] and x.is_leaf


def test_forward_mode_through_a_dirty_view(torch):
    def double_(lib):
        class Double_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x.mul_(2))
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return t.mul_(2)
        return Double_

    seen = []
    for lib in (torch, mg):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.ones(2, 3, dtype=lib.float64),
                             lib.tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]],
                                        dtype=lib.float64)) * 1
            out = double_(lib).apply(x[:, 1])
            seen.append((fw.unpack_dual(out).tangent.tolist(), fw.unpack_dual(x).tangent.tolist(),
                         x.tolist()))
    assert seen[0] == seen[1]
