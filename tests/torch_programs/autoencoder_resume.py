"""An MLP autoencoder on generated low-rank data: Adam with weight decay, the model and
optimizer saved with torch.save to a temporary path mid-training, a fresh model and optimizer
loaded from it, training resumed, and the resumed losses printed beside the uninterrupted."""
# same-source tolerance: 2e-4 1e-6
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(7)
basis = torch.randn(3, 20)
codes = torch.rand(256, 3) * 2 - 1
data = torch.sigmoid(codes @ basis)
loader = DataLoader(TensorDataset(data), batch_size=64, shuffle=True)


def make_model():
    return nn.Sequential(nn.Linear(20, 8), nn.Tanh(), nn.Linear(8, 3),
                         nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 20), nn.Sigmoid())


def train_epoch(model, optimizer):
    losses = []
    for (batch,) in loader:
        loss = nn.functional.mse_loss(model(batch), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-5)
for epoch in range(3):
    print("epoch", epoch, ["%.6f" % l for l in train_epoch(model, optimizer)])

path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
torch.save({"epoch": 3, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)

# Resume in a fresh model from the checkpoint; the generator's state is kept so that the
# uninterrupted run below shuffles its batches as the resumed one does.
resumed = make_model()
rng_state = torch.get_rng_state()
checkpoint = torch.load(path)
resumed.load_state_dict(checkpoint["model"])
resumed_opt = torch.optim.Adam(resumed.parameters(), lr=1e-2, weight_decay=1e-5)
resumed_opt.load_state_dict(checkpoint["optimizer"])
print("checkpoint epoch", checkpoint["epoch"], "steps",
      int(resumed_opt.state_dict()["state"][0]["step"]))
for epoch in range(3, 5):
    print("resumed", epoch, ["%.6f" % l for l in train_epoch(resumed, resumed_opt)])

torch.set_rng_state(rng_state)
for epoch in range(3, 5):
    print("straight", epoch, ["%.6f" % l for l in train_epoch(model, optimizer)])
same = all(torch.equal(a, b) for a, b in zip(model.parameters(), resumed.parameters()))
print("resumed equals uninterrupted", same)
with torch.no_grad():
    print("reconstruction error", f"{nn.functional.mse_loss(resumed(data), data).item():.7f}")
    print("codes of first", [round(v, 4) for v in resumed[:3](data[:1]).flatten().tolist()])
