"""Compatibility cases: creating tensors, dtypes, devices, random numbers, conversions."""
import numpy as np

from compat_table import A, case, f32, f64

CASES = []
add = CASES.append

# --- tensor() and friends ----------------------------------------------------------------------


@add
@case("minigrad.tensor", "minigrad.float", "minigrad.long", "minigrad.bool")
def _(lib):
    return (lib.tensor([1.5, 2.0]), lib.tensor([[1, 2], [3, 4]]), lib.tensor(True),
            lib.tensor([1, 2], dtype=lib.float), lib.tensor([1.7, -1.7], dtype=lib.long),
            lib.tensor([0, 2], dtype=lib.bool), lib.tensor(3.5, requires_grad=True).detach())


@add
@case("minigrad.as_tensor", "minigrad.from_numpy", "Tensor.numpy")
def _(lib):
    a = np.arange(6.0).reshape(2, 3)
    t = lib.from_numpy(a)
    a[0, 0] = 100.0  # from_numpy shares memory with the array
    u = lib.as_tensor(a, dtype=lib.float32)
    return t, u, lib.as_tensor([1, 2]), t.numpy().sum().item()


@add
@case("minigrad.zeros", "minigrad.ones", "minigrad.full", "minigrad.eye")
def _(lib):
    return (lib.zeros(2, 3), lib.zeros((2, 3), dtype=lib.int64), lib.ones([4]), lib.ones(()),
            lib.full((2,), 3), lib.full((2, 2), 1.5), lib.full((1,), True), lib.eye(3),
            lib.eye(2, 3, dtype=lib.float64), lib.zeros(2, dtype=None))


@add
@case("minigrad.empty", "minigrad.empty_like", compare="meta")
def _(lib):
    return lib.empty(2, 3), lib.empty((4,), dtype=lib.long), lib.empty_like(lib.ones(2, 2))


@add
@case("minigrad.zeros_like", "minigrad.ones_like", "minigrad.full_like", inputs=(f64(2, 3),))
def _(lib, x):
    return (lib.zeros_like(x), lib.ones_like(x, dtype=lib.int32), lib.full_like(x, 7.0),
            lib.full_like(lib.zeros(2, dtype=lib.long), 2.7))


@add
@case("minigrad.arange", "minigrad.linspace", "minigrad.logspace")
def _(lib):
    return (lib.arange(5), lib.arange(1, 4), lib.arange(0, 1, 0.25), lib.arange(5.0),
            lib.arange(10, 0, -3), lib.arange(3, dtype=lib.float64), lib.linspace(0, 1, 5),
            lib.linspace(-1, 1, 4, dtype=lib.float64), lib.logspace(0, 2, 3))


# --- dtypes ------------------------------------------------------------------------------------

DTYPES = ("float16", "float32", "float64", "half", "double", "int8", "int16", "short", "int32",
          "int", "int64", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble",
          "uint16", "uint32", "uint64")


@add
@case(*(f"minigrad.{d}" for d in DTYPES))
def _(lib):
    return [lib.zeros(2, dtype=getattr(lib, d)) for d in DTYPES]


@add
@case("minigrad.finfo", "minigrad.iinfo")
def _(lib):
    return (float(lib.finfo(lib.float32).eps), float(lib.finfo(lib.float32).max),
            float(lib.finfo(lib.float16).tiny), int(lib.iinfo(lib.int32).max))


@add
@case("minigrad.bfloat16", compare="raises", match="bfloat16.*use float32")
def _(lib):
    lib.zeros(2, dtype=lib.bfloat16).numpy()  # PyTorch has the dtype but no NumPy array of it


@add
@case("Tensor.bfloat16", compare="raises", match="bfloat16.*use float32")
def _(lib):
    lib.zeros(2).bfloat16().numpy()


@add
@case("Tensor.chalf", compare="raises", match="NumPy has no")
def _(lib):
    lib.zeros(2).chalf().numpy()   # (PyTorch's CPU build has no complex32 to NumPy either)


@add
@case("minigrad.float8_e4m3fn", "minigrad.float8_e5m2", "minigrad.complex32", "minigrad.chalf",
      compare="raises", match="NumPy has no")
def _(lib):
    lib.ones(2, dtype=lib.float8_e4m3fn).numpy()


@add
@case("Tensor.short", "Tensor.char", "Tensor.cfloat", "Tensor.cdouble", "Tensor.is_cpu",
      "Tensor.is_meta", "Tensor.is_mps", "Tensor.is_xpu", "Tensor.is_mkldnn",
      "Tensor.is_quantized", "Tensor.is_nested", "Tensor.get_device",
      inputs=(A(np.random.default_rng(41).standard_normal((2, 3)).astype(np.float32)),))
def _(lib, x):   # (inputs of its own stream: the shared one's later draws stay as they were)
    return (x.short(), (x * 50).char(), x.cfloat(), x.cdouble(), x.is_cpu, x.is_meta, x.is_mps,
            x.is_xpu, x.is_mkldnn, x.is_quantized, x.is_nested, x.get_device())


@add
@case("Tensor.to", "Tensor.type", "Tensor.type_as", "Tensor.float", "Tensor.double",
      "Tensor.long", "Tensor.int", "Tensor.bool", "Tensor.half", "Tensor.byte", "Tensor.dtype",
      "Tensor.is_floating_point", "minigrad.is_floating_point", inputs=(f32(2, 3),))
def _(lib, x):
    return (x.to(lib.float64), x.to(dtype=lib.int64), x.to(lib.zeros(1, dtype=lib.int32)),
            x.to("cpu", lib.float64), x.double() * 2, x.long(), x.int(), x.bool(), x.half(),
            x.abs().byte(), x.type(lib.int64), x.type_as(lib.zeros(1, dtype=lib.float64)),
            x.float() is x, x.is_floating_point(), lib.is_floating_point(x.long()),
            x.dtype == lib.float32, x.type(lib.LongTensor), x.type("torch.DoubleTensor"))


@add
@case("minigrad.FloatTensor", "minigrad.DoubleTensor", "minigrad.HalfTensor",
      "minigrad.LongTensor", "minigrad.IntTensor", "minigrad.ShortTensor", "minigrad.CharTensor",
      "minigrad.ByteTensor", "minigrad.BoolTensor")
def _(lib):
    made = (lib.FloatTensor([1, 2]), lib.DoubleTensor([[0.5]]), lib.HalfTensor([1.0]),
            lib.LongTensor([1.7, -2.2]), lib.IntTensor([3]), lib.ShortTensor([4]),
            lib.CharTensor([-1]), lib.ByteTensor([255]), lib.BoolTensor([1, 0]))
    checks = (isinstance(lib.zeros(2), lib.FloatTensor), isinstance(lib.zeros(2), lib.LongTensor),
              isinstance(lib.zeros(2, dtype=lib.long), lib.LongTensor))
    return made, checks, lib.FloatTensor(2, 3).shape


# --- devices -----------------------------------------------------------------------------------

@add
@case("minigrad.device", "Tensor.device", "Tensor.cpu", "Tensor.is_cuda", "cuda.is_available",
      "cuda.device_count", "cuda.manual_seed", "cuda.manual_seed_all", inputs=(f32(3),))
def _(lib, x):
    dev = lib.device("cuda" if lib.cuda.is_available() else "cpu")
    lib.cuda.manual_seed(0)
    lib.cuda.manual_seed_all(0)
    y = x.to(dev) * 2
    z = lib.zeros(2, device=dev) + lib.ones(2, device="cpu")
    return (y, z, x.cpu() * 3, str(x.device), x.device == lib.device("cpu"),
            x.device == "cpu", x.is_cuda, lib.cuda.device_count(), str(lib.device("cuda:1")),
            lib.device("cuda", 0).index, lib.device("cpu").type)


@add
@case("Tensor.cuda", compare="raises", match="runs on the CPU only")
def _(lib):
    lib.zeros(2).cuda()  # no GPU in either library here


@add
@case("backends.cudnn", "backends.mps", "backends.cuda")
def _(lib):
    lib.backends.cudnn.deterministic = True
    lib.backends.cudnn.benchmark = False
    lib.backends.cuda.matmul.allow_tf32 = True  # as GPT training scripts do
    lib.backends.cudnn.allow_tf32 = True
    return lib.backends.mps.is_available(), lib.backends.cudnn.deterministic


# --- random numbers (compared by shape and dtype: the generators differ) -------------------------

@add
@case("minigrad.randn", "minigrad.rand", "minigrad.randint", "minigrad.randperm",
      "minigrad.manual_seed", "minigrad.Generator", "minigrad.seed", "minigrad.initial_seed",
      "minigrad.default_generator", compare="meta")
def _(lib):
    g = lib.Generator().manual_seed(42)
    lib.manual_seed(1)
    lib.seed()
    return (lib.randn(2, 3), lib.randn((4,), dtype=lib.float64), lib.rand(3),
            lib.rand(2, generator=g), lib.randint(2, (10,)), lib.randint(3, 7, (2, 2)),
            lib.randint(high=5, size=(3,)), lib.randint(low=1, high=5, size=(3,)),
            lib.randint(5, (2,), dtype=lib.float32), lib.randint(4, (), generator=g),
            lib.randperm(5), lib.randn(3, requires_grad=True).detach(),
            isinstance(lib.initial_seed(), int), g.initial_seed(),
            type(lib.default_generator).__name__ == "Generator")


@add
@case("minigrad.randint", compare="raises", match="ambiguous")
def _(lib):
    lib.randint(2, 10)  # randint(high, size) or randint(low, high) without a size?


@add
@case("minigrad.randn_like", "minigrad.rand_like", "minigrad.randint_like",
      compare="meta", inputs=(f64(2, 2),))
def _(lib, x):
    return (lib.randn_like(x), lib.rand_like(x, dtype=lib.float32), lib.randint_like(x, 5),
            lib.randint_like(x, 2, 9))


@add
@case("minigrad.get_rng_state", "minigrad.set_rng_state")
def _(lib):
    state = lib.get_rng_state()
    a = lib.rand(3)
    lib.set_rng_state(state)
    return bool((lib.rand(3) == a).all())


@add
@case("random.fork_rng")
def _(lib):
    lib.manual_seed(1)
    with lib.random.fork_rng():
        inside = lib.rand(4)
    after = lib.rand(4)
    with lib.random.fork_rng(enabled=False):
        lib.rand(1)
    return bool((inside == after).all()), bool((lib.rand(4) == after).all())


@add
@case("minigrad.multinomial", "Tensor.multinomial", "minigrad.bernoulli", "minigrad.normal",
      "Tensor.normal_", "Tensor.uniform_", compare="meta")
def _(lib):
    p = lib.tensor([[0.1, 0.0, 0.9], [0.5, 0.5, 0.0]])
    draws = lib.multinomial(p, 2)
    never = bool((draws[0] != 1).all()) and bool((draws[1] != 2).all())  # zero weight: never
    w = lib.empty(3, 4)
    w.normal_(0.0, 0.02)
    w.uniform_(-0.1, 0.1)
    return (draws, p[0].multinomial(5, replacement=True), never,
            lib.bernoulli(lib.full((3,), 0.5)), lib.normal(0.0, 1.0, size=(2,)),
            lib.normal(lib.zeros(3), 1.0), bool((w.abs() <= 0.1).all()), w)


@add
@case("minigrad.multinomial", compare="raises", match="without replacement")
def _(lib):
    lib.multinomial(lib.tensor([0.5, 0.5]), 3)


# --- description and conversion ------------------------------------------------------------------

@add
@case("Tensor.shape", "Tensor.size", "Tensor.ndim", "Tensor.dim", "Tensor.ndimension",
      "Tensor.numel", "Tensor.nelement", "Tensor.element_size", "minigrad.numel", "Tensor.is_contiguous",
      "Tensor.__len__", "Tensor.T", inputs=(f32(2, 3, grad=False),))
def _(lib, x):
    return (x.shape, x.size(), x.size(1), x.size(-1), x.ndim, x.dim(), x.ndimension(),
            x.numel(), x.nelement(),
            x.element_size(), lib.numel(x), x.is_contiguous(), len(x), x.T)


@add
@case("Tensor.item", "Tensor.tolist", "Tensor.__float__", "Tensor.__int__", "Tensor.__bool__",
      "Tensor.__index__", "Tensor.__format__", "Tensor.__iter__", "Tensor.__array__")
def _(lib):
    t = lib.tensor([[1.25, 2.5]])
    s = lib.tensor(3)
    return (t[0, 1].item(), t.tolist(), float(t[0, 0]), int(s), bool(s), [10, 20, 30, 40][s],
            format(lib.tensor(3.14159), ".2f"), f"{lib.tensor(2.0):.3f}", f"{t.sum():.1f}",
            [v.item() for v in t[0]], np.asarray(t).shape)


@add
@case("Tensor.requires_grad", "Tensor.requires_grad_", "Tensor.is_leaf", "Tensor.grad",
      "Tensor.grad_fn", "Tensor.detach", "Tensor.backward", "Tensor.retain_grad",
      "Tensor.register_hook", "Tensor.data", "Tensor.clone", "Tensor.retains_grad",
      inputs=(f32(3),))
def _(lib, x):
    y = x * 2
    before = y.retains_grad
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(tuple(g.shape)))
    z = (y * y).sum()
    z.backward(retain_graph=True)
    w = lib.ones(3).requires_grad_()
    return (x.is_leaf, y.is_leaf, y.requires_grad, y.grad, x.grad.clone(), x.grad_fn is None,
            y.grad_fn is not None, y.detach().requires_grad, x.data.requires_grad,
            x.data.clone(), seen, w.requires_grad, x.clone().requires_grad, before,
            y.retains_grad, x.retains_grad)


@add
@case("minigrad.set_printoptions")
def _(lib):
    x, long = lib.tensor([1.23456, 1e-5, 300.0]), lib.arange(10.0)
    try:
        lib.set_printoptions(precision=2, sci_mode=True)
        sci = "1.23e+00" in repr(x) and "3.00e+02" in repr(x)
        lib.set_printoptions(precision=3, sci_mode=False)
        fixed = "300.000" in repr(x) and "e+" not in repr(x)
        lib.set_printoptions(threshold=5, edgeitems=1)
        cut = "..." in repr(long) and "5." not in repr(long)
        lib.set_printoptions(profile="short")
        short = "..." not in repr(long) and "1.23" in repr(x) and "1.235" not in repr(x)
    finally:
        lib.set_printoptions(profile="default")
    return sci, fixed, cut, short, "1.2346" in repr(x)


@add
@case("version.cuda", "version.hip", "version.__version__")
def _(lib):
    return (lib.version.cuda, lib.version.hip, lib.version.__version__ == lib.__version__,
            isinstance(lib.version.__version__, str))


@add
@case("minigrad.pi", "minigrad.e", "minigrad.inf", "minigrad.nan", "minigrad.newaxis")
def _(lib):
    x = lib.arange(6.0).reshape(3, 2)
    return (lib.tensor([lib.pi, lib.e, -lib.inf, lib.nan]), x[:, lib.newaxis] * lib.pi,
            type(lib.pi) is float and lib.newaxis is None)


@add
@case("minigrad.vmap", inputs=(A(np.linspace(-1, 2, 12).reshape(4, 3), True),
                                A(np.array([0.5, -1.0, 2.0]), True)))
def _(lib, x, w):
    """torch.vmap is torch.func.vmap: per-row products, and with in_dims and two outputs."""
    rows = lib.vmap(lambda r: (r * w).sum())(x)
    both = lib.vmap(lambda r, v: (r @ v, r.max()), in_dims=(0, None))(x, w)
    return rows, both[0], both[1], lib.vmap is lib.func.vmap


@add
@case("minigrad.cosine_similarity", "minigrad.pairwise_distance",
      inputs=(A(np.sin(np.arange(12.0)).reshape(4, 3).astype(np.float32), True),
              A(np.cos(np.arange(12.0)).reshape(4, 3).astype(np.float32), True)))
def _(lib, a, b):
    return (lib.cosine_similarity(a, b), lib.cosine_similarity(a, b, dim=0, eps=1e-6),
            lib.pairwise_distance(a, b), lib.pairwise_distance(a, b, p=1.0, keepdim=True))


@add
@case("minigrad.__version__", "torch_version.TorchVersion")
def _(lib):
    v = lib.__version__
    return (type(v) is lib.torch_version.TorchVersion, v >= "1.10", v >= "2.0", v > (1, 13),
            v < "10.0", lib.torch_version.TorchVersion("parrot") < "z")


@add
@case("Tensor.detach_", inputs=(f32(3),))
def _(lib, x):
    h = x * 2
    same = h.detach_() is h
    (h * x).sum().backward()  # h no longer leads back to x: only the direct use counts
    return same, h.requires_grad, h.is_leaf, h.grad_fn is None, x.grad.clone(), h


@add
@case("Tensor.new", inputs=(A(np.arange(6.0).reshape(2, 3) - 2, grad=True),))
def _(lib, x):
    """Older scripts' `weight.new(n, b, h).zero_()`: x's dtype, a shape or data; a tensor of
    the same dtype gives a view of it, in the graph."""
    return (x.new(2, 3).zero_(), x.new(lib.Size([1, 2])).zero_().shape, x.new([1, 2]),
            x.new().shape, x.new(x) * 2, x.new(2).requires_grad, x.new(2).dtype == x.dtype)


@add
@case("Tensor.new", compare="raises", match="expected", inputs=(A(np.zeros(2)),))
def _(lib, x):
    return x.new(lib.tensor([1, 2]))


@add
@case("Tensor.new_zeros", "Tensor.new_ones", "Tensor.new_full", "Tensor.new_tensor",
      "Tensor.new_empty", inputs=(f64(2),))
def _(lib, x):
    return (x.new_zeros(2, 3), x.new_ones((2,)), x.new_full((2,), 3), x.new_tensor([1, 2]),
            x.new_zeros(2, dtype=lib.long), x.new_empty(4).shape)


@add
@case("minigrad.is_tensor", "minigrad.Tensor")
def _(lib):
    return lib.is_tensor(lib.zeros(1)), lib.is_tensor([1.0]), isinstance(lib.ones(2), lib.Tensor)


@add
@case("minigrad.result_type", "minigrad.promote_types", "minigrad.get_default_dtype")
def _(lib):
    f32t, i64t = lib.ones(2), lib.ones(2, dtype=lib.long)
    as_tensor = lambda dtype: lib.zeros(1, dtype=dtype)  # noqa: E731 -- the runner compares dtypes
    return (as_tensor(lib.result_type(f32t, i64t)), as_tensor(lib.result_type(i64t, 0.5)),
            as_tensor(lib.result_type(lib.ones(2, dtype=lib.int32),
                                      lib.tensor(1.0, dtype=lib.float64))),
            as_tensor(lib.promote_types(lib.int8, lib.uint8)),
            as_tensor(lib.get_default_dtype()))


@add
@case("minigrad.Tensor", "nn.Parameter", "nn.init.uniform_", compare="meta")
def _(lib):
    """The legacy constructor: sizes give an uninitialised float32 tensor (compared by shape
    and dtype), as in `nn.Parameter(torch.Tensor(hidden))` followed by an initialiser."""
    v = lib.nn.Parameter(lib.Tensor(8))
    lib.nn.init.uniform_(v, -0.1, 0.1)
    return lib.Tensor(5), lib.Tensor(2, 3), lib.Tensor(), v, v.requires_grad


@add
@case("minigrad.Tensor")
def _(lib):
    t = lib.tensor([1, 2])
    alias = lib.Tensor(t)
    alias[1] = 5  # an alias of t, in t's dtype
    return (lib.Tensor([1, 2]), lib.Tensor([[1.5, 2.0]]), lib.Tensor(np.arange(3.0)),
            lib.Tensor((4, 5)), lib.Tensor([True, False]), lib.Tensor([]), t, alias)


@add
@case("minigrad.Tensor", compare="raises", match="data must be a sequence")
def _(lib):
    return lib.Tensor(3.5)


@add
@case("minigrad.set_default_dtype", "minigrad.get_default_dtype", "minigrad.promote_types",
      "minigrad.result_type", compare="meta")
def _(lib):
    before = lib.get_default_dtype()
    lib.set_default_dtype(lib.float64)
    try:
        made = (lib.tensor([1.5]), lib.tensor(2.0), lib.tensor([1]), lib.zeros(2), lib.ones(1),
                lib.empty(2), lib.full((2,), 0.5), lib.full((1,), 3), lib.arange(0.0, 1.0, 0.5),
                lib.arange(3), lib.linspace(0, 1, 3), lib.logspace(0, 1, 2), lib.eye(2),
                lib.rand(2), lib.randn(2), lib.Tensor(2), lib.Tensor([1, 2]),
                lib.tensor([1, 2]) * 0.5, lib.tensor([1, 2]) / 2, lib.nn.Linear(2, 2).weight,
                lib.nn.LayerNorm(2).weight, lib.nn.Embedding(3, 2).weight)
        inside = lib.get_default_dtype() == lib.float64
        kinds = (lib.promote_types(lib.int32, lib.float16) == lib.float16,
                 lib.result_type(lib.tensor([1]), 1.0) == lib.float64)
    finally:
        lib.set_default_dtype(before)
    return made, inside, kinds, lib.get_default_dtype() == lib.float32, lib.zeros(1)


@add
@case("minigrad.set_default_dtype", compare="raises", match="floating")
def _(lib):
    lib.set_default_dtype(lib.int64)
