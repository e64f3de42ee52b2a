"""minigrad: a small, readable deep-learning framework with reverse-mode autograd.

    import minigrad as mg
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad   # tensor([2., 4.])

The names below are PyTorch's `torch.*` names that minigrad has, listed once in `__all__`.
Submodules that follow PyTorch's paths (`cuda`, `amp`, `backends`, ...) live in `platform/`
and are reachable under those paths too; the layers above the core (`nn`, `optim`, ...) load
on first use. The applications (`minigrad.translate`, `minigrad.demos`) are imported by name.
"""
from . import autograd, kernels, linalg, out_arg, random
# each op's tensor-level backward rule, registered for create_graph=True
from . import graph_rules_elementwise, graph_rules_nn, graph_rules_reduce_shape  # noqa: F401
from ._malloc import tune_malloc
from .autograd import detect_anomaly, enable_grad, is_grad_enabled, no_grad
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .array_functions import isin, rot90, take_along_dim, tensor_split
from .bucketing import bucketize, searchsorted
from .scans import cummax, cummin, logcumsumexp
from .complex_tensors import (angle, complex, conj, conj_physical, imag, is_complex, is_conj,
                              is_neg, isreal, polar, real, resolve_conj, resolve_neg, sgn,
                              view_as_complex, view_as_real)
from .signal_windows import (bartlett_window, blackman_window, hamming_window, hann_window,
                             kaiser_window)
from .spectral import istft, stft
from .composite import addcdiv, addcmul, addmm, baddbmm, cdist, lerp, pdist
from .matrix_vector import addbmm, addmv, addr, ger, inner, mv, vdot
from .integration import cumulative_trapezoid, trapezoid, trapz
from .covariance import corrcoef, cov
from .broadcasting import broadcast_shapes, broadcast_tensors
from .bessel import i0
from .conversions import deg2rad, float_power, rad2deg
from .float_parts import (copysign, frac, frexp, heaviside, isneginf, isposinf, ldexp, nextafter,
                          signbit)
from .gamma_functions import digamma, lgamma, polygamma
from .gamma_functions import multigammaln as mvlgamma
from .histograms import histc, histogram
from .index_functions import argwhere, take, unravel_index
from .norm_functions import dist, renorm
from .run_lengths import unique_consecutive
from .scatter_functions import (diagonal_scatter, index_copy, index_reduce, masked_scatter, put,
                                scatter_reduce, select_scatter, slice_scatter)
from .size import Size, is_same_size
from .splits import dsplit, hsplit, split_with_sizes, vsplit
from .integer_math import gcd, lcm
from .log_odds import logit, xlogy
from .nan_extrema import aminmax, fmax, fmin
from .aliases import (absolute, clone, divide, eq, fix, fliplr, flipud, ge, greater, greater_equal,
                      gt, le, less, less_equal, lt, moveaxis, msort, multiply, ne, negative,
                      not_equal, positive, ravel, rsub, subtract, swapaxes, swapdims,
                      true_divide)
from .aliases import (adjoint, concatenate, detach, is_nonzero, is_signed, narrow_copy,
                      row_stack, unflatten)
from .linalg_det import det, logdet, slogdet
from .linalg_cholesky_solve import cholesky_inverse, cholesky_solve
from .linalg_householder import geqrf, ormqr
from .linalg_inverse import inverse
from .linalg_legacy import (chain_matmul, cholesky, lu_solve, lu_unpack, matrix_power, orgqr, qr,
                            svd, triangular_solve)
from .linalg_matrix_exp import matrix_exp
from .linalg_pinv import pinverse
from .precise import expm1, log1p
from .matrix_parts import diag, diagflat, diagonal, trace, tril_indices, triu_indices
from .ops.nonfinite import nan_to_num
from .ops.product_reductions import cumprod, prod
from .ops.truncated import fmod
from .ops.hyperbolic import acosh, arccosh, arcsinh, arctanh, asinh, atanh, cosh, sinh
from .ops.inverse_trig import acos, arccos, arcsin, arctan, asin, atan
from .ops.log_add_exp import logaddexp, logaddexp2
from .ops.polar import arctan2, atan2, hypot
from .order_statistics import mode, nanmedian, nanquantile
from .statistics import count_nonzero, kthvalue, median, quantile, std_mean, var_mean
from .tensor_products import cross, kron, tensordot
from .differences import diff, gradient
from .nan_reductions import nanmean, nansum
from .tensor_assembly import (atleast_1d, atleast_2d, atleast_3d, block_diag, cartesian_prod,
                              column_stack, combinations, diag_embed, dstack, hstack, meshgrid, tile, vstack)
from .error_functions import erf, erfc, erfinv, exp2, log2, log10
from . import special
from .sinc import sinc
from .constants import e, inf, nan, newaxis, pi
from .aliasing_factories import asarray, empty_strided
from .linalg_vander import torch_vander as vander
from .range_factories import range, scalar_tensor
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                       linspace, logspace, ones, ones_like, rand, rand_like, randint,
                       randint_like, randn, randn_like, randperm, tensor, zeros, zeros_like)
from .dtypes import (bfloat16, bool_, can_cast, cdouble, cfloat, chalf, complex32, complex64, complex128,
                     double, finfo, float8_e4m3fn, float8_e5m2, float16, float32, float64,
                     get_default_dtype, half, iinfo, int8, int16, int32, int64, long,
                     promote_types, result_type, set_default_dtype, short, uint8, uint16,
                     uint32, uint64)
from .dtypes import bool_ as bool, float32 as float, int32 as int
from .functional import (abs, add, all, allclose, amax, amin, any, argmax, argmin, argsort,
                         bincount, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
                         bitwise_right_shift, bitwise_xor, bmm, broadcast_to, cat, ceil, chunk, clamp, clamp_max, clamp_min, clip,
                         concat, cos, cumsum, div, dot, dropout, einsum, equal, exp, flatten,
                         flip, floor, floor_divide, gather, gelu, index_add, index_fill,
                         index_put, index_select, is_floating_point, is_tensor, isclose,
                         isfinite, isinf,
                         isnan, log, log_softmax, logical_and, logical_not, logical_or,
                         logical_xor, logsumexp, masked_fill, masked_select, matmul, max,
                         maximum, mean, min, minimum, mm, movedim, mul, narrow, neg, nonzero,
                         norm, numel, one_hot, outer, permute, pow, reciprocal, relu, remainder,
                         repeat_interleave, reshape, roll, round, rsqrt, scatter, scatter_add,
                         select, sigmoid, sign, sin, softmax, sort, split, sqrt, square,
                         squeeze, stack, std, sub, sum, t, tan, tanh, topk, transpose, tril, triu,
                         trunc, unbind, unique, unsqueeze, var, where)
from .grad_mode import inference_mode, is_inference_mode_enabled, set_grad_enabled
# torch._foreach_*, the list forms optimizers call, under PyTorch's private names
from .foreach import *  # noqa: F401,F403  (foreach.__all__: the _foreach_ names)
from .kernels import get_backend, set_backend
from .platform import accelerator, amp, backends, cpu, cuda, distributed, jit
from .platform.amp import autocast, get_autocast_dtype, is_autocast_enabled
from .platform.compiler import compile
from .platform.device import device
from .platform.layout import (jagged, layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc,
                              sparse_csr, strided)
from .platform.memory_format import (channels_last, channels_last_3d, contiguous_format,
                                     memory_format, preserve_format)
from .platform.settings import (are_deterministic_algorithms_enabled,
                                get_float32_matmul_precision, get_num_threads,
                                is_deterministic_algorithms_warn_only_enabled,
                                set_float32_matmul_precision, set_num_threads,
                                use_deterministic_algorithms)
from .platform.tensortypes import (BoolTensor, ByteTensor, CharTensor, DoubleTensor,
                                   FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
from .sampling import bernoulli, multinomial, normal, poisson
from .printing import set_printoptions
from .serialization import load, save
from .tensor import Tensor
from .tensor_storage import as_strided
from .storage import TypedStorage, UntypedStorage
from . import testing

from .out_names import OUT_NAMES as _OUT_NAMES
from .torch_version import __version__

__all__ = [
    "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "Generator",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "Size", "Tensor", "TypedStorage",
    "UntypedStorage", "abs", "absolute", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul",
    "addmm", "addmv", "addr", "adjoint", "all", "allclose", "amax", "amin", "aminmax", "angle",
    "any", "arange", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "are_deterministic_algorithms_enabled", "argmax", "argmin", "argsort", "argwhere",
    "as_strided", "as_tensor", "asarray", "asin", "asinh", "atan", "atan2", "atanh", "atleast_1d",
    "atleast_2d", "atleast_3d", "autocast", "baddbmm", "bartlett_window", "bernoulli", "bfloat16",
    "bincount", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "blackman_window", "block_diag", "bmm", "bool", "bool_",
    "broadcast_shapes", "broadcast_tensors", "broadcast_to", "bucketize", "can_cast",
    "cartesian_prod", "cat", "cdist", "cdouble", "ceil", "cfloat", "chain_matmul", "chalf",
    "channels_last", "channels_last_3d", "cholesky", "cholesky_inverse", "cholesky_solve", "chunk",
    "clamp", "clamp_max", "clamp_min", "clip", "clone", "column_stack", "combinations", "compile",
    "complex", "complex128", "complex32", "complex64", "concat", "concatenate", "conj",
    "conj_physical", "contiguous_format", "copysign", "corrcoef", "cos", "cosh", "count_nonzero",
    "cov", "cross", "cummax", "cummin", "cumprod", "cumsum", "cumulative_trapezoid",
    "default_generator", "deg2rad", "det", "detach", "detect_anomaly", "device", "diag",
    "diag_embed", "diagflat", "diagonal", "diagonal_scatter", "diff", "digamma", "dist", "div",
    "divide", "dot", "double", "dropout", "dsplit", "dstack", "e", "einsum", "empty", "empty_like",
    "empty_strided", "enable_grad", "eq", "equal", "erf", "erfc", "erfinv", "exp", "exp2", "expm1",
    "eye", "finfo", "fix", "flatten", "flip", "fliplr", "flipud", "float", "float16", "float32",
    "float64", "float8_e4m3fn", "float8_e5m2", "float_power", "floor", "floor_divide", "fmax",
    "fmin", "fmod", "frac", "frexp", "from_numpy", "full", "full_like", "gather", "gcd", "ge",
    "gelu", "geqrf", "ger", "get_autocast_dtype", "get_backend", "get_default_dtype",
    "get_float32_matmul_precision", "get_num_threads", "get_rng_state", "gradient", "greater",
    "greater_equal", "gt", "half", "hamming_window", "hann_window", "heaviside", "histc",
    "histogram", "hsplit", "hstack", "hypot", "i0", "iinfo", "imag", "index_add", "index_copy",
    "index_fill", "index_put", "index_reduce", "index_select", "inf", "inference_mode",
    "initial_seed", "inner", "int", "int16", "int32", "int64", "int8", "inverse",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_autocast_enabled", "is_complex",
    "is_conj", "is_deterministic_algorithms_warn_only_enabled", "is_floating_point",
    "is_grad_enabled", "is_inference_mode_enabled", "is_neg", "is_nonzero", "is_same_size",
    "is_signed", "is_tensor", "isclose", "isfinite", "isin", "isinf", "isnan", "isneginf",
    "isposinf", "isreal", "istft", "jagged", "kaiser_window", "kron", "kthvalue", "layout", "lcm",
    "ldexp", "le", "lerp", "less", "less_equal", "lgamma", "linspace", "load", "log", "log10",
    "log1p", "log2", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp", "logdet",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logspace", "logsumexp",
    "long", "lt", "lu_solve", "lu_unpack", "manual_seed", "masked_fill", "masked_scatter",
    "masked_select", "matmul", "matrix_exp", "matrix_power", "max", "maximum", "mean", "median",
    "memory_format", "meshgrid", "min", "minimum", "mm", "mode", "moveaxis", "movedim", "msort",
    "mul", "multinomial", "multiply", "mv", "mvlgamma", "nan", "nan_to_num", "nanmean",
    "nanmedian", "nanquantile", "nansum", "narrow", "narrow_copy", "ne", "neg", "negative",
    "newaxis", "nextafter", "no_grad", "nonzero", "norm", "normal", "not_equal", "numel",
    "one_hot", "ones", "ones_like", "orgqr", "ormqr", "outer", "pdist", "permute", "pi",
    "pinverse", "poisson", "polar", "polygamma", "positive", "pow", "preserve_format", "prod",
    "promote_types", "put", "qr", "quantile", "rad2deg", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm", "range", "ravel", "real", "reciprocal",
    "relu", "remainder", "renorm", "repeat_interleave", "reshape", "resolve_conj", "resolve_neg",
    "result_type", "roll", "rot90", "round", "row_stack", "rsqrt", "rsub", "save", "scalar_tensor",
    "scatter", "scatter_add", "scatter_reduce", "searchsorted", "seed", "select", "select_scatter",
    "set_backend", "set_default_dtype", "set_float32_matmul_precision", "set_grad_enabled",
    "set_num_threads", "set_printoptions", "set_rng_state", "sgn", "short", "sigmoid", "sign",
    "signbit", "sin", "sinc", "sinh", "slice_scatter", "slogdet", "softmax", "sort", "sparse_bsc",
    "sparse_bsr", "sparse_coo", "sparse_csc", "sparse_csr", "split", "split_with_sizes", "sqrt",
    "square", "squeeze", "stack", "std", "std_mean", "stft", "strided", "sub", "subtract", "sum",
    "svd", "swapaxes", "swapdims", "t", "take", "take_along_dim", "tan", "tanh", "tensor",
    "tensor_split", "tensordot", "tile", "topk", "trace", "transpose", "trapezoid", "trapz",
    "triangular_solve", "tril", "tril_indices", "triu", "triu_indices", "true_divide", "trunc",
    "tune_malloc", "uint16", "uint32", "uint64", "uint8", "unbind", "unflatten", "unique",
    "unique_consecutive", "unravel_index", "unsqueeze", "use_deterministic_algorithms", "vander",
    "var", "var_mean", "vdot", "view_as_complex", "view_as_real", "vsplit", "vstack", "where",
    "xlogy", "zeros", "zeros_like",
]

# Modules of the core that PyTorch code reaches under these paths (`import minigrad.cuda`,
# `from minigrad.cuda.amp import GradScaler`, `import minigrad.backends.cudnn as cudnn`,
# `import minigrad.distributed as dist`), although they live in platform/.
_PYTORCH_PATHS = {
    "accelerator": accelerator, "amp": amp, "backends": backends,
    "backends.cuda": backends.cuda, "backends.cudnn": backends.cudnn,
    "backends.mps": backends.mps, "cpu": cpu, "cpu.amp": cpu.amp, "cuda": cuda,
    "cuda.amp": cuda.amp, "distributed": distributed, "jit": jit,
}


def _register_pytorch_paths():
    import sys
    for path, module in _PYTORCH_PATHS.items():
        sys.modules.setdefault(f"{__name__}.{path}", module)


_register_pytorch_paths()

# PyTorch's out= on every function here whose PyTorch counterpart takes it (out_arg.py)
globals().update(out_arg.accept_out(globals(), _OUT_NAMES["torch"]))

# The layers above the core, and the optional packages, reachable as attributes the way
# `torch.optim` and `torch.utils.data` are after `import torch`. They are imported on first
# use, so the core never imports the layers built on it. The applications are not listed:
# they are programs built on minigrad, not parts of it.
_LAZY_SUBMODULES = ("distributions", "fft", "func", "futures", "models", "nn", "onnx", "optim",
                    "profiler", "utils", "version", "viz")


# Functions of those layers that PyTorch also has at the top level, with the same arguments:
# {name: submodule}
_LAZY_FUNCTIONS = {"vmap": "func"} | dict.fromkeys(
    ("adaptive_avg_pool1d", "alpha_dropout", "avg_pool1d", "bilinear", "celu", "channel_shuffle",
     "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
     "cosine_similarity", "group_norm", "hardshrink", "layer_norm", "max_pool1d", "max_pool2d",
     "max_pool3d", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "prelu",
     "rms_norm", "selu"), "nn.functional")


def __getattr__(name):
    if name in _LAZY_FUNCTIONS:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY_FUNCTIONS[name]}"), name)
    if name in _LAZY_SUBMODULES:
        import importlib
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module 'minigrad' has no attribute {name!r}")


def __dir__():
    import importlib.util
    present = [n for n in _LAZY_SUBMODULES if importlib.util.find_spec(f"{__name__}.{n}")]
    return sorted(set(globals()) | set(present) | set(_LAZY_FUNCTIONS))
