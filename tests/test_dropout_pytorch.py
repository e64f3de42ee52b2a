"""minigrad.random.use_pytorch_dropout(): every dropout draws PyTorch's masks from the default
generator, so after the same seed minigrad drops PyTorch's elements and leaves the generator
in PyTorch's state; off (the default), dropout keeps its counter-based hash."""
import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import random as mrandom

X = np.random.default_rng(0).standard_normal((4, 6, 5, 3)).astype(np.float32)
A = np.random.default_rng(1).standard_normal((4, 5, 6)).astype(np.float32)   # (L, B, E)


@pytest.fixture
def torch_dropout():
    mrandom.use_pytorch_dropout(True)
    try:
        yield
    finally:
        mrandom.use_pytorch_dropout(False)


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


def test_the_default_is_the_hash_and_the_switch_turns_back():
    assert not mrandom.pytorch_dropout_enabled()
    mg.manual_seed(1)
    hashed = mg.nn.functional.dropout(mg.ones(256), 0.5).numpy()
    mrandom.use_pytorch_dropout(True)
    try:
        assert mrandom.pytorch_dropout_enabled()
        mg.manual_seed(1)
        torch.manual_seed(1)
        drawn = mg.nn.functional.dropout(mg.ones(256), 0.5).numpy()
        assert np.array_equal(drawn, torch.nn.functional.dropout(torch.ones(256), 0.5).numpy())
    finally:
        mrandom.use_pytorch_dropout(False)
    assert not np.array_equal(hashed, drawn)
    mg.manual_seed(1)
    assert np.array_equal(hashed, mg.nn.functional.dropout(mg.ones(256), 0.5).numpy())


def test_the_fused_ops_fall_back_to_the_drawn_mask(torch_dropout):
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
