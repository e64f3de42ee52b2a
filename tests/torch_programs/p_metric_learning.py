"""Metric learning on generated clusters: an embedding net trained with TripletMarginLoss
(semi-hard negatives mined with cdist), then the same net fine-tuned with
CosineEmbeddingLoss on pairs and MarginRankingLoss on scores, F.normalize'd embeddings,
TripletMarginWithDistanceLoss with a cosine distance, and retrieval: recall@k by topk over a
cdist matrix and the functional forms compared with their modules."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(17)
classes, per_class, dim = 6, 12, 10
centres = torch.randn(classes, dim) * 2
labels = torch.arange(classes).repeat_interleave(per_class)
points = centres[labels] + torch.randn(len(labels), dim)
print("data", labels[:14].tolist(), [round(v, 6) for v in points[0, :3].tolist()])

net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 8))
opt = torch.optim.Adam(net.parameters(), lr=5e-3)
triplet = nn.TripletMarginLoss(margin=0.5, p=2)


def embed(x):  # on the unit sphere: distances and cosines agree
    return F.normalize(net(x), dim=1)


def mine(emb, labels):
    d = torch.cdist(emb, emb)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    pos_d = d.masked_fill(~same | torch.eye(len(labels), dtype=torch.bool), -1.0)
    positive = pos_d.argmax(1)  # the hardest positive
    anchor_pos = d.gather(1, positive.unsqueeze(1))
    semi = d.masked_fill(same, float("inf"))
    semi = torch.where(semi > anchor_pos, semi, torch.full_like(semi, float("inf")))
    negative = semi.argmin(1)  # the nearest negative beyond the positive
    return positive, negative


for epoch in range(8):
    emb = embed(points)
    with torch.no_grad():
        positive, negative = mine(emb, labels)
    loss = triplet(emb, emb[positive], emb[negative])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 2 == 0:
        print("triplet", epoch, f"{loss.item():.6f}", negative[:6].tolist())

# pairs: cosine embedding; scores: margin ranking
cosine = nn.CosineEmbeddingLoss(margin=0.2)
ranking = nn.MarginRankingLoss(margin=0.1)
idx_a = torch.randint(0, len(labels), (64,))
idx_b = torch.randint(0, len(labels), (64,))
target = torch.where(labels[idx_a] == labels[idx_b], 1.0, -1.0)
for epoch in range(6):
    ea, eb = embed(points[idx_a]), embed(points[idx_b])
    l_cos = cosine(ea, eb, target)
    s_pos = F.cosine_similarity(ea, embed(points[idx_a] + 0.1), dim=1)
    s_neg = F.cosine_similarity(ea, eb, dim=1)
    l_rank = ranking(s_pos, s_neg, torch.ones(64))
    loss = l_cos + 0.5 * l_rank
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 2 == 1:
        print("pairs", epoch, f"{l_cos.item():.6f}", f"{l_rank.item():.6f}")

with torch.no_grad():
    emb = embed(points)
    print("functional", torch.allclose(F.triplet_margin_loss(emb[:5], emb[5:10], emb[-5:]),
                                       nn.TripletMarginLoss()(emb[:5], emb[5:10], emb[-5:])),
          f"{F.cosine_embedding_loss(emb[:8], emb[8:16], target[:8]).item():.6f}",
          f"{F.margin_ranking_loss(emb[:8, 0], emb[8:16, 0], target[:8], margin=0.05).item():.6f}")
    cos_triplet = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=0.3, swap=True)
    print("cosine triplet", f"{cos_triplet(emb[:12], emb[12:24], emb[-12:]).item():.6f}")
    d = torch.cdist(emb, emb)
    d.fill_diagonal_(float("inf"))
    nearest = d.topk(5, dim=1, largest=False).indices
    hits = (labels[nearest] == labels.unsqueeze(1))
    print("recall@1", f"{hits[:, 0].float().mean().item():.4f}",
          "recall@5", f"{hits.any(1).float().mean().item():.4f}")
    print("nearest", nearest[:3].tolist())
    print("pdist", [round(v, 5) for v in F.pdist(emb[:4]).tolist()])
