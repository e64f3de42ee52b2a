"""Float64 central-difference gradient checks of every differentiable function added for
PyTorch compatibility (the compatibility suite compares with PyTorch in float32; these check
the calculus itself, including the cases PyTorch does not differentiate)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

F = mg.nn.functional
rng = np.random.default_rng(3)


def t64(*shape, low=-2.0, high=2.0):
    return mg.tensor(rng.uniform(low, high, shape), requires_grad=True)


def distinct(*shape):
    """Values at least 0.1 apart (sort, max and topk have no ties to split)."""
    n = int(np.prod(shape))
    return mg.tensor(rng.permutation(n).reshape(shape) * 0.1 + 0.05, dtype=mg.float64,
                     requires_grad=True)


def check(fn, *inputs):
    assert gradcheck(fn, list(inputs))


CASES = {
    "sin": (lambda x: x.sin(), (t64(3, 4),)),
    "cos": (lambda x: mg.cos(x), (t64(3, 4),)),
    "rsqrt": (lambda x: x.rsqrt(), (t64(5, low=0.5),)),
    "reciprocal": (lambda x: mg.reciprocal(x), (t64(5, low=0.5),)),
    "square": (lambda x: x.square(), (t64(2, 3),)),
    "F.pairwise_distance": (lambda a, b: F.pairwise_distance(a, b) + F.pairwise_distance(
        a, b, p=3.0, keepdim=True).squeeze(1), (t64(4, 3), t64(4, 3))),
    "F.triplet_margin_loss": (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0) +
                              F.triplet_margin_loss(a, p, n, 3.0, p=3.0, swap=True),
                              (t64(4, 3), t64(4, 3), t64(4, 3))),
    "F.margin_ranking_loss": (lambda a, b: F.margin_ranking_loss(  # margin keeps away from 0
        a, b, mg.tensor([1.0, -1.0, 1.0, -1.0], dtype=mg.float64), margin=10.0),
        (t64(4), t64(4))),
    "nn.Flatten, nn.Unflatten": (lambda x: mg.nn.Unflatten(1, (3, -1))(mg.nn.Flatten()(x)) ** 2,
                                 (t64(2, 3, 2, 2),)),
    "floor, ceil, round, trunc, sign (zero)":
        (lambda x: x.floor() + x.ceil() * 2 + x.round() + x.trunc() + x.sign(),
         (mg.tensor(rng.uniform(0.1, 0.4, 6) + np.arange(6), requires_grad=True),)),
    "remainder": (lambda a, b: a % b, (  # a away from the jumps at multiples of b
        mg.tensor(rng.uniform(0.1, 0.9, 5) + np.array([0, 3, 6, -3, -6]), requires_grad=True),
        mg.tensor(np.full(5, 1.5), requires_grad=True))),
    "cumsum": (lambda x: x.cumsum(1) + mg.cumsum(x, 0) * 2, (t64(3, 4),)),
    "norm 2": (lambda x: x.norm(dim=1) + x.norm(), (t64(3, 4),)),
    "norm 1": (lambda x: x.norm(p=1, dim=0, keepdim=True), (t64(3, 4, low=0.2),)),
    "norm 3": (lambda x: x.norm(3, dim=(0, 1)), (t64(3, 4),)),
    "norm inf": (lambda x: x.norm(float("inf"), dim=1), (distinct(3, 4),)),
    "einsum batched": (lambda q, k: mg.einsum("bqd,bkd->bqk", q, k), (t64(2, 3, 4), t64(2, 5, 4))),
    "einsum summed index": (lambda a: mg.einsum("bij->bj", a), (t64(2, 3, 4),)),
    "einsum broadcast ...": (lambda a, b: mg.einsum("...ij,...jk->...ik", a, b),
                             (t64(2, 1, 3, 4), t64(5, 4, 2))),
    "einsum three operands": (lambda a, b, c: mg.einsum("ij,jk,k->i", a, b, c),
                              (t64(2, 3), t64(3, 4), t64(4))),
    "mm, bmm, dot, outer": (lambda a, b, u: a[0].mm(b[0]).sum() + mg.bmm(a, b).sum()
                            + u.dot(u) + mg.outer(u, u).sum(), (t64(2, 3, 4), t64(2, 4, 2), t64(3))),
    "sort values": (lambda x: x.sort(dim=1, descending=True).values * mg.arange(4.0).double(),
                    (distinct(3, 4),)),
    "topk values": (lambda x: x.topk(2, dim=0).values, (distinct(4, 3),)),
    "max/min with dim": (lambda x: x.max(1).values + x.min(dim=1, keepdim=True).values[:, 0],
                         (distinct(3, 4),)),
    "tril, triu": (lambda x: x.tril() + x.triu(1) * 3, (t64(2, 3, 3),)),
    "repeat": (lambda x: x.repeat(2, 1, 3), (t64(2, 3),)),
    "repeat_interleave": (lambda x: x.repeat_interleave(mg.tensor([2, 0, 1]), dim=1), (t64(2, 3),)),
    "roll, flip": (lambda x: x.roll((1, -1), (0, 1)) * x.flip(1), (t64(3, 4),)),
    "narrow, select, unbind": (lambda x: x.narrow(1, 1, 2).sum(1) + x.select(1, 0)
                               + mg.stack(x.unbind(1), 1).sum(1), (t64(3, 4),)),
    "movedim, unflatten, masked_select":
        (lambda x: x.movedim(0, -1).unflatten(0, (2, 2)).sum(-1).reshape(-1)
         + x.masked_select(mg.tensor([True, False, True, True])).sum(), (t64(3, 4),)),
    "index_put": (lambda x, v: x.index_put((mg.tensor([0, 2]), mg.tensor([1, 1])), v),
                  (t64(3, 4), t64(2))),
    "index_put accumulate": (lambda x, v: x.index_put((mg.tensor([0, 0, 2]),), v,
                                                      accumulate=True), (t64(3, 4), t64(3, 4))),
    "setitem on a non-leaf": (lambda x, v: _setitem(x, v), (t64(3, 4), t64(4))),
    "setitem with a mask": (lambda x, v: _masked(x, v), (t64(3, 4), t64(1))),
    "scatter": (lambda x, s: x.scatter(1, mg.tensor([[0, 2], [1, 3], [3, 0]]), s),
                (t64(3, 4), t64(3, 3))),
    "scatter_add": (lambda x, s: x.scatter_add(0, mg.tensor([[0, 1, 0, 1], [0, 0, 0, 1]]), s),
                    (t64(2, 4), t64(2, 4))),
    "index_fill, index_add": (lambda x, s: x.index_fill(1, mg.tensor([0]), -1.0)
                              + x.index_add(0, mg.tensor([1, 1]), s, alpha=3),
                              (t64(3, 2), t64(2, 2))),
    "in-place masked_fill_, clamp_, +=, *=": (lambda x, y: _inplace(x, y), (t64(3, 3), t64(3, 3))),
    "silu, softplus": (lambda x: F.silu(x) + F.softplus(x, beta=2.0, threshold=3.0),
                       (t64(3, 4, low=-3, high=3),)),
    "normalize, cosine_similarity": (lambda a, b: F.normalize(a, dim=1).sum(0)
                                     + F.cosine_similarity(a, b, dim=0), (t64(3, 4), t64(3, 4))),
    "l1_loss, binary_cross_entropy": (lambda x, p: F.l1_loss(x, p.detach() * 0 + 0.1)
                                      + F.binary_cross_entropy(p, mg.full((3, 4), 0.3, dtype=mg.float64)),
                                      (t64(3, 4, low=0.2), t64(3, 4, low=0.1, high=0.9))),
    "kl_div": (lambda x, q: F.kl_div(x.log_softmax(-1), q.softmax(-1), reduction="batchmean")
               + F.kl_div(x, q, reduction="sum", log_target=True), (t64(3, 4), t64(3, 4))),
}


def _setitem(x, v):
    y = x * 1
    y[1] = v
    y[0, 2:] = x[2, :2] * v[:2]  # (reading y here would be caught: y changes in place)
    return y


def _masked(x, v):
    y = x * 1
    y[y > 0] = v
    return y


def _inplace(x, y):
    z = x * 1
    z.masked_fill_(mg.tensor(np.eye(3, dtype=bool)), 0.5)
    z.clamp_(-1.5, 1.5)
    z += y
    z *= y
    return z


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    fn, inputs = CASES[name]
    check(fn, *inputs)


def test_max_with_dim_sends_the_gradient_to_the_returned_index_only():
    x = mg.tensor([[1.0, 3.0, 3.0]], requires_grad=True)
    x.max(1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0]]  # PyTorch's choice; max() without dim splits


def test_a_write_over_values_backward_needs_is_caught():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # exp keeps its output for the backward pass
    z = y * 2
    y[0] = 0.0  # changes those saved values
    with pytest.raises(RuntimeError, match="modified in place"):
        z.sum().backward()


def test_a_write_keeps_identity_and_views_see_it():
    x = mg.zeros(2, 3)
    v = x[0]  # a view
    x[0, 1] = 5.0
    assert v.tolist() == [0.0, 5.0, 0.0]
    ref = x
    x += 1
    assert ref is x and x[1, 0].item() == 1.0
