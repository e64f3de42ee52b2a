"""Turning a list of samples into a batch, as PyTorch's `default_collate` does.

A batch keeps the structure of one sample: tensors are stacked along a new first dimension
`(B, ...)`, NumPy arrays and scalars become tensors and are stacked, Python floats become a
float64 tensor `(B,)` and ints an int64 (bools a bool) tensor, strings and bytes stay a list,
and containers are collated field by field: a dict gives a dict of batches, a named tuple the
same named tuple of batches, a tuple or list a list of batches (PyTorch's choice, kept).
`default_convert` does the same conversions to a single sample without batching (the
DataLoader uses it when `batch_size=None`).
"""
import collections.abc
import copy
import re

import numpy as np

from minigrad.creation import as_tensor, tensor
from minigrad.dtypes import float64
from minigrad.functional import stack
from minigrad.tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtype codes that cannot become tensors: bytes, unicode, void and objects
_STRING_OR_OBJECT = re.compile(r"[SaUO]")

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
          "found {}")


def default_convert(data):
    """One sample with its NumPy arrays and scalars turned into tensors, structure kept."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _STRING_OR_OBJECT.search(data.dtype.str) else as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return as_tensor(np.asarray(data))  # np.float64 is a Python float: keep its dtype
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like, items):
    """A mapping of `like`'s type holding `items`; a plain dict if that type cannot be made."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)  # keeps the class and any extra state (OrderedDict, ...)
            clone.update(items)
            return clone
        return type(like)(items)
    except TypeError:
        return dict(items)


def _rebuild_sequence(like, items):
    """A sequence of `like`'s type holding `items`; a list if that type cannot be made."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return list(items)


def collate(batch, *, collate_fn_map=None):
    """Collate `batch` (a list of samples) by structure; `collate_fn_map` maps a type (or a
    tuple of types) to the function that collates a list of that type's values."""
    elem = batch[0]
    if collate_fn_map is not None:
        if type(elem) in collate_fn_map:
            return collate_fn_map[type(elem)](batch, collate_fn_map=collate_fn_map)
        for kind, fn in collate_fn_map.items():
            if isinstance(elem, kind):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch],
                                                    collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(collate(s, collate_fn_map=collate_fn_map)
                            for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuild_sequence(elem, fields)
    raise TypeError(_ERROR.format(type(elem)))


def _collate_tensors(batch, *, collate_fn_map=None):
    shapes = {tuple(t.shape) for t in batch}
    if len(shapes) > 1:
        raise RuntimeError(f"default_collate: stack expects each tensor to be equal size, "
                           f"but got shapes {sorted(shapes)} in one batch")
    return stack(batch, 0)


def _collate_arrays(batch, *, collate_fn_map=None):
    if _STRING_OR_OBJECT.search(batch[0].dtype.str):
        raise TypeError(_ERROR.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def _collate_numpy_scalars(batch, *, collate_fn_map=None):
    return as_tensor(np.array(batch))


def _collate_floats(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=float64)


def _collate_ints(batch, *, collate_fn_map=None):
    return tensor(batch)  # int64, or bool for Python bools (an int subclass), as in PyTorch


def _collate_strings(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: _collate_tensors,
    np.ndarray: _collate_arrays,
    (np.bool_, np.number, np.object_): _collate_numpy_scalars,
    float: _collate_floats,
    int: _collate_ints,
    str: _collate_strings,
    bytes: _collate_strings,
}


def default_collate(batch):
    """PyTorch's default collation of a list of samples into one batch (see the module)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
