"""Port test: a graph neural network written in plain PyTorch, as repositories do without a
graph library: an `edge_index` (2, E) of long ids, self-loops added with `torch.cat` and
`torch.arange`, degrees by `scatter_add_` of ones, symmetric normalisation `deg.pow(-0.5)` with
`torch.where(torch.isinf(...), 0, ...)`, messages gathered by `index_select` and summed by
`index_add_` (GCN) and by `scatter_add_` over an `expand`ed index (attention), multi-head edge
attention scored with `torch.einsum` and normalised per target node by a max shift from
`scatter_reduce(reduce="amax")`, `F.one_hot` targets for a soft cross entropy, row pointers by
`torch.cumsum`, and a masked node split (`train_mask`/`val_mask` boolean tensors). Run by
PyTorch and by minigrad (passed in as `torch`) from the same weights: losses, attention weights
and predictions must agree."""
import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def gnn_program(torch, x, edges, labels, train_mask, init=None, steps=30, heads=2, hidden=8):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)

    x = torch.from_numpy(x)
    edge_index = torch.from_numpy(edges)  # (2, E): source row, target row
    y = torch.from_numpy(labels)
    train_mask = torch.from_numpy(train_mask)
    val_mask = ~train_mask
    num_nodes, num_classes = x.size(0), int(y.max()) + 1

    def add_self_loops(edge_index, num_nodes):
        loops = torch.arange(num_nodes, dtype=edge_index.dtype).unsqueeze(0).repeat(2, 1)
        return torch.cat([edge_index, loops], dim=1)

    def degree(index, num_nodes):
        return torch.zeros(num_nodes).scatter_add_(0, index, torch.ones(index.numel()))

    class GCNConv(nn.Module):
        def __init__(self, in_channels, out_channels):
            super().__init__()
            self.lin = nn.Linear(in_channels, out_channels, bias=False)
            self.bias = nn.Parameter(torch.zeros(out_channels))

        def forward(self, x, edge_index):
            edge_index = add_self_loops(edge_index, x.size(0))
            row, col = edge_index
            deg = degree(col, x.size(0))
            deg_inv_sqrt = deg.pow(-0.5)
            deg_inv_sqrt = torch.where(torch.isinf(deg_inv_sqrt),
                                       torch.zeros_like(deg_inv_sqrt), deg_inv_sqrt)
            norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
            h = self.lin(x)
            messages = norm.view(-1, 1) * h.index_select(0, row)
            out = torch.zeros_like(h).index_add_(0, col, messages)
            return out + self.bias

    class GATConv(nn.Module):
        def __init__(self, in_channels, out_channels, heads):
            super().__init__()
            self.heads, self.out_channels = heads, out_channels
            self.lin = nn.Linear(in_channels, heads * out_channels, bias=False)
            self.att_src = nn.Parameter(torch.empty(heads, out_channels))
            self.att_dst = nn.Parameter(torch.empty(heads, out_channels))
            nn.init.xavier_uniform_(self.att_src)
            nn.init.xavier_uniform_(self.att_dst)

        def forward(self, x, edge_index):  # -> (N, heads * out), (E + N, heads)
            src, dst = add_self_loops(edge_index, x.size(0))
            h = self.lin(x).view(-1, self.heads, self.out_channels)
            a_src = torch.einsum("nhd,hd->nh", h, self.att_src)
            a_dst = torch.einsum("nhd,hd->nh", h, self.att_dst)
            score = F.leaky_relu(a_src[src] + a_dst[dst], 0.2)  # (E, heads)
            index = dst.unsqueeze(-1).expand_as(score)
            shift = torch.full((x.size(0), self.heads), float("-inf")).scatter_reduce(
                0, index, score, reduce="amax", include_self=True)
            alpha = (score - shift[dst]).exp()
            denom = torch.zeros(x.size(0), self.heads).scatter_add_(0, index, alpha)
            alpha = alpha / denom[dst]
            messages = alpha.unsqueeze(-1) * h[src]  # (E, heads, out)
            flat = messages.reshape(messages.size(0), -1)
            out = torch.zeros(x.size(0), flat.size(1)).scatter_add_(
                0, dst.unsqueeze(-1).expand_as(flat), flat)
            return out, alpha

    class Net(nn.Module):
        def __init__(self, in_channels, hidden, num_classes, heads):
            super().__init__()
            self.conv1 = GCNConv(in_channels, hidden * heads)
            self.conv2 = GATConv(hidden * heads, num_classes, heads)

        def forward(self, x, edge_index):
            h = F.elu(self.conv1(x, edge_index))
            out, alpha = self.conv2(h, edge_index)
            return out.view(-1, self.conv2.heads, num_classes).mean(dim=1), alpha

    model = Net(x.size(1), hidden, num_classes, heads)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
    targets = F.one_hot(y, num_classes).float()

    losses, val_accs = [], []
    for step in range(steps):
        model.train()
        optimizer.zero_grad()
        logits, _ = model(x, edge_index)
        log_probs = F.log_softmax(logits[train_mask], dim=-1)
        loss = -(targets[train_mask] * log_probs).sum(dim=-1).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            pred = model(x, edge_index)[0].argmax(dim=-1)
            val_accs.append((pred[val_mask] == y[val_mask]).sum().item() / int(val_mask.sum()))

    with torch.no_grad():
        logits, alpha = model(x, edge_index)
    dst = add_self_loops(edge_index, num_nodes)[1]
    counts = degree(dst, num_nodes).long()
    indptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(counts, dim=0)])
    order = torch.argsort(dst, stable=True)
    alpha_sums = [alpha[order[indptr[i]:indptr[i + 1]]].sum(0).tolist() for i in range(3)]
    return {"init": start, "losses": losses, "val_accs": val_accs, "alpha": alpha.numpy(),
            "alpha_sums": alpha_sums, "logits": logits.numpy(), "indptr": indptr.tolist(),
            "final": state_numpy(model)}


def graph(n=60, d=5, classes=3, seed=0):
    """A graph of `classes` communities: dense inside, sparse across; features are noisy
    community means; a third of the nodes are held out."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(classes, size=n)
    same = labels[:, None] == labels[None, :]
    link = rng.random((n, n)) < np.where(same, 0.15, 0.02)
    link = np.triu(link, 1)
    src, dst = np.nonzero(link | link.T)
    x = rng.normal(size=(classes, d))[labels] * 0.7 + rng.normal(size=(n, d))
    return (x.astype(np.float32), np.stack([src, dst]).astype(np.int64), labels.astype(np.int64),
            rng.random(n) < 0.66)


def test_gnn_trains_the_same_in_both(torch):
    x, edges, labels, train_mask = graph()
    expected, got = run_both(gnn_program, torch, x, edges, labels, train_mask)
    assert_curves_match("gnn", expected["losses"], got["losses"], rtol=1e-4, every=5)
    assert got["val_accs"] == expected["val_accs"]
    assert expected["val_accs"][-1] > 0.6  # it learns (chance is 1/3)
    assert got["indptr"] == expected["indptr"]
    np.testing.assert_allclose(got["alpha"], expected["alpha"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["alpha_sums"], 1.0, rtol=1e-5)  # softmax per target node
    np.testing.assert_allclose(got["logits"], expected["logits"], rtol=1e-4, atol=1e-5)
    assert_states_match(expected["final"], got["final"], rtol=1e-3, atol=1e-5)
