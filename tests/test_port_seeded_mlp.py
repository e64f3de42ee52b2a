"""A PyTorch script ported by changing its imports: it seeds, builds an MLP and trains it on
torch.randn data with SGD, copying no weights between the libraries (the seed alone makes the
same weights and data), and the losses are PyTorch's."""
import numpy as np
import torch

import minigrad

from port_runner import assert_curves_match


def program(torch):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                          nn.Linear(32, 3))
    x = torch.randn(64, 8)
    y = torch.randint(0, 3, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for step in range(12):
        idx = torch.randperm(64)[:16]
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses


def test_seeded_mlp_trains_the_same_without_copying_weights():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        expected = program(torch)
    finally:
        torch.set_num_threads(threads)
    got = program(minigrad)
    assert expected[0] != expected[-1]
    assert_curves_match("seeded_mlp", np.array(expected), np.array(got), rtol=1e-4)
