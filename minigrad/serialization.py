"""`save` and `load` with PyTorch's semantics and safety default.

`save(obj, f)` writes any picklable object to a path or a binary file object, as `torch.save`
does. The file is minigrad's checkpoint format (checkpoint_format.py: NumPy's .npz with the
structure as JSON), in which tensors, arrays, numbers, strings and plain containers are stored
without pickle and only other objects (a whole model, an optimizer, a custom class) are
pickled. A path ending in `.safetensors` gets that format instead (safetensors_format.py), for
moving weights to and from PyTorch.

`load(f)` reads those files, the zip files of `torch.save` (torch_format.py) and NumPy's own
.npz and .npy files (as `np.load` gives them: a dict of arrays, or the array). Its default,
`weights_only=True` as in PyTorch, refuses anything pickled with an error that says so and
names `weights_only=False`, because unpickling can run arbitrary code: a checkpoint from the
internet could be a program. Every malformed field of every format is one FileFormatError
(a ValueError) naming the file and the field.

Writes to a path are atomic: the file goes to a temporary file in the destination's directory,
which is then renamed over the target with `os.replace` (atomic on POSIX and Windows). A crash
or an error mid-write leaves the old file untouched and no half file.
"""
from __future__ import annotations

import io
import os
import pickle
import tempfile
import zipfile

import numpy as np

from . import checkpoint_format, safetensors_format, torch_format
from .errors import MissingDirectoryError
from .file_errors import FileFormatError, WeightsOnlyError
from .platform.device import check_device

DEFAULT_PROTOCOL = 2  # PyTorch's


# --- saving -------------------------------------------------------------------------------------

def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Write `obj` to `f`, a path or a binary file object (PyTorch's `torch.save`).

    Tensors, arrays, numbers, strings, bytes and lists, tuples and dicts of them are stored
    without pickle; any other object is pickled with `pickle_module` (loading it then needs
    `weights_only=False`). A path ending in `.safetensors` holds a flat {name: tensor} dict
    (a state_dict) in the safetensors format, which `safetensors.torch.load_file` reads.
    PyTorch's two private format switches are accepted and change nothing: minigrad writes one
    format, whose arrays record their byte order.
    """
    if _is_file(f, "write"):
        f.write(_encode(obj, pickle_module, pickle_protocol))
        return
    path = os.fspath(f)
    blob = (safetensors_format.encode(obj) if path.endswith(".safetensors")
            else _encode(obj, pickle_module, pickle_protocol))
    atomic_write(path, lambda out: out.write(blob))  # every check ran before the disk is touched


def _encode(obj, pickle_module, protocol):
    entries = checkpoint_format.Encoder(
        lambda o: pickle_module.dumps(o, protocol=protocol)).entries(obj)
    buf = io.BytesIO()
    np.savez(buf, **entries)
    return buf.getvalue()


def atomic_write(path, write, op="save"):
    """Call `write(file)` on a binary temporary file beside `path`, then rename it over `path`:
    readers see the old file or the new one, never half of it. `op` names the caller in errors."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise MissingDirectoryError(f"{op}: cannot write '{path}': directory '{directory}' "
                                    f"does not exist (Parent directory {directory} does not "
                                    f"exist.)")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())  # the data is on disk before the rename makes it visible
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


# --- loading ------------------------------------------------------------------------------------

def load(f, map_location=None, pickle_module=pickle, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what `save` wrote, a .safetensors file or a `torch.save` zip file, from a path or a
    binary file object (PyTorch's `torch.load`).

    `weights_only` (None means True, PyTorch's default) refuses pickled objects, naming
    `weights_only=False`, which unpickles them with `pickle_module` (only for trusted files).
    `map_location` may only name the CPU: None, "cpu", a CPU device, a dict mapping devices to
    the CPU, or a function (which could only return CPU data, so it is not called); tensors
    that PyTorch saved on a GPU load onto the CPU. `mmap` is accepted and the file is read
    into memory.
    """
    _check_map_location(map_location)
    trusted = weights_only is False
    unpickle = (lambda b: pickle_module.loads(b, **pickle_load_args)) if trusted else None
    if _is_file(f, "read"):
        name = getattr(f, "name", None) or f"<{type(f).__name__}>"
        return _load_bytes(f.read(), str(name), unpickle, trusted)
    path = os.fspath(f)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file: '{path}'")
    with open(path, "rb") as src:
        head = src.read(64)
    if (path.endswith(".safetensors") or safetensors_format.is_safetensors_head(head)
            or not zipfile.is_zipfile(path)):
        with open(path, "rb") as src:
            return _load_bytes(src.read(), path, unpickle, trusted)
    return _load_zip(path, path, unpickle, trusted)  # read lazily, entry by entry


def _load_bytes(blob, name, unpickle, trusted):
    if name.endswith(".safetensors") or safetensors_format.is_safetensors_head(blob[:64]):
        return safetensors_format.decode(blob, name)  # by name, so that its errors are told
    buf = io.BytesIO(blob)
    if zipfile.is_zipfile(buf):
        return _load_zip(buf, name, unpickle, trusted)
    return _not_a_checkpoint(buf, name, trusted)


def _load_zip(source, name, unpickle, trusted):
    try:
        with zipfile.ZipFile(source) as z:
            names = z.namelist()
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise FileFormatError(name, "", f"the zip archive is unreadable ({e})") from None
    if torch_format.is_torch_zip(names):
        return torch_format.load(source, name, trusted)
    if hasattr(source, "seek"):
        source.seek(0)
    try:
        data = np.load(source, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise FileFormatError(name, "", f"not a minigrad checkpoint ({type(e).__name__}: "
                              f"{e})") from None
    with data:
        if checkpoint_format.META not in data.files:
            return _plain_npz(source, data, name, trusted)
        return checkpoint_format.decode_archive(name, data, unpickle)


def _plain_npz(source, data, name, trusted):
    """An archive of `np.savez`: {entry: array}, as `np.load` gives it. Object arrays need
    pickle, so only `weights_only=False` reads them."""
    out = {}
    for entry in data.files:
        try:
            out[entry] = checkpoint_format.read_entry(data, entry, name)
        except FileFormatError as e:
            if "allow_pickle" not in str(e):
                raise
            if not trusted:
                raise WeightsOnlyError(name, f"entry {entry}", "NumPy object array") from None
            if hasattr(source, "seek"):
                source.seek(0)
            with np.load(source, allow_pickle=True) as unsafe:
                out[entry] = unsafe[entry]
    return out


def _not_a_checkpoint(buf, name, trusted):
    """A .npy array, or the error for a file that is neither zip nor safetensors, saying what
    it looks like."""
    head = buf.getvalue()[:8]
    if head.startswith(b"\x93NUMPY"):  # np.save's .npy: the array, as np.load gives it
        buf.seek(0)
        try:
            return np.load(buf, allow_pickle=False)
        except ValueError as e:
            if "allow_pickle" in str(e):
                if not trusted:
                    raise WeightsOnlyError(name, "", "NumPy object array") from None
                buf.seek(0)
                return np.load(buf, allow_pickle=True)
            raise FileFormatError(name, "", f"a damaged .npy array ({e})") from None
        except (OSError, EOFError) as e:
            raise FileFormatError(name, "", f"a damaged .npy array ({e})") from None
    if head[:1] == b"\x80":
        raise FileFormatError(name, "", "it is a bare pickle (torch.save's format before "
                              "PyTorch 1.6, or pickle.dump); save it again with a recent "
                              "torch.save or as safetensors", kind="is not a minigrad checkpoint")
    raise FileFormatError(name, "", "it is neither minigrad's .npz, safetensors nor a "
                          "torch.save zip file", kind="is not a minigrad checkpoint")


def _is_file(f, method):
    return hasattr(f, method) and not isinstance(f, (str, bytes, os.PathLike))


def _check_map_location(where):
    if where is None or callable(where):
        return
    targets = where.values() if isinstance(where, dict) else [where]
    for t in targets:
        check_device(t, "load(map_location=...)")
