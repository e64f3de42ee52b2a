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

The demo (`minigrad.demos.gat`) generates such a task: a stochastic block model (an edge
within a community with probability p_in, across communities with p_out << p_in), label sets
fixed by community, and features whose community signal is buried in noise. A features-only MLP sees one noisy node; the
GAT averages over neighbours that mostly share the community, which cancels much of the noise.
"""
from __future__ import annotations

import numpy as np

from minigrad.nn import Dropout, Linear, Module, Parameter, init
from minigrad.nn import functional as F
from minigrad.tensor import array_of


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
        e = F.leaky_relu(s_dst.unsqueeze(2) + s_src.unsqueeze(1), self.negative_slope)
        allowed = np.asarray(array_of(adj)).astype(bool) | np.eye(N, dtype=bool)
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
        h = F.elu(self.conv1(self.drop(x), adj))
        return self.conv2(self.drop(h), adj)


class MLP(Module):
    """The features-only baseline: the GAT's widths and dropout, no graph. x (N, F) -> (N, C)."""

    def __init__(self, in_features, hidden, num_classes, dropout=0.2):
        super().__init__()
        self.drop = Dropout(dropout)
        self.fc1 = Linear(in_features, hidden)
        self.fc2 = Linear(hidden, num_classes)

    def forward(self, x, adj=None):
        return self.fc2(self.drop(F.elu(self.fc1(self.drop(x)))))
