"""The tensor utilities data-preparation and evaluation code leans on: where, bucketize and
searchsorted, unique with counts and inverse, scatter_add_ and index_add_ (per-class sums),
gather, topk, stable sorts, einsum, cdist for nearest neighbours, one_hot, masked_select,
nonzero(as_tuple=True), repeat_interleave, histc, bincount with weights, kthvalue, cumsum,
tril_indices and a confusion matrix, on generated data."""
# same-source tolerance: 1e-5 1e-6
# same-source exact: ^(ages|buckets|search|unique|onehot|masked|nonzero|sort|topk idx|repeat|tril|confusion|counts|kth idx|where)
import torch
import torch.nn.functional as F

torch.manual_seed(77)
ages = torch.randint(0, 90, (20,))
print("ages", ages.tolist())
bounds = torch.tensor([18, 30, 45, 65])
buckets = torch.bucketize(ages, bounds)
print("buckets", buckets.tolist(), torch.bucketize(ages, bounds, right=True).tolist()[:8])
print("search", torch.searchsorted(bounds, torch.tensor([17, 18, 64, 99])).tolist(),
      torch.searchsorted(bounds, torch.tensor([17, 18, 64, 99]), side="right").tolist())
values, inverse, counts = torch.unique(buckets, return_inverse=True, return_counts=True)
print("unique", values.tolist(), inverse[:8].tolist(), counts.tolist(), counts.dtype == torch.int64)
print("unique", torch.unique(torch.tensor([[1, 2], [1, 2], [0, 5]]), dim=0).tolist())
print("where", torch.where(ages >= 65, ages, torch.zeros_like(ages)).tolist()[:10], torch.where(ages > 80)[0].tolist())

# per-bucket sums and means of a score
score = torch.randn(20)
sums = torch.zeros(5).scatter_add_(0, buckets, score)
totals = torch.zeros(5).index_add_(0, buckets, torch.ones(20))
print("per bucket", [round(v, 5) for v in sums.tolist()], totals.tolist(),
      [round(v, 5) for v in (sums / totals.clamp(min=1)).tolist()])
print("counts", torch.bincount(buckets, minlength=5).tolist(),
      [round(v, 5) for v in torch.bincount(buckets, weights=score, minlength=5).tolist()])

# classification outputs: gather, topk, one_hot, a confusion matrix
logits = torch.randn(12, 4)
target = torch.randint(0, 4, (12,))
picked = logits.log_softmax(-1).gather(1, target[:, None]).squeeze(1)
print("gather", [round(v, 5) for v in picked.tolist()[:6]], round(-picked.mean().item(), 6))
top_v, top_i = logits.topk(2, dim=1)
print("topk idx", top_i.tolist()[:5], (top_i == target[:, None]).any(1).float().mean().item())
print("topk vals", [round(v, 5) for v in top_v[0].tolist()], logits.topk(3, dim=0, largest=False).indices.tolist())
onehot = F.one_hot(target, num_classes=4)
print("onehot", onehot[:3].tolist(), onehot.dtype == torch.int64, F.one_hot(torch.tensor([2, 0])).tolist())
confusion = torch.zeros(4, 4, dtype=torch.long)
confusion.index_put_((target, logits.argmax(1)), torch.ones(12, dtype=torch.long), accumulate=True)
print("confusion", confusion.tolist(), confusion.trace().item())
print("masked", logits.masked_select(logits > 1.0).shape, [round(v, 5) for v in logits.masked_select(logits > 1.5).tolist()])
rows, cols = torch.nonzero(logits > 1.0, as_tuple=True)
print("nonzero", rows.tolist(), cols.tolist(), torch.nonzero(target == 0).flatten().tolist())

# stable sorts keep the order of ties
keys = torch.tensor([3, 1, 2, 1, 3, 2, 1, 0])
print("sort", keys.sort(stable=True).indices.tolist(), keys.sort(descending=True, stable=True).indices.tolist(),
      torch.argsort(keys, stable=True).tolist())
vals, order = torch.sort(score, descending=True)
print("sorted", [round(v, 5) for v in vals[:4].tolist()], order[:4].tolist())
kv, ki = torch.kthvalue(score, 3)
print("kth", round(kv.item(), 6))
print("kth idx", ki.item(), torch.median(score).item() == score.sort().values[9].item())

# distances and contractions
pts = torch.randn(6, 3)
centers = torch.randn(2, 3)
d = torch.cdist(pts, centers)
print("cdist", [round(v, 5) for v in d[0].tolist()], d.argmin(1).tolist(), d.shape)
print("cdist p1", [round(v, 5) for v in torch.cdist(pts, centers, p=1)[1].tolist()])
gram = torch.einsum("id,jd->ij", pts, pts)
print("einsum", [round(v, 5) for v in gram.diagonal().tolist()[:3]],
      round(torch.einsum("ii->", gram).item(), 5), torch.einsum("bi,bj->bij", pts, pts).shape)
batch = torch.randn(2, 3, 4)
print("einsum", [round(v, 5) for v in torch.einsum("bij,bjk->bik", batch, batch.transpose(1, 2))[1, 0].tolist()])

print("repeat", torch.repeat_interleave(torch.tensor([1, 2, 3]), torch.tensor([2, 0, 3])).tolist(),
      torch.tensor([[1, 2], [3, 4]]).repeat_interleave(2, dim=0).tolist())
print("hist", torch.histc(score, bins=5, min=-2, max=2).tolist(), [round(v, 5) for v in score.cumsum(0)[-3:].tolist()])
print("tril", torch.tril_indices(3, 3).tolist(), torch.triu_indices(3, 3, offset=1).tolist())
