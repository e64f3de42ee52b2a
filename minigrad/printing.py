"""How tensors print: `set_printoptions` and a tensor's repr, as PyTorch's.

`repr(t)`, `str(t)` and `print(t)` give PyTorch's text with one change: the dtype is named
`minigrad.float64` where PyTorch names `torch.float64`. The values are laid out by
`print_format.py`; this module adds what follows them, in PyTorch's order: `size=` (for an
empty tensor that is not 1-D, and when `edgeitems` is 0), `dtype=` (unless it is one PyTorch
leaves out: the default float dtype, its complex counterpart, int64 and bool; always for an
empty tensor that is not of the default float dtype), then `grad_fn=<MulBackward0>` or
`requires_grad=True`. A suffix that would make the last line longer than `linewidth` goes on
a line of its own.

The options are this module's, not NumPy's global ones, so printing a tensor never changes how
the user's arrays print.
"""
import contextlib
import math

import numpy as np

from . import dtypes
from .print_format import values_text

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]

_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}
_options = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print; a `profile` ('default', 'short' or 'full') first resets the four
    numbers, and the arguments given override it. `sci_mode` True/False forces scientific or
    fixed notation, None lets the values decide; it is always set, as in PyTorch."""
    if profile is not None:
        # PyTorch ignores a profile it does not know; a typo here deserves an error
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")
        _options.update(_PROFILES[profile])
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                 linewidth=linewidth)
    _options.update({k: v for k, v in given.items() if v is not None})
    _options["sci_mode"] = sci_mode


def get_printoptions():
    """The current options, as a dict that `set_printoptions(**options)` takes back."""
    return dict(_options)


@contextlib.contextmanager
def printoptions(**options):
    """Print with `options` (those of `set_printoptions`) inside the `with` block only."""
    saved = get_printoptions()
    set_printoptions(**options)
    try:
        yield
    finally:
        set_printoptions(**saved)


def _omitted_dtypes():
    """The dtypes PyTorch does not name: the default float dtype, its complex dtype, int64
    and bool."""
    default = np.dtype(dtypes.get_default_dtype())
    return {default, np.dtype(dtypes.complex_of(default)), np.dtype(np.int64),
            np.dtype(np.bool_)}


def tensor_repr(array, grad_fn_name=None, requires_grad=False, prefix="tensor("):
    """A tensor's text: `prefix`, the values of `array`, the suffixes and `)`.
    `grad_fn_name` is the name of the node that made it (None for a leaf)."""
    o = _options
    indent = len(prefix)
    dtype = array.dtype
    suffixes = []
    if array.size == 0:
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
        # no value to tell the dtype by: every dtype but the default float one is named
        if dtype != np.dtype(dtypes.get_default_dtype()):
            suffixes.append(f"dtype=minigrad.{dtype.name}")
        body = "[]"
    else:
        if not o["edgeitems"]:
            suffixes.append(f"size={tuple(array.shape)}")
        if dtype not in _omitted_dtypes():
            suffixes.append(f"dtype=minigrad.{dtype.name}")
        body = values_text(array, indent, o)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent, o["linewidth"])


def _with_suffixes(text, suffixes, indent, linewidth):
    parts = [text]
    # PyTorch's count, two more than the last line's length when there is one line
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # lines break where PyTorch's do, whose dtypes are named `torch.` (3 letters fewer)
        length = len(suffix.replace("minigrad.", "torch."))
        if last_line + length + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + length
        else:
            parts.append(", " + suffix)
            last_line += length + 2
    parts.append(")")
    return "".join(parts)
