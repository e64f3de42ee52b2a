"""`save` and `load`: checkpoints as a single `.npz` file, without pickle.

Pickle (what `torch.save` uses) can run arbitrary code when a file is loaded, so a checkpoint
from the internet would be a program. Here a file holds only data:

* every array (a Tensor's data, a NumPy array, a NumPy scalar) is an entry `a0`, `a1`, ... of
  the zip archive NumPy writes with `np.savez`, which keeps its dtype and shape exactly;
* the structure around them is one JSON document in the entry `__minigrad__`. Dicts, tuples,
  tensors and arrays become small tagged objects, e.g. {"t": "tensor", "i": 3} for a Tensor
  stored as `a3`, so loading rebuilds the same types: tuple vs list, dict vs OrderedDict (in
  order), integer keys (JSON keys would be strings only, so keys are stored as encoded values),
  Python ints of any size (JSON numbers are exact in Python) and floats including nan/inf.

`load` always calls `np.load(..., allow_pickle=False)`. A `.safetensors` path is written and read
in that format instead (safetensors_format.py), for moving weights to and from PyTorch.

Writes are atomic: the archive goes to a temporary file in the destination's directory which
is then renamed over the target with `os.replace` (atomic on POSIX and Windows). A crash or an
error mid-write leaves the old checkpoint untouched and no half file.
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections import OrderedDict

import numpy as np

from . import safetensors_format
from .platform.device import check_device
from .tensor import Tensor

FORMAT = "minigrad-checkpoint"
VERSION = 1
_META = "__minigrad__"


# --- encoding ---------------------------------------------------------------------------------

def _encode(obj, arrays, path):
    """`obj` as JSON-able data; arrays are appended to `arrays` and referenced by index."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.generic):  # np.float32(1.5) comes back as np.float32, not float
        return {"t": "scalar", "i": _add(arrays, np.asarray(obj), path)}
    if isinstance(obj, int):  # any size: Python's JSON writes and reads big ints exactly
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, Tensor):
        return {"t": "tensor", "i": _add(arrays, obj._array, path), "rg": obj.requires_grad}
    if isinstance(obj, np.ndarray):
        return {"t": "array", "i": _add(arrays, obj, path)}
    if isinstance(obj, bytes):
        return {"t": "bytes", "i": _add(arrays, np.frombuffer(obj, np.uint8), path)}
    if isinstance(obj, tuple):
        return {"t": "tuple", "v": [_encode(v, arrays, f"{path}/{i}") for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_encode(v, arrays, f"{path}/{i}") for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        items = [[_encode_key(k, path), _encode(v, arrays, f"{path}/{k}")] for k, v in obj.items()]
        return {"t": "odict" if isinstance(obj, OrderedDict) else "dict", "items": items}
    raise TypeError(f"save: cannot store object of type {type(obj).__name__} at "
                    f"{_where(path)}")


def _encode_key(key, path):
    if isinstance(key, np.generic):  # a NumPy scalar key becomes the Python number
        key = key.item()
    if key is None or isinstance(key, (bool, int, float, str)):
        return _encode(key, [], path)
    if isinstance(key, tuple):
        return {"t": "tuple", "v": [_encode_key(k, path) for k in key]}
    raise TypeError(f"save: cannot store a dict key of type {type(key).__name__} at "
                    f"{_where(path)}")


def _where(path):
    """'state/3/foo' for the path built while walking the object ('<root>' at the top)."""
    return repr(path.lstrip("/") or "<root>")


def _add(arrays, arr, path):
    if arr.dtype.hasobject:
        raise TypeError(f"save: cannot store an array of dtype object at "
                        f"{_where(path)} (it would need pickle)")
    arrays.append(arr)
    return len(arrays) - 1


def _decode(node, arrays):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, arrays) for v in node]
    tag = node["t"]
    if tag == "tensor":
        t = Tensor._wrap(arrays[node["i"]])
        t.requires_grad = bool(node.get("rg", False))
        return t
    if tag == "array":
        return arrays[node["i"]]
    if tag == "scalar":
        return arrays[node["i"]][()]
    if tag == "bytes":
        return arrays[node["i"]].tobytes()
    if tag == "tuple":
        return tuple(_decode(v, arrays) for v in node["v"])
    if tag in ("dict", "odict"):
        pairs = ((_decode(k, arrays), _decode(v, arrays)) for k, v in node["items"])
        return OrderedDict(pairs) if tag == "odict" else dict(pairs)
    raise ValueError(f"unknown tag {tag!r}")


# --- files ------------------------------------------------------------------------------------

def save(obj, path):
    """Write `obj` (nested dicts/lists/tuples of tensors, arrays, numbers, strings) to `path`.

    A path ending in `.safetensors` gets the safetensors format instead, which holds a flat
    {name: tensor} dict (a state_dict) and is read by PyTorch's `safetensors.torch.load_file`.
    """
    path = os.fspath(path)
    if path.endswith(".safetensors"):
        blob = safetensors_format.encode(obj)  # every check runs before the disk is touched
        atomic_write(path, lambda f: f.write(blob))
        return
    arrays = []
    meta = {"format": FORMAT, "version": VERSION, "root": _encode(obj, arrays, "")}
    entries = {f"a{i}": a for i, a in enumerate(arrays)}
    entries[_META] = np.array(json.dumps(meta))
    atomic_write(path, lambda f: np.savez(f, **entries))


def atomic_write(path, write, op="save"):
    """Call `write(file)` on a binary temporary file beside `path`, then rename it over `path`:
    readers see the old file or the new one, never half of it. `op` names the caller in errors."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{op}: cannot write '{path}': directory '{directory}' does "
                                f"not exist")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the rename makes it visible
        os.chmod(tmp, _default_mode(path))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _default_mode(path):
    """An existing file keeps its permissions; a new one gets the usual 0o666 minus umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def load(path, map_location=None, weights_only=True):
    """Read back what `save` wrote, or any safetensors file; errors name the path.

    `map_location` is PyTorch's: here only the CPU exists, so it may be None, "cpu", a CPU
    device, a dict mapping devices to the CPU, or a function (which could only return CPU
    data, so it is not called).
    """
    path = os.fspath(path)
    _check_map_location(map_location)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file: '{path}'")
    if safetensors_format.is_safetensors(path):
        with open(path, "rb") as f:
            return safetensors_format.decode(f.read(), path)
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"load: '{path}' is not a minigrad checkpoint, or is truncated or "
                         f"corrupt ({type(e).__name__}: {e})") from e
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"load: '{path}' holds a single NumPy array, not a minigrad checkpoint "
                         f"(written by np.save?)")
    with data:
        if _META not in data.files:
            names = ", ".join(data.files[:5]) + (", ..." if len(data.files) > 5 else "")
            raise ValueError(f"load: '{path}' is an .npz archive without minigrad metadata; "
                             f"it was not written by minigrad.save (arrays: {names})")
        try:
            meta = json.loads(str(data[_META][()]))
            if not isinstance(meta, dict):
                raise ValueError(f"metadata is a JSON {type(meta).__name__}, not an object")
            if meta.get("format") != FORMAT:
                raise ValueError(f"unexpected format {meta.get('format')!r}")
            if meta.get("version", 0) > VERSION:
                raise ValueError(f"format version {meta['version']} is newer than this "
                                 f"minigrad reads ({VERSION})")
            arrays = LazyArrays(data)
            return _decode(meta["root"], arrays)
        except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError,
                RecursionError, zipfile.BadZipFile) as e:  # crafted metadata included
            raise ValueError(f"load: '{path}' is truncated or corrupt "
                             f"({type(e).__name__}: {e})") from e


def _check_map_location(where):
    if where is None or callable(where):
        return
    targets = where.values() if isinstance(where, dict) else [where]
    for t in targets:
        check_device(t, "load(map_location=...)")


class LazyArrays:
    """arrays[i] reads entry `a{i}` from the archive (each entry read once, when referenced)."""

    def __init__(self, npz):
        self.npz = npz

    def __getitem__(self, i):
        name = f"a{int(i)}"
        if name not in self.npz.files:
            raise KeyError(f"the structure refers to array {name}, which the archive lacks")
        return self.npz[name]
