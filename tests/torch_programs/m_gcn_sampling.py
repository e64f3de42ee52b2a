"""Message passing on a generated graph in plain torch: edges made symmetric with self loops,
degrees from scatter_add_, symmetric normalisation, a two-layer GCN that aggregates with
index_select and index_add_, trained for node classification on a train mask. Then text
generation utilities on its logits: temperature softmax, top-k and nucleus (top-p) filtering
written with topk, sort, cumsum and scatter, and torch.multinomial with a torch.Generator."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(data|edges)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(29)
n, C = 60, 3
community = torch.randint(0, C, (n,))
src = torch.randint(0, n, (300,))
dst = torch.randint(0, n, (300,))
keep = (community[src] == community[dst]) | (torch.rand(300) < 0.15)
src, dst = src[keep], dst[keep]
features = F.one_hot(community, C).float() * 0.5 + torch.randn(n, 8 - C).abs().sum(1, keepdim=True) * 0.1
features = torch.cat([features, torch.randn(n, 5)], dim=1)
print("data", community[:10].tolist(), keep.sum().item())
loops = torch.arange(n)
edge_src = torch.cat([src, dst, loops])
edge_dst = torch.cat([dst, src, loops])
print("edges", edge_src.numel(), edge_src[:5].tolist(), edge_dst[:5].tolist())
deg = torch.zeros(n).scatter_add_(0, edge_dst, torch.ones(edge_dst.numel()))
norm = deg[edge_src].rsqrt() * deg[edge_dst].rsqrt()
print("degree", deg[:8].tolist(), deg.max().item())


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, h):
        h = self.lin(h)
        messages = h.index_select(0, edge_src) * norm.unsqueeze(1)
        return torch.zeros_like(h).index_add_(0, edge_dst, messages)


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = GCNLayer(features.size(1), 16)
        self.l2 = GCNLayer(16, C)

    def forward(self, x):
        return self.l2(F.dropout(F.relu(self.l1(x)), 0.2, self.training))


train_mask = torch.zeros(n, dtype=torch.bool)
train_mask[torch.randperm(n)[:20]] = True
model = GCN()
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
for epoch in range(40):
    model.train()
    out = model(features)
    loss = F.cross_entropy(out[train_mask], community[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        model.eval()
        with torch.no_grad():
            pred = model(features).argmax(1)
        print("epoch", epoch, f"{loss.item():.6f}", (pred[~train_mask] == community[~train_mask]).sum().item())

# a graph-level readout: the nodes split into three graphs, the segment ids from their sizes
sizes = torch.tensor([25, 20, 15])
batch = torch.repeat_interleave(sizes)
with torch.no_grad():
    h = F.relu(model.l1(features))
mean_pool = torch.zeros(3, h.size(1)).index_add_(0, batch, h) / sizes.unsqueeze(1)
max_pool = torch.zeros(3, h.size(1)).scatter_reduce(0, batch.unsqueeze(1).expand_as(h), h, "amax", include_self=False)
signs = torch.ones(3).scatter_(0, batch[::7], torch.sign(h[::7, 0]) + 2, reduce="multiply")
print("readout", batch[20:30].tolist(), mean_pool[:, :3].tolist(), max_pool[:, 0].tolist(), signs.tolist())

# sampling utilities on the node logits
model.eval()
with torch.no_grad():
    logits = model(features)[:4] * 3


def top_k_filter(logits, k):
    values, _ = torch.topk(logits, k, dim=-1)
    return logits.masked_fill(logits < values[..., -1:], float("-inf"))


def top_p_filter(logits, p):
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    cum = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    mask = remove.scatter(-1, order, remove)
    return logits.masked_fill(mask, float("-inf"))


vocab = torch.randn(3, 10)
print("top-k", top_k_filter(vocab, 3)[0].tolist())
print("top-p", top_p_filter(vocab, 0.8).isinf().sum(1).tolist(), top_p_filter(logits, 0.9).isinf().sum().item())
g = torch.Generator().manual_seed(1234)
for temperature in (0.7, 1.0, 1.5):
    probs = F.softmax(top_p_filter(top_k_filter(vocab / temperature, 5), 0.9), dim=-1)
    draws = torch.multinomial(probs, 4, replacement=True, generator=g)
    print("temp", temperature, draws.tolist(), f"{probs.max().item():.6f}")
print("greedy", vocab.argmax(-1).tolist(), torch.multinomial(F.softmax(vocab, -1), 2, generator=g).tolist())
