"""Port test: activation checkpointing as memory-saving training scripts use it: a stack of
residual blocks each run through `torch.utils.checkpoint.checkpoint(block, x, 0.5,
use_reentrant=...)`, trained with AdamW. Run by PyTorch and by minigrad (passed in as `torch`)
from the same weights: losses, input gradients and parameter gradients must agree, for both
variants and for an input that does not require grad (PyTorch's reentrant variant then gives
the blocks no gradients). Dropout inside a checkpoint draws the same masks in the second
run, so checkpointing does not change a run."""
import importlib
import warnings

import numpy as np
import pytest

import minigrad
from port_runner import assert_curves_match, run_both, state_numpy


def checkpointed_program(torch, X, init=None, reentrant=False, x_grad=True, dropout=0.0,
                         use_checkpoint=True, steps=6):
    nn = torch.nn
    ck = importlib.import_module(f"{torch.__name__}.utils.checkpoint")
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 8)
            self.drop, self.norm = nn.Dropout(dropout), nn.LayerNorm(8)

        def forward(self, x, scale=1.0):
            return self.norm(x + self.drop(self.fc2(torch.relu(self.fc1(x)))) * scale)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(3)])
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            for block in self.blocks:
                if use_checkpoint and self.training:
                    x = ck.checkpoint(block, x, 0.5, use_reentrant=reentrant)
                else:
                    x = block(x, 0.5)
            return self.head(x)

    model = Net()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses, x_grads = [], []
    for step in range(steps):
        x = torch.tensor(X[step], requires_grad=x_grad)
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        if step == 0:
            first_grads = {n: None if p.grad is None else p.grad.numpy().copy()
                           for n, p in model.named_parameters()}
        optimizer.step()
        losses.append(loss.item())
        x_grads.append(None if x.grad is None else x.grad.numpy())
    return {"init": start, "losses": losses, "x_grads": x_grads, "first_grads": first_grads}


def batches(seed=0):
    return np.random.default_rng(seed).normal(size=(6, 4, 8)).astype(np.float32)


@pytest.mark.parametrize("reentrant, x_grad", [(False, True), (False, False), (True, True),
                                               (True, False)])
def test_checkpointed_training_is_the_same_in_both(torch, reentrant, x_grad):
    expected, got = run_both(checkpointed_program, torch, batches(), reentrant=reentrant,
                             x_grad=x_grad)
    assert_curves_match(f"checkpoint_{reentrant}_{x_grad}", expected["losses"], got["losses"],
                        rtol=1e-5)
    for want, have in zip(expected["x_grads"], got["x_grads"]):
        assert (want is None) == (have is None)
        if want is not None:
            np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-6)
    for name, want in expected["first_grads"].items():
        have = got["first_grads"][name]
        assert (want is None) == (have is None), name
        if want is not None:
            np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-6, err_msg=name)
    # the reentrant variant with no input that requires grad: no block's output does either,
    # so only the head learns
    frozen = [n for n, g in got["first_grads"].items() if g is None]
    assert frozen == ([n for n in got["first_grads"] if n.startswith("blocks.")]
                      if reentrant and not x_grad else [])


def test_dropout_inside_a_checkpoint_draws_the_same_masks():
    X = batches(1)
    plain = checkpointed_program(minigrad, X, dropout=0.3, use_checkpoint=False)
    kept = checkpointed_program(minigrad, X, init=plain["init"], dropout=0.3)
    assert kept["losses"] == plain["losses"]
    for name, want in plain["first_grads"].items():
        np.testing.assert_allclose(kept["first_grads"][name], want, rtol=1e-6, atol=1e-7)


def test_warnings_and_errors():
    ck = minigrad.utils.checkpoint.checkpoint
    lin = minigrad.nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        out = ck(lin, minigrad.ones(1, 2, requires_grad=True))
    assert out.requires_grad
    with pytest.warns(UserWarning, match="none of the inputs have requires_grad=True"):
        assert not ck(lin, minigrad.ones(1, 2), use_reentrant=True).requires_grad
    with pytest.raises(TypeError, match="checkpoint: the function must return one tensor, got "
                                        "tuple"):
        ck(lambda x: (lin(x), x), minigrad.ones(1, 2), use_reentrant=False)
    with minigrad.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not ck(lin, minigrad.ones(1, 2), use_reentrant=True).requires_grad
