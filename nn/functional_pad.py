"""`pad` of `torch.nn.functional`: constant, reflect, replicate and circular padding of the
last dims, the computation behind the padding layers (`padding.py`).

Constant padding concatenates blocks of `value` on each side (a negative width crops). The
other modes read the input again at mapped positions: each padded dim is the input indexed
with the source position of every output position (an `index_select`), so the gradient of an
element read several times adds up, and every order of gradient is index_select's.
"""
from __future__ import annotations

import numpy as np

from minigrad.creation import from_numpy, full

_MODES = ("constant", "reflect", "replicate", "circular")
_SUPPORTED = ("Supported combinations for non-constant padding:\n"
              "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dims: `pad` = (left, right) of the last dim, then of the dim
    before, ...; a negative width crops. mode "constant" fills with `value` (0 by default) and
    pads any number of dims; "reflect", "replicate" and "circular" pad the last 1, 2 or 3 dims
    of an input (N, C, *S) or (C, *S)."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.ndim}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    # (lo, hi) per padded dim, first padded dim first
    widths = [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)][::-1]
    first = input.ndim - len(widths)
    if mode == "constant":
        return _constant(input, first, widths, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(widths)
    if not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{input.ndim}D input tensor.\n{_SUPPORTED}")
    if mode != "circular" and 0 in input.shape[1:]:
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    out = input
    for d, (lo, hi) in enumerate(widths, first):
        source = _sources(input.shape, d, lo, hi, mode)
        out = out.index_select(d, from_numpy(source))
    return out


def _constant(input, first, widths, value):
    """Blocks of `value` concatenated on each side of each padded dim (cropping first where a
    width is negative)."""
    from minigrad.functional import cat
    out = input
    for d, (lo, hi) in enumerate(widths, first):
        crop_lo, crop_hi = max(-lo, 0), max(-hi, 0)
        if crop_lo or crop_hi:
            if out.shape[d] - crop_lo - crop_hi < 0:
                raise RuntimeError(f"narrow(): length must be non-negative. (pad: padding "
                                   f"({lo}, {hi}) of dim {d} of input of shape "
                                   f"{list(input.shape)})")
            out = out.narrow(d, crop_lo, out.shape[d] - crop_lo - crop_hi)
        blocks = [full(out.shape[:d] + (w,) + out.shape[d + 1:], value, dtype=input.dtype)
                  if w > 0 else None for w in (lo, hi)]
        if blocks[0] is not None or blocks[1] is not None:
            out = cat([b for b in (blocks[0], out, blocks[1]) if b is not None], dim=d)
    return out


def _sources(shape, d, lo, hi, mode):
    """The input position (int64) that each output position of dim d reads."""
    n = shape[d]
    if mode == "circular":
        # PyTorch crops a negative width first and wraps around what is left
        kept = n - max(-lo, 0) - max(-hi, 0)
        if kept < 0 or (kept == 0 and max(lo, 0) + max(hi, 0) > 0):
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if lo > kept or hi > kept:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        pos = np.arange(kept + max(lo, 0) + max(hi, 0)) - max(lo, 0)
        return (pos % max(kept, 1) + max(-lo, 0)).astype(np.int64)
    size = n + lo + hi
    if size < 1:
        letter = "DHW"[d - len(shape)]  # the padded dims are the last three at most
        raise RuntimeError(f"input ({letter}: {n}) is too small. Calculated output "
                           f"{letter}: {size}")
    pos = np.arange(size) - lo
    if mode == "replicate":
        return np.clip(pos, 0, n - 1).astype(np.int64)
    if max(lo, hi) >= n:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                           f"of input {list(shape)}")
    pos = np.abs(pos)  # reflect about the first element, then about the last
    return np.where(pos >= n, 2 * (n - 1) - pos, pos).astype(np.int64)
