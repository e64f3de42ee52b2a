"""The safetensors file format, read and written with NumPy alone.

safetensors is how PyTorch models are shared without pickle (Hugging Face's format): a flat
{name: tensor} dictionary, laid out as

    8 bytes      N, the header's length, an unsigned little-endian 64-bit integer
    N bytes      a JSON header: {"name": {"dtype": "F32", "shape": [2, 3],
                                          "data_offsets": [begin, end]}, ...,
                                 "__metadata__": {"format": "pt"}}
    the rest     every tensor's bytes, little-endian, in C order, back to back; the offsets
                 count from the start of this part, and the tensors tile it without gaps

so `minigrad.save(model.state_dict(), "model.safetensors")` produces a file that
`safetensors.torch.load_file` reads straight into the same PyTorch model, and the files
PyTorch users publish load here. The header is padded with spaces to a multiple of 8 bytes so
the data starts aligned, as the reference implementation does.
"""
from __future__ import annotations

import json
import math
import struct
from collections import OrderedDict

import numpy as np

from .file_errors import FileFormatError
from .tensor import Tensor

# the format's dtype codes; BF16 has no NumPy type and loads widened to float32 (exact), and
# the 8-bit floats are errors (with advice) rather than codes we could silently misread
_CODES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U64": np.uint64, "U32": np.uint32,
          "U16": np.uint16, "U8": np.uint8, "BOOL": np.bool_}
_NAMES = {np.dtype(t): code for code, t in _CODES.items()}
_UNREADABLE = ("F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64")
_MAX_HEADER = 100_000_000  # the reference reader's limit: larger means a corrupt length


def is_safetensors_head(head: bytes) -> bool:
    """Whether a file starting with `head` looks like safetensors (a plausible length, '{')."""
    return (len(head) >= 9 and head[8:9] == b"{"
            and struct.unpack("<Q", head[:8])[0] < _MAX_HEADER)


def encode(tensors) -> bytes:
    """The bytes of a safetensors file holding `tensors`, a {str: tensor or array} dict."""
    if not isinstance(tensors, dict):
        raise TypeError(f"save: a .safetensors file holds a flat dict of tensors (a "
                        f"state_dict), got {type(tensors).__name__}")
    header, chunks, offset = {}, [], 0
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"save: safetensors names must be strings, got {name!r}")
        if name == "__metadata__":
            raise ValueError("save: '__metadata__' is reserved in the safetensors format")
        arr = value._array if isinstance(value, Tensor) else value
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"save: safetensors holds only tensors, but {name!r} is a "
                            f"{type(value).__name__}")
        if arr.dtype not in _NAMES:
            raise TypeError(f"save: {name!r} has dtype {arr.dtype}, which safetensors cannot "
                            f"store (supported: {', '.join(str(d) for d in _NAMES)})")
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _NAMES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}  # the tensors use PyTorch's names and layout
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def decode(blob: bytes, path: str) -> OrderedDict:
    """The {name: Tensor} dict in a safetensors file's bytes. Every field of the header is
    checked as the reference reader checks it, and any problem is one FileFormatError that
    names `path` and the field. BF16 tensors load as float32 (exactly: bfloat16 is float32's
    upper half), since NumPy has no bfloat16."""
    def bad(field, why):
        return FileFormatError(path, field, why, kind="is not a valid safetensors file")

    if len(blob) < 8:
        raise bad("header length", "the file is shorter than its 8-byte header length")
    n = struct.unpack("<Q", blob[:8])[0]
    if n > _MAX_HEADER or 8 + n > len(blob):
        raise bad("header length", f"its header length {n} does not fit the file's "
                                   f"{len(blob)} bytes")
    try:  # an OrderedDict keeps the writer's order, which is the state dict's
        header = json.loads(blob[8:8 + n].decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise bad("header", f"its header is not JSON ({str(e)[:80]})") from None
    if not isinstance(header, dict):
        raise bad("header", f"its header is a JSON {type(header).__name__}, not an object")
    meta = header.pop("__metadata__", {})
    if not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise bad("__metadata__", "must be an object of strings")
    data = memoryview(blob)[8 + n:]
    entries = [(name, _entry(name, info, bad)) for name, info in header.items()]
    out, end = {}, 0
    for name, (code, shape, begin, stop) in sorted(entries, key=lambda e: e[1][2:]):
        field = f"tensor {name!r} field 'data_offsets'"
        if begin != end:
            raise bad(field, f"the bytes of {name!r} ([{begin}, {stop})) do not follow the "
                             f"previous tensor's end ({end})")
        if stop > len(data):
            raise bad(field, f"it is truncated: {name!r} ends at byte {stop} of {len(data)}")
        raw = np.frombuffer(data[begin:stop], dtype=_storage(code)).reshape(shape)
        out[name] = Tensor._wrap(_to_native(raw, code))
        end = stop
    if end != len(data):
        raise bad("data", f"{len(data) - end} bytes after the last tensor belong to none")
    return OrderedDict((name, out[name]) for name, _ in entries)


def _no_duplicates(pairs):
    names = [k for k, _ in pairs]
    twice = sorted({k for k in names if names.count(k) > 1})
    if twice:
        raise ValueError(f"a name appears twice: {twice[0]!r}")
    return OrderedDict(pairs)


def _entry(name, info, bad):
    """(dtype code, shape, begin, end) of one header entry, each field checked."""
    if not isinstance(info, dict):
        raise bad(f"tensor {name!r}", f"is a JSON {type(info).__name__}, not an object")
    code, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if code in _UNREADABLE:
        raise bad(f"tensor {name!r} field 'dtype'", f"tensor {name!r} has dtype {code}, which "
                  f"NumPy (and so minigrad) cannot hold; convert it in PyTorch first, e.g. "
                  f"save_file({{k: v.float() for k, v in state.items()}}, path)")
    if code not in _CODES and code != "BF16":
        raise bad(f"tensor {name!r} field 'dtype'", f"{_show(code)} is not a safetensors dtype")
    if not (isinstance(shape, list) and all(_count(d) for d in shape)):
        raise bad(f"tensor {name!r} field 'shape'", f"{_show(shape)} is not a list of "
                                                    f"non-negative integers")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_count, offsets))
            and offsets[0] <= offsets[1]):
        raise bad(f"tensor {name!r} field 'data_offsets'", f"{_show(offsets)} is not a pair "
                                                           f"[begin, end] with begin <= end")
    size = math.prod(shape) * _storage(code).itemsize
    if offsets[1] - offsets[0] != size:
        raise bad(f"tensor {name!r} field 'data_offsets'", f"[{offsets[0]}, {offsets[1]}) "
                  f"holds {offsets[1] - offsets[0]} bytes, but {code} {shape} needs {size}")
    return code, tuple(shape), offsets[0], offsets[1]


def _count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _show(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _storage(code):
    return np.dtype(np.uint16 if code == "BF16" else _CODES[code]).newbyteorder("<")


def _to_native(raw, code):
    """A native-order copy (the file's buffer is read-only and may be big-endian-foreign);
    BF16 widened to float32 by placing its 16 bits in the upper half."""
    if code == "BF16":
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(raw.dtype.newbyteorder("="), copy=True)
