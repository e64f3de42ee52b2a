"""Memory that several processes map: what `Tensor.share_memory_()` moves a tensor into.

Each block is a file in /dev/shm (the temporary directory where there is none) mapped with
`mmap`, named `minigrad_<pid>_<random>`: PyTorch's "file_system" sharing strategy. A process
that receives a tensor (through `minigrad.multiprocessing`'s queues, or as an argument of a
spawned process) maps the same file by name, so an in-place update by one process is seen by
all; a forked child inherits the mapping itself.

Lifetime: the process that made a block removes its file when the last array on the block
dies there (a `weakref.finalize` on the array that owns the mapping) or when it exits,
whichever comes first, and each process unmaps its own mapping when its arrays on it die;
mappings already made stay valid after the file is removed. So a tensor sent to another
process must stay alive in the sender, and the sender must not exit, until the receiver has
it (PyTorch's own strategies ask the same). Python's own `multiprocessing.shared_memory` is not
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
_created = {}  # path -> pid of the process that made the block (forked children inherit it)
_exit_hook = [None]  # the pid of the process whose exit hook is registered


class SharedMap(mmap.mmap):
    """A mapping of one shared block; `name` is its file's name (in `directory()`)."""
    name = ""


def directory():
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) \
        else tempfile.gettempdir()


def _unlink(path):
    if _created.get(path) == os.getpid():  # not in a forked child that inherited the entry
        del _created[path]
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _release(mapping, path):
    try:
        mapping.close()
    except BufferError:  # an array made on the mapping outside this module still lives
        pass
    _unlink(path)


def _unlink_all_at_exit():
    for path in list(_created):
        _unlink(path)


def _register_exit_hook():
    """Remove this process's blocks when it exits. multiprocessing's children end with
    `os._exit`, which runs no `atexit` hook, so the hook is multiprocessing's own
    finaliser, run last (after queues have flushed what they were sending)."""
    if _exit_hook[0] != os.getpid():
        from multiprocessing import util
        util.Finalize(None, _unlink_all_at_exit, exitpriority=-100)
        _exit_hook[0] = os.getpid()


def _map(name, nbytes, create):
    path = os.path.join(directory(), name)
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        raise RuntimeError(f"shared memory {name} is gone: the process that sent this tensor "
                           f"let it die, or exited, before this process received it; keep "
                           f"it alive in the sender until then") from None
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
    if create:
        _created[path] = os.getpid()
        _register_exit_hook()
    owner = np.ndarray((nbytes,), np.uint8, buffer=mapping)
    weakref.finalize(owner, _release, mapping, path)
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
