"""Compatibility cases: the switches training scripts flip on a CPU (compile, accelerator, cuda,
cpu, autocast, backends flags, matmul precision, determinism, threads, distributed training,
data-parallel wrappers), each compared with what PyTorch does without a GPU."""
import warnings

import numpy as np

from compat_table import case, f32

CASES = []
add = CASES.append


def _raises(name, program, match):
    add(case(name, compare="raises", match=match)(program))


def _linear(lib, n_in, n_out, seed=0):
    """nn.Linear with the same weights in both libraries (their random streams differ)."""
    rng = np.random.default_rng(seed)
    lin = lib.nn.Linear(n_in, n_out)
    lin.load_state_dict({"weight": lib.tensor(rng.standard_normal((n_out, n_in), np.float32)),
                         "bias": lib.tensor(rng.standard_normal(n_out, np.float32))})
    return lin


# --- compile ----------------------------------------------------------------------------------

@add
@case("minigrad.compile", inputs=(f32(2, 3),))
def _(lib, x):
    lin = _linear(lib, 3, 2)
    # disable=True: PyTorch returns the model itself, as minigrad always does, so the case
    # does not spend seconds in PyTorch's compiler; the options are still checked by both
    model = lib.compile(lin, mode="max-autotune", disable=True)

    @lib.compile(fullgraph=True, dynamic=False, disable=True)
    def double(t):
        return t * 2
    scaled = lib.compile(lambda t: t + 1, backend="eager", disable=True)
    return model(x), double(x), scaled(x), model is lin


_raises("minigrad.compile", lambda lib: lib.compile(lambda t: t, mode="fastest"),
        "unrecognized mode")


# --- accelerator, cuda, cpu ---------------------------------------------------------------------

@add
@case("accelerator.is_available", "accelerator.current_accelerator", "accelerator.device_count")
def _(lib):
    acc = lib.accelerator
    dev = acc.current_accelerator() or lib.device("cpu")  # as device-generic scripts pick
    return acc.is_available(), acc.current_accelerator(), acc.device_count(), str(dev)


for _name in ("current_device_index", "set_device_index", "synchronize"):
    _raises(f"accelerator.{_name}", lambda lib, n=_name: getattr(lib.accelerator, n)(
        *(() if n != "set_device_index" else (0,))), "none is available")

for _name in ("synchronize", "current_device"):
    _raises(f"cuda.{_name}", lambda lib, n=_name: getattr(lib.cuda, n)(), "CPU only")
_raises("cuda.set_device", lambda lib: lib.cuda.set_device(0), "CPU only")
_raises("cuda.set_device", lambda lib: lib.cuda.set_device("cpu"), "expected a cuda device")


@add
@case("cuda.set_device", "cuda.empty_cache", "cuda.is_bf16_supported")
def _(lib):
    return lib.cuda.set_device(-1), lib.cuda.empty_cache(), lib.cuda.is_bf16_supported()


@add
@case("cpu.is_available", "cpu.device_count", "cpu.current_device", "cpu.synchronize")
def _(lib):
    return (lib.cpu.is_available(), lib.cpu.device_count(), lib.cpu.current_device(),
            lib.cpu.synchronize())


_raises("Tensor.pin_memory", lambda lib: lib.ones(2).pin_memory(), "none is available")


@add
@case("Tensor.is_pinned", inputs=(f32(3),))
def _(lib, x):
    return x.is_pinned(), x.detach().is_pinned()


# --- autocast -----------------------------------------------------------------------------------

@add
@case("minigrad.autocast", "amp.autocast", "cpu.amp", "cuda.amp", inputs=(f32(2, 3), f32(3, 2)))
def _(lib, a, b):
    """Where PyTorch disables autocast (a GPU type without a GPU, enabled=False), the numbers
    are the float32 ones in both; autocast on the CPU itself is a documented difference."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn that CUDA is missing and autocast is off
        with lib.autocast("cuda"):
            y1 = a @ b
        with lib.amp.autocast("cpu", enabled=False):
            y2 = lib.nn.functional.linear(a, b.t())
        with lib.cpu.amp.autocast(enabled=False):
            y3 = (a @ b).softmax(-1)
        with lib.cuda.amp.autocast(dtype=lib.float16):
            y4 = a @ b

        @lib.autocast("cpu", enabled=False)
        def product(u, v):
            return u @ v
        y5 = product(a, b)
    return y1, y2, y3, y4, y5


@add
@case("minigrad.is_autocast_enabled", "minigrad.get_autocast_dtype")
def _(lib):
    """What a script reads back: whether autocast is on for a device type in this thread, and
    its dtype (the float dtypes' names, so that PyTorch's bfloat16 compares by name)."""
    def name(dtype):
        return str(dtype).split(".")[-1].split("'")[0]
    seen = [lib.is_autocast_enabled(), lib.is_autocast_enabled("cpu"),
            name(lib.get_autocast_dtype("cpu")), name(lib.get_autocast_dtype("cuda"))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autocast("cpu", dtype=lib.float16):
            seen += [lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(),
                     name(lib.get_autocast_dtype("cpu"))]
            with lib.autocast("cpu", enabled=False):
                seen.append(lib.is_autocast_enabled("cpu"))
            seen.append(lib.is_autocast_enabled("cpu"))
        with lib.autocast("cuda"):  # no GPU: disabled in both
            seen.append(lib.is_autocast_enabled("cuda"))
    return seen + [lib.is_autocast_enabled("cpu")]


_raises("minigrad.is_autocast_enabled", lambda lib: lib.is_autocast_enabled("tpu"), "tpu")
_raises("minigrad.autocast", lambda lib: lib.autocast(0), "device_type")
_raises("amp.autocast", lambda lib: lib.amp.autocast("tpu"), "tpu")


# --- precision, determinism, threads, backends flags -------------------------------------------

@add
@case("minigrad.set_float32_matmul_precision", "minigrad.get_float32_matmul_precision",
      "backends.cuda")
def _(lib):
    matmul = lib.backends.cuda.matmul
    seen = [lib.get_float32_matmul_precision(), matmul.allow_tf32]
    lib.set_float32_matmul_precision("high")
    seen += [lib.get_float32_matmul_precision(), matmul.allow_tf32]
    lib.set_float32_matmul_precision("highest")
    seen.append(matmul.allow_tf32)
    # the older flag, as GPT scripts set it (PyTorch refuses to read the precision back
    # after the two spellings are mixed, so only the flag is read here)
    matmul.allow_tf32 = True
    seen.append(matmul.allow_tf32)
    matmul.allow_tf32 = False
    seen += [matmul.allow_tf32, matmul.allow_fp16_reduced_precision_reduction]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.set_float32_matmul_precision("fastest")  # a warning, and no change, in both
    lib.set_float32_matmul_precision("medium")
    seen.append(lib.get_float32_matmul_precision())
    lib.set_float32_matmul_precision("highest")
    return seen + [lib.get_float32_matmul_precision(), matmul.allow_tf32]


@add
@case("minigrad.use_deterministic_algorithms", "minigrad.are_deterministic_algorithms_enabled",
      "minigrad.is_deterministic_algorithms_warn_only_enabled")
def _(lib):
    seen = [lib.are_deterministic_algorithms_enabled()]
    lib.use_deterministic_algorithms(True, warn_only=True)
    seen += [lib.are_deterministic_algorithms_enabled(),
             lib.is_deterministic_algorithms_warn_only_enabled()]
    lib.use_deterministic_algorithms(False)
    return seen + [lib.are_deterministic_algorithms_enabled(),
                   lib.is_deterministic_algorithms_warn_only_enabled()]


@add
@case("minigrad.set_num_threads", "minigrad.get_num_threads")
def _(lib):
    before = lib.get_num_threads()
    lib.set_num_threads(1)
    one = lib.get_num_threads()
    lib.set_num_threads(before)
    return one, lib.get_num_threads() == before


_raises("minigrad.set_num_threads", lambda lib: lib.set_num_threads(0), "positive integer")


# --- memory formats (values never change; the type and the rank are checked) -------------------

@add
@case("minigrad.channels_last", "minigrad.channels_last_3d", "minigrad.contiguous_format",
      "minigrad.preserve_format", "minigrad.memory_format")
def _(lib):
    # built here, not drawn as inputs=: a draw would shift the later cases' shared random inputs
    x = lib.arange(24.0).reshape(1, 2, 3, 4)
    return (x.contiguous(memory_format=lib.channels_last), x.to(memory_format=lib.channels_last),
            lib.zeros_like(x, memory_format=lib.preserve_format),
            x.clone(memory_format=lib.contiguous_format),
            isinstance(lib.channels_last_3d, lib.memory_format))


_raises("minigrad.channels_last",
        lambda lib: lib.zeros(2, 3).contiguous(memory_format=lib.channels_last), "rank 4")
_raises("minigrad.memory_format", lambda lib: lib.zeros(2).contiguous(memory_format=1),
        "memory_format")


# --- layouts (every tensor is strided; the others are names to compare with) -------------------

@add
@case("minigrad.layout", "minigrad.strided", "minigrad.sparse_coo", "minigrad.sparse_csr",
      "minigrad.sparse_csc", "minigrad.sparse_bsr", "minigrad.sparse_bsc", "minigrad.jagged",
      "Tensor.layout", "Tensor.is_sparse", "Tensor.is_sparse_csr")
def _(lib):
    x = lib.zeros(2, 3, layout=lib.strided)
    others = (lib.sparse_coo, lib.sparse_csr, lib.sparse_csc, lib.sparse_bsr, lib.sparse_bsc,
              lib.jagged)
    return (x, x.layout == lib.strided, [x.layout == o for o in others], x.is_sparse,
            x.is_sparse_csr, all(isinstance(o, lib.layout) for o in (lib.strided, *others)),
            lib.ones_like(x, layout=lib.strided), x.new_full((2,), 3.0, layout=lib.strided))


_raises("minigrad.strided", lambda lib: lib.empty(2, pin_memory=True), "accelerator")


@add
@case("backends.cudnn", "backends.mps", "backends.cuda")
def _(lib):
    b = lib.backends
    return (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
            b.cudnn.is_available(), b.cudnn.version(), b.mps.is_available(), b.mps.is_built(),
            b.cuda.is_built())


# --- distributed training and data-parallel wrappers ---------------------------------------------

@add
@case("distributed.is_initialized", "distributed.ReduceOp")
def _(lib):
    dist = lib.distributed
    single = not (dist.is_available() and dist.is_initialized())  # the usual guard
    return dist.is_initialized(), single, dist.ReduceOp.SUM.name if hasattr(
        dist.ReduceOp.SUM, "name") else str(dist.ReduceOp.SUM).rsplit(".", 1)[-1]


for _name in ("get_rank", "get_world_size", "barrier", "destroy_process_group"):
    _raises(f"distributed.{_name}", lambda lib, n=_name: getattr(lib.distributed, n)(),
            "has not been initialized" if _name != "destroy_process_group" else "initialized")
_raises("distributed.all_reduce", lambda lib: lib.distributed.all_reduce(lib.ones(1)),
        "has not been initialized")
_raises("distributed.init_process_group",
        lambda lib: lib.distributed.init_process_group(backend="nccl"), "'nccl'")
_raises("nn.parallel.DistributedDataParallel",
        lambda lib: lib.nn.parallel.DistributedDataParallel(lib.nn.Linear(2, 2)),
        "has not been initialized")


@add
@case("nn.DataParallel", "nn.parallel.DataParallel", inputs=(f32(4, 3),))
def _(lib, x):
    lin = _linear(lib, 3, 2)
    dp = lib.nn.DataParallel(lin, device_ids=[0])
    back = lib.nn.parallel.DataParallel(_linear(lib, 3, 2, seed=1))
    back.load_state_dict(dp.state_dict())
    return (dp(x), sorted(dp.state_dict()), dp.module is lin, back(x),
            isinstance(dp, lib.nn.Module), len(list(dp.parameters())))


# --- optimizers' implementation flags ------------------------------------------------------

@add
@case("optim.AdamW", "optim.Adam", "optim.SGD")
def _(lib):
    w0 = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    runs = []
    for make in (lambda p: lib.optim.AdamW(p, lr=0.1, fused=True),
                 lambda p: lib.optim.AdamW(p, lr=0.1, foreach=True, capturable=False),
                 lambda p: lib.optim.Adam(p, lr=0.1, foreach=False, fused=None,
                                          differentiable=False),
                 lambda p: lib.optim.SGD(p, lr=0.1, momentum=0.9, foreach=True),
                 lambda p: lib.optim.SGD(p, lr=0.1, fused=True)):
        w = lib.tensor(w0, requires_grad=True)
        opt = make([w])
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        g = opt.param_groups[0]
        runs.append((w.detach(), g["foreach"], g["fused"], g["differentiable"]))
    return runs


_raises("optim.AdamW", lambda lib: lib.optim.AdamW([lib.ones(1, requires_grad=True)],
                                                   fused=True, foreach=True),
        "cannot be `True` together")
