"""`minigrad.compile`: PyTorch's compiler entry point, which here compiles nothing.

`torch.compile(model)` traces a model into fused GPU/CPU kernels and returns a wrapper that
runs them. minigrad's speed comes from its Numba kernels, which are compiled ahead of any
call, so there is no graph compiler: `compile` returns the very module or function it is given
(PyTorch returns a wrapper that behaves like it). Scripts call it as PyTorch's is called:

    model = minigrad.compile(model)                       # a module
    step = minigrad.compile(step, mode="max-autotune")    # a function, with options

    @minigrad.compile                                     # a decorator
    def f(x): ...

    @minigrad.compile(fullgraph=True)                     # a decorator with options
    def g(x): ...
"""
from __future__ import annotations

_MODES = (None, "default", "lite", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """Return `model` unchanged (a module or a function); with no `model`, a decorator that
    does the same. The keyword arguments are PyTorch's and are checked as PyTorch checks them."""
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, but both can't "
                           "be specified at the same time")
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode!r}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if not (isinstance(backend, str) or callable(backend)):
        raise TypeError(f"compile: backend must be a name or a callable, got "
                        f"{type(backend).__name__}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, name=name, disable=disable,
                                  recompile_limit=recompile_limit,
                                  isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    if not callable(model):
        raise RuntimeError(f"compile: model must be a Module or a callable, got "
                           f"{type(model).__name__}")
    return model
