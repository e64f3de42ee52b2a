"""Graph attention: gradchecks, attention confined to the neighbourhood (and no leak beyond two
hops for two layers), the generated block-model graph, and the demo against a features-only MLP."""
import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, no_grad
from minigrad.demos.gat import gat_demo, make_sbm_graph, micro_f1
from minigrad.models.gat import GAT, MLP, GATLayer


def path_graph(n, extra=()):
    """Adjacency (n, n) of the path 0 - 1 - ... - n-1, plus `extra` edges."""
    adj = np.zeros((n, n), bool)
    for i, j in [(i, i + 1) for i in range(n - 1)] + list(extra):
        adj[i, j] = adj[j, i] = True
    return adj


def f64(x):
    return minigrad.tensor(np.asarray(x, np.float64), requires_grad=True)


def test_elu_gradcheck():
    from minigrad.nn import functional as F
    x = f64(np.array([-2.5, -0.75, -0.25, 0.25, 0.75, 2.5]))
    for alpha in (1.0, 0.5):
        assert gradcheck(lambda x: F.elu(x, alpha), [x])


def test_elu_matches_torch(torch):
    from minigrad.nn import functional as F
    v = np.array([-100.0, -3.0, -1e-3, 0.0, 1e-3, 2.0, 100.0, 1000.0], np.float32)
    for alpha in (1.0, 0.5):
        x = minigrad.tensor(v, requires_grad=True)
        y = F.elu(x, alpha)
        y.sum().backward()
        t = torch.tensor(v, requires_grad=True)
        u = torch.nn.functional.elu(t, alpha)
        u.sum().backward()
        assert y.dtype == minigrad.float32 and x.grad.dtype == minigrad.float32
        # PyTorch uses expm1; exp(x) - 1 loses relative (not absolute) precision near 0
        np.testing.assert_allclose(y.numpy(), u.detach().numpy(), rtol=1e-6, atol=1e-8)
        # including the gradient at 0 (alpha, from the left branch) and no NaN from exp(1000)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("concat", [True, False])
def test_gat_layer_gradcheck(concat):
    minigrad.manual_seed(0)
    layer = GATLayer(3, 2, heads=2, concat=concat, negative_slope=0.2).double()
    x = f64(np.random.default_rng(0).standard_normal((5, 3)))
    adj = path_graph(5, [(0, 3)])
    out = layer(x, adj)
    assert out.shape == ((5, 4) if concat else (5, 2))
    assert gradcheck(lambda x, *p: layer(x, adj), [x, *layer.parameters()])


def test_gat_gradcheck():
    minigrad.manual_seed(0)
    model = GAT(3, 2, 4, heads=2, dropout=0.0).double()
    x = f64(np.random.default_rng(1).standard_normal((6, 3)))
    adj = path_graph(6, [(1, 4)])
    assert model(x, adj).shape == (6, 4)
    assert gradcheck(lambda x, *p: model(x, adj), [x, *model.parameters()])


def test_attention_stays_in_the_neighbourhood():
    minigrad.manual_seed(0)
    layer = GATLayer(4, 3, heads=3)
    adj = path_graph(7, [(2, 5)])
    with no_grad():
        _, alpha = layer(minigrad.randn(7, 4), adj, return_attention=True)
    assert alpha.shape == (3, 7, 7)
    np.testing.assert_allclose(alpha.numpy().sum(-1), 1, rtol=1e-5)
    allowed = adj | np.eye(7, dtype=bool)  # neighbours and the node itself
    assert (alpha.numpy()[:, ~allowed] == 0).all()
    assert (alpha.numpy()[:, allowed] > 0).all()


def test_two_layers_see_two_hops_and_no_further():
    """Changing a node 3+ hops from i leaves i's output exactly unchanged; 2 hops does not."""
    minigrad.manual_seed(0)
    model = GAT(4, 3, 2, heads=2, dropout=0.5).eval()
    adj = path_graph(10, [(2, 6)])  # node 0's 2-hop neighbourhood: {0, 1, 2}
    x = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
    far = x.copy()
    far[[3, 5, 6, 9]] += 10.0  # 3 and 6 are 3 hops from node 0 (via 2), 5 and 9 further
    near = x.copy()
    near[2] += 10.0
    with no_grad():
        out, out_far, out_near = (model(minigrad.tensor(v), adj).numpy() for v in (x, far, near))
    np.testing.assert_array_equal(out_far[0], out[0])
    assert not np.allclose(out_near[0], out[0])
    assert not np.allclose(out_far[1], out[1])  # node 1's two hops do reach 3 and 6


def test_sbm_graph():
    g = make_sbm_graph(n_nodes=120, n_communities=4, seed=3)
    h = make_sbm_graph(n_nodes=120, n_communities=4, seed=3)
    np.testing.assert_array_equal(g.adj, h.adj)
    np.testing.assert_array_equal(g.x, h.x)
    assert (g.adj == g.adj.T).all() and not g.adj.diagonal().any()
    masks = np.stack([g.train_mask, g.val_mask, g.test_mask])
    assert (masks.sum(0) == 1).all()
    same = g.community[:, None] == g.community[None, :]
    assert g.adj[same].mean() > 5 * g.adj[~same].mean()  # a graph of communities
    for c in range(4):  # the label set is the community's
        rows = g.labels[g.community == c]
        assert (rows == rows[0]).all() and rows[0].sum() >= 1
    assert len({tuple(r) for r in g.labels}) == 4


def test_micro_f1():
    logits = np.array([[1.0, -1.0], [1.0, 1.0]])
    targets = np.array([[1, 0], [0, 1]])
    assert micro_f1(logits, targets) == pytest.approx(2 * 2 / (2 * 2 + 1 + 0))
    assert micro_f1(-np.ones((2, 2)), targets) == 0.0


def test_mlp_ignores_the_graph():
    minigrad.manual_seed(0)
    mlp = MLP(4, 8, 3).eval()
    x = minigrad.randn(5, 4)
    with no_grad():
        np.testing.assert_array_equal(mlp(x, path_graph(5)).numpy(), mlp(x, np.zeros((5, 5), bool)).numpy())


def test_gat_beats_features_only_mlp():
    r = gat_demo(n_nodes=300, epochs=60, verbose=False)
    assert r["gat_f1"] > r["mlp_f1"] + 0.15
    assert r["gat_f1"] > 0.75


def test_elu_keeps_relative_precision_near_zero_and_its_gradient_far_left(torch):
    from minigrad.nn import functional as F
    v = np.array([-1.6205162e-05, -3e-7, -0.01, -0.99, -1.0, -1.5, -30.0, -80.0], np.float32)
    for alpha in (1.0, 0.5):
        x = minigrad.tensor(v, requires_grad=True)
        F.elu(x, alpha).sum().backward()
        t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        exact = torch.nn.functional.elu(t, alpha)
        exact.sum().backward()
        # exp(x) - 1 in float32 is off by 0.3 % at -1.6e-5; expm1 keeps every digit
        np.testing.assert_allclose(F.elu(minigrad.tensor(v), alpha).numpy(),
                                   exact.detach().numpy(), rtol=3e-7, atol=0)
        # the gradient alpha * exp(x) is kept at -30 and -80, where expm1(x) + 1 is 0
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=3e-7, atol=0)
