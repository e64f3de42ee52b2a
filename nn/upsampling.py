"""Upsampling layers: Upsample, UpsamplingNearest2d and UpsamplingBilinear2d, as torch.nn's;
the computation is `functional_resample.interpolate`."""
from __future__ import annotations

from .functional_resample import interpolate
from .module import Module


class Upsample(Module):
    """Resize (N, C, L), (N, C, H, W) or (N, C, D, H, W) to `size` or by `scale_factor` with
    `mode` (any of `interpolate`'s but lanczos, which needs antialias)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        # PyTorch keeps a factor as a float (or a tuple of floats)
        self.scale_factor = (tuple(float(f) for f in scale_factor)
                             if isinstance(scale_factor, (tuple, list))
                             else float(scale_factor) if scale_factor is not None else None)
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample(mode="nearest") of (N, C, H, W)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(mode="bilinear", align_corners=True) of (N, C, H, W)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
