"""A graph attention network on a generated stochastic block model, against a features-only MLP.

The model lives in `minigrad.models.gat`; this module holds the graph, the training loop and
the demo (`python -m minigrad.demos.gat`).
"""
from __future__ import annotations

import time
from collections import namedtuple

import minigrad.optim
import numpy as np
from minigrad.models.gat import GAT, MLP
from minigrad.nn import functional as F

import minigrad
from minigrad.autograd import no_grad
from minigrad.tensor import array_of

# --- a generated graph --------------------------------------------------------------------------

Graph = namedtuple("Graph", "x adj labels community train_mask val_mask test_mask")
Graph.__doc__ = ("x (N, F) float32, adj (N, N) bool symmetric without self-loops, labels (N, L) "
                 "0/1 float32, community (N,), boolean node masks (N,).")


def make_sbm_graph(n_nodes=500, n_communities=6, p_in=0.08, p_out=0.005, feature_noise=3.0,
                   n_labels=8, n_features=32, seed=0, train_frac=0.2, val_frac=0.2):
    """A stochastic block model with community-determined label sets and noisy features.

    Each community gets a distinct random set of 1-3 of the n_labels labels (so labels overlap
    between communities: a genuinely multi-label task) and a random centre mu_c ~ N(0, I);
    node i's features are mu_c(i) + feature_noise * N(0, I). Edges are independent: probability
    p_in inside a community, p_out across. Nodes are split at random into train / val / test.
    """
    rng = np.random.default_rng(seed)
    community = rng.permutation(np.arange(n_nodes) % n_communities)  # balanced communities
    p = np.where(community[:, None] == community[None, :], p_in, p_out)
    upper = np.triu(rng.random((n_nodes, n_nodes)) < p, 1)
    adj = upper | upper.T
    sets = set()
    while len(sets) < n_communities:  # distinct sets, or two communities would be one task
        sets.add(tuple(sorted(rng.choice(n_labels, rng.integers(1, 4), replace=False))))
    label_table = np.zeros((n_communities, n_labels), np.float32)
    for c, s in enumerate(sorted(sets)):
        label_table[c, list(s)] = 1
    centres = rng.standard_normal((n_communities, n_features))
    x = centres[community] + feature_noise * rng.standard_normal((n_nodes, n_features))
    order = rng.permutation(n_nodes)
    n_train, n_val = int(train_frac * n_nodes), int(val_frac * n_nodes)
    masks = [np.zeros(n_nodes, bool) for _ in range(3)]
    for m, idx in zip(masks, np.split(order, [n_train, n_train + n_val])):
        m[idx] = True
    return Graph(x.astype(np.float32), adj, label_table[community], community, *masks)


def micro_f1(logits, targets):
    """F1 over all (node, label) decisions pooled, predicting a label where its logit > 0."""
    pred, y = np.asarray(array_of(logits)) > 0, np.asarray(targets) > 0.5
    tp = np.sum(pred & y)
    return float(2 * tp / max(2 * tp + np.sum(pred & ~y) + np.sum(~pred & y), 1))


def train_node_classifier(model, graph, epochs=100, lr=0.01, weight_decay=5e-4):
    """Full-batch training with BCE on the train nodes; returns (val F1, test F1) at the best val epoch."""
    opt = minigrad.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    x, adj, y = minigrad.tensor(graph.x), graph.adj, graph.labels
    tr = np.flatnonzero(graph.train_mask)
    best = (-1.0, 0.0)
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(x, adj)[tr], y[tr])
        loss.backward()
        opt.step()
        model.eval()
        with no_grad():
            logits = model(x, adj)._array
        val = micro_f1(logits[graph.val_mask], y[graph.val_mask])
        if val > best[0]:  # model selection on validation nodes, as in early stopping
            best = (val, micro_f1(logits[graph.test_mask], y[graph.test_mask]))
    return best


def gat_demo(seed=0, epochs=100, verbose=True, hidden=16, heads=4, dropout=0.2, lr=0.01,
             **graph_kwargs):
    """Train a GAT and a features-only MLP (same widths, same training) on `make_sbm_graph`.

    Returns gat_f1 and mlp_f1 (test micro-F1 at the best validation epoch), their validation
    scores and training times in seconds.
    """
    graph = make_sbm_graph(seed=seed, **graph_kwargs)
    n_in, n_out = graph.x.shape[1], graph.labels.shape[1]
    result = {}
    for name, make in (("gat", lambda: GAT(n_in, hidden, n_out, heads, dropout=dropout)),
                       ("mlp", lambda: MLP(n_in, hidden * heads, n_out, dropout=dropout))):
        minigrad.manual_seed(seed)
        t0 = time.time()
        val, test = train_node_classifier(make(), graph, epochs, lr)
        result.update({f"{name}_f1": test, f"{name}_val_f1": val,
                       f"{name}_seconds": time.time() - t0})
        if verbose:
            print(f"{name.upper()}: test micro-F1 {test:.3f} (val {val:.3f}), "
                  f"{result[f'{name}_seconds']:.1f} s")
    return result


if __name__ == "__main__":
    gat_demo()
