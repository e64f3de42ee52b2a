"""How tensors print: `set_printoptions`, as torch's (precision, threshold, edgeitems,
linewidth, the 'default'/'short'/'full' profiles and sci_mode), applied to the NumPy text of
the values. The options are this module's, not NumPy's global ones, so printing a tensor never
changes how the user's arrays print."""
import sys

import numpy as np

_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=sys.maxsize, edgeitems=3, linewidth=80)}
_options = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print; a `profile` first resets the four numbers, and the arguments
    given override it. `sci_mode` True/False forces scientific or fixed notation, None lets
    the values decide; it is always set, as in PyTorch."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")
        _options.update(_PROFILES[profile])
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                 linewidth=linewidth)
    _options.update({k: v for k, v in given.items() if v is not None})
    _options["sci_mode"] = sci_mode


def array_text(array, prefix):
    """The values of `array` as a tensor's repr shows them, after `prefix` ('tensor(')."""
    o = _options
    formatter = None
    if o["sci_mode"] is not None and array.dtype.kind in "fc":
        spec = f".{o['precision']}{'e' if o['sci_mode'] else 'f'}"
        formatter = {"float_kind": lambda v: format(v, spec)}
    return np.array2string(array, separator=", ", prefix=prefix, precision=o["precision"],
                           threshold=int(min(o["threshold"], sys.maxsize)),
                           edgeitems=o["edgeitems"], max_line_width=o["linewidth"],
                           formatter=formatter)
