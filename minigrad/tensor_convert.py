"""Tensor methods about where a tensor lives and what type it has, under PyTorch's names:
`to()`, `float()` and the other dtype conversions, `device`, `cpu()`, `cuda()` (an error:
minigrad runs on the CPU), `type()`, the `new_*` factories that copy this tensor's dtype, and
`format(t, ".4f")`.

`Tensor` inherits them (see tensor.py); they are kept here so tensor.py stays about autograd.
"""
from __future__ import annotations

import numpy as np

from . import ops
from . import tensor as _t
from .errors import negative_size
from .platform.device import CPU, check_device, parse_to
from .platform.layout import factory_keywords
from .dtypes import FLOATING, bfloat16, complex32
from .scalar_conversion import checked_scalar
from .size import Size

_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


def _size(size, op=None):
    """PyTorch's `*size` arguments, f(2, 3) or f((2, 3)), as a tuple of ints; with `op`, the
    sizes of a new tensor, which must not be negative."""
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    shape = tuple(int(n) for n in size)
    if op is not None and any(n < 0 for n in shape):
        raise negative_size(op, shape)
    return shape


class ConversionMethods:
    device = property(lambda self: CPU)
    is_cuda = property(lambda self: False)
    is_cpu = property(lambda self: True)
    # the other devices' and layouts' flags PyTorch's tensors carry: never so here
    is_meta = is_mps = is_xpu = is_mkldnn = is_quantized = is_nested = property(
        lambda self: False)

    def get_device(self):
        """The index of the GPU holding the tensor; -1 for the CPU, as PyTorch says."""
        return -1

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False):
        check_device(device if device is not None else "cuda", "cuda")
        return self

    def pin_memory(self, device=None):
        """Pinned memory speeds up copies to a GPU; without one, PyTorch raises, and so do we."""
        raise RuntimeError("pin_memory: Cannot access accelerator device when none is "
                           "available (minigrad runs on the CPU only)")

    def is_pinned(self, device=None):
        return False

    # --- dtypes ---------------------------------------------------------------------------
    def to(self, *args, **kwargs):
        """to(dtype), to(device, dtype=None) or to(other): a device must be the CPU."""
        dtype, copy = parse_to(args, kwargs, ndim=self.ndim)
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if dtype == self.dtype:
            return self.clone() if copy else self
        if self.requires_grad and dtype.kind in "fc":
            return ops.Cast.apply(self, dtype=dtype)
        return _t.Tensor._wrap(self._array.astype(dtype))

    def float(self): return self.to(np.float32)
    def double(self): return self.to(np.float64)
    def long(self): return self.to(np.int64)
    def int(self): return self.to(np.int32)
    def bool(self): return self.to(np.bool_)
    def type_as(self, other): return self.to(other.dtype)
    def is_floating_point(self): return self.dtype.type in FLOATING

    def half(self):
        return self.to(np.float16)

    def byte(self):
        return self.to(np.uint8)

    def char(self):
        return self.to(np.int8)

    def short(self):
        return self.to(np.int16)

    def cfloat(self):
        return self.to(np.complex64)

    def cdouble(self):
        return self.to(np.complex128)

    def bfloat16(self):
        """A clear error: NumPy, and so minigrad, has no bfloat16 (dtypes.bfloat16 says)."""
        return self.to(bfloat16)

    def chalf(self, memory_format=None):
        return self.to(complex32)

    def nelement(self):
        return self._array.size

    def ndimension(self):   # (PyTorch's older name of dim())
        return self._array.ndim

    def element_size(self):
        return self._array.itemsize

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def type(self, dtype=None, non_blocking=False):
        """With no argument the type's name ('minigrad.FloatTensor'); else `to(dtype)`, where
        dtype may also be a tensor type (LongTensor) or its name ('torch.LongTensor')."""
        from .platform.tensortypes import dtype_of, type_name
        return type_name(self.dtype) if dtype is None else self.to(dtype_of(dtype))

    def _new(self, arr, dtype, device, requires_grad, op):
        check_device(device, op)
        t = _t.Tensor._wrap(arr.astype(self.dtype if dtype is None else np.dtype(dtype),
                                       copy=False))
        return t.requires_grad_(True) if requires_grad else t

    def new(self, *args, device=None):
        """The legacy constructor in this tensor's dtype: `t.new(2, 3)` or `t.new(Size)` a
        tensor of that shape (zeros, where PyTorch leaves memory uninitialised), `t.new(data)`
        one from data, `t.new()` an empty one, `t.new(u)` a view of a tensor of that dtype."""
        check_device(device, "new")
        if len(args) == 1 and isinstance(args[0], _t.Tensor):
            if args[0].dtype != self.dtype:
                raise TypeError(f"new: expected a {self.dtype} tensor, got {args[0].dtype}")
            return args[0].view(args[0].shape)
        if len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
            return self._new(np.array(_t.array_of(args[0])), None, None, False, "new")
        return self._new(np.zeros(_size(args or (0,))), None, None, False, "new")

    @factory_keywords
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return self._new(np.array(_t.array_of(data)), dtype, device, requires_grad, "new_tensor")

    @factory_keywords
    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        op = "new_zeros"
        return self._new(np.zeros(_size(size, op)), dtype, device, requires_grad, op)

    @factory_keywords
    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        op = "new_ones"
        return self._new(np.ones(_size(size, op)), dtype, device, requires_grad, op)

    @factory_keywords
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        op = "new_empty"
        return self._new(np.empty(_size(size, op)), dtype, device, requires_grad, op)

    @factory_keywords
    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        op = "new_full"
        target = np.dtype(self.dtype if dtype is None else dtype)
        if isinstance(fill_value, _NUMBERS):
            fill_value = checked_scalar(fill_value, target)  # PyTorch's range check, as full's
        return self._new(np.full(_size((size,), op), fill_value), dtype, device, requires_grad,
                         op)

    def __format__(self, spec):
        """format(t, ".4f") formats a one-element tensor's number; other tensors take no spec.
        As in PyTorch, a 0-d tensor (not a Parameter) formats as its number also without a
        spec: f"{loss}" gives `0.25`, where print(loss) gives `tensor(0.2500)`."""
        if not spec and (self._array.ndim or type(self) is not _t.Tensor):
            return str(self)
        if self._array.size != 1:
            raise TypeError(f"format: spec {spec!r} needs a one-element tensor, this one has "
                            f"shape {self.shape}")
        return format(self.item(), spec)
