"""minigrad.random.use_pytorch_dropout() (the default): every dropout draws PyTorch's masks from
the default generator, so after the same seed minigrad drops PyTorch's elements and leaves the
generator in PyTorch's state, the Transformer's fused ops too; off (the opt-out), dropout
keeps its counter-based hash."""
import collections

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import random as mrandom

X = np.random.default_rng(0).standard_normal((4, 6, 5, 3)).astype(np.float32)
A = np.random.default_rng(1).standard_normal((4, 5, 6)).astype(np.float32)   # (L, B, E)


@pytest.fixture
def torch_dropout():
    # (the default; set here so that a test left with the switch off cannot change these)
    with mrandom.use_pytorch_dropout(True):
        yield


def same(fn, seed=3):
    """fn(torch) and fn(minigrad) from one seed: equal values and generator states."""
    torch.manual_seed(seed)
    mg.manual_seed(seed)
    a, b = fn(torch), fn(mg)
    a, b = (t.detach().numpy() if t is not None else None for t in (a, b))
    assert np.array_equal(a, b)
    assert np.array_equal(torch.get_rng_state().numpy(), mg.get_rng_state().numpy())
    return a


CASES = {
    "Dropout": lambda L: L.nn.Dropout(0.2)(L.tensor(X)),
    "dropout float64": lambda L: L.nn.functional.dropout(L.tensor(X.astype(np.float64)), 0.3),
    "dropout p 0.9": lambda L: L.nn.functional.dropout(L.tensor(X[0]), 0.9),
    "dropout of a transposed input": lambda L: L.nn.functional.dropout(L.tensor(X[0, 0]).t(),
                                                                       0.5),
    "dropout of a permuted input": lambda L: L.nn.functional.dropout(
        L.tensor(X).permute(2, 0, 3, 1), 0.5),
    "dropout in place": lambda L: L.nn.functional.dropout(L.tensor(X), 0.4, inplace=True),
    "Dropout2d": lambda L: L.nn.Dropout2d(0.4)(L.tensor(X)),
    "dropout1d unbatched": lambda L: L.nn.functional.dropout1d(L.tensor(X[0, :, 0]), 0.3),
    "dropout3d": lambda L: L.nn.functional.dropout3d(L.tensor(X[None]), 0.3),
    "dropout2d p 1": lambda L: L.nn.functional.dropout2d(L.tensor(X), 1.0),
    "AlphaDropout": lambda L: L.nn.AlphaDropout(0.2).train()(L.tensor(X)),
    "feature_alpha_dropout": lambda L: L.nn.functional.feature_alpha_dropout(L.tensor(X), 0.2,
                                                                             True),
    "p 0 draws nothing": lambda L: L.nn.functional.dropout(L.tensor(X), 0.0),
    "eval draws nothing": lambda L: L.nn.Dropout(0.5).eval()(L.tensor(X)),
    "an empty input draws nothing": lambda L: L.nn.functional.dropout(L.zeros(0, 3), 0.5),
    "the gradient is masked alike": lambda L: (lambda t: (
        L.nn.functional.dropout(t * 2.0, 0.3).sum().backward(), t.grad)[1])(
        L.tensor(X, requires_grad=True)),
    "attention weights": lambda L: L.nn.MultiheadAttention(6, 2, dropout=0.5)(
        *(L.tensor(A),) * 3)[1],
    "attention output, batch first": lambda L: L.nn.functional.dropout(
        L.nn.MultiheadAttention(6, 2, dropout=0.5, batch_first=True)(
            *(L.tensor(A),) * 3, need_weights=False)[0], 0.5),
    "LSTM between layers": lambda L: L.nn.LSTM(6, 4, num_layers=2, dropout=0.5)(
        L.tensor(A))[0],
    "GRU between layers, batch first": lambda L: L.nn.GRU(
        6, 4, num_layers=3, dropout=0.5, batch_first=True)(L.tensor(A))[0],
    "scaled_dot_product_attention": lambda L: L.nn.functional.scaled_dot_product_attention(
        *(L.tensor(X.transpose(0, 3, 1, 2).copy()),) * 3, dropout_p=0.5),
    "a Transformer": lambda L: L.nn.Transformer(6, 2, 1, 1, 8, dropout=0.2)(
        L.tensor(A), L.tensor(A[:3])),
}
# products summed in another order: the values agree to float32 rounding, the masks exactly
ROUNDED = {"attention weights", "attention output, batch first", "LSTM between layers",
           "GRU between layers, batch first", "scaled_dot_product_attention", "a Transformer"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_dropout_draws_pytorchs_mask(torch_dropout, name):
    if name in ROUNDED:
        torch.manual_seed(3)
        mg.manual_seed(3)
        a, b = CASES[name](torch).detach().numpy(), CASES[name](mg).detach().numpy()
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6)
        assert np.array_equal(a == 0, b == 0)
        assert np.array_equal(torch.get_rng_state().numpy(), mg.get_rng_state().numpy())
    else:
        same(CASES[name])


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
def test_a_transformer_layer_trains_as_pytorchs(torch_dropout, batch_first, norm_first):
    def run(L):
        L.manual_seed(0)
        layer = L.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=batch_first,
                                             norm_first=norm_first)
        opt = L.optim.Adam(layer.parameters(), lr=1e-3)
        x = L.tensor(np.random.default_rng(1).standard_normal((3, 5, 16)).astype(np.float32))
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = (layer(x) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, L.get_rng_state().numpy()
    (a, state_a), (b, state_b) = run(torch), run(mg)
    np.testing.assert_allclose(a, b, rtol=1e-6)   # float32 products in another order
    assert np.array_equal(state_a, state_b)


def test_a_transformer_layers_output_is_pytorchs_under_dropout(torch_dropout):
    def out(L):
        L.manual_seed(0)
        layer = L.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.3, batch_first=True)
        return layer(L.tensor(np.random.default_rng(1).standard_normal((3, 5, 16)).astype(
            np.float32))).detach().numpy()
    np.testing.assert_allclose(out(torch), out(mg), atol=2e-6)


def test_the_default_is_pytorchs_and_the_hash_is_the_opt_out():
    assert mrandom.pytorch_dropout_enabled()
    mg.manual_seed(1)
    torch.manual_seed(1)
    drawn = mg.nn.functional.dropout(mg.ones(256), 0.5).numpy()
    assert np.array_equal(drawn, torch.nn.functional.dropout(torch.ones(256), 0.5).numpy())
    with mrandom.use_pytorch_dropout(False) as switch:
        assert not mrandom.pytorch_dropout_enabled() and switch.prev
        mg.manual_seed(1)
        hashed = mg.nn.functional.dropout(mg.ones(256), 0.5).numpy()
        with mrandom.use_pytorch_dropout():   # nested: put back to the opt-out on exit
            assert mrandom.pytorch_dropout_enabled()
        assert not mrandom.pytorch_dropout_enabled()
    assert mrandom.pytorch_dropout_enabled()
    assert not np.array_equal(hashed, drawn)
    mrandom.use_pytorch_dropout(False)   # called, not entered: process-wide until set again
    try:
        mg.manual_seed(1)
        assert np.array_equal(hashed, mg.nn.functional.dropout(mg.ones(256), 0.5).numpy())
    finally:
        mrandom.use_pytorch_dropout(True)


def test_the_fused_ops_give_the_separate_ops_numbers(torch_dropout):
    from nn import fast_path
    x = mg.tensor(X[:, :, :, 0])
    r = mg.tensor(X[:, :, :, 1])
    for fused, plain in (
            (lambda: fast_path.relu_dropout(x, 0.3),
             lambda: mg.nn.functional.dropout(mg.nn.functional.relu(x), 0.3)),
            (lambda: fast_path.dropout_add(x, r, 0.3),
             lambda: r + mg.nn.functional.dropout(x, 0.3)),
            (lambda: fast_path.dropout_add_layer_norm(x, r, 0.3),
             lambda: mg.nn.functional.layer_norm(r + mg.nn.functional.dropout(x, 0.3), (5,)))):
        mg.manual_seed(4)
        a = fused().numpy()
        mg.manual_seed(4)
        assert np.array_equal(a, plain().numpy())


def _op_names(out):
    """The classes of the ops in out's graph, counted."""
    names, seen, stack = collections.Counter(), set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            names[type(node).__name__] += 1
            stack.extend(fn for fn, _ in node.next_functions)
    return names


@pytest.mark.parametrize("layout", ["C", "transposed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["DropoutAdd", "DropoutAddLayerNorm"])
def test_the_residual_ops_draw_the_separate_ops_masks(torch_dropout, op, dtype, layout):
    # PyTorch's mask drawn in the fused op's pass: the numbers, gradients and generator
    # state of dropout, add (and layer norm), for a dropout input laid out either way
    from nn import fast_path
    rng = np.random.default_rng(5)
    s0, r0, g0 = (rng.standard_normal((24, 10)).astype(dtype) for _ in range(3))
    w0, b0 = (rng.standard_normal(24).astype(dtype) for _ in range(2))
    got = []
    for fused in (True, False):
        s = mg.tensor(s0, requires_grad=True)
        r = mg.tensor(r0.T.copy(), requires_grad=True)
        w, b = mg.tensor(w0, requires_grad=True), mg.tensor(b0, requires_grad=True)
        sv = s.t() if layout == "transposed" else s.reshape(10, 24)   # (10, 24) either way
        mg.manual_seed(7)
        if op == "DropoutAdd":
            y = (fast_path.dropout_add(sv, r, 0.35) if fused else
                 r + mg.nn.functional.dropout(sv, 0.35))
        else:
            y = (fast_path.dropout_add_layer_norm(sv, r, 0.35, w, b) if fused else
                 mg.nn.functional.layer_norm(r + mg.nn.functional.dropout(sv, 0.35), (24,),
                                             w, b))
        state = mg.get_rng_state().numpy()
        (y * mg.tensor(g0.T.copy())).sum().backward()
        got.append([y.numpy(), s.grad.numpy(), r.grad.numpy(), state, _op_names(y)[op]]
                   + ([w.grad.numpy(), b.grad.numpy()] if op != "DropoutAdd" else []))
    assert got[0][4] == 1 and got[1][4] == 0
    for a, b in zip(got[0], got[1]):
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b)


def test_the_residual_ops_drawn_masks_have_the_separate_ops_rules(torch_dropout):
    # twice differentiated and pushed forward through the kept mask, as the separate ops
    import minigrad.autograd.forward_ad as fwAD
    from minigrad import autograd
    from nn import fast_path
    rng = np.random.default_rng(6)
    s0, r0, t0, w0 = (rng.standard_normal((6, 8)) for _ in range(4))

    def programs(fused):
        def add(s, r):
            mg.manual_seed(3)
            return (fast_path.dropout_add(s, r, 0.4) if fused else
                    r + mg.nn.functional.dropout(s, 0.4))

        def add_norm(s, r):
            mg.manual_seed(3)
            return (fast_path.dropout_add_layer_norm(s, r, 0.4) if fused else
                    mg.nn.functional.layer_norm(r + mg.nn.functional.dropout(s, 0.4), (8,)))
        return add, add_norm

    def results(program):
        s, r = mg.tensor(s0, requires_grad=True), mg.tensor(r0, requires_grad=True)
        y = program(s * s, r * r)
        gs, gr = autograd.grad((y * mg.tensor(w0)).pow(2).sum(), [s, r], create_graph=True)
        ggs, ggr = autograd.grad((gs * gs).sum() + (gr * gr).sum(), [s, r])
        with fwAD.dual_level():
            out = program(fwAD.make_dual(mg.tensor(s0), mg.tensor(t0)), mg.tensor(r0))
            tangent = fwAD.unpack_dual(out).tangent.numpy().copy()
        return [gs.detach().numpy(), gr.detach().numpy(), ggs.numpy(), ggr.numpy(), tangent]
    for fused, plain in zip(programs(True), programs(False)):
        for a, b in zip(results(fused), results(plain)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _layer(L, kind, norm_first, batch_first):
    if kind == "TransformerEncoderLayer":
        return L.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.2, batch_first=batch_first,
                                            norm_first=norm_first)
    if kind == "TransformerDecoderLayer":
        return L.nn.TransformerDecoderLayer(16, 4, 32, dropout=0.2, batch_first=batch_first,
                                            norm_first=norm_first)
    return L.nn.Transformer(16, 4, 1, 1, 32, dropout=0.2, batch_first=batch_first,
                            norm_first=norm_first)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["Transformer", "TransformerDecoderLayer",
                                  "TransformerEncoderLayer"])
def test_the_transformer_modules_train_as_pytorchs(torch_dropout, kind, norm_first,
                                                   batch_first):
    # the fused ops (the residual connections', ReLU + dropout, attention) draw PyTorch's
    # masks: its outputs, gradients and generator state after each training step
    rng = np.random.default_rng(1)
    x0, m0, t0 = (rng.standard_normal(s).astype(np.float32)
                  for s in ((3, 5, 16), (3, 4, 16), (3, 5, 16)))
    if not batch_first:
        x0, m0, t0 = (a.transpose(1, 0, 2).copy() for a in (x0, m0, t0))

    def run(L):
        L.manual_seed(0)
        module = _layer(L, kind, norm_first, batch_first)
        opt = L.optim.Adam(module.parameters(), lr=1e-3)
        x, m = L.tensor(x0), L.tensor(m0)
        steps, names = [], None
        for _ in range(2):
            opt.zero_grad()
            out = (module(x) if kind == "TransformerEncoderLayer" else module(m, x)
                   if kind == "Transformer" else module(x, m))
            # (not a layer norm's mean square: about 1 whatever the weights, its gradients
            # are rounding noise, which Adam's first steps scale up to the learning rate)
            loss = ((out - L.tensor(t0)) ** 2).mean()
            names = names or (_op_names(loss) if L is mg else None)
            loss.backward()
            steps.append([out.detach().numpy()] + [p.grad.numpy().copy()
                                                   for p in module.parameters()]
                         + [L.get_rng_state().numpy()])
            opt.step()
        return steps, names
    (want, _), (have, names) = run(torch), run(mg)
    for a, b in zip(want, have):
        assert len(a) == len(b)
        for u, v in zip(a[:-1], b[:-1]):
            np.testing.assert_allclose(v, u, rtol=1e-4, atol=2e-5)   # products' order
        assert np.array_equal(a[-1], b[-1])
    residual = "DropoutAdd" if norm_first else "DropoutAddLayerNorm"
    assert names[residual] >= 2 and names["ReluDropout"] >= 1 and names["PackedAttention"] >= 1
    assert names["Dropout"] == 0   # every dropout inside a fused op


def _toy_twin(torch, vocab, d, layers, ffn, p):
    """The PyTorch twin of minigrad.models.Seq2SeqTransformer (bench/step_worker.py's, its
    positions minigrad's table)."""
    import math
    nn = torch.nn

    class PosEnc(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("pe", torch.from_numpy(
                mg.nn.positional.sinusoidal_table(256, d)))
            self.drop = nn.Dropout(p)

        def forward(self, x):
            return self.drop(x + self.pe[: x.shape[1]])

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(vocab, d, padding_idx=0)
            self.tgt_embed = nn.Embedding(vocab, d, padding_idx=0)
            self.pos = PosEnc()
            self.transformer = nn.Transformer(d, 4, layers, layers, ffn, p, batch_first=True)
            self.generator = nn.Linear(d, vocab)
            for w in self.parameters():
                if w.dim() > 1:
                    nn.init.xavier_uniform_(w)

        def forward(self, src, tin):
            s = math.sqrt(d)
            mask = torch.triu(torch.ones(tin.shape[1], tin.shape[1], dtype=torch.bool), 1)
            # encode, then embed the target and decode, as Seq2SeqTransformer does (the
            # dropouts draw in that order; nn.Transformer's call would embed both first)
            memory = self.transformer.encoder(self.pos(self.src_embed(src) * s))
            h = self.transformer.decoder(self.pos(self.tgt_embed(tin) * s), memory,
                                         tgt_mask=mask, tgt_is_causal=True)
            return self.generator(h)
    return Model()


def test_the_toy_translator_trains_as_its_pytorch_twin(torch_dropout):
    from minigrad.models import Seq2SeqTransformer
    vocab, d, layers, ffn, p = 40, 16, 1, 32, 0.2
    r = np.random.default_rng(0)
    src, tgt = r.integers(3, vocab, (4, 6)), r.integers(3, vocab, (4, 7))
    mg.manual_seed(0)
    ours = Seq2SeqTransformer(vocab, vocab, d, 4, layers, layers, ffn, p, max_len=256)
    torch.manual_seed(0)
    theirs = _toy_twin(torch, vocab, d, layers, ffn, p)
    mine = dict(ours.named_parameters())
    for name, w in theirs.named_parameters():   # the same initial weights (but the
        if name.endswith("embed.weight"):       # padding rows, which minigrad zeroes)
            w.data[0] = 0.0
        assert np.array_equal(w.detach().numpy(), mine[name].numpy()), name
    opts = [lib.optim.Adam(m.parameters(), lr=1e-3) for lib, m in ((torch, theirs), (mg, ours))]
    lossf = torch.nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    names = None
    for _ in range(2):
        for o in opts:
            o.zero_grad()
        logits = theirs(torch.from_numpy(src), torch.from_numpy(tgt[:, :-1]))
        want = lossf(logits.reshape(-1, vocab), torch.from_numpy(tgt[:, 1:]).reshape(-1))
        have = ours.loss(src, tgt[:, :-1], tgt[:, 1:], 0.1)
        names = names or _op_names(have)
        want.backward()
        have.backward()
        np.testing.assert_allclose(have.item(), want.item(), rtol=1e-5)
        for name, w in theirs.named_parameters():
            np.testing.assert_allclose(mine[name].grad.numpy(), w.grad.numpy(), rtol=1e-3,
                                       atol=1e-5, err_msg=name)
        assert np.array_equal(torch.get_rng_state().numpy(), mg.get_rng_state().numpy())
        for o in opts:
            o.step()
    assert names["EmbedPositions"] == 2 and names["DropoutAddLayerNorm"] >= 5
    assert names["Dropout"] == 0
