"""Reverse-mode automatic differentiation.

Every differentiable op is a small `Function` subclass with a `forward(ctx, ...)` that works on
NumPy arrays and a `backward(ctx, grad)` right beside it. Calling `SomeOp.apply(...)` runs the
forward and, when gradients are wanted, records a *node* (the `ctx`, which becomes the output's
`grad_fn`). `backward()` walks those nodes from the output back to the leaves in reverse
topological order, with an explicit stack so that a chain of 100,000 ops needs no recursion.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import traceback
import weakref

import numpy as np

_state = threading.local()


def is_grad_enabled() -> bool:
    """True unless inside `no_grad()`."""
    return getattr(_state, "grad_enabled", True)


class _GradMode(contextlib.ContextDecorator):
    """Context manager and decorator that sets whether ops record a graph."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __enter__(self):
        self.prev = is_grad_enabled()
        _state.grad_enabled = self.enabled

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev
        return False

    def __call__(self, fn):  # a fresh instance per call keeps nested/recursive use safe
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _GradMode(self.enabled):
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Turn graph recording off, as `torch.no_grad`."""

    def __init__(self):
        super().__init__(False)


class enable_grad(_GradMode):
    """Turn graph recording back on, as `torch.enable_grad`."""

    def __init__(self):
        super().__init__(True)


# --- anomaly detection --------------------------------------------------------------------------

def _anomaly_on() -> bool:
    return getattr(_state, "anomaly", False)


class detect_anomaly(contextlib.ContextDecorator):
    """While on, a backward producing NaN or inf names the op and where the user created it."""

    def __enter__(self):
        self.prev = _anomaly_on()
        _state.anomaly = True

    def __exit__(self, *exc):
        _state.anomaly = self.prev
        return False


# --- module paths (the graph renderer groups ops by the module that created them) -------------

_module_stack: list[str] = []


def current_module_path() -> str | None:
    return _module_stack[-1] if _module_stack else None


@contextlib.contextmanager
def module_scope(path: str):
    """Used by `Module.__call__`: ops created inside are tagged with `path`."""
    _module_stack.append(path)
    try:
        yield
    finally:
        _module_stack.pop()


# --- graph nodes ------------------------------------------------------------------------------

class Node:
    """Common base of op nodes and of the leaves' `AccumulateGrad`."""

    __slots__ = ()

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object>"


class AccumulateGrad(Node):
    """The graph's sink for a leaf tensor: adds incoming gradients into `variable.grad`."""

    __slots__ = ("variable", "__weakref__")
    next_functions = ()
    module_path = None

    def __init__(self, variable):
        self.variable = variable


class Function(Node):
    """Base class of every op. Subclasses define `forward(ctx, *args)` and `backward(ctx, grad)`.

    `forward` receives NumPy arrays in place of tensors and returns one array. `backward` gets
    the gradient of the output and returns one gradient (or None) per positional argument.
    """

    def save_for_backward(self, *arrays):
        """Keep arrays for backward; in-place changes to them before backward are detected."""
        self.saved = arrays

    @property
    def saved_tensors(self):
        return self.saved

    @property
    def next_functions(self):
        return tuple((_node_of(t), 0) if t is not None else (None, 0) for t in self.inputs)

    def name(self) -> str:
        return type(self).__name__ + "Backward"

    @classmethod
    def apply(cls, *args, **kwargs):
        from .tensor import Tensor

        arrays = [a._array if isinstance(a, Tensor) else a for a in args]
        ctx = cls.__new__(cls)
        ctx.saved = ()
        out = Tensor._wrap(cls.forward(ctx, *arrays, **kwargs))
        if not is_grad_enabled():
            return out
        tensor_inputs = tuple(a if isinstance(a, Tensor) and a.requires_grad else None
                              for a in args)
        if not any(t is not None for t in tensor_inputs):
            return out
        if not np.issubdtype(out._array.dtype, np.floating):
            return out  # integer and bool results (argmax, comparisons) carry no gradient
        ctx.inputs = tensor_inputs
        ctx.needs_input_grad = tuple(t is not None for t in tensor_inputs)
        ctx._saved_versions = None
        if out._array.base is not None:  # a view shares its base's version counter, as in PyTorch
            base = out._array.base
            for t in args:
                if isinstance(t, Tensor) and _root(t._array) is base:
                    out._vc = t._vc
                    break
        if ctx.saved:  # remember versions of the tensors whose memory backward will read
            roots = {id(_root(a)) for a in ctx.saved if isinstance(a, np.ndarray)}
            ctx._saved_versions = [(t._vc, t._vc[0], t.shape) for t in args
                                   if isinstance(t, Tensor) and id(_root(t._array)) in roots]
            if id(_root(out._array)) in roots:
                ctx._saved_versions.append((out._vc, out._vc[0], out.shape))
        ctx.module_path = current_module_path()
        ctx.out_shape = out._array.shape
        ctx.out_dtype = out._array.dtype
        ctx.out_ref = weakref.ref(out)  # the graph renderer reads values through it
        ctx._hooks = None
        ctx._retain = None
        ctx._freed = False
        ctx._trace = traceback.extract_stack()[:-2] if _anomaly_on() else None
        out.grad_fn = ctx
        out.requires_grad = True
        return out

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Function subclasses define forward")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("Function subclasses define backward")


def _root(a):
    """The array that owns `a`'s memory (NumPy points every view's `base` at the owner)."""
    return a if a.base is None else a.base


def _node_of(t):
    """The node gradients flow into for tensor `t`: its grad_fn, or its leaf accumulator."""
    if t.grad_fn is not None:
        return t.grad_fn
    if t._acc is None:
        t._acc = AccumulateGrad(t)
    return t._acc


# --- the engine -------------------------------------------------------------------------------

def _topological_order(root):
    """Nodes reachable from `root`, each after every node that feeds gradient into it."""
    order, seen = [], {id(root)}
    stack = [(root, iter(getattr(root, "inputs", ())))]
    while stack:
        node, it = stack[-1]
        for t in it:
            if t is None:
                continue
            child = _node_of(t)
            if id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(getattr(child, "inputs", ()))))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def _check_versions(node):
    for counter, version, shape in node._saved_versions or ():
        if counter[0] != version:
            raise RuntimeError(
                f"{node.name()}: a tensor of shape {shape} needed for backward was modified "
                f"in place (version {version} when saved, now {counter[0]}); clone it before "
                f"changing it, or change it after backward")


def _raise_anomaly(node, grads):
    where = "".join(traceback.format_list(node._trace[-3:])) if node._trace else "  (unknown)\n"
    raise RuntimeError(f"detect_anomaly: {node.name()} returned NaN or inf in its gradient "
                       f"(output shape {node.out_shape}); the op was created at:\n{where}")


def run_backward(tensor, grad, retain_graph=False):
    """Backpropagate `grad` (an array shaped like `tensor`) through the graph behind it."""
    root = tensor.grad_fn
    if root is None:  # a leaf: backward just accumulates
        _accumulate(tensor, grad)
        return
    order = _topological_order(root)
    grads = {id(root): grad}
    anomaly = _anomaly_on()
    for node in order:
        g = grads.pop(id(node), None)
        if g is None:
            continue
        if isinstance(node, AccumulateGrad):
            _accumulate(node.variable, g)
            continue
        if node._freed:
            raise RuntimeError(
                f"{node.name()}: trying to backward through the graph a second time; its saved "
                f"values were freed by the first backward. Pass retain_graph=True to the first "
                f"backward if you need to backward twice")
        if node._hooks:
            for hook in node._hooks:
                new = hook(_wrap_grad(g))
                if new is not None:
                    g = np.asarray(getattr(new, "data", new))
        if node._retain is not None:
            target = node._retain()
            if target is not None:
                target.grad = _wrap_grad(g) if target.grad is None else _wrap_grad(target.grad._array + g)
        _check_versions(node)
        in_grads = node.backward(node, g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        if anomaly and any(ig is not None and not np.all(np.isfinite(ig)) for ig in in_grads):
            _raise_anomaly(node, in_grads)
        for t, ig in zip(node.inputs, in_grads):
            if t is None or ig is None:
                continue
            key = id(_node_of(t))
            prev = grads.get(key)
            grads[key] = ig if prev is None else prev + ig
        if not retain_graph:
            node.saved = ()
            node._freed = True


def _wrap_grad(g):
    from .tensor import Tensor
    return Tensor._wrap(g)


def _accumulate(t, g):
    """Leaf gradients add up across backward calls, as in PyTorch; `zero_grad` resets them."""
    if t._hooks:
        for hook in t._hooks:
            new = hook(_wrap_grad(g))
            if new is not None:
                g = np.asarray(getattr(new, "data", new))
    g = np.asarray(g, dtype=t._array.dtype)
    if g.shape != t._array.shape:
        g = np.broadcast_to(g, t._array.shape)
    if t.grad is None:
        t.grad = _wrap_grad(np.array(g, copy=True))
    else:
        t.grad._array = t.grad._array + g


# --- numerical gradient check -------------------------------------------------------------------

def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """Compare autograd's gradient of `sum(fn(*inputs) * w)` with central differences in float64.

    `w` is a fixed random weighting, so every output element is checked, not just their sum.
    On failure the error names the input, the worst element's index and both values.
    """
    from .tensor import Tensor

    inputs = [x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x)) for x in inputs]
    for i, x in enumerate(inputs):
        if x.requires_grad and x._array.dtype != np.float64:
            raise TypeError(f"gradcheck: input {i} has dtype {x._array.dtype}; use float64 "
                            f"(float32 rounding swamps a central difference)")
    with enable_grad():
        out = fn(*inputs)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(out.shape)

    def objective():
        with no_grad():
            return float(np.sum(fn(*inputs)._array * w))

    for x in inputs:
        x.grad = None
    with enable_grad():
        out = fn(*inputs)
        out.backward(Tensor._wrap(w.astype(out._array.dtype)))
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            continue
        analytic = np.zeros_like(x._array) if x.grad is None else x.grad._array
        numeric = np.zeros_like(x._array)
        flat = x._array.reshape(-1)  # a view: perturbations write through to x
        num_flat = numeric.reshape(-1)
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            plus = objective()
            flat[j] = orig - eps
            minus = objective()
            flat[j] = orig
            num_flat[j] = (plus - minus) / (2 * eps)
        err = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
        if err.size and err.max() > 0:
            k = tuple(int(i) for i in np.unravel_index(int(np.argmax(err)), err.shape))
            if raise_exception:
                raise AssertionError(
                    f"gradcheck: input {i} (shape {x.shape}) gradient mismatch at index {k}: "
                    f"autograd {analytic[k]:.8g}, finite difference {numeric[k]:.8g}")
            return False
    return True
