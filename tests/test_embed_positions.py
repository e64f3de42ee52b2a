"""A Transformer's input as one op (nn/fast_path.py: EmbedPositions, embed_positions):
dropout(weight[ids] * scale + pe). It must give the numbers of Embedding, Mul, Add and
Dropout bit for bit (outputs and the table's gradient, the padding row untrained), pass a
float64 gradcheck, equal PyTorch given the same mask, differentiate twice and push tangents
forward as the separate ops do, and give way to the separate modules whenever they must run
(evaluation, hooks, an offset past the table of positions).
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
from minigrad import kernels, nn
from minigrad.autograd import grad, gradcheck, gradgradcheck
from minigrad.nn import fast_path as NF
from minigrad.nn import functional as F

IDS = np.array([[3, 0, 5, 3], [1, 2, 0, 4], [5, 5, 1, 0]])   # repeats and the padding id 0
PE = np.random.default_rng(7).standard_normal((4, 6))


def _fused(w, scale=2.5, p=0.3, seed=5, pe=PE, ids=IDS, padding_idx=0):
    return NF.EmbedPositions.apply(w, ids=ids, pe=pe.astype(w.dtype), scale=scale, p=p,
                                   seed=seed, padding_idx=padding_idx)


def _parts(w, scale=2.5, p=0.3, seed=5, pe=PE, ids=IDS, padding_idx=0):
    x = F.embedding(ids, w, padding_idx=padding_idx) * scale
    return mg.dropout(x + pe.astype(w.dtype), p=p, seed=seed)


def _fused_drawn(w, scale=2.5, p=0.3, pe=PE, ids=IDS, padding_idx=0):
    """_fused with PyTorch's mask, drawn from the default generator after manual_seed(5)."""
    mg.manual_seed(5)
    return NF.EmbedPositions.apply(w, ids=ids, pe=pe.astype(w.dtype), scale=scale, p=p,
                                   padding_idx=padding_idx, gen=mg.random.default_generator)


def _parts_drawn(w, scale=2.5, p=0.3, pe=PE, ids=IDS, padding_idx=0):
    mg.manual_seed(5)
    x = F.embedding(ids, w, padding_idx=padding_idx) * scale
    return F.dropout(x + pe.astype(w.dtype), p=p)


def _table(dtype=np.float64, rows=7, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal((rows, 6)).astype(dtype),
                     requires_grad=True)


PAIRS = {"hash": (_fused, _parts), "drawn": (_fused_drawn, _parts_drawn)}


@pytest.mark.parametrize("mask", sorted(PAIRS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_numbers_of_the_separate_ops_bit_for_bit(dtype, mask):
    fused, parts = PAIRS[mask]
    g = np.random.default_rng(3).standard_normal((3, 4, 6)).astype(dtype)
    got, want = _table(dtype), _table(dtype)
    y = fused(got)
    state = mg.get_rng_state().numpy()
    y.backward(mg.tensor(g))
    z = parts(want)
    assert np.array_equal(state, mg.get_rng_state().numpy())   # as many words drawn
    z.backward(mg.tensor(g))
    assert y.dtype == z.dtype == dtype and y.shape == (3, 4, 6)
    np.testing.assert_array_equal(y.numpy(), z.numpy())
    np.testing.assert_array_equal(got.grad.numpy(), want.grad.numpy())
    assert not got.grad.numpy()[0].any()   # the padding row is never trained


def test_gradcheck_float64():
    # (the padding row's zero gradient is a convention of training, not a derivative: it is
    # checked with ids that never name it, and without a padding row)
    assert gradcheck(lambda w: _fused(w, ids=IDS + 1), [_table()])
    assert gradcheck(lambda w: _fused(w, padding_idx=None, p=0.6, seed=2), [_table()])
    assert gradcheck(lambda w: _fused_drawn(w, padding_idx=None, p=0.6), [_table()])


def test_equals_torch_given_the_mask(torch):
    w = np.random.default_rng(1).standard_normal((7, 6)).astype(np.float32)
    g = np.random.default_rng(2).standard_normal((3, 4, 6)).astype(np.float32)
    ours = mg.tensor(w, requires_grad=True)
    y = _fused(ours, scale=math.sqrt(6))
    y.backward(mg.tensor(g))
    mask = torch.from_numpy(kernels.dropout_mask((3, 4, 6), 0.3, 5, np.float32))
    theirs = torch.from_numpy(w).requires_grad_()
    ty = (torch.nn.functional.embedding(torch.from_numpy(IDS), theirs, padding_idx=0)
          * math.sqrt(6) + torch.from_numpy(PE.astype(np.float32))) * mask
    ty.backward(torch.from_numpy(g))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_empty_ids_give_an_empty_output_and_a_zero_gradient():
    w = _table()
    y = _fused(w, ids=np.zeros((2, 0), np.int64), pe=np.zeros((0, 6)))
    assert y.shape == (2, 0, 6)
    y.sum().backward()
    assert w.grad.shape == (7, 6) and not w.grad.numpy().any()


def test_bad_ids_are_refused_as_the_embedding_refuses_them():
    with pytest.raises(IndexError, match="embedding: id 9 is out of range for a table of 7"):
        _fused(_table(), ids=np.array([[1, 9, 0, 2]]), pe=PE)
    with pytest.raises(TypeError, match="embedding: ids must be integers"):
        _fused(_table(), ids=np.ones((3, 4)), pe=PE)


@pytest.mark.parametrize("mask", sorted(PAIRS))
def test_differentiates_twice_as_its_parts(mask):
    """Through a table that is itself computed (w * w): the rule's second trace reaches w."""
    fused, parts = PAIRS[mask]

    def second(program):
        w = _table()
        (g1,) = grad((program(w * w) ** 2).sum(), [w], create_graph=True)
        (g2,) = grad((g1 * g1).sum(), [w])
        return g1.detach().numpy(), g2.numpy()
    for got, want in zip(second(fused), second(parts)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert gradgradcheck(lambda w: fused(w * w), [_table()])


@pytest.mark.parametrize("mask", sorted(PAIRS))
def test_forward_mode_tangent_as_its_parts(mask):
    w = np.random.default_rng(4).standard_normal((7, 6))
    t = np.random.default_rng(5).standard_normal((7, 6))
    tangents = []
    for program in PAIRS[mask]:
        with fwAD.dual_level():
            out = program(fwAD.make_dual(mg.tensor(w), mg.tensor(t)))
            tangents.append(fwAD.unpack_dual(out).tangent.numpy().copy())
    np.testing.assert_allclose(tangents[0], tangents[1], rtol=1e-12, atol=1e-12)


# ------------------------------------------------- the modules' fast path ----
def _modules(dropout=0.2):
    mg.manual_seed(0)
    return nn.Embedding(50, 8, padding_idx=0), nn.PositionalEncoding(8, 16, dropout)


def _run(emb, pos, ids, offset=0, fused=True):
    """(output, the table's gradient, the node's name) of embed_positions, or of the modules
    themselves; each from the same dropout seed."""
    mg.manual_seed(1)
    if fused:
        y = NF.embed_positions(emb, pos, ids, math.sqrt(8), offset)
    else:
        y = pos(emb(ids) * math.sqrt(8), offset=offset)
    g = np.random.default_rng(2).standard_normal(y.shape).astype(np.float32)
    emb.weight.grad = None
    y.backward(mg.tensor(g))
    return y.numpy(), emb.weight.grad.numpy().copy(), type(y.grad_fn).__name__  # op class


@pytest.mark.parametrize("offset", [0, 5])
def test_the_fast_path_gives_the_modules_numbers(offset):
    emb, pos = _modules()
    ids = np.random.default_rng(3).integers(0, 50, (4, 9))
    y, gw, name = _run(emb, pos, ids, offset)
    want_y, want_gw, want_name = _run(emb, pos, ids, offset, fused=False)
    assert name == "EmbedPositions" and want_name == "Dropout"
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(gw, want_gw)


def test_the_modules_run_where_they_must():
    ids = np.random.default_rng(3).integers(0, 50, (2, 5))
    emb, pos = _modules()
    pos.eval()
    assert _run(emb, pos, ids)[2] != "EmbedPositions"      # no dropout to fuse
    emb, pos = _modules(dropout=0.0)
    assert _run(emb, pos, ids)[2] != "EmbedPositions"
    emb, pos = _modules()
    seen = []
    handle = pos.register_forward_hook(lambda m, a, out: seen.append(out.shape))
    assert _run(emb, pos, ids)[2] == "Dropout" and seen == [(2, 5, 8)]
    handle.remove()
    emb, pos = _modules()
    with pytest.raises(ValueError, match="longer than max_len=16"):   # the module's own error
        NF.embed_positions(emb, pos, ids, 2.0, offset=12)


def test_a_model_trains_through_the_fused_input():
    from minigrad.models import Seq2SeqTransformer
    mg.manual_seed(0)
    model = Seq2SeqTransformer(30, 30, 16, 2, 1, 1, 32, 0.1, max_len=32, pad_id=0)
    r = np.random.default_rng(0)
    src, tgt = r.integers(1, 30, (3, 7)), r.integers(1, 30, (3, 6))
    loss = model.loss(src, tgt[:, :-1], tgt[:, 1:], 0.1)
    names, seen, stack = set(), set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            names.add(type(node).__name__)  # the op's class, not PyTorch's node name
            stack.extend(fn for fn, _ in node.next_functions)
    assert "EmbedPositions" in names and "Mul" not in names
    loss.backward()
    assert model.src_embed.weight.grad.numpy()[1:].any()
    assert not model.src_embed.weight.grad.numpy()[0].any()
