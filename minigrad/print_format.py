"""The values of a tensor as PyTorch prints them: the text between `tensor(` and the suffixes.

PyTorch's algorithm (torch/_tensor_str.py), on the NumPy array. One formatter looks at all the
values that will be shown and fixes a single notation and width for them, so that columns line
up:

- integers and bools print as Python prints them, right-aligned to the widest;
- floats look only at their finite nonzero values: if all are whole numbers they print as
  `1.` (int mode); scientific notation (`1.0000e+08`) is chosen when the largest magnitude is
  over 1e8, the smallest under 1e-4, or their ratio over 1000 (unless `sci_mode` forces it);
  otherwise `precision` digits after the point (`1.2500`);
- complex values have one formatter for the real parts and one for the imaginary parts.

A tensor with more than `threshold` elements is summarized: each dim shows its first and last
`edgeitems` entries around `...`, and only those values choose the formatter. Rows wrap at
`linewidth`, and the brackets of nested dims are indented under their parent's.
"""
import math

import numpy as np

__all__ = ["Formatter", "values_text"]


class Formatter:
    """One notation and width for every value of `values` (a real array: the values shown)."""

    def __init__(self, values, precision, sci_mode=None):
        self.precision = precision
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            if flat.size:
                # the widest text is that of the largest or of the most negative value
                self.width = max(len(str(v)) for v in (flat.max().item(), flat.min().item()))
            return
        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:  # zeros, nan and inf only: print as whole numbers
            return
        magnitude = np.abs(shown.astype(np.float64))
        smallest, largest = magnitude.min().item(), magnitude.max().item()  # inf, not a warning
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if sci_mode is None:
            sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        self.sci_mode = bool(sci_mode)
        self.width = max(len(self._text(v)) for v in _widest_candidates(shown))
        if self.int_mode and not self.sci_mode:
            self.width += 1  # the point every whole number prints with

    def _text(self, value):
        value = float(value)
        if self.sci_mode:
            return f"{value:.{self.precision}e}"
        if self.int_mode:
            return f"{value:.0f}"
        return f"{value:.{self.precision}f}"

    def format(self, value):
        """`value` (a Python number) as text, right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        else:
            text = self._text(value)
            if self.int_mode and not self.sci_mode and math.isfinite(value):
                text += "."
        return text.rjust(self.width)


def _widest_candidates(shown):
    """The values whose text can be the widest: in fixed notation the width grows with the
    magnitude (and a sign), in scientific notation with the exponent's digits, so the extremes
    of each sign stand for all of them."""
    positive, negative = shown[shown > 0], shown[shown < 0]
    out = []
    for part in (positive, negative):
        if part.size:
            out += [part.min().item(), part.max().item()]
    return out


def summarized(a, edgeitems):
    """The values a summarized print shows: the first and last `edgeitems` along every dim."""
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        if a.shape[0] > 2 * edgeitems:
            # `a[-0:]` is all of `a`, as in PyTorch: with edgeitems=0 every value is looked at
            return np.concatenate((a[:edgeitems], a[-edgeitems:]))
        return a
    if not edgeitems:
        return np.empty([0] * a.ndim, a.dtype)
    n = a.shape[0]
    rows = range(n) if n <= 2 * edgeitems else [*range(edgeitems), *range(n - edgeitems, n)]
    return np.stack([summarized(a[i], edgeitems) for i in rows])


def values_text(a, indent, options):
    """The bracketed values of array `a` (not empty), continued lines indented by `indent`
    (the length of the `tensor(` before the first bracket)."""
    summarize = a.size > options["threshold"]
    precision, sci_mode, edge = options["precision"], options["sci_mode"], options["edgeitems"]
    seen = summarized(a, edge) if summarize else a
    if a.dtype.kind == "c":
        formatters = (Formatter(seen.real, precision, sci_mode),
                      Formatter(seen.imag, precision, sci_mode))
    else:
        formatters = (Formatter(seen, precision, sci_mode),)
    return _nested(a, indent, summarize, formatters, options)


def _element(value, formatters):
    if len(formatters) == 1:
        return formatters[0].format(value)
    real, imag = formatters
    imag_text = (imag.format(value.imag) + "j").lstrip()
    # a negative imaginary part (or -0.) brings its own sign
    return real.format(value.real) + ("" if imag_text[0] in "+-" else "+") + imag_text


def _nested(a, indent, summarize, formatters, options):
    if a.ndim == 0:
        return _element(a.item(), formatters)
    edge = options["edgeitems"]
    if a.ndim == 1:
        return _row(a, indent, summarize, formatters, options)
    n = a.shape[0]
    if summarize and n > 2 * edge:
        parts = ([_nested(a[i], indent + 1, summarize, formatters, options)
                  for i in range(edge)] + ["..."]
                 + [_nested(a[i], indent + 1, summarize, formatters, options)
                    for i in range(n - edge, n)])
    else:
        parts = [_nested(a[i], indent + 1, summarize, formatters, options) for i in range(n)]
    # one blank line between the 2-D blocks of a 3-D tensor, two between 3-D ones, ...
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _row(a, indent, summarize, formatters, options):
    """A 1-D array's values, as many on a line as fit in `linewidth`."""
    edge = options["edgeitems"]
    element_length = formatters[0].width + 2  # the value, the comma and the space after it
    if len(formatters) == 2:
        element_length += formatters[1].width + 1  # and the imaginary part with its "j"
    per_line = max(1, math.floor((options["linewidth"] - indent) / element_length))
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = ([_element(v, formatters) for v in a[:edge].tolist()] + [" ..."]
                + [_element(v, formatters) for v in a[-edge:].tolist()])
    else:
        data = [_element(v, formatters) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
