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
import struct
from collections import OrderedDict

import numpy as np

from .tensor import Tensor

# the format's dtype codes; BF16 and the F8 kinds have no NumPy type, so they are read-only
# errors (with advice) rather than codes we could silently misread
_CODES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U64": np.uint64, "U32": np.uint32,
          "U16": np.uint16, "U8": np.uint8, "BOOL": np.bool_}
_NAMES = {np.dtype(t): code for code, t in _CODES.items()}
_MAX_HEADER = 100_000_000  # the reference reader's limit: larger means a corrupt length


def is_safetensors(path) -> bool:
    """Whether the file starts like a safetensors file (a plausible length, then '{')."""
    with open(path, "rb") as f:
        head = f.read(9)
    return len(head) == 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] < _MAX_HEADER


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
    """The {name: Tensor} dict in a safetensors file's bytes; every problem names `path`."""
    def bad(why):
        return ValueError(f"load: '{path}' is not a valid safetensors file: {why}")

    if len(blob) < 8:
        raise bad("shorter than its 8-byte header length")
    n = struct.unpack("<Q", blob[:8])[0]
    if n > _MAX_HEADER or 8 + n > len(blob):
        raise bad(f"its header length {n} does not fit the file's {len(blob)} bytes")
    try:  # an OrderedDict keeps the writer's order, which is the state dict's
        header = json.loads(blob[8:8 + n].decode("utf-8"), object_pairs_hook=OrderedDict)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad(f"its header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    header.pop("__metadata__", None)
    data = memoryview(blob)[8 + n:]
    entries = sorted(header.items(), key=lambda kv: kv[1].get("data_offsets", [0])[0]
                     if isinstance(kv[1], dict) else 0)
    out, end = OrderedDict(), 0
    for name, info in entries:
        try:
            code, shape, (begin, stop) = info["dtype"], tuple(info["shape"]), info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise bad(f"the entry for {name!r} lacks dtype, shape or data_offsets") from None
        if code not in _CODES:
            raise ValueError(f"load: '{path}': tensor {name!r} has dtype {code}, which NumPy "
                             f"(and so minigrad) cannot hold; convert it in PyTorch first, e.g. "
                             f"save_file({{k: v.float() for k, v in state.items()}}, path)")
        dtype = np.dtype(_CODES[code]).newbyteorder("<")
        if begin != end or stop - begin != int(np.prod(shape)) * dtype.itemsize:
            raise bad(f"the bytes of {name!r} ([{begin}, {stop}) for {code} {list(shape)}) do "
                      f"not follow the previous tensor's end ({end}) or do not match its size")
        if stop > len(data):
            raise bad(f"it is truncated: {name!r} ends at byte {stop} of {len(data)}")
        arr = np.frombuffer(data[begin:stop], dtype=dtype).reshape(shape)
        out[name] = Tensor._wrap(arr.astype(arr.dtype.newbyteorder("="), copy=True))
        end = stop
    if end != len(data):
        raise bad(f"{len(data) - end} bytes after the last tensor belong to none")
    return OrderedDict((k, out[k]) for k in header)
