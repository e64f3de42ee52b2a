"""`GradScaler`, PyTorch's dynamic loss scaler (`torch.amp.GradScaler`), working on the CPU.

    scaler = GradScaler("cpu", enabled=use_amp)
    scaler.scale(loss).backward()      # the loss times the scale S
    scaler.unscale_(optimizer)         # optional: the gradients divided by S, checked for inf/nan
    scaler.step(optimizer)             # optimizer.step(), skipped if a gradient was not finite
    scaler.update()                    # S halved after a skipped step, doubled after
                                       # `growth_interval` good ones in a row

Loss scaling keeps float16 gradients from underflowing. minigrad's CPU scaler does PyTorch's
arithmetic: S is a float32 number (2**16 at first), the gradients are multiplied by
float32(1 / float64(S)), so a power-of-two scale changes no finite float32 gradient and a
scaled run computes the numbers of an unscaled one, steps skipped and scales as PyTorch's.
`GradScaler("cuda")` (the default device, and `cuda.amp.GradScaler`; the older
`cpu.amp.GradScaler` is a CPU one) warns and disables itself
as PyTorch does where CUDA is missing: a disabled scaler passes everything through, its
`get_scale()` is 1.0, its state dict is empty and loading one is a no-op.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


class GradScaler:
    """PyTorch's `torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)`."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = bool(enabled)
        if device == "cuda" and self._enabled:
            warnings.warn("GradScaler: device 'cuda' is not available (minigrad runs on the "
                          "CPU only); disabling loss scaling, as PyTorch does without CUDA. "
                          "GradScaler('cpu') scales on the CPU", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # a float32, set by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = {}

    # --- the iteration ---------------------------------------------------------------------
    def scale(self, outputs):
        """`outputs` (a tensor, or nested lists and tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        from ..tensor import Tensor
        if self._scale is None:
            self._scale = np.float32(self._init_scale)
            self._growth_tracker = int(self._init_growth_tracker)

        def apply(value):
            if isinstance(value, Tensor):
                # a 0-d float32 factor, as PyTorch's: a float tensor keeps its dtype
                return value * Tensor._wrap(np.array(self._scale, np.float32))
            if isinstance(value, Iterable):
                scaled = map(apply, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale in place and note whether any
        element is inf or nan; at most once per optimizer between updates."""
        if not self._enabled:
            return
        self._check_started("unscale_")
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / np.float64(self._scale))
        state["found_inf"] = self._unscale_grads(optimizer, inv_scale)
        state["stage"] = _UNSCALED

    def _unscale_grads(self, optimizer, inv_scale):
        from ..autograd import bump_version
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        for g in grads:
            if g.dtype == np.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
        found_inf = False
        for g in grads:
            a = g._array
            # every gradient is unscaled, also after a non-finite one, as PyTorch's kernel does
            found_inf = found_inf or not bool(np.isfinite(a).all())
            np.multiply(a, a.dtype.type(inv_scale), out=a)
            bump_version(g)
        return found_inf

    def step(self, optimizer, *args, **kwargs):
        """`optimizer.step(*args, **kwargs)` on unscaled gradients, unless one was not finite
        (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_started("step")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Back off after a skipped step, grow after `growth_interval` good ones in a row, or
        set the scale to `new_scale` (a float or a one-element tensor)."""
        if not self._enabled:
            return
        self._check_started("update")
        if new_scale is not None:
            self._scale = np.float32(self._new_scale_value(new_scale))
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if "found_inf" in s]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = np.float32(self._scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = np.float32(self._scale * np.float32(self._growth_factor))
                    if np.isfinite(grown):
                        self._scale = grown
                    successful = 0
                self._growth_tracker = successful
        self._per_optimizer_states = {}

    def _new_scale_value(self, new_scale):
        if isinstance(new_scale, float):
            return new_scale
        reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                  "torch.FloatTensor with requires_grad=False.")
        from ..tensor import Tensor
        if (not isinstance(new_scale, Tensor) or new_scale.device.type != self._device
                or new_scale.numel() != 1 or new_scale.requires_grad):
            raise AssertionError(reason)
        if new_scale.dim() != 0:  # PyTorch copies it into its 0-d scale tensor
            raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                               f"{list(new_scale.shape)}")
        return float(new_scale.item())

    def _state(self, optimizer):
        return self._per_optimizer_states.setdefault(id(optimizer), {"stage": _READY})

    def _check_started(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                                 f"your script did not use scaler.scale(loss or outputs) "
                                 f"earlier in the iteration.")

    # --- settings and state ----------------------------------------------------------------
    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale is None else self._scale)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return int(self._init_growth_tracker if self._growth_tracker is None
                   else self._growth_tracker)

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker (empty for
        a disabled scaler); saved after `update()`."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = np.float32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = int(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if self._per_optimizer_states:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state


def legacy_grad_scaler(device):
    """`torch.cuda.amp.GradScaler` / `torch.cpu.amp.GradScaler`: the device fixed, the other
    arguments in their old positions, and PyTorch's deprecation warning."""
    class LegacyGradScaler(GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device}', args...)` instead.",
                          FutureWarning, stacklevel=2)
            super().__init__(device, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)
    LegacyGradScaler.__name__ = LegacyGradScaler.__qualname__ = "GradScaler"
    return LegacyGradScaler


__all__ = ["GradScaler", "legacy_grad_scaler"]
