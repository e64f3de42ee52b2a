"""Embedding and EmbeddingBag's max_norm=, norm_type= and scale_grad_by_freq=: outputs, the
renormalised table (in place, outside autograd, its version moved on), gradients and second
derivatives against PyTorch on both float dtypes and several norms; the bag's maxima tied
after renormalising; float64 gradient checks; reprs; the refusals (sparse=, max mode with
frequency scaling)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(5)
TABLE = rng.standard_normal((10, 4)) * 2
IDS = np.array([[0, 3, 3, 5], [6, 3, 1, 0]])
NORMS = [dict(max_norm=1.5), dict(max_norm=1.0, norm_type=1), dict(max_norm=1.0, norm_type=3.5),
         dict(max_norm=0.5, norm_type=float("inf")), dict(max_norm=50.0)]


def _run(lib, dtype, kw, bag=None, ids=IDS, layer=False):
    """(output, the table's gradient, the table after the call) for F.embedding or
    F.embedding_bag(mode=bag), or their layers."""
    weight = lib.tensor(TABLE.astype(dtype), requires_grad=True)
    if layer:
        cls = lib.nn.EmbeddingBag if bag else lib.nn.Embedding
        module = cls(*TABLE.shape, **kw, **({"mode": bag} if bag else {}), dtype=weight.dtype)
        with lib.no_grad():
            module.weight.copy_(weight)
        weight, y = module.weight, module(lib.tensor(ids))
    elif bag:
        y = lib.nn.functional.embedding_bag(lib.tensor(ids), weight, **kw, mode=bag)
    else:
        y = lib.nn.functional.embedding(lib.tensor(ids), weight, **kw)
    w = np.sin(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype)
    (y * lib.tensor(w)).sum().backward()
    return y.detach().numpy(), weight.grad.numpy(), weight.detach().numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_renormalising_and_frequency_scaling_match_pytorch(torch, dtype):
    tol = 1e-6 if dtype == np.float32 else 1e-14
    cases = ([(kw, bag) for kw in NORMS for bag in (None, "sum", "mean", "max")]
             + [(dict(scale_grad_by_freq=True), None),
                (dict(scale_grad_by_freq=True, padding_idx=3), None),
                (dict(max_norm=2.0, scale_grad_by_freq=True, padding_idx=0), None),
                (dict(max_norm=1.0, padding_idx=3), "sum")])
    for i, (kw, bag) in enumerate(cases):
        got, want = _run(mg, dtype, kw, bag, layer=i % 2), _run(torch, dtype, kw, bag)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"{kw} {bag}")


def test_bags_scale_each_id_by_its_count():
    """Each id's gradient over its count in the input: PyTorch's CPU kernel divides by the
    count of another id (it indexes the counts by the id's rank among the distinct ids, see
    compat_notes), so this compares with the rule its documentation states."""
    ids = np.array([0, 3, 3, 5, 6, 3, 1, 0, 2])
    counts = np.bincount(ids, minlength=len(TABLE))
    for mode in ("sum", "mean"):
        offsets = mg.tensor([0, 4, 6])
        plain, scaled = (mg.tensor(TABLE, requires_grad=True) for _ in range(2))
        for w, kw in ((plain, {}), (scaled, dict(scale_grad_by_freq=True))):
            y = mg.nn.functional.embedding_bag(mg.tensor(ids), w, offsets, mode=mode, **kw)
            (y * mg.tensor(np.cos(np.arange(12)).reshape(3, 4))).sum().backward()
        want = plain.grad.numpy() / np.maximum(counts, 1)[:, None]
        np.testing.assert_allclose(scaled.grad.numpy(), want, rtol=1e-15, atol=1e-15)


def test_the_table_changes_in_place_outside_autograd(torch):
    for lib in (mg, torch):
        emb = lib.nn.Embedding(*TABLE.shape, max_norm=1.0)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(TABLE, dtype=emb.weight.dtype))
        before = emb.weight.detach().numpy().copy()
        y = emb(lib.tensor([[2, 2, 4]]))
        after = emb.weight.detach().numpy()
        norms = np.linalg.norm(after, axis=1)
        assert np.allclose(norms[[2, 4]], 1.0, atol=1e-6) and emb.weight.grad is None
        untouched = [0, 1, 3, 5, 6]
        assert (after[untouched] == before[untouched]).all() and emb.weight.grad_fn is None
        assert y.grad_fn is not None
    # an op that saved the table before the renormalisation then refuses to run backward
    w = mg.tensor(TABLE, requires_grad=True)
    saved = (w * w).sum()
    mg.nn.functional.embedding(mg.tensor([1]), w, max_norm=1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.backward()


def test_second_derivatives_match_pytorch(torch):
    res = []
    for lib in (mg, torch):
        w = lib.tensor(TABLE, requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(IDS), w, padding_idx=5, max_norm=3.0,
                                        scale_grad_by_freq=True)
        (g,) = lib.autograd.grad((y ** 2).sum(), [w], create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(np.cos(np.arange(40)).reshape(10, 4))).sum(),
                                  [w])
        res.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_gradcheck():
    """max_norm's renormalisation is outside autograd, so the lookup stays linear in the
    table (scale_grad_by_freq's gradient is deliberately not the derivative: not checked)."""
    ids = mg.tensor(IDS)
    w = mg.tensor(TABLE * 0.1, requires_grad=True)  # below max_norm: the renorm leaves it
    assert gradcheck(lambda w: mg.nn.functional.embedding(ids, w, max_norm=10.0), [w])
    assert gradgradcheck(lambda w: mg.nn.functional.embedding(ids, w, max_norm=10.0) ** 2, [w])
    assert gradcheck(lambda w: mg.nn.functional.embedding_bag(ids, w, mode="max",
                                                              max_norm=10.0), [w])
    # a tie between the bag's rows: the first one takes the whole gradient, as PyTorch
    tied = mg.tensor(np.array([[1.0, 2.0], [1.0, 3.0]]), requires_grad=True)
    mg.nn.functional.embedding_bag(mg.tensor([[1, 0]]), tied, mode="max").sum().backward()
    assert tied.grad.numpy().tolist() == [[0.0, 0.0], [1.0, 1.0]]


def test_reprs_and_refusals(torch):
    for lib in (mg, torch):
        assert repr(lib.nn.Embedding(5, 3, padding_idx=1, max_norm=1.0, norm_type=1.0,
                                     scale_grad_by_freq=True)) == (
            "Embedding(5, 3, padding_idx=1, max_norm=1.0, norm_type=1.0, "
            "scale_grad_by_freq=True)")
        assert repr(lib.nn.EmbeddingBag(5, 3, max_norm=2.0, norm_type=3, mode="sum",
                                        scale_grad_by_freq=True, padding_idx=2)) == (
            "EmbeddingBag(5, 3, max_norm=2.0, norm_type=3, scale_grad_by_freq=True, "
            "mode='sum', padding_idx=2)")
        with pytest.raises(ValueError, match="max mode does not support scaling the gradient"):
            lib.nn.EmbeddingBag(5, 3, mode="max", scale_grad_by_freq=True)(lib.tensor([[1]]))
    for call in (lambda: mg.nn.Embedding(5, 2, sparse=True),
                 lambda: mg.nn.functional.embedding(mg.tensor([0]), mg.ones(5, 2), sparse=True),
                 lambda: mg.nn.EmbeddingBag(5, 2, sparse=True)):
        with pytest.raises(NotImplementedError, match="sparse=True"):
            call()


def test_empty_and_non_contiguous_ids_match_pytorch(torch):
    wide = np.array([[0, 9, 3, 8, 3, 9], [6, 9, 3, 9, 1, 9]])
    for ids in (wide[:, ::2], wide[:0], wide.T[::2].T):  # non-contiguous views; empty
        for bag in (None, "sum", "max"):
            got = _run(mg, np.float32, dict(max_norm=1.5), bag, ids=ids)
            want = _run(torch, np.float32, dict(max_norm=1.5), bag, ids=ids)
            for a, b in zip(got, want):
                assert a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=f"{ids} {bag}")
    got = _run(mg, np.float64, dict(scale_grad_by_freq=True), ids=wide[:, 1::2])
    want = _run(torch, np.float64, dict(scale_grad_by_freq=True), ids=wide[:, 1::2])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)
