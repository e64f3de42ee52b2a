"""PyTorch's `out=` keyword, handled once for every function whose PyTorch counterpart takes it
(the names, read from PyTorch, are in `out_names.py`).

`torch.add(a, b, out=c)` computes the result as usual, then writes it into `c` and returns `c`:

- an `out` of another shape is resized first (with PyTorch's warning when it had elements,
  but for most creation and sampling functions, which resize it silently);
- the result is cast to `out`'s dtype when PyTorch's `can_cast` allows it (never float into an
  integer type, nor a number into bool), else a RuntimeError names both dtypes; a function with
  a `dtype` argument (the creation functions, `cumsum`, `softmax`, ...) computes in `out`'s
  dtype, and a creation function given another `dtype` is an error;
- autograd does not record it: with grad mode on, an input or `out` that requires grad is an
  error, as in PyTorch; the write bumps `out`'s version counter and shows through every view
  of its memory (`out` may itself be a view: the values appear in its base);
- a function with several results (`max(x, 1)`, `sort`, `linalg.slogdet`, ...) takes a tuple of
  as many tensors and returns them as its named tuple.

A call without `out` goes straight to the function: the wrapper, written with the function's
own parameters, costs one plain Python call.
"""
from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from . import dtypes
from .autograd.versions import bump_version
from .errors import DTypeError
from .grad_mode import is_grad_enabled
from .linalg_checks import torch_dtype_name
from .tensor import Tensor

__all__ = ["accept_out", "with_out"]

_SILENT_RESIZE = {"bernoulli", "empty", "eye", "full", "linspace", "logspace", "multinomial",
                  "ones", "rand", "randint", "randn", "randperm", "range", "zeros"}
_COMPLEX_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _dtype_name(dtype):
    dtype = np.dtype(dtype)
    return _COMPLEX_NAMES.get(dtype.name) or torch_dtype_name(dtype)


def accept_out(namespace, names, prefix=""):
    """{name: the function taking `out=`} for each of `names` that `namespace` (a module's
    globals) holds as a function; `prefix` ("linalg_", ...) makes the op's name in messages."""
    made, wrapped = {}, {}
    for name in names:
        fn = namespace.get(name)
        if inspect.isfunction(fn):
            if id(fn) not in made:  # aliases (asin and arcsin) stay one function
                made[id(fn)] = with_out(fn, prefix + name)
            wrapped[name] = made[id(fn)]
    return wrapped


def with_out(fn, op):
    """`fn` with PyTorch's keyword-only `out=` (see the module's docstring)."""
    if getattr(fn, "_writes_out", False):
        return fn
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    if signature is not None and "out" in signature.parameters:
        return fn  # it takes out= itself
    takes_dtype = signature is not None and "dtype" in signature.parameters

    def into(args, kwargs, out):
        return _call_into(fn, op, takes_dtype, args, kwargs, out)

    # spelled out only where the signature is the function's own code: a declared one (the
    # method forms' `__signature__`) may leave out what the code accepts (`axis=` for `dim=`)
    own = signature is not None and not hasattr(fn, "__signature__") and \
        not hasattr(fn, "__wrapped__")
    function = _spelled_out(fn, signature, into) if own else None
    if function is None:
        def function(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return into(args, kwargs, out)
    functools.update_wrapper(function, fn)
    function._writes_out = True
    if signature is not None:
        function.__signature__ = _with_out_parameter(signature)
    return function


_P = inspect.Parameter


def _spelled_out(fn, signature, into):
    """The wrapper written with `fn`'s own parameters, `def add(x, other, alpha=1, *,
    out=None)`, so a call without out costs one plain call (no packing of *args and
    **kwargs); None for a signature with *args, **kwargs or positional-only parameters."""
    params = list(signature.parameters.values())
    if any(p.kind not in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY) for p in params) or \
            any(p.name in ("fn", "into", "out") for p in params):
        return None
    env, header, call, star = {"fn": fn, "into": into}, [], [], False
    for i, p in enumerate(params):
        if p.kind is _P.KEYWORD_ONLY and not star:
            header.append("*")
            star = True
        if p.default is _P.empty:
            header.append(p.name)
        else:
            env[f"_default{i}"] = p.default
            header.append(f"{p.name}=_default{i}")
        call.append(p.name if p.kind is _P.POSITIONAL_OR_KEYWORD else f"{p.name}={p.name}")
    names = ", ".join(f"{p.name!r}: {p.name}" for p in params)
    source = (f"def function({', '.join(header + ([] if star else ['*']) + ['out=None'])}):\n"
              f"    if out is None:\n"
              f"        return fn({', '.join(call)})\n"
              f"    return into((), {{{names}}}, out)\n")
    code = _COMPILED.get(source)
    if code is None:  # many functions share a parameter list: compile each list once
        code = _COMPILED[source] = compile(source, f"<out= wrapper {signature}>", "exec")
    exec(code, env)  # noqa: S102 (the source is built from a signature, above)
    return env["function"]


_COMPILED = {}


def _with_out_parameter(signature):
    params = list(signature.parameters.values())
    out = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    if params and params[-1].kind is inspect.Parameter.VAR_KEYWORD:
        return signature.replace(parameters=params[:-1] + [out, params[-1]])
    return signature.replace(parameters=params + [out])


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _call_into(fn, op, takes_dtype, args, kwargs, out):
    several = isinstance(out, (tuple, list))
    targets = tuple(out) if several else (out,)
    for t in targets:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument 'out' must be Tensor or a tuple of Tensors, not "
                            f"{type(t).__name__}")
    inputs = list(_tensors(args)) + list(_tensors(kwargs.values()))
    if is_grad_enabled() and any(t.requires_grad for t in (*inputs, *targets)):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    if takes_dtype and not several:
        given = kwargs.get("dtype")
        if given is None:
            kwargs = {**kwargs, "dtype": out.dtype}
        elif not inputs and np.dtype(dtypes.resolve(given)) != out.dtype:
            raise RuntimeError(f"{op}(): dtype {_dtype_name(dtypes.resolve(given))} does not "
                               f"match dtype of out parameter ({_dtype_name(out.dtype)})")
    result = fn(*args, **kwargs)
    values = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if several != isinstance(result, (tuple, list)) or len(values) != len(targets):
        raise TypeError(f"{op}(): out= must be {len(values)} tensor(s) (a tuple for more than "
                        f"one), got {len(targets) if several else 'one tensor'}")
    # most creation and sampling functions resize their out silently (PyTorch resizes it in
    # place there rather than through the check that warns; arange and fftfreq do warn)
    warn = op not in _SILENT_RESIZE
    for target, value in zip(targets, values):
        _write(op, target, value, warn)
    if not several:
        return out
    return type(result)(*targets) if hasattr(result, "_fields") else type(result)(targets)


def _write(op, out, value, warn):
    """Write `value` (a tensor or number) into `out`: resized, cast, version bumped."""
    src = np.asarray(value._array if isinstance(value, Tensor) else value)
    if src.dtype != out.dtype and not dtypes.can_cast(src.dtype, out.dtype):
        # RuntimeError as PyTorch's elementwise ops raise, TypeError as its cat raises
        raise DTypeError(f"{op}(): result type {_dtype_name(src.dtype)} can't be cast to the "
                         f"desired output type {_dtype_name(out.dtype)}")
    if out._array.shape != src.shape:
        if warn and out._array.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._array.shape)}, which does not match the required output shape "
                f"{list(src.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                f"with t.resize_(0).", UserWarning, stacklevel=4)
        out._array = np.empty(src.shape, out.dtype)  # new memory, as PyTorch's resize_ may
    np.copyto(out._array, src, casting="unsafe")
    bump_version(out)
