"""The older `torch.nn.utils.spectral_norm`: a forward pre-hook sets `weight` to
`weight_orig / sigma` before every call, sigma estimated by power iteration on the buffers
`weight_u` and `weight_v` (updated in training, not in eval); the state-dict keys are
`weight_orig`, `weight_u` and `weight_v`, as PyTorch's."""
from __future__ import annotations

import minigrad
from minigrad.grad_mode import no_grad

from .. import functional as F
from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Parameter
from .parametrizations import weight_matrix
from .weight_norm import remove_hook

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The pre-hook of one spectrally normalised parameter."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim = name, dim
        self.n_power_iterations, self.eps = n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight):
        return weight_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():  # v first, then u: the order of PyTorch's legacy form
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(minigrad.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(minigrad.mv(weight_mat, v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        sigma = minigrad.dot(u, minigrad.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(minigrad.empty(h, dtype=weight.dtype).normal_(0, 1), dim=0,
                            eps=fn.eps)
            v = F.normalize(minigrad.empty(w, dtype=weight.dtype).normal_(0, 1), dim=0,
                            eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Normalise `module.<name>` by its largest singular value before every call. `dim`
    (default 0, 1 for transposed convolutions) is the output dim. Returns `module`."""
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Make `module.<name>` a plain parameter again, holding weight_orig / sigma."""
    return remove_hook(module, name, SpectralNorm, "spectral_norm")
