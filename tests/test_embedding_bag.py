"""nn.EmbeddingBag and F.embedding_bag (nn/embedding_bag.py) against PyTorch: sum, mean and max
over (B, N) inputs and over flat inputs cut at offsets (with include_last_offset, empty bags,
padding_idx), per_sample_weights, gradients of the table and of the weights, float64
central differences of first and second order, and PyTorch's errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(4)
TABLE = RNG.standard_normal((7, 3))
FLAT = np.array([1, 4, 4, 0, 6, 2, 2, 5, 3])
SQUARE = np.array([[1, 0, 3], [6, 6, 2]])

# name: (input, keyword arguments of embedding_bag; offsets as a list)
SETTINGS = {
    "mean_2d": (SQUARE, {}),
    "sum_2d_weighted": (SQUARE, dict(mode="sum", per_sample_weights=RNG.standard_normal((2, 3)))),
    "max_2d": (SQUARE, dict(mode="max")),
    "sum_offsets": (FLAT, dict(offsets=[0, 2, 2, 6], mode="sum")),
    "mean_offsets": (FLAT, dict(offsets=[0, 3, 3, 9], include_last_offset=True)),
    "max_offsets": (FLAT, dict(offsets=[0, 1, 5, 5], mode="max")),
    "sum_weighted_offsets": (FLAT, dict(offsets=[0, 4], mode="sum",
                                        per_sample_weights=RNG.standard_normal(9))),
    "mean_padding": (FLAT, dict(offsets=[0, 2, 4, 6], padding_idx=2)),
    "max_padding": (SQUARE, dict(mode="max", padding_idx=6)),
    "sum_padding_weighted": (FLAT, dict(offsets=[0, 5], mode="sum", padding_idx=-3,
                                        per_sample_weights=RNG.standard_normal(9))),
    "no_bags": (FLAT[:0], dict(offsets=[], mode="sum")),
}


def _call(lib, name, dtype):
    ids, kw = SETTINGS[name]
    kw = dict(kw)
    table = lib.tensor(TABLE.astype(dtype)).requires_grad_()
    weights = None
    if "offsets" in kw:
        kw["offsets"] = lib.tensor(np.array(kw["offsets"], np.int64))
    if "per_sample_weights" in kw:
        weights = lib.tensor(kw["per_sample_weights"].astype(dtype)).requires_grad_()
        kw["per_sample_weights"] = weights
    out = lib.nn.functional.embedding_bag(lib.tensor(ids), table, **kw)
    return out, table, weights


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(SETTINGS))
def test_bags_as_pytorchs(name, dtype, torch):
    results = []
    for lib in (torch, mg):
        out, table, weights = _call(lib, name, dtype)
        w = np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(dtype)
        (out * lib.tensor(w)).sum().backward()
        results.append((out.detach().numpy(), str(out.dtype).replace("torch.", ""),
                        table.grad, None if weights is None else weights.grad))
    (want, want_dtype, *want_grads), (got, got_dtype, *got_grads) = results
    assert got.shape == want.shape and got_dtype == want_dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    for g, w in zip(got_grads, want_grads):
        if w is None:
            assert g is None or not g.numpy().any()
        else:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)


def test_layer_as_pytorchs(torch):
    bags = []
    for lib in (torch, mg):
        lib.manual_seed(0)
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(TABLE), freeze=False, mode="max",
                                                  include_last_offset=True)
        out = bag(lib.tensor(FLAT), lib.tensor([0, 4, 9]))
        out.sum().backward()
        bags.append((out.detach().numpy(), bag.weight.grad.numpy(), bag.weight.requires_grad))
    for got, want in zip(bags[1], bags[0]):
        np.testing.assert_allclose(got, want)
    layer = mg.nn.EmbeddingBag(10, 4, mode="sum", padding_idx=3)
    assert layer.weight.shape == (10, 4) and not layer.weight[3].numpy().any()
    assert repr(layer) == "EmbeddingBag(10, 4, mode='sum', padding_idx=3)"
    assert not mg.nn.EmbeddingBag.from_pretrained(mg.tensor(TABLE)).weight.requires_grad


@pytest.mark.parametrize("name", ["mean_offsets", "max_2d", "sum_padding_weighted"])
def test_gradients_by_central_differences(name):
    ids, kw = SETTINGS[name]
    kw = dict(kw)
    if "offsets" in kw:
        kw["offsets"] = mg.tensor(np.array(kw["offsets"], np.int64))
    inputs = [mg.tensor(TABLE, requires_grad=True)]
    if "per_sample_weights" in kw:
        inputs.append(mg.tensor(kw.pop("per_sample_weights"), requires_grad=True))

    def fn(table, weights=None):
        extra = {} if weights is None else {"per_sample_weights": weights}
        return mg.nn.functional.embedding_bag(mg.tensor(ids), table * table, **kw, **extra)
    assert gradcheck(fn, inputs) and gradgradcheck(fn, inputs)


ERRORS = [  # (program(lib, table), PyTorch's exception type, minigrad's message)
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0, 1, 2]), w,
                                                    lib.tensor([0, 2]), mode="mean",
                                                    per_sample_weights=lib.ones(3)),
     NotImplementedError, "only supported for mode='sum'"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([[0, 1], [2, 3]]), w,
                                                    lib.tensor([0, 2])),
     ValueError, "offsets has to be None"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0, 1, 2]), w), ValueError,
     "offsets has to be a 1D Tensor but got None"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0, 1, 2]), w,
                                                    lib.tensor([1, 2])),
     RuntimeError, r"offsets\[0\] has to be 0"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0, 1, 2]), w,
                                                    lib.tensor([0, 2]), mode="x"),
     ValueError, "mode has to be one of sum, mean or max"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0, 1, 9]), w,
                                                    lib.tensor([0, 2])),
     RuntimeError, "index 9 is out of range for a table of 7 rows"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0.0, 1.0]), w,
                                                    lib.tensor([0, 1])),
     RuntimeError, "Long, Int"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0, 1, 2]), w,
                                                    lib.tensor([0, 5])),
     RuntimeError, r"offsets\[-1\] can not be greater than input's length 3"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([0, 1, 2]), w,
                                                    lib.tensor([0, 2]), mode="sum",
                                                    per_sample_weights=lib.ones(2)),
     ValueError, "must have the same shape as the input"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([[[0]]]), w), ValueError,
     "1D or 2D"),
    (lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([[0]]), w, padding_idx=-9),
     RuntimeError, "padding_idx must be within the number of embeddings, -7 through 6"),
    (lambda lib, w: lib.nn.EmbeddingBag(7, 2, padding_idx=7), AssertionError,
     "padding_idx must be within"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_pytorchs(i, torch):
    program, kind, message = ERRORS[i]
    with pytest.raises(kind):
        program(torch, torch.tensor(TABLE))
    with pytest.raises(kind, match=message):
        program(mg, mg.tensor(TABLE))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_the_graph_node_has_pytorchs_name(torch, mode):
    ids, offsets = [1, 2, 4, 5, 5], [0, 2]
    names = {}
    for lib in (torch, mg):
        lib.manual_seed(0)
        bag = lib.nn.EmbeddingBag(10, 3, mode=mode)
        out = bag(lib.tensor(ids), lib.tensor(offsets))
        weighted = out if mode != "sum" else lib.nn.functional.embedding_bag(
            lib.tensor(ids), bag.weight, lib.tensor(offsets), mode="sum",
            per_sample_weights=lib.rand(5))
        two_d = bag(lib.tensor([[1, 2], [3, 3]]))
        with lib.no_grad():
            untracked = bag(lib.tensor(ids), lib.tensor(offsets)).grad_fn
        names[lib] = (out.grad_fn.name(), weighted.grad_fn.name(), two_d.grad_fn.name(),
                      repr(out).split("grad_fn=")[1], untracked)
    assert names[mg] == names[torch]
