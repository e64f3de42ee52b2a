"""`share_memory_()` and `minigrad.multiprocessing` against PyTorch, with real processes:
tensors through a queue by reference under both of PyTorch's sharing strategies (a
child's in-place update seen by the parent, a child's tensor received by the parent), `spawn` (arguments shared, a child's exception and
exit code raised in the parent), the refusal to send a non-leaf that requires grad, and the
lifetime of shared memory: released when its tensors die in every process that had them (no
file left in /dev/shm, no descriptor left open), and nothing started by importing."""
import gc
import os
import subprocess
import sys
import textwrap
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import minigrad as mg
import minigrad.multiprocessing as mmp


def blocks(pid=None):
    prefix = f"minigrad_{os.getpid() if pid is None else pid}_"
    return {f for f in os.listdir("/dev/shm") if f.startswith(prefix)}


def all_blocks():
    return {f for f in os.listdir("/dev/shm") if f.startswith("minigrad_")}


def open_descriptors():
    return len(os.listdir("/proc/self/fd"))


def _add_in_child(inbox, outbox):
    t = inbox.get()
    t.add_(1)
    outbox.put(t.is_shared())


def _make_in_child(lib_name, strategy, outbox, release):
    import importlib
    lib = importlib.import_module(lib_name)
    lib.multiprocessing.set_sharing_strategy(strategy)  # a spawned child starts afresh
    outbox.put(lib.arange(4.0) * 2)  # dropped at once: its memory waits for the receiver
    if strategy == "file_system":
        outbox.put(lib.ones(2))  # and this one for a receiver after the sender has exited
    release.wait(30)


def queue_program(lib, method, strategy):
    """Tensors through queues: to a child that adds 1 in place, and from a child that made
    them (received, with "file_system", after that child has exited)."""
    mp = lib.multiprocessing
    default = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    try:
        ctx = mp.get_context(method)
        inbox, outbox, release = ctx.Queue(), ctx.Queue(), ctx.Event()
        t = lib.zeros(2, 3)
        child = ctx.Process(target=_add_in_child, args=(inbox, outbox))
        child.start()
        inbox.put(t[1])  # a view: its memory, t's, moves into shared memory
        shared_there = outbox.get(timeout=60)
        child.join(60)
        maker = ctx.Process(target=_make_in_child,
                            args=(lib.__name__, strategy, outbox, release))
        maker.start()
        got = outbox.get(timeout=60)
        out = [t.tolist(), t.is_shared(), shared_there, child.exitcode, got.tolist(),
               got.is_shared()]
        release.set()
        maker.join(60)
        if strategy == "file_system":
            out.append(outbox.get(timeout=60).tolist())
        return out + [maker.exitcode], maker.pid
    finally:
        mp.set_sharing_strategy(default)


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_queue_sends_tensors_by_reference_as_pytorch(torch, strategy):
    gc.collect()
    before = all_blocks()
    want, _ = queue_program(torch, "fork", strategy)
    got, maker = queue_program(mg, "fork", strategy)
    assert got == want
    assert got[:6] == [[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], True, True, 0, [0.0, 2.0, 4.0, 6.0],
                       True]
    gc.collect()
    assert all_blocks() <= before  # every block went when its last holder let it go


def test_queue_with_spawned_processes():
    gc.collect()
    before = all_blocks()
    # (spawn's arguments travel as descriptors in the spawn test below)
    got, maker = queue_program(mg, "spawn", "file_system")
    assert got == [[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], True, True, 0, [0.0, 2.0, 4.0, 6.0],
                   True, [1.0, 1.0], 0]
    gc.collect()
    assert all_blocks() <= before


def _write_row(i, t):
    t[i].add_(i + 1)


def _fail(i, code):
    if code:
        os._exit(code)
    raise ValueError(f"boom in {i}")


def test_spawn_shares_arguments_and_raises_what_children_raise(torch):
    t = mg.zeros(2, 2)
    assert mmp.spawn(_write_row, args=(t,), nprocs=2) is None
    assert t.tolist() == [[1.0, 1.0], [2.0, 2.0]] and t.is_shared()
    for lib in (torch, mg):
        mp = lib.multiprocessing
        with pytest.raises(mp.ProcessRaisedException, match="ValueError: boom in 0"):
            mp.start_processes(_fail, args=(0,), nprocs=1, start_method="fork")
        with pytest.raises(mp.ProcessExitedException, match="exit code 3") as info:
            mp.start_processes(_fail, args=(3,), nprocs=1, start_method="fork")
        assert info.value.exit_code == 3 and info.value.error_index == 0
        context = mp.start_processes(_write_row, args=(lib.zeros(1, 2),), nprocs=1,
                                     join=False, start_method="fork")
        while not context.join():
            pass
        assert len(context.pids()) == 1


def test_non_leaf_requiring_grad_is_refused(torch):
    for lib in (torch, mg):
        lib.multiprocessing.get_context("fork")  # registers the reductions
        with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
            ForkingPickler.dumps(lib.ones(2, requires_grad=True) * 2)


def test_share_memory_moves_a_tensor_and_its_views(torch):
    for lib in (torch, mg):
        t = lib.arange(6.0).reshape(2, 3)
        v = t[1]
        before = t.data_ptr()
        assert not t.is_shared() and t.share_memory_() is t and t.is_shared()
        assert v.is_shared() and v.data_ptr() == t.data_ptr() + 3 * t.element_size()
        assert t.data_ptr() != before and t.tolist() == [[0, 1, 2], [3, 4, 5]]
        v.add_(1)
        assert t[1].tolist() == [4.0, 5.0, 6.0]
        ptr = t.data_ptr()
        assert t.share_memory_().data_ptr() == ptr  # already shared: stays
        assert t.untyped_storage().is_shared()


def test_module_share_memory(torch):
    for lib in (torch, mg):
        model = lib.nn.Linear(3, 2)
        model(lib.ones(1, 3)).sum().backward()
        assert model.share_memory() is model
        assert all(p.is_shared() and p.grad.is_shared() for p in model.parameters())
        assert all(p.requires_grad and p.is_leaf for p in model.parameters())


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_shared_memory_is_released_when_tensors_die(strategy):
    mmp.set_sharing_strategy(strategy)
    try:
        gc.collect()
        held, fds = blocks(), open_descriptors()
        t = mg.ones(1000).share_memory_()
        views = [t[:10], t.view(10, 100)]
        made = blocks() - held
        assert len(made) == (strategy == "file_system")  # the other's file is gone at once
        assert open_descriptors() > fds  # Python's mmap keeps a descriptor of its own
        del t
        gc.collect()
        assert blocks() - held == made  # views keep it
        del views
        gc.collect()
        assert blocks() - held == set() and open_descriptors() == fds
    finally:
        mmp.set_sharing_strategy("file_descriptor")


def test_resize_of_shared_memory_refuses_to_grow():
    # PyTorch 2.13 crashes (a segmentation fault) here; its message for a storage it cannot
    # resize is this one
    t = mg.zeros(4).share_memory_()
    t.resize_(2)  # within its memory: fine
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.resize_(8)


def test_sharing_strategy(torch):
    for mp in (torch.multiprocessing, mmp):
        assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
        assert mp.get_sharing_strategy() == "file_descriptor"
        mp.set_sharing_strategy("file_system")
        assert mp.get_sharing_strategy() == "file_system"
        mp.set_sharing_strategy("file_descriptor")
        with pytest.raises(AssertionError):
            mp.set_sharing_strategy("pigeons")


def test_importing_starts_nothing():
    script = textwrap.dedent("""
        import threading, multiprocessing, multiprocessing.resource_tracker as rt
        from multiprocessing.reduction import ForkingPickler
        import minigrad, minigrad.nn
        assert minigrad.Tensor not in ForkingPickler._extra_reducers  # import changes nothing
        import minigrad.multiprocessing
        assert not multiprocessing.active_children()
        assert threading.active_count() == 1
        assert rt._resource_tracker._pid is None
        assert minigrad.Tensor in ForkingPickler._extra_reducers  # as torch.multiprocessing's
        t = minigrad.ones(3).share_memory_()
        assert minigrad.nn.Parameter in ForkingPickler._extra_reducers
        assert rt._resource_tracker._pid is None and threading.active_count() == 1
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_names_are_pythons_multiprocessing():
    import multiprocessing
    assert mmp.Process is multiprocessing.Process and mmp.cpu_count() >= 1
    assert mmp.get_start_method(allow_none=True) in (None, "fork", "spawn", "forkserver")
    assert sorted(mmp.__all__) == mmp.__all__ and all(hasattr(mmp, n) for n in mmp.__all__)
    with pytest.raises(AttributeError):
        mmp.no_such_name
    assert np.array_equal(mg.zeros(2).share_memory_().numpy(), np.zeros(2))
