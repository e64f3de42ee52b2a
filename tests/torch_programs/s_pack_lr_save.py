"""Utilities a training script leans on: torch.nn.utils.rnn pack/pad round trips with
enforce_sorted=False (through an LSTM, whose final states follow the original order), a
learning-rate range test that edits optimizer.param_groups[0]["lr"] each step, and a
checkpoint (a dict of tensors and a Python list) saved with torch.save and read back with
torch.load(weights_only=True)."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(data|lr |padded|packed|lengths|unpacked)
import math

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(4)
seqs = [torch.randn(n, 3) for n in [2, 5, 3, 4]]
print("data", [s.shape[0] for s in seqs], seqs[0][0].tolist())
padded = pad_sequence(seqs, batch_first=True)
print("padded", padded.shape, padded[0, 2].tolist(), pad_sequence(seqs, padding_value=-1.0).shape)
lengths = torch.tensor([len(s) for s in seqs])
packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
print("packed", packed.batch_sizes.tolist(), packed.sorted_indices.tolist(), packed.unsorted_indices.tolist(), packed.data.shape)
unpacked, out_lengths = pad_packed_sequence(packed, batch_first=True)
print("unpacked", torch.equal(unpacked, padded), out_lengths.tolist())
print("lengths", pad_packed_sequence(packed, batch_first=True, total_length=7)[0].shape)
p2 = pack_sequence(seqs, enforce_sorted=False)
print("packed", torch.equal(p2.data, packed.data), p2.batch_sizes.tolist())

lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True)
out, (h, c) = lstm(packed)
out, _ = pad_packed_sequence(out, batch_first=True)
print("lstm out", out.shape, out[0, 1].tolist())
print("pads are zero", bool((out[0, 2:] == 0).all()), out[2, 2, :4].tolist())
print("h", h.shape, h[0].tolist())
for i, s in enumerate(seqs):
    alone, (hi, _) = lstm(s.unsqueeze(0))
    print("alone", i, torch.allclose(hi[:, 0], h[:, i], atol=1e-6), torch.allclose(alone[0], out[i, :len(s)], atol=1e-6))

# a learning-rate range test: the rate grows geometrically, the loss is smoothed
X = torch.randn(128, 6)
y = X @ torch.randn(6, 1) + 0.1 * torch.randn(128, 1)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
lr, factor, smooth, best = 1e-4, (1.0 / 1e-4) ** (1 / 40), 0.0, math.inf
history = []
for step in range(40):
    opt.param_groups[0]["lr"] = lr
    idx = torch.randint(0, 128, (32,))
    loss = nn.functional.mse_loss(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    smooth = 0.8 * smooth + 0.2 * loss.item()
    debiased = smooth / (1 - 0.8 ** (step + 1))
    history.append((lr, debiased))
    best = min(best, debiased)
    if step % 8 == 0:
        print(f"lr {lr:.6g}", opt.param_groups[0]["lr"] == lr)
        print(f"loss {debiased:.6f}")
    if debiased > 4 * best:
        break
    lr *= factor
print("stopped", step, f"{min(history, key=lambda h: h[1])[1]:.6f}")

state = {"model": model.state_dict(), "history": [round(l, 6) for l, _ in history[:5]],
         "tensors": {"X": X[:2], "steps": torch.arange(3)}, "epoch": 3, "name": "range-test"}
torch.save(state, "ckpt.pt")
back = torch.load("ckpt.pt", weights_only=True)
print("loaded", sorted(back), back["history"], back["epoch"], back["name"])
print("tensors", torch.equal(back["tensors"]["X"], X[:2]), back["tensors"]["steps"].tolist(), back["tensors"]["steps"].dtype == torch.long)
fresh = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
print(fresh.load_state_dict(back["model"]))
print("same", torch.equal(fresh(X[:4]), model(X[:4])), list(back["model"].keys()))
torch.save([torch.ones(2), 5, "text"], "list.pt")
print("list", torch.load("list.pt", weights_only=True))
