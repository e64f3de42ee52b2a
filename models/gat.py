"""Graph attention networks (GAT; Velickovic et al., 2018): self-attention along a graph's edges.

In a sentence a word's context is its neighbouring words; in a graph a node's context is its
neighbourhood N(i), the nodes joined to i by an edge, plus i itself (a self-loop). A GAT layer
gives node i a weighted average of its neighbours' projected vectors, the weights computed from
each pair (i, j): attention whose query is node i and whose keys and values are its neighbours.
For one head with projection W (F_in -> F') and attention vector a = [u || v] (2F'):

    g_i      = W h_i                                                  (N, F')
    e_ij     = LeakyReLU(a^T [g_i || g_j]) = LeakyReLU(u^T g_i + v^T g_j)
    alpha_ij = exp(e_ij) / sum_{k in N(i)} exp(e_ik)                  softmax over the neighbourhood
    h'_i     = sum_{j in N(i)} alpha_ij g_j

Splitting a into u and v makes the N x N score matrix a broadcast sum of two N-vectors. Pairs
that are not edges get e_ij = -inf, so weight exactly 0: a layer looks one hop away, L layers
L hops. With K heads (each its own W^k, u^k, v^k) the K outputs are concatenated (hidden layers,
K F' features) or averaged (the output layer).

Multi-label classification (the lecture's setting): a node may carry several of the |Y| labels,
so the last layer's |Y| outputs c_iy are the logits of independent yes/no questions,
p(y in labels(i)) = sigmoid(c_iy), trained with binary cross-entropy summed over the labels.

`make_sbm_graph` generates such a task: a stochastic block model (an edge within a community
with probability p_in, across communities with p_out << p_in), label sets fixed by community, and
features whose community signal is buried in noise. A features-only MLP sees one noisy node; the
GAT averages over neighbours that mostly share the community, which cancels much of the noise.
"""
from __future__ import annotations

import time
from collections import namedtuple

import numpy as np

import minigrad
import minigrad.optim
from minigrad.autograd import no_grad
from minigrad.nn import Dropout, Linear, Module, Parameter, init
from minigrad.nn import functional as F
from minigrad.tensor import _data


def elu(x):
    """ELU(x) = x for x > 0, exp(x) - 1 otherwise (GAT's activation between layers)."""
    return x.relu() + ((-(-x).relu()).exp() - 1.0)  # min(x, 0) = -relu(-x)


def leaky_relu(x, negative_slope=0.2):
    """x for x > 0, negative_slope * x otherwise, written as relu(x) - slope * relu(-x).

    (Rather than F.leaky_relu's max(x, slope x): the backward of Maximum/Minimum currently
    turns float32 gradients into float64, which the matmul kernels reject.)
    """
    return x.relu() - (-x).relu() * negative_slope


class GATLayer(Module):
    """Multi-head graph attention: x (N, F_in), adj (N, N) -> (N, heads*F_out) or (N, F_out)."""

    def __init__(self, in_features, out_features, heads=1, concat=True, negative_slope=0.2,
                 dropout=0.0, bias=True):
        super().__init__()
        self.in_features, self.out_features, self.heads = in_features, out_features, heads
        self.concat, self.negative_slope, self.dropout = concat, negative_slope, dropout
        self.lin = Linear(in_features, heads * out_features, bias=False)  # all heads' W, stacked
        self.att_dst = Parameter(np.empty((heads, out_features), np.float32))  # u: node i's side
        self.att_src = Parameter(np.empty((heads, out_features), np.float32))  # v: neighbour j's side
        self.bias = Parameter(np.zeros(heads * out_features if concat else out_features,
                                       np.float32)) if bias else None
        init.xavier_uniform_(self.lin.weight)
        init.xavier_uniform_(self.att_dst)
        init.xavier_uniform_(self.att_src)

    def forward(self, x, adj, return_attention=False):
        """x (N, F_in); adj (N, N) bool, True where j is a neighbour of i (self-loops are added).

        Returns (N, heads*F_out) if concat else (N, F_out); with return_attention also the
        weights alpha (heads, N, N), each row summing to 1 over the node's neighbourhood.
        """
        N, H, Fo = x.shape[0], self.heads, self.out_features
        g = self.lin(x).reshape(N, H, Fo).permute(1, 0, 2)                # (H, N, F')
        s_dst = (g * self.att_dst.reshape(H, 1, Fo)).sum(-1)               # u^T g_i (H, N)
        s_src = (g * self.att_src.reshape(H, 1, Fo)).sum(-1)               # v^T g_j (H, N)
        e = leaky_relu(s_dst.unsqueeze(2) + s_src.unsqueeze(1), self.negative_slope)
        allowed = np.asarray(_data(adj)).astype(bool) | np.eye(N, dtype=bool)
        alpha = e.masked_fill(~allowed, float("-inf")).softmax(-1)         # (H, N, N)
        out = F.dropout(alpha, self.dropout, self.training) @ g           # (H, N, F')
        out = out.permute(1, 0, 2).reshape(N, H * Fo) if self.concat else out.mean(0)
        if self.bias is not None:
            out = out + self.bias
        return (out, alpha) if return_attention else out

    def extra_repr(self):
        return (f"{self.in_features}, {self.out_features}, heads={self.heads}, "
                f"concat={self.concat}, negative_slope={self.negative_slope}")


class GAT(Module):
    """Two GAT layers (heads concatenated, ELU, then averaged): x (N, F), adj (N, N) -> logits (N, C)."""

    def __init__(self, in_features, hidden, num_classes, heads=4, out_heads=1, dropout=0.2,
                 negative_slope=0.2):
        super().__init__()
        self.drop = Dropout(dropout)
        self.conv1 = GATLayer(in_features, hidden, heads, True, negative_slope, dropout)
        self.conv2 = GATLayer(hidden * heads, num_classes, out_heads, False, negative_slope, dropout)

    def forward(self, x, adj):
        h = elu(self.conv1(self.drop(x), adj))
        return self.conv2(self.drop(h), adj)


class MLP(Module):
    """The features-only baseline: the GAT's widths and dropout, no graph. x (N, F) -> (N, C)."""

    def __init__(self, in_features, hidden, num_classes, dropout=0.2):
        super().__init__()
        self.drop = Dropout(dropout)
        self.fc1 = Linear(in_features, hidden)
        self.fc2 = Linear(hidden, num_classes)

    def forward(self, x, adj=None):
        return self.fc2(self.drop(elu(self.fc1(self.drop(x)))))


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
    pred, y = np.asarray(_data(logits)) > 0, np.asarray(targets) > 0.5
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
            logits = model(x, adj).data
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
