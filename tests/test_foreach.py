"""torch._foreach_* (minigrad/foreach.py) and addcmul/addcdiv against PyTorch: one program of
list updates run in both libraries, compared result by result (values, dtypes, the kind of
result, the exception of a bad call), gradients through the list forms, and an Adam step
written with them as PyTorch's foreach path writes it."""
import math

import numpy as np
import pytest

import minigrad as mg
from helpers import same_as_torch
from minigrad.autograd import gradcheck


def _program(L):
    """Each step's result: (kind, [(dtype, values)]) or ("error", type)."""
    def make():
        return [L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0, 5.0])]
    x = make()
    steps = [
        lambda: L._foreach_add_(x, [L.ones(2), L.ones(3)], alpha=2),
        lambda: L._foreach_add(x, 1.5), lambda: L._foreach_sub_(x, [1.0, 2.0]),
        lambda: L._foreach_sub(x, make(), alpha=0.5),
        lambda: L._foreach_mul_(x, L.tensor(2.0)),
        lambda: L._foreach_mul(x, [L.tensor(2.0), L.tensor(3.0)]),
        lambda: L._foreach_div_(x, 4), lambda: L._foreach_div(x, make()),
        lambda: L._foreach_addcmul_(x, x, make(), value=0.5),
        lambda: L._foreach_addcmul_(x, x, make(), [0.5, 2.0]),
        lambda: L._foreach_addcmul(x, make(), make()),
        lambda: L._foreach_addcdiv_(x, make(), make(), L.tensor([0.5, 2.0])),
        lambda: L._foreach_addcdiv(x, make(), [t + 1 for t in make()], value=-1),
        lambda: L._foreach_sqrt(x), lambda: L._foreach_sqrt_(x), lambda: L._foreach_exp(x),
        lambda: L._foreach_lerp_(x, make(), 0.25), lambda: L._foreach_lerp(x, make(), make()),
        lambda: L._foreach_maximum_(x, 2.0), lambda: L._foreach_minimum(x, make()),
        lambda: L._foreach_clamp_min(x, 2.5), lambda: L._foreach_clamp_max_(x, [3.0, 4.0]),
        lambda: L._foreach_norm(x), lambda: L._foreach_norm(x, 1),
        lambda: L._foreach_norm(x, math.inf), lambda: L._foreach_norm(x, dtype=L.float64),
        lambda: L._foreach_norm([L.tensor([3.0, 4.0], dtype=L.float16)]),
        lambda: L._foreach_neg_(x), lambda: L._foreach_abs(x), lambda: L._foreach_sign(x),
        lambda: L._foreach_exp_(x), lambda: L._foreach_copy_(x, make()),
        lambda: L._foreach_zero_(x),
        lambda: L._foreach_norm([L.tensor([3, 4])]),
        lambda: L._foreach_add_(x, [L.ones(2)]), lambda: L._foreach_add_([], 1.0),
        lambda: L._foreach_add_([L.ones(2, requires_grad=True)], 1.0),
        lambda: L._foreach_mul_([L.ones(2, dtype=L.long)], 1.5),
    ]
    results = []
    for step in steps:
        try:
            out = step()
        except Exception as e:  # noqa: BLE001  (the comparison is which exception)
            results.append(("error", type(e).__name__))
            continue
        results.append((type(out).__name__, [(str(t.dtype).replace("torch.", ""),
                                              t.detach().numpy().copy()) for t in out]))
    return results


def test_list_updates_as_pytorch(torch):
    want, got = _program(torch), _program(mg)
    assert len(want) == len(got)
    for i, (w, g) in enumerate(zip(want, got)):
        assert w[0] == g[0], f"step {i}: {g[0]}, PyTorch {w[0]}"
        if w[0] != "error":
            assert [d for d, _ in g[1]] == [d for d, _ in w[1]], f"step {i}"
            for (_, a), (_, b) in zip(g[1], w[1]):
                np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"step {i}")
        else:
            assert g[1] == w[1], f"step {i}: {g[1]}, PyTorch {w[1]}"


def test_gradients_through_list_forms(torch):
    same_as_torch(torch, lambda L, a, b: (
        *L._foreach_addcmul(L._foreach_mul([a, b], [2.0, 3.0]), [a, b], [b[:2], a[:1]],
                            value=0.5), *L._foreach_norm([a, b]),
        *L._foreach_lerp([a, b], [a * a, b.exp()], 0.3)), np.array([1.5, -2.0]),
        np.array([0.5, 1.0, -3.0]))
    a = mg.tensor([1.5, -2.0], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.5, 1.0, -3.0], dtype=mg.float64, requires_grad=True)
    assert gradcheck(lambda a, b: mg.cat(mg._foreach_addcdiv_(
        [a * 1, b * 2], [b[:2], a[:1]], [a.exp(), b * b + 1], [0.5, -1.0])), [a, b])


def test_adam_step_written_with_foreach_is_adams(torch):
    """PyTorch's _multi_tensor_adam, the update its foreach=True path makes, written with the
    list functions, gives Adam's steps (written out in NumPy) in both libraries."""
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,)]
    start = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(3)]
    lr, (beta1, beta2), eps = 0.01, (0.9, 0.999), 1e-8

    def run(L):
        params = [L.tensor(p) for p in start]
        m = [L.zeros_like(p) for p in params]
        v = [L.zeros_like(p) for p in params]
        for step, gs in enumerate(grads, 1):
            g = [L.tensor(x) for x in gs]
            L._foreach_lerp_(m, g, 1 - beta1)
            L._foreach_mul_(v, beta2)
            L._foreach_addcmul_(v, g, g, 1 - beta2)
            denom = L._foreach_sqrt(v)
            L._foreach_div_(denom, math.sqrt(1 - beta2 ** step))
            L._foreach_add_(denom, eps)
            L._foreach_addcdiv_(params, m, denom, -lr / (1 - beta1 ** step))
        return [p.numpy() for p in params]

    reference = []
    for i, p in enumerate(start):
        p, m, v = p.copy(), np.zeros_like(p), np.zeros_like(p)
        for step, gs in enumerate(grads, 1):
            m = beta1 * m + (1 - beta1) * gs[i]
            v = beta2 * v + (1 - beta2) * gs[i] ** 2
            p -= lr * (m / (1 - beta1 ** step)) / (np.sqrt(v / (1 - beta2 ** step)) + eps)
        reference.append(p)
    for lib in (torch, mg):
        for got, want in zip(run(lib), reference):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("program", [
    lambda L, x, y: L.addcmul(x, y, x[:1], value=-0.5), lambda L, x, y: x.addcmul(y, y),
    lambda L, x, y: L.addcdiv(x, y, x + 3, value=2), lambda L, x, y: x.addcdiv(y, y.exp()),
    lambda L, x, y: (x * 1).addcmul_(y, y, value=0.25), lambda L, x, y: (x * 1).addcdiv_(x, y + 3),
    lambda L, x, y: L.addcmul(x.long(), y.long(), y.long(), value=3),
    lambda L, x, y: L.addcmul(x.float(), y, y), lambda L, x, y: L.addcdiv(x, y.long(), y),
])
def test_addcmul_and_addcdiv_as_pytorch(torch, program):
    same_as_torch(torch, program, np.array([1.5, -2.0, 0.25]), np.array([0.5, 1.0, -1.5]))


def test_addcdiv_of_integers_is_refused(torch):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="nteger division with addcdiv is no longer"):
            lib.addcdiv(lib.ones(2), lib.tensor([1, 2]), lib.tensor([3, 4]))
