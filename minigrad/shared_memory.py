"""Memory that several processes map: what `Tensor.share_memory_()` moves a tensor into.

Each block is a file in /dev/shm (the temporary directory where there is none) mapped with
`mmap`, named `minigrad_<pid>_<random>`: PyTorch's "file_system" sharing strategy. A process
that receives a tensor (through `minigrad.multiprocessing`'s queues, or as an argument of a
spawned process) maps the same file by name, so an in-place update by one process is seen by
all; a forked child inherits the mapping itself.

Lifetime: the process that made a block removes its file when the last array on the block
dies there (a `weakref.finalize` on the array that owns the mapping), and each process
unmaps its own mapping the same way; mappings already made stay valid after the file is
removed. So a tensor sent to another process must stay alive in the sender until the
receiver has it (PyTorch asks the same). Python's own `multiprocessing.shared_memory` is not
used: on Python 3.11 it starts a resource-tracker process on first use and unlinks blocks a
child merely attached to.
"""
from __future__ import annotations

import mmap
import os
import secrets
import tempfile
import weakref

import numpy as np

_attached = weakref.WeakValueDictionary()  # name -> the owner array this process mapped


class SharedMap(mmap.mmap):
    """A mapping of one shared block; `name` is its file's name (in `directory()`)."""
    name = ""


def directory():
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) \
        else tempfile.gettempdir()


def _release(mapping, path, creator):
    try:
        mapping.close()
    except BufferError:  # an array made on the mapping outside this module still lives
        pass
    if creator == os.getpid():  # not in a forked child that inherited the finalizer
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _map(name, nbytes, create):
    path = os.path.join(directory(), name)
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        if create:
            os.ftruncate(fd, max(nbytes, 1))  # mmap refuses length 0
        mapping = SharedMap(fd, max(nbytes, 1))
    except BaseException:
        os.close(fd)
        if create:
            os.unlink(path)
        raise
    os.close(fd)
    mapping.name = name
    owner = np.ndarray((nbytes,), np.uint8, buffer=mapping)
    weakref.finalize(owner, _release, mapping, path, os.getpid() if create else None)
    _attached[name] = owner
    return owner


def new_shared_bytes(nbytes):
    """A new shared block of nbytes zero bytes, as the uint8 array that owns its mapping."""
    name = f"minigrad_{os.getpid()}_{secrets.token_hex(8)}"
    return _map(name, int(nbytes), create=True)


def attach(name, nbytes):
    """The owner array of shared block `name` in this process (mapped once per process, so
    tensors received from one block share memory here too)."""
    owner = _attached.get(name)
    if owner is None:
        owner = _map(name, int(nbytes), create=False)
    return owner


def shared_name(owner):
    """The block's name if `owner` (an array that owns its memory) is a shared mapping."""
    base = owner.base
    return base.name if isinstance(base, SharedMap) else None


def is_shared_array(owner):
    return shared_name(owner) is not None
