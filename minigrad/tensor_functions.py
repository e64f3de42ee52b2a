"""The Tensor methods of functions added beside the core's: the scatter family
(`index_copy`, `masked_scatter`, `put`, `index_reduce`, `slice_scatter`, `select_scatter`,
`diagonal_scatter`, in scatter_functions.py) and their in-place forms; `split_with_sizes`,
`hsplit`, `vsplit`, `dsplit` (splits.py); `unique_consecutive` (run_lengths.py); `dist` and
`renorm` (norm_functions.py); `frexp`, `ldexp`, `nextafter` (float_parts.py); `sgn`
(complex_tensors.py) and `positive` (aliases.py); `fill_diagonal_` (matrix_parts.py); and two
of their own: `unfold` (the windows along a dim, a view: ops/dim_windows.py) and `sum_to_size`
(a sum down to a shape the tensor broadcasts from); `diagflat`, `cov`, `corrcoef`,
`histogram`, `isreal`, `is_neg`, `narrow_copy`, `broadcast_to` and `where` of the functions
of those names.

Each in-place form is the out-of-place method written through tensor_write's `_assign`
(PyTorch's dtype rule, views, version counters, the write recorded by autograd). `Tensor`
inherits these methods (see tensor.py).
"""
from __future__ import annotations

from .ops.dim_windows import UnfoldDim
from .tensor_convert import _size
from .tensor_math import _delegate
from .tensor_write import _in_place


class FunctionMethods:
    index_copy = _delegate(".scatter_functions", "index_copy")
    masked_scatter = _delegate(".scatter_functions", "masked_scatter")
    put = _delegate(".scatter_functions", "put")
    index_reduce = _delegate(".scatter_functions", "index_reduce")
    slice_scatter = _delegate(".scatter_functions", "slice_scatter")
    select_scatter = _delegate(".scatter_functions", "select_scatter")
    diagonal_scatter = _delegate(".scatter_functions", "diagonal_scatter")
    index_copy_, masked_scatter_ = _in_place("index_copy"), _in_place("masked_scatter")
    put_, index_reduce_ = _in_place("put"), _in_place("index_reduce")

    split_with_sizes = _delegate(".splits", "split_with_sizes")
    hsplit, vsplit = _delegate(".splits", "hsplit"), _delegate(".splits", "vsplit")
    dsplit = _delegate(".splits", "dsplit")
    unique_consecutive = _delegate(".run_lengths", "unique_consecutive")

    dist, renorm = _delegate(".norm_functions", "dist"), _delegate(".norm_functions", "renorm")
    frexp, ldexp = _delegate(".float_parts", "frexp"), _delegate(".float_parts", "ldexp")
    nextafter = _delegate(".float_parts", "nextafter")
    sgn, positive = _delegate(".complex_tensors", "sgn"), _delegate(".aliases", "positive")
    renorm_, ldexp_, nextafter_ = _in_place("renorm"), _in_place("ldexp"), _in_place(
        "nextafter")
    sgn_ = _in_place("sgn")
    fill_diagonal_ = _delegate(".matrix_parts", "fill_diagonal_")
    diagflat = _delegate(".matrix_parts", "diagflat")
    cov, corrcoef = _delegate(".covariance", "cov"), _delegate(".covariance", "corrcoef")
    histogram = _delegate(".histograms", "histogram")
    isreal, is_neg = _delegate(".complex_tensors", "isreal"), _delegate(".complex_tensors", "is_neg")
    narrow_copy = _delegate(".aliases", "narrow_copy")

    def broadcast_to(self, *size):
        """This tensor expanded to `size` (a view): `expand`."""
        return self.expand(*size)

    def where(self, condition, y):
        """This tensor where `condition` holds, `y` elsewhere (`minigrad.where`)."""
        from .functional import where
        return where(condition, self, y)

    def unfold(self, dimension, size, step):
        """The windows of `size` elements, `step` apart, along dim `dimension`: that dim
        becomes the window positions, and a new last dim of `size` holds each window (a view
        of this tensor)."""
        return UnfoldDim.apply(self, dimension=dimension, size=size, step=step)

    def sum_to_size(self, *size):
        """The sum of this tensor down to `size`, a shape it broadcasts from (the reverse of
        `expand`: leading dims summed away, dims of size 1 summed with keepdim)."""
        shape = _size(size)
        if not shape:  # PyTorch's rule: the sum of every element (an integer one in int64)
            return self.sum()
        lead = self.ndim - len(shape)
        if lead < 0 or any(s not in (1, n) for s, n in zip(shape, self.shape[lead:])):
            raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                               f"{{{list(self.shape)}}}.")
        out = self.sum(tuple(range(lead))) if lead else self
        ones = tuple(i for i, (s, n) in enumerate(zip(shape, out.shape)) if s == 1 and n != 1)
        return out.sum(ones, keepdim=True) if ones else out
