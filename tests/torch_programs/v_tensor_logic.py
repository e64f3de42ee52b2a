"""Integer and boolean tensor logic on generated data: torch.where, masks, argmax, topk,
gather, scatter_add_, bincount, unique, cumsum, sort, masked_fill, nonzero."""
# same-source tolerance: 1e-5 1e-6
# same-source exact: .
import torch

torch.manual_seed(3)

scores = torch.randn(6, 5)
labels = torch.randint(0, 5, (6,))
print("labels", labels.tolist(), labels.dtype == torch.int64)
pred = scores.argmax(dim=1)
print("argmax", pred.tolist(), "correct", (pred == labels).sum().item(), pred.dtype == torch.long)
vals, idx = scores.topk(3, dim=1)
print("topk idx", idx.tolist())
print("topk vals", [round(v, 6) for v in vals[0].tolist()])
picked = scores.gather(1, labels.unsqueeze(1)).squeeze(1)
print("gathered", [round(v, 6) for v in picked.tolist()])
in_top3 = (idx == labels.unsqueeze(1)).any(dim=1)
print("in top3", in_top3.tolist(), in_top3.dtype == torch.bool,
      in_top3.float().mean().item())

mask = scores > 0
print("positives per row", mask.sum(dim=1).tolist(), mask.sum().dtype == torch.int64)
clipped = torch.where(mask, scores, torch.zeros_like(scores))
print("where", [round(v, 6) for v in clipped[1].tolist()])
print("where scalar", torch.where(scores[0] > 0.5, 1, -1).tolist())
filled = scores.masked_fill(~mask, float("-inf"))
print("masked row max", [round(v, 6) for v in filled.max(dim=1).values.tolist()])
print("nonzero", torch.nonzero(mask[:2]).tolist())

tokens = torch.randint(0, 8, (40,))
counts = torch.bincount(tokens, minlength=10)
print("bincount", counts.tolist(), counts.dtype == torch.int64)
uniq, inverse, ucounts = torch.unique(tokens, return_inverse=True, return_counts=True)
print("unique", uniq.tolist(), ucounts.tolist(), inverse[:10].tolist())
print("unique sorted", torch.unique(tokens[:10], sorted=True).tolist())

totals = torch.zeros(5).scatter_add_(0, labels, picked)
print("scatter_add", [round(v, 6) for v in totals.tolist()])
int_totals = torch.zeros(5, dtype=torch.long).scatter_add_(0, tokens[:12] % 5,
                                                         torch.ones(12, dtype=torch.long))
print("scatter_add int", int_totals.tolist())
print("cumsum", torch.cumsum(tokens[:10], dim=0).tolist(),
      torch.cumsum(tokens, 0).dtype == torch.int64)
print("cumsum float", [round(v, 5) for v in scores[:, 0].cumsum(0).tolist()])
s, order = torch.sort(tokens[:12], stable=True)
print("sort", s.tolist(), order.tolist())
sd, od = torch.sort(scores[2], descending=True)
print("sort desc", od.tolist(), [round(v, 6) for v in sd.tolist()])
print("argsort", torch.argsort(scores[:, 1]).tolist())
bools = torch.tensor([True, False, True, True])
print("logic", (bools & ~bools).tolist(), (bools | bools.roll(1)).tolist(), bools.all().item(),
      bools.any().item(), (bools ^ True).tolist())
print("int math", (tokens[:8] // 3).tolist(), (tokens[:8] % 3).tolist(),
      (tokens[:8] * 2 - 7).abs().tolist())
print("clamp", tokens[:10].clamp(2, 5).tolist(), "max", tokens.max().item(),
      "min", tokens.min().item())
onehot = torch.nn.functional.one_hot(labels, num_classes=5)
print("one_hot", onehot.sum(0).tolist(), onehot.dtype == torch.int64)
print("eq counts", torch.eq(pred, labels).int().tolist(), torch.count_nonzero(mask, dim=0).tolist())
