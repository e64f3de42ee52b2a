"""minigrad's checkpoint format: NumPy's .npz archive with the structure as JSON.

* every array (a Tensor's data, a NumPy array, a NumPy scalar) is an entry `a0`, `a1`, ... of
  the zip archive NumPy writes with `np.savez`, which keeps its dtype and shape exactly;
* the structure around them is one JSON document in the entry `__minigrad__`. Dicts, tuples,
  tensors and arrays become small tagged objects, e.g. {"t": "tensor", "i": 3} for a Tensor
  stored as `a3`, so loading rebuilds the same types: tuple vs list, dict vs OrderedDict (in
  order), integer keys (stored as encoded values, since JSON keys are strings), Python ints of
  any size and floats including nan/inf;
* sets, dtypes and devices are tagged values too; anything else (a whole model, an
  optimizer, a custom class) is pickled, as
  `torch.save` does, into an entry of its own referenced by {"t": "pickle", "i": k}. Loading
  such a node needs `weights_only=False`; everything else loads without pickle.

Reading checks every field before using it, so a crafted file is one FileFormatError that
names the file and the field (`root/model/w: field 'i' ...`), never an exception from deep
inside, and nothing is returned unless everything decoded.
"""
from __future__ import annotations

import json
import math
import zipfile
from collections import OrderedDict

import numpy as np

from .file_errors import FileFormatError, WeightsOnlyError
from .platform.device import device
from .tensor import Tensor

FORMAT = "minigrad-checkpoint"
VERSION = 1
META = "__minigrad__"
_TAGS = ("tensor", "array", "scalar", "bytes", "tuple", "dict", "odict", "set", "frozenset",
         "dtype", "device", "pickle")


# --- writing ------------------------------------------------------------------------------------

class Encoder:
    """Turns an object into (JSON-able structure, list of arrays); `pickler(obj)` gives the
    bytes of an object the structure cannot express."""

    def __init__(self, pickler):
        self.arrays, self.pickler = [], pickler

    def entries(self, obj):
        """The {name: array} entries of the archive holding `obj`."""
        meta = {"format": FORMAT, "version": VERSION, "root": self.encode(obj, "")}
        entries = {f"a{i}": a for i, a in enumerate(self.arrays)}
        entries[META] = np.array(json.dumps(meta))
        return entries

    def encode(self, obj, path):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, np.generic) and not obj.dtype.hasobject:
            return {"t": "scalar", "i": self._add(np.asarray(obj))}
        if isinstance(obj, int):  # any size: Python's JSON writes and reads big ints exactly
            return int(obj)
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, Tensor):  # a Parameter too, loaded as a Tensor
            return {"t": "tensor", "i": self._add(obj._array), "rg": obj.requires_grad}
        if isinstance(obj, np.ndarray) and not obj.dtype.hasobject:
            return {"t": "array", "i": self._add(obj)}
        if isinstance(obj, bytes):
            return {"t": "bytes", "i": self._add(np.frombuffer(obj, np.uint8))}
        if isinstance(obj, tuple):  # a namedtuple too, loaded as a tuple
            return {"t": "tuple", "v": [self.encode(v, f"{path}/{i}") for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, f"{path}/{i}") for i, v in enumerate(obj)]
        if type(obj) in (set, frozenset) and all(_plain_key(k) for k in obj):
            return {"t": type(obj).__name__, "v": [self.encode(_key(k), path) for k in obj]}
        if (isinstance(obj, np.dtype) and obj.kind in "biufc" and obj.isnative) or (
                isinstance(obj, type) and issubclass(obj, np.generic) and obj is not np.object_):
            return {"t": "dtype", "v": np.dtype(obj).name}  # minigrad.float32, numpy.float32
        if isinstance(obj, device):
            return {"t": "device", "v": str(obj)}
        if isinstance(obj, dict) and all(_plain_key(k) for k in obj):
            items = [[self.encode(_key(k), path), self.encode(v, f"{path}/{k}")]
                     for k, v in obj.items()]
            return {"t": "odict" if isinstance(obj, OrderedDict) else "dict", "items": items}
        return self._pickle(obj, path)

    def _pickle(self, obj, path):
        try:
            blob = self.pickler(obj)
        except Exception as e:  # pickle raises many types (PicklingError, AttributeError...)
            raise TypeError(f"save: cannot store object of type {type(obj).__name__} at "
                            f"{where(path)}: it cannot be pickled ({type(e).__name__}: {e})"
                            ) from e
        kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
        return {"t": "pickle", "i": self._add(np.frombuffer(blob, np.uint8)), "type": kind}

    def _add(self, arr):
        self.arrays.append(arr)
        return len(self.arrays) - 1


def _key(k):
    return k.item() if isinstance(k, np.generic) else k


def _plain_key(k):
    k = _key(k)
    if k is None or isinstance(k, (bool, int, float, str)):
        return True
    return isinstance(k, tuple) and all(_plain_key(x) for x in k)


def where(path):
    """'state/3/foo' for the path built while walking the object ('<root>' at the top)."""
    return repr(path.lstrip("/") or "<root>")


# --- reading ------------------------------------------------------------------------------------

class Decoder:
    """Rebuilds the object from the JSON structure and the archive's entries, checking each
    field; `unpickle(bytes)` is None under weights_only=True."""

    def __init__(self, path, npz, unpickle):
        self.path, self.npz, self.unpickle = path, npz, unpickle
        self.count = sum(1 for n in npz.files if n != META)

    def fail(self, at, why):
        return FileFormatError(self.path, f"{where(at)}", why)

    def decode(self, node, at):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v, f"{at}/{i}") for i, v in enumerate(node)]
        if not isinstance(node, dict):
            raise self.fail(at, f"a JSON {type(node).__name__} where a value belongs")
        tag = node.get("t")
        if tag not in _TAGS:
            raise self.fail(at, f"field 't' is {tag!r}, not one of {', '.join(_TAGS)}")
        if tag == "tuple":
            return tuple(self.decode(v, f"{at}/{i}")
                         for i, v in enumerate(self.field(node, "v", list, at)))
        if tag in ("dict", "odict"):
            return self.mapping(node, tag, at)
        if tag in ("set", "frozenset"):
            items = [self.decode(v, f"{at}/{i}") for i, v in
                     enumerate(self.field(node, "v", list, at))]
            try:
                return set(items) if tag == "set" else frozenset(items)
            except TypeError:
                raise self.fail(at, f"a {tag} of unhashable items") from None
        if tag in ("dtype", "device"):
            return self.named(node, tag, at)
        arr = self.array(node, at)
        if tag == "tensor":
            return self.tensor(node, arr, at)
        if tag == "array":
            return arr
        if tag == "scalar":
            if arr.ndim:
                raise self.fail(at, f"a scalar's entry has shape {arr.shape}, not ()")
            return arr[()]
        if arr.ndim != 1 or arr.dtype != np.uint8:
            raise self.fail(at, f"a {tag} entry must be 1-d uint8, got {arr.dtype} {arr.shape}")
        if tag == "bytes":
            return arr.tobytes()
        return self.unpickled(node, arr, at)

    def field(self, node, name, kind, at):
        value = node.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise self.fail(at, f"field {name!r} is {_show(value)}, not a {kind.__name__}")
        return value

    def array(self, node, at):
        i = node.get("i")
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < self.count:
            raise self.fail(at, f"field 'i' is {_show(i)}, not an entry index in "
                                f"[0, {self.count})")
        name = f"a{i}"
        if name not in self.npz.files:
            raise self.fail(at, f"field 'i' refers to entry {name}, which the archive lacks")
        return read_entry(self.npz, name, self.path)

    def tensor(self, node, arr, at):
        rg = node.get("rg", False)
        if not isinstance(rg, bool):
            raise self.fail(at, f"field 'rg' is {_show(rg)}, not a bool")
        if arr.dtype.kind not in "biufc":
            raise self.fail(at, f"a tensor's entry has dtype {arr.dtype}, not a number type")
        if rg and arr.dtype.kind not in "fc":
            raise self.fail(at, f"field 'rg' asks for gradients of a {arr.dtype} tensor; only "
                                f"floating point tensors can require them")
        t = Tensor._wrap(arr)
        t.requires_grad = rg
        return t

    def named(self, node, tag, at):
        name = self.field(node, "v", str, at)
        try:
            return np.dtype(name) if tag == "dtype" else device(name)
        except (TypeError, ValueError):
            raise self.fail(at, f"field 'v' is {_show(name)}, not a {tag}") from None

    def mapping(self, node, tag, at):
        pairs = []
        for n, item in enumerate(self.field(node, "items", list, at)):
            if not (isinstance(item, list) and len(item) == 2):
                raise self.fail(at, f"item {n} is {_show(item)}, not a [key, value] pair")
            key = self.decode(item[0], f"{at}/<key {n}>")
            try:
                hash(key)
            except TypeError:
                raise self.fail(at, f"key {n} is a {type(key).__name__}, which cannot be a "
                                    f"dict key") from None
            pairs.append((key, self.decode(item[1], f"{at}/{key}")))
        return OrderedDict(pairs) if tag == "odict" else dict(pairs)

    def unpickled(self, node, arr, at):
        kind = node.get("type") if isinstance(node.get("type"), str) else "object"
        if self.unpickle is None:
            raise WeightsOnlyError(self.path, where(at), kind)
        try:
            return self.unpickle(arr.tobytes())
        except Exception as e:  # weights_only=False: the caller trusts the file
            raise self.fail(at, f"the pickled {kind} cannot be unpickled "
                                f"({type(e).__name__}: {e})") from None


def read_entry(npz, name, path):
    """Entry `name` of an open NpzFile, after checking that the bytes its .npy header promises
    are there (a crafted header could otherwise ask NumPy to allocate terabytes first)."""
    try:
        info = npz.zip.getinfo(name + ".npy")
        with npz.zip.open(info) as f:
            version = np.lib.format.read_magic(f)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read(f)
            have = info.file_size - f.tell()
        need = math.prod(shape) * dtype.itemsize
        if not dtype.hasobject and need > have:
            raise FileFormatError(path, f"entry {name}", f"its header promises {dtype} "
                                  f"{shape} ({need} bytes) but it holds {have}")
        return npz[name]
    except FileFormatError:
        raise
    except (OSError, ValueError, EOFError, KeyError, RuntimeError,
            zipfile.BadZipFile) as e:  # zlib errors, object arrays, bad .npy headers
        raise FileFormatError(path, f"entry {name}", f"unreadable "
                              f"({type(e).__name__}: {str(e)[:120]})") from None


def _show(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def decode_archive(path, npz, unpickle):
    """The object stored in an open NpzFile that has the META entry."""
    text = read_entry(npz, META, path)
    try:
        meta = json.loads(str(text[()]))
    except (ValueError, IndexError, RecursionError) as e:
        raise FileFormatError(path, f"entry {META}", f"not readable JSON "
                              f"({type(e).__name__}: {str(e)[:80]})") from None
    if not isinstance(meta, dict):
        raise FileFormatError(path, f"entry {META}", f"metadata is a JSON "
                              f"{type(meta).__name__}, not an object")
    if meta.get("format") != FORMAT:
        raise FileFormatError(path, "field 'format'", f"is {_show(meta.get('format'))}, not "
                              f"{FORMAT!r}")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FileFormatError(path, "field 'version'", f"is {_show(version)}, not a version")
    if version > VERSION:
        raise FileFormatError(path, "field 'version'", f"format version {version} is newer "
                              f"than this minigrad reads ({VERSION})")
    if "root" not in meta:
        raise FileFormatError(path, "field 'root'", "missing")
    try:
        return Decoder(path, npz, unpickle).decode(meta["root"], "")
    except RecursionError:
        raise FileFormatError(path, "field 'root'", "nested too deeply") from None
