"""`minigrad.amp`: mixed precision's loss scaler, as far as a float32 CPU library needs it.

GPT training scripts build `GradScaler(enabled=(dtype == "float16"))` whatever the device and
call it every step: `scaler.scale(loss).backward()`, `scaler.unscale_(opt)`, `scaler.step(opt)`,
`scaler.update()`. Loss scaling keeps float16 gradients from underflowing on a GPU; minigrad
trains in float32 on the CPU, so its scaler is always the disabled one: `scale` returns the
loss unchanged and `step` is `optimizer.step()`. Asking for an enabled one warns and disables
it, as PyTorch does when CUDA is missing.
"""
from __future__ import annotations

import warnings


class GradScaler:
    """A disabled loss scaler (PyTorch's `torch.amp.GradScaler`): every method passes through."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        if enabled:
            warnings.warn("GradScaler: loss scaling is for float16 training on a GPU and "
                          "minigrad trains in float32 on the CPU; disabling it", stacklevel=2)

    def is_enabled(self):
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        """Gradients were never scaled, so there is nothing to undo."""

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """The scale stays 1: there is no overflow to react to."""

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        if state_dict:
            raise ValueError("GradScaler.load_state_dict: this scaler is disabled and keeps no "
                             "state, but the given state is not empty")
