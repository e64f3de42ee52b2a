"""The sweep's ops (tests/compat_sweep.py) of the Tensor methods and functions added for
PyTorch programs' common calls: the layout questions (stride, storage_offset, is_contiguous,
nbytes, ...), the matrix transposes, unfold, sum_to_size, the scatter family and its in-place
forms, the splits, unique_consecutive, the float-bit functions, dist and renorm, and the
in-place shape changes; each on every dtype and layout, against PyTorch."""
from __future__ import annotations


def _u(name, fn):
    return name, 1, fn


def _b(name, fn):
    return name, 2, fn


def _odd_positions(L, x):
    """A bool mask of x's shape, True at every other element."""
    return (L.arange(x.numel()).reshape(x.shape) % 2) == 0


UNARY_TENSOR = [
    _u("Tensor.stride", lambda L, x: (x.stride(), x.storage_offset(), x.is_contiguous())),
    _u("Tensor.nbytes", lambda L, x: (x.nbytes, x.itemsize, x.is_signed(), x.is_complex())),
    _u("Tensor.is_nonzero", lambda L, x: x.is_nonzero()),
    _u("Tensor.mT", lambda L, x: x.mT), _u("Tensor.mH", lambda L, x: x.mH),
    _u("Tensor.H", lambda L, x: x.H),
    _u("Tensor.sgn", lambda L, x: x.sgn()), _u("minigrad.sgn", lambda L, x: L.sgn(x)),
    _u("Tensor.positive", lambda L, x: x.positive()),
    _u("minigrad.positive", lambda L, x: L.positive(x)),
    _u("Tensor.sum_to_size", lambda L, x: x.sum_to_size((1,) * x.dim())),
    _u("Tensor.unfold", lambda L, x: x.unfold(-1, 2, 1)),
    _u("Tensor.unfold (step 2)", lambda L, x: x.unfold(0, 1, 2)),
    _u("Tensor.frexp", lambda L, x: x.frexp()),
    _u("Tensor.renorm", lambda L, x: x.renorm(2, 0, 1.0)),
    _u("Tensor.split_with_sizes", lambda L, x: x.split_with_sizes([1, 2], -1)),
    _u("minigrad.hsplit", lambda L, x: L.hsplit(x, [1])),
    _u("minigrad.vsplit", lambda L, x: L.vsplit(x, [1])),
    _u("minigrad.unique_consecutive", lambda L, x: L.unique_consecutive(
        x.detach(), return_inverse=True, return_counts=True)),
    _u("minigrad.unique_consecutive (dim)", lambda L, x: L.unique_consecutive(
        x.detach(), return_counts=True, dim=-1)),
    _u("Tensor.contiguous (layout)", lambda L, x: x.contiguous().is_contiguous()),
]
BINARY_TENSOR = [
    _b("Tensor.dist", lambda L, x, y: x.dist(y)),
    _b("Tensor.dist (p=1)", lambda L, x, y: x.dist(y, 1)),
    _b("minigrad.ldexp", lambda L, x, y: L.ldexp(x, y)),
    _b("minigrad.nextafter", lambda L, x, y: L.nextafter(x, y)),
    _b("Tensor.index_copy", lambda L, x, y: x.index_copy(-1, L.tensor([2, 0]),
                                                         y.narrow(-1, 0, 2))),
    _b("Tensor.masked_scatter", lambda L, x, y: x.masked_scatter(_odd_positions(L, x), y)),
    _b("Tensor.put", lambda L, x, y: x.put(L.tensor([0, -1]), y.reshape(-1)[:2])),
    _b("Tensor.index_reduce", lambda L, x, y: x.index_reduce(
        -1, L.tensor([0, 0]), y.narrow(-1, 0, 2), "amax")),
    _b("Tensor.index_reduce (mean)", lambda L, x, y: x.index_reduce(
        -1, L.tensor([1, 1]), y.narrow(-1, 0, 2), "mean", include_self=False)),
    _b("minigrad.slice_scatter", lambda L, x, y: L.slice_scatter(x, y[..., 1:], -1, 1)),
    _b("minigrad.select_scatter", lambda L, x, y: L.select_scatter(x, y.select(-1, 0), -1, 1)),
    _b("minigrad.diagonal_scatter", lambda L, x, y: L.diagonal_scatter(x, y.diagonal())),
]
INPLACE_TENSOR = [
    _b("Tensor.index_copy_", lambda L, x, y: x.index_copy_(-1, L.tensor([1]),
                                                           y.narrow(-1, 0, 1))),
    _b("Tensor.masked_scatter_", lambda L, x, y: x.masked_scatter_(_odd_positions(L, x), y)),
    _b("Tensor.put_", lambda L, x, y: x.put_(L.tensor([0, 0]), y.reshape(-1)[:2],
                                             accumulate=True)),
    _b("Tensor.index_reduce_", lambda L, x, y: x.index_reduce_(
        -1, L.tensor([0, 2]), y.narrow(-1, 0, 2), "prod")),
    _u("Tensor.renorm_", lambda L, x: x.renorm_(1, -1, 0.5)),
    _u("Tensor.sgn_", lambda L, x: x.sgn_()),
    _b("Tensor.ldexp_", lambda L, x, y: x.ldexp_(y)),
    _b("Tensor.nextafter_", lambda L, x, y: x.nextafter_(y)),
    _u("Tensor.squeeze_", lambda L, x: x.squeeze_()),
    _u("Tensor.squeeze_ (dim)", lambda L, x: x.squeeze_(0)),
    _u("Tensor.unsqueeze_", lambda L, x: x.unsqueeze_(-1)),
    _u("Tensor.t_", lambda L, x: x.t_()),
    _u("Tensor.transpose_", lambda L, x: x.transpose_(0, -1)),
    _u("Tensor.swapdims_", lambda L, x: x.swapdims_(-1, 0)),
    _u("Tensor.swapaxes_", lambda L, x: x.swapaxes_(0, 0)),
]
