"""`minigrad.jit`: PyTorch's TorchScript entry points, on a library without TorchScript.

`torch.jit.script` compiles a module or function into TorchScript, and `torch.jit.trace` runs
one on example inputs and records the ops it ran; both return objects that behave like what
they were given, and can be saved and run without Python. minigrad has no graph compiler (its
kernels are compiled by Numba already), so, as `minigrad.compile` does:

    model = minigrad.jit.script(model)              # the module itself
    f = minigrad.jit.trace(f, example)              # runs f(example) once, returns f

- `trace` calls the function once on its example inputs, as tracing does, so a wrong input
  fails there as in PyTorch, and `is_tracing()` is True during that call. What it returns is
  the function itself: later calls run its Python again, branches included (PyTorch's traced
  function replays the ops of the example, whatever the branches would do now).
- The decorators (`ignore`, `unused`, `export`, ...) return what they decorate; `fork` runs
  its function at once and returns a completed `Future` (PyTorch's eager mode does the same);
  the fusion switches keep their settings, which change nothing here.
- As in PyTorch 2.13, `script`, `trace`, `fork`, `wait`, `freeze`, `optimize_for_inference`
  and `set_fusion_strategy` warn that they are deprecated (DeprecationWarning: shown to the
  script that calls them, as Python shows those).
- `save` and `load` raise: a scripted module is the Python module itself, and minigrad can
  store its weights (`state_dict` with `minigrad.save`) but not its code.
"""
from __future__ import annotations

import contextlib
import typing
import warnings

from ..futures import Future
from ..grad_mode import no_grad

__all__ = ["Attribute", "Error", "Final", "Future", "ScriptFunction", "ScriptModule",
           "annotate", "enable_onednn_fusion", "export", "fork", "freeze", "fuser", "ignore",
           "interface", "is_scripting", "is_tracing", "load", "onednn_fusion_enabled",
           "optimize_for_inference", "optimized_execution", "save", "script",
           "script_if_tracing", "script_method", "set_fusion_strategy", "trace",
           "trace_module", "unused", "wait"]

Final = typing.Final
Attribute = typing.NamedTuple("Attribute", [("value", typing.Any), ("type", typing.Any)])

_state = {"tracing": 0, "onednn": False, "fusion": [("STATIC", 2), ("DYNAMIC", 10)]}
_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


class Error(Exception):
    """PyTorch's TorchScript error type (nothing in minigrad raises it: nothing is scripted)."""


class ScriptModule:
    """PyTorch's type of a scripted module. `script` returns the module itself here, so
    `isinstance(m, jit.ScriptModule)` is False for every minigrad object."""


class ScriptFunction:
    """PyTorch's type of a scripted function; as `ScriptModule`, nothing here is one."""


def _deprecated(name, instead="compile"):
    warnings.warn(f"`minigrad.jit.{name}` is deprecated. Please switch to `minigrad.{instead}`.",
                  DeprecationWarning, stacklevel=3)


def _is_module(obj):
    return callable(getattr(obj, "state_dict", None)) and hasattr(obj, "training")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Return `obj` (a module, a function or a class) unchanged."""
    _deprecated("script")
    if not (callable(obj) or _is_module(obj)):
        raise TypeError(f"jit.script: expected a Module, a function or a class, got "
                        f"{type(obj).__name__}")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Run `func` once on `example_inputs` (a tuple of arguments, or one argument) or on the
    keyword arguments `example_kwarg_inputs`, with `is_tracing()` True; return `func`."""
    _deprecated("trace")
    if not callable(func):
        raise TypeError(f"jit.trace: expected a Module or a function, got "
                        f"{type(func).__name__}")
    if example_inputs is None and not isinstance(example_kwarg_inputs, dict):
        raise RuntimeError("example_kwarg_inputs should be a dict")
    if example_inputs is None:
        _traced_call(func, (), example_kwarg_inputs)
    else:
        args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
        _traced_call(func, args, {})
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """Run each method named in `inputs` ({name: example inputs}) once; return `mod`."""
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            _traced_call(method, (), example)
        else:
            _traced_call(method, example if isinstance(example, tuple) else (example,), {})
    return mod


def _traced_call(fn, args, kwargs):
    _state["tracing"] += 1
    try:
        with no_grad():   # (a trace records no gradients: its outputs are thrown away)
            fn(*args, **kwargs)
    finally:
        _state["tracing"] -= 1


def is_tracing() -> bool:
    """Whether a `trace` call is running its function."""
    return _state["tracing"] > 0


def is_scripting() -> bool:
    """Always False: nothing runs as TorchScript."""
    return False


def ignore(drop=False, **kwargs):
    """Leave a function to Python (here everything is): `@ignore` or `@ignore(drop=True)`."""
    if callable(drop):
        return drop
    if drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use minigrad.jit.unused now.", FutureWarning,
                      stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """Mark a method TorchScript should replace by a raise; returns it unchanged."""
    return fn


def export(fn):
    """Mark a method to compile besides forward; returns it unchanged."""
    return fn


def script_method(fn):
    """The older form of `export`; returns `fn` unchanged."""
    return fn


def interface(obj):
    """Declare a TorchScript interface type; returns `obj` unchanged."""
    return obj


def script_if_tracing(fn):
    """Script `fn` when first called under tracing; here, `fn` itself."""
    return fn


def annotate(the_type, the_value):
    """Tell TorchScript the type of `the_value`; returns `the_value`."""
    return the_value


def fork(func, *args, **kwargs) -> Future:
    """Run `func(*args, **kwargs)` now; a completed Future of its result (its error is
    raised here, as PyTorch's eager fork raises it)."""
    _deprecated("fork")
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """The result of a `fork`."""
    _deprecated("wait")
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Inline a scripted module's weights as constants; returns `mod` (in eval mode, as
    PyTorch requires)."""
    _deprecated("freeze")
    if not _is_module(mod):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "minigrad.jit.script or minigrad.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Freeze and optimise a scripted module for inference; returns `mod`."""
    _deprecated("optimize_for_inference")
    if not _is_module(mod):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please "
                           "use minigrad.jit.script or minigrad.jit.trace to script your "
                           "'nn.Module'.")
    return mod


def save(m, f, _extra_files=None):
    """Refused: a scripted module is Python code here, which a file cannot hold."""
    raise NotImplementedError(
        "jit.save: minigrad has no TorchScript, so a scripted module is the Python module "
        "itself and its code cannot be saved; save its weights with "
        "minigrad.save(model.state_dict(), f) and build the module from its class to load them")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Refused: see `save` (minigrad.load reads weights and checkpoints)."""
    raise NotImplementedError(
        "jit.load: minigrad cannot run TorchScript archives (their code is TorchScript); load "
        "weights with minigrad.load(f) into a module built from its Python class")


def enable_onednn_fusion(enabled: bool) -> None:
    """Set the oneDNN fusion switch (kept; minigrad's kernels do not read it)."""
    _state["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """The oneDNN fusion switch (False unless set)."""
    return _state["onednn"]


def set_fusion_strategy(strategy):
    """Set the fusion strategy, a list of ("STATIC" or "DYNAMIC", depth); returns the one
    before (kept; minigrad's kernels do not read it)."""
    _deprecated("set_fusion_strategy")
    for kind, _ in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
    before, _state["fusion"] = _state["fusion"], list(strategy)
    return before


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """A context turning TorchScript's graph optimisations on or off (nothing to turn here)."""
    yield


@contextlib.contextmanager
def fuser(name):
    """A context choosing TorchScript's fuser by name ("fuser0" ... "fuser3", "none")."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")
    yield
