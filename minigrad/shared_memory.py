"""Memory that several processes map: what `Tensor.share_memory_()` moves a tensor into.

Each block is a file in /dev/shm (the temporary directory where there is none) mapped with
`mmap`, under one of PyTorch's two sharing strategies (`multiprocessing.set_sharing_strategy`):

- "file_descriptor" (the default, as in PyTorch): the file is removed as soon as it is made
  and the block lives as long as some process maps it or holds its descriptor. A tensor is
  sent as a duplicate of the descriptor (multiprocessing's `DupFd`), so nothing can be left
  behind in /dev/shm; the sender must live until the receiver has it, and each shared block
  holds open descriptors (two: Python's mmap keeps a duplicate; PyTorch's "too many open
  files" limit comes sooner).
- "file_system": the file keeps its name, `minigrad_<pid>_<random>`, and a count kept after
  the data (changed under `flock`, as PyTorch's shared-memory manager keeps one): each
  process's mapping counts one until the arrays on it die there or the process exits, and
  each tensor sent and not yet received counts one; the process that brings it to zero
  removes the file. A sender may exit before the receiver takes the tensor; a message never
  received leaves its file.

A process that receives a tensor maps the same memory, so an in-place update by one process
is seen by all; a forked child inherits the mapping itself. Python's
`multiprocessing.shared_memory` is not used: on Python 3.11 it starts a resource-tracker
process on first use and unlinks blocks a child merely attached to.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import weakref

import numpy as np

_attached = weakref.WeakValueDictionary()  # (pid, name) -> the owner array mapped there
_counted = {}  # token -> (path, header, pid): the "file_system" mappings this process counts
_exit_hook = [None]  # the pid of the process whose exit hook is registered
STRATEGIES = ("file_descriptor", "file_system")
strategy = ["file_descriptor"]  # how blocks made from now on are shared


class SharedMap(mmap.mmap):
    """A mapping of one shared block: `name` tells the block apart in every process, `fd` is
    the descriptor a "file_descriptor" block is held and sent by (-1 for "file_system")."""
    name = ""
    fd = -1


def directory():
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    import tempfile  # only where there is no /dev/shm (and not on every import of minigrad)
    return tempfile.gettempdir()


def _header(nbytes):
    """Where a "file_system" block's count is in its file: after the data, 8-byte aligned."""
    return (max(nbytes, 1) + 7) // 8 * 8


def _adjust(path, at, delta):
    """Add delta to a "file_system" block's count; remove the file when it reaches zero."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        n = int.from_bytes(os.pread(fd, 8, at), "little", signed=True) + delta
        os.pwrite(fd, n.to_bytes(8, "little", signed=True), at)
        if n <= 0:
            os.unlink(path)
    finally:
        os.close(fd)  # and the lock with it


def _release(mapping, token):
    try:
        mapping.close()
    except BufferError:  # an array made on the mapping outside this module still lives
        pass
    if mapping.fd >= 0:
        os.close(mapping.fd)
    entry = _counted.get(token)
    if entry is not None and entry[2] == os.getpid():  # not a forked child's inherited one
        del _counted[token]
        _adjust(entry[0], entry[1], -1)


def _release_all_at_exit():
    for token, (path, at, pid) in list(_counted.items()):
        if pid == os.getpid():
            del _counted[token]
            _adjust(path, at, -1)


def _register_exit_hook():
    """Release this process's "file_system" counts when it exits. multiprocessing's
    children end with `os._exit`, which runs no `atexit` hook, so the hook is
    multiprocessing's own finaliser, run last (after queues have flushed what they send)."""
    if _exit_hook[0] != os.getpid():
        from multiprocessing import util
        util.Finalize(None, _release_all_at_exit, exitpriority=-100)
        _exit_hook[0] = os.getpid()


def _own(mapping, nbytes, counted=None):
    """The uint8 array that owns the mapping's memory in this process, released with it."""
    owner = np.ndarray((nbytes,), np.uint8, buffer=mapping)
    token = object()
    if counted is not None:
        _counted[token] = counted
        _register_exit_hook()
    weakref.finalize(owner, _release, mapping, token)
    _attached[os.getpid(), mapping.name] = owner
    return owner


def new_shared_bytes(nbytes):
    """A new shared block of nbytes zero bytes (by the current strategy), as the uint8 array
    that owns its mapping."""
    nbytes = int(nbytes)
    name = f"minigrad_{os.getpid()}_{os.urandom(8).hex()}"
    path, at = os.path.join(directory(), name), _header(nbytes)
    by_descriptor = strategy[0] == "file_descriptor"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if by_descriptor:
            os.unlink(path)  # the memory lives while some process maps it or holds fd
            os.ftruncate(fd, max(nbytes, 1))  # mmap refuses length 0
        else:
            os.ftruncate(fd, at + 8)
            os.pwrite(fd, (1).to_bytes(8, "little", signed=True), at)  # this mapping
        mapping = SharedMap(fd, max(nbytes, 1))
    except BaseException:
        os.close(fd)
        if not by_descriptor:
            os.unlink(path)
        raise
    mapping.name = name
    if by_descriptor:
        mapping.fd = fd
        return _own(mapping, nbytes)
    os.close(fd)
    return _own(mapping, nbytes, (path, at, os.getpid()))


def sending(owner):
    """What a tensor on shared block `owner` is sent with: a duplicate of its descriptor, or
    (by name) None, the block then kept until the receiver maps it."""
    mapping = owner.base
    if mapping.fd >= 0:
        from multiprocessing.reduction import DupFd
        return DupFd(mapping.fd)
    _adjust(os.path.join(directory(), mapping.name), _header(owner.nbytes), +1)
    return None


def attach(name, nbytes, handle):
    """Receive a tensor on shared block `name` (sent with `handle`): the block's owner array
    in this process, mapped once per process, so tensors received from one block share
    memory here too."""
    owner = _attached.get((os.getpid(), name))
    if handle is not None:
        fd = handle.detach()
        if owner is not None:
            os.close(fd)
            return owner
        mapping = SharedMap(fd, max(nbytes, 1))
        mapping.name, mapping.fd = name, fd
        return _own(mapping, nbytes)
    path, at = os.path.join(directory(), name), _header(nbytes)
    if owner is not None:
        _adjust(path, at, -1)
        return owner
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        raise RuntimeError(f"shared memory {name} is gone: every process that held this "
                           f"tensor released it before this process received it") from None
    try:
        mapping = SharedMap(fd, max(nbytes, 1))
    finally:
        os.close(fd)
    mapping.name = name
    return _own(mapping, nbytes, (path, at, os.getpid()))  # takes over the send's count


def shared_name(owner):
    """The block's name if `owner` (an array that owns its memory) is a shared mapping."""
    base = owner.base
    return base.name if isinstance(base, SharedMap) else None


def is_shared_array(owner):
    return shared_name(owner) is not None
