"""Reading the zip files that `torch.save` writes, without PyTorch and, by default, without
running anything the file names.

The archive holds `<name>/data.pkl`, a pickle of the saved object, and one entry
`<name>/data/<key>` per storage (the raw bytes of one or more tensors). In the pickle, tensors
are calls of `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` whose
storage is a "persistent id" ('storage', type, key, location, numel). The unpickler below
knows those calls and PyTorch's plain containers and builds minigrad Tensors from the
entries; with `weights_only=True` (the default) any other global the pickle names is refused
(one error naming it and `weights_only=False`), as PyTorch's own weights-only unpickler
refuses it. With `weights_only=False` other globals are imported as plain pickle would.
"""
from __future__ import annotations

import io
import math
import pickle
import zipfile
from collections import Counter, OrderedDict

import numpy as np

from .file_errors import FileFormatError, WeightsOnlyError
from .platform.device import device
from .tensor import Tensor

_DTYPES = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "bfloat16": "<u2",
           "int64": "<i8", "int32": "<i4", "int16": "<i2", "int8": "i1", "uint8": "u1",
           "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "bool": "?",
           "complex64": "<c8", "complex128": "<c16"}
# the typed storage classes (their element type); UntypedStorage is bytes, and the tensor
# names its dtype (_rebuild_tensor_v3)
_STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
             "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
             "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
             "BFloat16Storage": "bfloat16", "ComplexFloatStorage": "complex64",
             "ComplexDoubleStorage": "complex128", "UntypedStorage": "uint8"}


class _Dtype(str):
    """A torch dtype named in the pickle: its NumPy code ('<f4'), knowing its torch name
    (bfloat16 is read as its 16 bits and widened exactly to float32)."""

    def __new__(cls, name):
        obj = super().__new__(cls, _DTYPES[name])
        obj.torch_name = name
        return obj


def is_torch_zip(names) -> bool:
    return any(n.endswith("/data.pkl") and n.count("/") == 1 for n in names)


def load(source, path, trusted):
    """The object in a torch.save zip file (`source` a path or a file object)."""
    try:
        with zipfile.ZipFile(source) as z:
            pkl = next(n for n in z.namelist() if n.endswith("/data.pkl") and n.count("/") == 1)
            prefix = pkl[:-len("data.pkl")]
            names = z.namelist()
            order = (z.read(prefix + "byteorder").decode("latin-1")
                     if prefix + "byteorder" in names else "little")
            if order not in ("little", "big"):
                raise FileFormatError(path, "entry byteorder", f"{order[:20]!r} is not 'little' "
                                      f"or 'big'")
            return _Unpickler(z, prefix, path, trusted, order).run(z.read(pkl))
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile) as e:
        raise FileFormatError(path, "", f"the zip archive is unreadable ({e})") from None


class _Unpickler(pickle._Unpickler):
    """Python's own unpickler (not the C one), so that BUILD can be restricted too: PyTorch's
    state dicts set only `_metadata` on their OrderedDicts, and nothing may set a tensor's
    attributes when the file is not trusted."""

    def load_build(self):
        state, target = self.stack[-1], self.stack[-2]
        if not self.trusted and not (type(target) is OrderedDict and isinstance(state, dict)
                                     and set(state) <= {"_metadata"}):
            raise WeightsOnlyError(self.path, "data.pkl", f"state for a "
                                   f"{type(target).__name__} (BUILD)")
        super().load_build()

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = load_build

    def __init__(self, z, prefix, path, trusted, order):
        self.z, self.prefix, self.path, self.trusted = z, prefix, path, trusted
        self.big = order == "big"
        self.storages = {}

    def run(self, blob):
        super().__init__(io.BytesIO(blob))
        try:
            return self.load()
        except (FileFormatError, WeightsOnlyError):
            raise
        except RecursionError:
            raise FileFormatError(self.path, "data.pkl", "nested too deeply") from None
        except Exception as e:  # a crafted pickle can fail in any of pickle's ways
            raise FileFormatError(self.path, "data.pkl", f"{type(e).__name__}: "
                                  f"{str(e)[:120]}") from None

    def find_class(self, module, name):
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return self.rebuild_tensor
        if module == "torch._utils" and name == "_rebuild_tensor_v3":
            return self.rebuild_tensor_v3
        if module == "torch._utils" and name == "_rebuild_parameter":
            return _rebuild_parameter
        if module == "collections" and name in ("OrderedDict", "Counter"):  # Counter: MultiStepLR
            return OrderedDict if name == "OrderedDict" else Counter
        if module in ("builtins", "__builtin__") and name in ("set", "frozenset"):
            return {"set": set, "frozenset": frozenset}[name]
        if module == "torch" and name in _STORAGES:
            return _Dtype(_STORAGES[name])
        if module == "torch.storage" and name == "UntypedStorage":
            return _Dtype("uint8")
        if module == "torch" and name in _DTYPES:  # minigrad's dtype of that name
            from . import dtypes
            return getattr(dtypes, "bool_" if name == "bool" else name)
        if module == "torch" and name == "Size":
            return tuple
        if module == "torch" and name == "device":
            return device
        if self.trusted:
            return super().find_class(module, name)
        raise WeightsOnlyError(self.path, "data.pkl", f"{module}.{name}")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _Dtype) and isinstance(pid[2], str)):
            raise FileFormatError(self.path, "data.pkl", f"persistent id {str(pid)[:60]} is "
                                  f"not a storage")
        _, kind, key, _location, numel = pid  # every location maps to the CPU
        name = f"{self.prefix}data/{key}"
        if key not in self.storages:
            if name not in self.z.namelist():
                raise FileFormatError(self.path, f"storage {key!r}", f"entry {name} is missing")
            size, itemsize = self.z.getinfo(name).file_size, np.dtype(kind).itemsize
            if not _count(numel) or size != numel * itemsize:  # checked before unpacking
                raise FileFormatError(self.path, f"storage {key!r}", f"holds {size} bytes, "
                                      f"not {numel!r} elements of {itemsize} bytes")
            self.storages[key] = self.z.read(name)
        return (key, kind)

    def rebuild_tensor_v3(self, storage, offset, size, stride, requires_grad, hooks, dtype,
                          metadata=None):
        """A tensor on an untyped storage, which names its dtype."""
        from . import dtypes
        if dtype is dtypes.bfloat16:
            code = _Dtype("bfloat16")
        else:
            name = np.dtype(dtype).name if isinstance(dtype, (np.dtype, type)) else None
            if name not in _DTYPES:
                raise FileFormatError(self.path, "data.pkl", f"dtype {str(dtype)[:30]!r} of a "
                                      f"tensor is not a torch dtype minigrad can hold")
            code = _Dtype(name)
        return self.rebuild_tensor(storage, offset, size, stride, requires_grad, dtype=code)

    def rebuild_tensor(self, storage, offset, size, stride, requires_grad=False, hooks=None,
                       metadata=None, dtype=None):
        if not (isinstance(storage, tuple) and len(storage) == 2 and storage[0] in
                self.storages):
            raise FileFormatError(self.path, "data.pkl", "a tensor without a storage")
        key, kind = storage
        dtype = kind if dtype is None else dtype  # a typed storage's own element type
        field = f"tensor on storage {key!r}"
        if not (_count(offset) and isinstance(size, tuple) and isinstance(stride, tuple)
                and len(size) == len(stride) and all(map(_count, size + stride))):
            raise FileFormatError(self.path, field, f"offset {offset!r}, size {size!r} and "
                                  f"stride {stride!r} are not non-negative integers of one rank")
        item = np.dtype(dtype).newbyteorder(">" if self.big else "<")
        data = np.frombuffer(self.storages[key], dtype=np.uint8)
        elements = len(data) // item.itemsize
        extent = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if math.prod(size) and extent > elements:
            raise FileFormatError(self.path, field, f"size {size} with stride {stride} from "
                                  f"offset {offset} reaches element {extent}, past the "
                                  f"storage's {elements}")
        flat = data[:elements * item.itemsize].view(item)
        if math.prod(size):
            arr = np.lib.stride_tricks.as_strided(
                flat[offset:], size, tuple(s * item.itemsize for s in stride))
        else:
            arr = np.empty(size, item)
        arr = arr.astype(item.newbyteorder("="), copy=True)  # off the file's buffer
        if dtype.torch_name == "bfloat16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        t = Tensor._wrap(arr)
        t.requires_grad = bool(requires_grad) and arr.dtype.kind in "fc"
        return t


def _rebuild_parameter(data, requires_grad, hooks=None, *rest):
    data.requires_grad = bool(requires_grad) and data.dtype.kind in "fc"
    return data


def _count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0
