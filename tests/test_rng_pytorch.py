"""After the same seed, minigrad's random numbers are PyTorch's: the draws, their order in the
stream, the generator's state bytes, and the layers' initial weights."""
import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn as mnn

SIZES = [1, 15, 16, 17, 100, 1000]
DTYPES = ["float32", "float64"]


def both(fn, seed=0):
    torch.manual_seed(seed)
    mg.manual_seed(seed)
    return fn(torch).numpy(), fn(mg).numpy()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES + ["float16"])  # float16: drawn in float32, rounded
def test_rand_randn_uniform_normal_are_pytorchs(n, dtype):
    for fn in (lambda L: L.rand(n, dtype=getattr(L, dtype)),
               lambda L: L.randn(n, dtype=getattr(L, dtype)),
               lambda L: L.empty(n, dtype=getattr(L, dtype)).uniform_(-2.5, 3.1),
               lambda L: L.randn(n, 2, dtype=getattr(L, dtype)).t()):
        a, b = both(fn, seed=n)
        assert a.dtype == b.dtype
        assert np.array_equal(a, b)
    for fn in (lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(0.3, 1.7),
               lambda L: L.empty(n, 3, dtype=getattr(L, dtype)).t().normal_(-2.0, 0.7)):
        a, b = both(fn)
        assert np.array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [16, 4099, 100_003, (1 << 20) + 3])  # the last: compiled loops
def test_large_normal_and_uniform_fills_are_pytorchs_bit_for_bit(n, dtype):
    # float64 too: the C library's log, cos and sin, and PyTorch's fused multiply-adds
    for fn in (lambda L: L.randn(n, dtype=getattr(L, dtype)),
               lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(0.3, 1.7),
               lambda L: L.empty(n, dtype=getattr(L, dtype)).uniform_(-2.5, 3.1),
               lambda L: L.empty(n, dtype=getattr(L, dtype)).bernoulli_(0.3),
               lambda L: L.empty(n, dtype=getattr(L, dtype)).bernoulli_(
                   L.linspace(0, 1, n, dtype=getattr(L, dtype)))):
        a, b = both(fn, seed=n)
        assert np.array_equal(a, b)
    torch.manual_seed(7)
    mg.manual_seed(7)
    torch.randn(n, dtype=getattr(torch, dtype))
    mg.randn(n, dtype=getattr(mg, dtype))
    assert np.array_equal(torch.get_rng_state().numpy(), mg.get_rng_state().numpy())


def test_a_sequence_of_calls_stays_aligned():
    def seq(L):
        return L.cat([L.rand(5), L.randn(20), L.randint(0, 10, (7,)).float(),
                      L.randperm(30).float(), L.randn(3), L.randint(-5, 2 ** 40, (3,)).float(),
                      L.rand_like(L.zeros(4)), L.randn_like(L.zeros(17)),
                      L.randint_like(L.zeros(3), 4).float(), L.empty(9).bernoulli_(0.3),
                      L.bernoulli(L.full((5,), 0.4)), L.empty(6).exponential_(2.0),
                      L.multinomial(L.tensor([0.1, 0.5, 0.4]), 2).float(),
                      L.multinomial(L.tensor([0.1, 0.5, 0.4]), 4, True).float(),
                      L.normal(L.zeros(3), 2.0), L.empty(4, dtype=L.int64).random_().float(),
                      L.empty(4).random_(2, 9), L.randn(3)])
    a, b = both(seq)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("n", [1, 2, 17, 1000])
def test_randperm_and_randint(n):
    a, b = both(lambda L: L.randperm(n))
    assert np.array_equal(a, b)
    a, b = both(lambda L: L.randint(3, 3 + n, (n, 2), dtype=L.int32))
    assert a.dtype == b.dtype and np.array_equal(a, b)


def test_generator_objects_and_their_default_seed():
    assert mg.Generator().initial_seed() == torch.Generator().initial_seed()
    a = torch.randn(20, generator=torch.Generator().manual_seed(42)).numpy()
    b = mg.randn(20, generator=mg.Generator().manual_seed(42)).numpy()
    assert np.array_equal(a, b)
    a = torch.rand(3, generator=torch.Generator()).numpy()
    assert np.array_equal(a, mg.rand(3, generator=mg.Generator()).numpy())


def test_states_load_into_each_other():
    torch.manual_seed(3)
    mg.manual_seed(3)
    assert np.array_equal(torch.get_rng_state().numpy(), mg.get_rng_state().numpy())
    torch.randn(5)  # an odd count of the small path: a normal kept in the state
    mg.randn(5)
    state = torch.get_rng_state()
    assert state.numel() == mg.get_rng_state().numel() == 5056
    assert np.array_equal(state.numpy(), mg.get_rng_state().numpy())
    mg.manual_seed(99)
    mg.set_rng_state(state)  # PyTorch's tensor into minigrad
    assert np.array_equal(torch.randn(7).numpy(), mg.randn(7).numpy())
    torch.set_rng_state(torch.from_numpy(mg.get_rng_state().numpy()))  # and back
    assert np.array_equal(torch.rand(700).numpy(), mg.rand(700).numpy())
    with pytest.raises(RuntimeError, match="5056"):
        mg.set_rng_state(mg.zeros(10, dtype=mg.uint8))


def test_an_old_dict_state_still_loads_repeatably():
    old = np.random.default_rng(5).bit_generator.state
    mg.set_rng_state(old)
    first = mg.rand(4).numpy()
    mg.set_rng_state(old)
    assert np.array_equal(first, mg.rand(4).numpy())


@pytest.mark.parametrize("make", [
    lambda n: n.Linear(4, 3), lambda n: n.Conv2d(3, 8, 3), lambda n: n.Embedding(10, 4, 1),
    lambda n: n.LSTM(4, 6, num_layers=2, bidirectional=True), lambda n: n.GRU(4, 5),
    lambda n: n.MultiheadAttention(8, 2), lambda n: n.TransformerEncoderLayer(8, 2, 16),
    lambda n: n.Transformer(8, 2, 1, 1, 16), lambda n: n.Bilinear(3, 4, 5)])
def test_layers_start_with_pytorchs_weights(make):
    torch.manual_seed(0)
    t = make(torch.nn).state_dict()
    mg.manual_seed(0)
    m = make(mnn).state_dict()
    assert list(t) == list(m)
    for k in t:
        assert np.array_equal(t[k].numpy(), m[k].numpy()), k


@pytest.mark.parametrize("name", ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_",
                                  "kaiming_uniform_", "kaiming_normal_", "orthogonal_"])
def test_init_fills(name):
    a, b = both(lambda L: getattr((torch.nn if L is torch else mnn).init, name)(L.empty(7, 5)))
    if name == "orthogonal_":  # QR's rounding differs
        np.testing.assert_allclose(a, b, atol=2e-6)
    else:
        assert np.array_equal(a, b)


def test_data_loader_shuffles_are_pytorchs():
    def order(L, seed):
        data = L.utils.data
        L.manual_seed(seed)
        loader = data.DataLoader(data.TensorDataset(L.arange(20)), batch_size=5, shuffle=True)
        return [int(i) for (batch,) in loader for i in batch.tolist()]
    assert order(mg, 4) == order(torch, 4)


def test_dropout_is_seeded_but_not_pytorchs_mask():
    mg.manual_seed(1)
    a = mg.nn.functional.dropout(mg.ones(64), 0.5).numpy()
    mg.manual_seed(1)
    assert np.array_equal(a, mg.nn.functional.dropout(mg.ones(64), 0.5).numpy())


def test_trunc_normal_stays_in_its_bounds():
    mg.manual_seed(0)  # PyTorch's sampler rejects; minigrad's inverts the CDF: other numbers
    x = mnn.init.trunc_normal_(mg.empty(4000), 0.5, 1.0, -1.0, 2.0).numpy()
    assert x.min() >= -1.0 and x.max() <= 2.0 and abs(x.mean() - 0.5) < 0.05
