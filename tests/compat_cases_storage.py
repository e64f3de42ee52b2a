"""Compatibility cases: the raw-memory API (`data_ptr`, storages, `as_strided`, `set_`,
`resize_`), shared memory (`share_memory_`, `Module.share_memory`) and
`torch.multiprocessing` with real (forked) processes. Addresses differ between the libraries,
so the programs return them relative to each other. Draws no inputs from the shared stream:
it has a stream of its own."""
import numpy as np

from compat_table import A, case

CASES = []
add = CASES.append
_rng = np.random.default_rng(31)


def g64(*shape):
    return A(_rng.uniform(-2.0, 2.0, shape), True)


@add
@case("Tensor.data_ptr", "Tensor.untyped_storage", "minigrad.UntypedStorage",
      inputs=(A(np.arange(12.0, dtype=np.float32).reshape(3, 4)),))
def _(lib, x):
    s = x[1:].untyped_storage()
    v = x.t()[1:]
    fresh = lib.UntypedStorage(3)
    return (v.data_ptr() - x.data_ptr(), s.data_ptr() == x.data_ptr(), s.nbytes(), s.size(),
            s[4], s.tolist()[4:8], isinstance(s, lib.UntypedStorage), fresh.nbytes(),
            x[2].data_ptr() - x.data_ptr(), lib.empty(0).data_ptr())


@add
@case("Tensor.storage", "minigrad.TypedStorage",
      inputs=(A(np.arange(6, dtype=np.int64).reshape(2, 3)),))
def _(lib, x):
    s = x.t().storage()
    s[1] = 10
    return (s.size(), s.tolist(), s.element_size(), s.nbytes(), x, isinstance(s, lib.TypedStorage),
            lib.TypedStorage([1, 2], dtype=lib.int64).tolist())


@add
@case("Tensor.is_set_to", "Tensor.set_", inputs=(A(np.arange(6.0)),))
def _(lib, y):
    x = y.new_zeros(2)
    x.set_(y.untyped_storage(), 1, (2, 2), (2, 1))
    z = y.new_zeros(1).set_(y)
    return (x, x.stride(), x.storage_offset(), x.is_set_to(y), z.is_set_to(y),
            lib.zeros(3).set_().shape)


@add
@case("Tensor.as_strided", "minigrad.as_strided", inputs=(g64(6),))
def _(lib, x):
    a = x.as_strided((3, 3), (1, 1))  # overlapping windows: gradients add up
    b = lib.as_strided(x[1:], (2, 2), (1, 2))
    return a * a, b * 3, a.stride(), b.storage_offset()


@add
@case("Tensor.as_strided_", inputs=(g64(2, 3),))
def _(lib, x):
    y = x * 2
    y.as_strided_((2, 2), (1, 3), 1)
    return y * y, y.shape, y.stride()


@add
@case("Tensor.resize_", "Tensor.resize_as_", inputs=(A(np.arange(6.0)),))
def _(lib, x):
    t = x.clone()
    t.resize_(2, 2)
    first = t.clone()
    t.resize_(5)
    u = lib.arange(3.0).resize_as_(lib.zeros(1, 2))
    return first, t, u, t.stride()


_raises = [
    (("Tensor.as_strided",), lambda lib: lib.arange(6.0).as_strided((3, 3), (3, 1)),
     "out of bounds for storage of size 24"),
    (("Tensor.resize_",), lambda lib: lib.zeros(3, requires_grad=True).resize_(2),
     "cannot resize variables that require grad"),
    (("Tensor.set_",), lambda lib: lib.zeros(3).set_(lib.ones(2, dtype=lib.float64)),
     "Could not set tensor of type"),
]
for _names, _program, _match in _raises:
    add(case(*_names, compare="raises", match=_match)(_program))


@add
@case("Tensor.share_memory_", "Tensor.is_shared", "nn.Module.share_memory")
def _(lib):
    t = lib.arange(4.0)
    v = t[1:]
    before = t.is_shared()
    t.share_memory_()
    v.add_(1)  # the view moved with it
    model = lib.nn.Linear(2, 1).share_memory()
    return (before, t.is_shared(), v.is_shared(), t, t.untyped_storage().is_shared(),
            all(p.is_shared() for p in model.parameters()))


def _child(queue, t):
    t.mul_(2)
    queue.put(t.sum().item())


def _scale(i, t):
    t.mul_(2)


def _failing(i):
    raise ValueError("child failed")


@add
@case("multiprocessing.get_context", "multiprocessing.Process", "multiprocessing.Queue",
      "multiprocessing.SimpleQueue", "multiprocessing.get_all_sharing_strategies",
      "multiprocessing.get_sharing_strategy", "multiprocessing.set_sharing_strategy",
      "multiprocessing.start_processes", "multiprocessing.spawn",
      "multiprocessing.ProcessRaisedException", "multiprocessing.ProcessExitedException",
      "multiprocessing.ProcessContext", "multiprocessing.cpu_count",
      "multiprocessing.get_start_method", "multiprocessing.set_start_method")
def _(lib):
    mp = lib.multiprocessing
    ctx = mp.get_context("fork")
    queue, simple = ctx.Queue(), ctx.SimpleQueue()
    t = lib.ones(3)
    p = ctx.Process(target=_child, args=(queue, t))
    p.start()
    total = queue.get(timeout=60)
    p.join(60)
    simple.put(lib.arange(3.0))
    back = simple.get()
    mp.set_sharing_strategy(mp.get_sharing_strategy())
    try:
        mp.start_processes(_failing, nprocs=1, start_method="fork")
        raised = None
    except mp.ProcessRaisedException as e:
        raised = "ValueError: child failed" in str(e)
    ones = lib.ones(1)
    context = mp.start_processes(_scale, args=(ones,), nprocs=1, join=False,
                                 start_method="fork")
    while not context.join():
        pass
    return (total, t, p.exitcode, back, ones, sorted(mp.get_all_sharing_strategies()), raised,
            isinstance(context, mp.ProcessContext), issubclass(mp.ProcessExitedException,
                                                               Exception),
            mp.cpu_count() > 0, mp.get_start_method(allow_none=True) in (None, "fork", "spawn", "forkserver"),
            callable(mp.set_start_method), callable(mp.spawn))
