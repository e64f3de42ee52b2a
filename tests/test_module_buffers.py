"""Buffers as PyTorch keeps them: a tensor assigned to a buffer's name stays a buffer (EMA and
running statistics are written that way), persistent=False buffers stay out of state_dict, and
anything but a tensor or None is refused."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def _ema_modules(lib, nn_lib):
    class Ema(nn_lib.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn_lib.Linear(2, 2)
            self.register_buffer("ema", lib.zeros(2))
            self.register_buffer("scratch", lib.ones(2), persistent=False)

        def forward(self, x):
            self.ema = self.ema * 0.9 + x.detach().mean(0) * 0.1
            self.scratch = self.scratch + 1
            return self.lin(x)
    return Ema()


def test_reassigned_buffers_stay_registered_as_in_pytorch(torch):
    ours, theirs = _ema_modules(mg, nn), _ema_modules(torch, torch.nn)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    for _ in range(3):
        ours(mg.tensor(x))
        theirs(torch.tensor(x))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [k for k, _ in ours.named_buffers()] == [k for k, _ in theirs.named_buffers()]
    np.testing.assert_allclose(ours.state_dict()["ema"].numpy(),
                               theirs.state_dict()["ema"].numpy(), rtol=1e-6)
    assert ours.ema is dict(ours.named_buffers())["ema"]
    ours.double()  # to() reaches the reassigned buffers, persistent or not
    assert ours.ema.dtype == mg.float64 and ours.scratch.dtype == mg.float64
    fresh = _ema_modules(mg, nn)
    fresh.load_state_dict(ours.state_dict())  # the EMA travels with the checkpoint
    np.testing.assert_array_equal(fresh.ema.numpy(), ours.ema.numpy().astype(np.float32))


def test_a_buffer_holds_a_tensor_or_none(torch):
    ours, theirs = _ema_modules(mg, nn), _ema_modules(torch, torch.nn)
    for m in (ours, theirs):
        m.ema = None
        assert "ema" not in m.state_dict() and "ema" not in dict(m.named_buffers())
        m.ema = m.scratch * 2  # None, then a tensor again: still the buffer
        assert "ema" in m.state_dict()
        with pytest.raises(TypeError, match="cannot assign 'float' as buffer 'ema'"):
            m.ema = 0.5
        with pytest.raises(KeyError, match="already exists"):
            m.register_buffer("lin", m.scratch)
    for m, lib in ((ours, mg), (theirs, torch)):  # a Parameter or Module takes the name over
        m.ema = (nn if lib is mg else torch.nn).Parameter(lib.zeros(2))
        assert "ema" in dict(m.named_parameters()) and "ema" not in dict(m.named_buffers())
        del m.scratch
        assert "scratch" not in dict(m.named_buffers())
