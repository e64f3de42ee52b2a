"""Detection box utilities in plain torch, as users write them without torchvision: anchors
from meshgrid, boxes converted between (cx, cy, w, h) and corners, the IoU matrix by
broadcasting with clamp, a hand-written non-maximum suppression with sort, where and nonzero,
per-class batched NMS by offsetting boxes, anchor matching with max/argmax, box regression
targets with log and their decoding, and a tiny box head trained with smooth L1."""
# same-source tolerance: 2e-4 1e-5
# same-source exact: ^(data|anchors)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(31)


def make_anchors(size=8, stride=4, scales=(6.0, 12.0)):
    ys, xs = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    centres = torch.stack([xs, ys], -1).reshape(-1, 2).float() * stride + stride / 2
    boxes = [torch.cat([centres, torch.full_like(centres, s)], 1) for s in scales]
    return torch.cat(boxes)  # (A, 4) as cx, cy, w, h


def to_corners(b):
    return torch.cat([b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2], 1)


def area(b):
    return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)


def iou(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


def nms(boxes, scores, threshold):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(int(i))
        if order.numel() == 1:
            break
        overlaps = iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
        order = order[1:][torch.where(overlaps <= threshold)[0]]
    return torch.tensor(keep, dtype=torch.long)


def batched_nms(boxes, scores, classes, threshold):
    offsets = classes.float().unsqueeze(1) * (boxes.max() + 1)
    return nms(boxes + offsets, scores, threshold)


anchors = make_anchors()
print("anchors", anchors.shape[0], anchors[:3].tolist(), anchors[-1].tolist())
gt = torch.tensor([[6.0, 5.0, 18.0, 15.0], [20.0, 18.0, 31.0, 30.0], [2.0, 22.0, 9.0, 29.0]])
gt_class = torch.tensor([1, 2, 1])
print("data", gt.tolist(), gt_class.tolist())

ious = iou(to_corners(anchors), gt)
best_iou, best_gt = ious.max(1)
positive = best_iou >= 0.3
positive[ious.argmax(0)] = True  # every box gets its best anchor
print("matched", positive.sum().item(), torch.nonzero(positive).flatten()[:8].tolist())
print("best iou", [round(v, 5) for v in best_iou.topk(4).values.tolist()])

# regression targets (dx, dy, log dw, log dh) and their decoding
gt_c = torch.cat([(gt[:, :2] + gt[:, 2:]) / 2, gt[:, 2:] - gt[:, :2]], 1)[best_gt]
targets = torch.cat([(gt_c[:, :2] - anchors[:, :2]) / anchors[:, 2:],
                     torch.log(gt_c[:, 2:] / anchors[:, 2:])], 1)


def decode(deltas):
    centre = anchors[:, :2] + deltas[:, :2] * anchors[:, 2:]
    size = anchors[:, 2:] * deltas[:, 2:].exp()
    return to_corners(torch.cat([centre, size], 1))


print("round trip", torch.allclose(decode(targets)[positive], gt[best_gt][positive], atol=1e-4))

features = torch.randn(anchors.shape[0], 16) + positive.float().unsqueeze(1)
head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4 + 3))
opt = torch.optim.SGD(head.parameters(), lr=0.05, momentum=0.9)
cls_target = torch.where(positive, gt_class[best_gt], torch.zeros_like(best_gt))
for step in range(40):
    out = head(features)
    reg_loss = F.smooth_l1_loss(out[positive, :4], targets[positive], beta=1 / 9)
    cls_loss = F.cross_entropy(out[:, 4:], cls_target)
    loss = reg_loss + cls_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print("step", step, f"{reg_loss.item():.6f}", f"{cls_loss.item():.6f}")

with torch.no_grad():
    out = head(features)
    probs = out[:, 4:].softmax(-1)
    scores, classes = probs[:, 1:].max(1)
    boxes = decode(out[:, :4])
    candidates = torch.nonzero(scores > 0.5).squeeze(1)
    kept = candidates[batched_nms(boxes[candidates], scores[candidates],
                                  classes[candidates], 0.4)]
    print("candidates", candidates.numel(), "kept", kept.tolist()[:6])
    final = boxes[kept].clamp(0, 32)
    print("final iou", [round(v, 4) for v in iou(final, gt).max(1).values[:6].tolist()])
    print("sorted", torch.sort(scores[kept], descending=True).values[:4].tolist())
