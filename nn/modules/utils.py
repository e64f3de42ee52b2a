"""`torch.nn.modules.utils`' path: the argument helpers code that writes its own layers imports
from there (`_pair(3)` is `(3, 3)`, as Conv2d reads its kernel size), and
`consume_prefix_in_state_dict_if_present`, which lets a model load the state dict of its
data-parallel wrapper (keys `module.weight`, ...)."""
from collections.abc import Iterable

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A function turning one value into an n-tuple of it (an iterable: into its tuple)."""
    def parse(x):
        return tuple(x) if isinstance(x, Iterable) else (x,) * n
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """t's elements last to first, each n times: a layer's (pad_h, pad_w) as F.pad's
    (left, right, top, bottom) for n = 2."""
    return tuple(x for x in t[::-1] for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Drop `prefix` from the keys of `state_dict` that start with it, in place (and from its
    `_metadata` entries, if it has some)."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        bare = prefix.replace(".", "")
        for key in [k for k in metadata if k and (k == bare or k.startswith(prefix))]:
            metadata[key[len(prefix):]] = metadata.pop(key)
