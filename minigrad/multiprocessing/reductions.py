"""How tensors cross process boundaries in `minigrad.multiprocessing`: by reference to their
shared memory, as PyTorch's reductions send them.

`init_reductions()` registers `reduce_tensor` with `multiprocessing`'s pickler for `Tensor`
and each of its subclasses (`nn.Parameter`), so a tensor put in a queue or passed to a new
process is moved into shared memory (`Tensor.share_memory_()`) and the receiver maps the same
memory: its in-place updates are the sender's. `import minigrad` changes nothing in the
process (where `import torch` registers PyTorch's): importing `minigrad.multiprocessing` calls
it, and so do the first use of one of its names, `share_memory_()`, a DataLoader's workers and
the receiving of a tensor, for the subclasses defined since. Ordinary pickling (`pickle`,
`minigrad.save`) is untouched and still copies the values.
"""
from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

from ..ops.strided import element_offset, element_strides, memory_owner, strided_view
from ..shared_memory import attach, sending, shared_name


def rebuild_tensor(cls, name, nbytes, handle, dtype, size, stride, offset, requires_grad):
    """The receiving side: a tensor of class cls on shared block `name`."""
    init_reductions()  # this process sends tensors on by reference too
    owner = attach(name, nbytes, handle)
    t = cls.__new__(cls)
    t._init(strided_view(owner, dtype, size, stride, offset), requires_grad)
    return t


def reduce_tensor(t):
    if t._requires_grad and t.grad_fn is not None:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    t.share_memory_()
    a = t._array
    owner = memory_owner(a)
    return (rebuild_tensor, (type(t), shared_name(owner), owner.nbytes, sending(owner), a.dtype,
                             a.shape,
                             element_strides(a), element_offset(a, owner), t._requires_grad))


def _classes(cls):
    yield cls
    for sub in cls.__subclasses__():
        yield from _classes(sub)


def init_reductions():
    """Send every tensor class (those defined so far) by reference to shared memory."""
    from ..tensor import Tensor
    for cls in _classes(Tensor):
        if ForkingPickler._extra_reducers.get(cls) is not reduce_tensor:
            ForkingPickler.register(cls, reduce_tensor)
