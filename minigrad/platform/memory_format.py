"""PyTorch's memory formats (`torch.channels_last`, `torch.contiguous_format`,
`torch.preserve_format`, `torch.channels_last_3d`), which speed-minded training scripts and
optimizers pass to `to`, `contiguous`, `clone` and the `*_like` functions.

A memory format chooses the order in which a GPU kernel wants a tensor's elements stored. It
never changes a value, and minigrad's kernels accept any strides, so minigrad accepts the
formats and checks them as PyTorch does (the type; the rank channels_last needs) without
reordering anything: `stride()` keeps the row-major order (see tests/compat_notes.py).
"""

__all__ = ["channels_last", "channels_last_3d", "check_memory_format", "contiguous_format",
           "memory_format", "preserve_format"]


class memory_format:
    """One of PyTorch's memory formats; the four instances below are the only ones."""

    def __init__(self, name, rank=None):
        self._name = name
        self._rank = rank  # the number of dims the format needs, or None for any

    def __repr__(self):
        return f"minigrad.{self._name}"

    def __reduce__(self):  # pickled (torch.save of a setting) as the shared instance
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", rank=4)
channels_last_3d = memory_format("channels_last_3d", rank=5)


def check_memory_format(fmt, op, ndim=None):
    """Raise PyTorch's errors for `memory_format=fmt` given to op on a tensor of ndim dims
    (None: no tensor to check against, as in `Module.to`). None stands for the default."""
    if fmt is None:
        return
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be minigrad.memory_format "
                        f"(minigrad.channels_last, minigrad.contiguous_format, ...), not "
                        f"{type(fmt).__name__}")
    if ndim is not None and fmt._rank is not None and ndim != fmt._rank:
        raise RuntimeError(f"{op}: required rank {fmt._rank} tensor to use {fmt._name} "
                           f"format, got a tensor of {ndim} dims")
