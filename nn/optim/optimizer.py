"""`Optimizer`: the bookkeeping every optimizer shares.

An optimizer holds *parameter groups*: each group is a dict with a list of parameters under
'params' plus its own hyper-parameters ('lr', 'momentum', ...), so e.g. embeddings can learn at
a different rate from the rest. Per-parameter memory (Adam's running averages) lives in
`self.state[param]`, a dict created on the parameter's first update.

`state_dict()` uses PyTorch's format, so a checkpoint reads the same in both libraries:

    {'state': {0: {'step': 3, 'exp_avg': Tensor, ...}, ...},
     'param_groups': [{'lr': 0.001, ..., 'params': [0, 1, 2]}]}

Parameters are named by their position across all groups, because Python objects cannot be
written to a file; `load_state_dict` maps the positions back onto this optimizer's parameters.

Speed: an update is a handful of NumPy ufuncs writing into existing arrays (`out=`), never a new
array per parameter. Large parameters are walked in slices of `CHUNK` elements so that the
parameter, its gradient, its state and a scratch buffer are still in the CPU cache when the
next ufunc reads them, instead of streaming every array through memory a dozen times. Small
parameters go the other way (Adam's `_update_params`): a model of many tiny ones would spend
its step calling ufuncs on a few hundred elements each, so they are updated together as one
flat array of at most `CHUNK` elements and copied back.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from minigrad.autograd import bump_version, enable_grad
from minigrad.tensor import Tensor

from .optimizer_hooks import (OptimizerHooks, hooked, register_optimizer_step_post_hook,
                              register_optimizer_step_pre_hook)

# An update touches 5 to 7 slices (p, grad, state, scratch); at 64 Ki float32 elements each
# that is 1.3 to 1.8 MB, which fits a typical 2 MB L2 cache.
CHUNK = 1 << 16


def decayed(g, p, weight_decay, out):
    """g + weight_decay * p (L2 weight decay added to the gradient), written into the scratch
    array `out`: the gradient itself must not change. g itself when weight_decay is 0."""
    if weight_decay == 0:
        return g
    np.multiply(p, weight_decay, out=out)
    np.add(g, out, out=out)
    return out

class Optimizer(OptimizerHooks):
    """Base class: parameter groups, per-parameter state, zero_grad and (de)serialisation;
    hooks on step and the state dicts (`optimizer_hooks.py`)."""

    _scalars = ()  # per-parameter state kept as a Python float (PyTorch: a 0-d tensor)

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = defaultdict(dict)  # param -> dict; Tensor hashes by identity
        self.param_groups = []
        self._scratch = {}
        if isinstance(params, (Tensor, dict, set, frozenset)):  # sets: order would be random
            raise TypeError(f"{type(self).__name__}: params should be an iterable of Parameters "
                            f"or of dicts with a 'params' key, got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Add a dict of parameters (and overriding hyper-parameters) to optimize."""
        name = type(self).__name__
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise TypeError(f"{name}: a parameter group must be a dict with a 'params' key")
        group = dict(param_group)
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"{name}: can't optimize a non-leaf Tensor (shape {p.shape})")
        if len({id(p) for p in params}) != len(params):
            raise ValueError(f"{name}: a parameter group contains the same parameter twice")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        group["params"] = params
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group):
        """Subclasses raise ValueError for bad hyper-parameters here (called for every group)."""
        name = type(self).__name__
        if not group.get("lr", 0) >= 0:
            raise ValueError(f"{name}: invalid learning rate: {group['lr']}")
        # PyTorch's implementation choices: minigrad has one implementation per optimizer,
        # so foreach/fused only need to be a consistent request; the other two need a
        # feature minigrad lacks and are refused rather than silently ignored
        if group.get("foreach") and group.get("fused"):
            raise RuntimeError(f"{name}: `fused` and `foreach` cannot be `True` together.")
        if group.get("differentiable"):
            raise RuntimeError(f"{name}: differentiable=True is not supported: minigrad's "
                               f"optimizer steps are not recorded by autograd")
        if group.get("capturable"):
            raise RuntimeError(f"{name}: capturable=True is for CUDA graphs, which need "
                               f"parameters on a GPU; minigrad runs on the CPU only")

    # --- the update ---------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Forget the gradients (None frees them; False zeroes them in place)."""
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad._array.fill(0)
                    bump_version(p.grad)

    @hooked
    def step(self, closure=None):
        """Update every parameter that has a gradient; `closure` re-evaluates the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                if p.grad._array.shape != p._array.shape:
                    raise ValueError(f"{type(self).__name__}: gradient of shape "
                                     f"{p.grad._array.shape} does not match its parameter of "
                                     f"shape {p._array.shape}")
            self._update_params(params, group)
            for p in params:
                bump_version(p)  # p._array changed in place: autograd must notice
        return loss

    def _update_params(self, params, group):
        """Update every parameter of `group` that has a gradient (an optimizer may batch them)."""
        for p in params:
            self._update(p, self._grad(p, group), self.state[p], group)

    @staticmethod
    def _grad(p, group):
        """p's gradient array, negated (a copy) when the group maximizes: PyTorch negates the
        gradient first, so weight decay still pulls towards zero."""
        g = p.grad._array
        return np.negative(g) if group.get("maximize") else g

    def _update(self, p, grad, state, group):
        """Change `p._array` in place, given its gradient array, its state dict and its group."""
        raise NotImplementedError(f"{type(self).__name__} does not define _update")

    def _slices(self, p, *arrays, scratch=1):
        """Yield matching 1-D slices of `p._array` and `arrays` (shaped like p), plus scratch.

        Each tuple is (p, *arrays, *buffers) for at most CHUNK elements. A non-contiguous
        parameter cannot be flattened without a copy, so it comes back whole instead.
        """
        data = p._array
        n = data.size
        contiguous = data.flags.c_contiguous
        stride = CHUNK if contiguous else n  # where scratch buffer i starts
        buf = self._scratch.get(data.dtype)
        if buf is None or buf.size < scratch * stride:
            buf = self._scratch[data.dtype] = np.empty(scratch * max(stride, CHUNK), data.dtype)
        if not contiguous:
            yield (data, *arrays, *(buf[i * n:(i + 1) * n].reshape(data.shape)
                                    for i in range(scratch)))
            return
        flats = [data.reshape(-1)] + [a.reshape(-1) for a in arrays]  # views (grad may copy)
        bufs = [buf[i * CHUNK:(i + 1) * CHUNK] for i in range(scratch)]
        for s in range(0, n, CHUNK):
            k = min(CHUNK, n - s)
            yield (*[f[s:s + k] for f in flats], *[b[:k] for b in bufs])

    # --- saving and restoring -----------------------------------------------------------
    def state_dict(self):
        """A snapshot in PyTorch's format: state and params named by their index (copies)."""
        self._state_dict_hooks("pre")
        index, groups = {}, []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {}
        for p, s in self.state.items():
            if id(p) in index and s:
                state[index[id(p)]] = {k: self._save_value(k, v) for k, v in s.items()}
        return self._state_dict_hooks("post", {"state": dict(sorted(state.items())),
                                               "param_groups": groups})

    def load_state_dict(self, state_dict):
        """Restore hyper-parameters and state saved by `state_dict` (possibly via minigrad.load),
        all or nothing: everything is checked and converted before anything is replaced."""
        name = type(self).__name__
        if isinstance(state_dict, dict):  # a shallow copy, which the hooks may change
            state_dict = self._state_dict_hooks("load_pre", dict(state_dict))
        if not (isinstance(state_dict, dict) and isinstance(state_dict.get("state"), dict)
                and isinstance(state_dict.get("param_groups"), (list, tuple))):
            raise ValueError(f"{name}.load_state_dict: expected a dict with 'state' (a dict) and "
                             f"'param_groups' (a list), as state_dict() returns")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: the checkpoint has {len(saved)} parameter "
                             f"groups, this optimizer has {len(self.param_groups)}")
        for i, (s, g) in enumerate(zip(saved, self.param_groups)):
            if not isinstance(s, dict) or not isinstance(s.get("params"), (list, tuple)):
                raise ValueError(f"{name}.load_state_dict: group {i} is not a dict with a "
                                 f"'params' list")
            if len(s["params"]) != len(g["params"]):
                raise ValueError(f"{name}.load_state_dict: group {i} has {len(s['params'])} "
                                 f"parameters in the checkpoint but {len(g['params'])} here")
        params = {}
        for s, g in zip(saved, self.param_groups):
            params.update(zip(s["params"], g["params"]))
        state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            try:
                p = params.get(int(key))
            except (TypeError, ValueError):
                p = None
            if p is None or not isinstance(values, dict):
                raise KeyError(f"{name}.load_state_dict: state for parameter {key!r}, which no "
                               f"parameter group lists (or which is not a dict)")
            state[p] = {k: self._load_value(k, v, p) for k, v in values.items()}
        groups = [{**g, **{k: v for k, v in s.items() if k != "params"}}
                  for s, g in zip(saved, self.param_groups)]
        for g in groups:
            self._check_group(g)
        self.state = state  # nothing above changed this optimizer; now everything changes
        for g, new in zip(self.param_groups, groups):
            g.update(new)
        self._state_dict_hooks("load_post")

    def _save_value(self, key, value):
        """A state value as the state dict holds it: a copy, which later steps leave alone."""
        return _copy(value)

    def _load_value(self, key, value, p):
        """A state value from a checkpoint as this optimizer keeps it (checked)."""
        return _cast(value, p, key, type(self).__name__, key in self._scalars)

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _copy(v):
    return Tensor._wrap(np.array(v._array, copy=True)) if isinstance(v, Tensor) else v


def _cast(v, p, key, name, scalar=False):
    """A loaded state value as this optimizer keeps it: arrays like p (dtype, shape), steps int,
    `scalar` ones a float."""
    where = f"{name}.load_state_dict: state '{key}'"
    if scalar:
        value = np.asarray(v._array if isinstance(v, Tensor) else v)
        if value.shape != () or value.dtype.kind not in "iuf" or not np.isfinite(value):
            raise ValueError(f"{where} must be a finite number, got {v!r}")
        return float(value)
    if key == "step":
        step = v._array if isinstance(v, Tensor) else np.asarray(v)
        if (step.shape != () or step.dtype.kind not in "iuf" or not np.isfinite(step)
                or step != np.floor(step) or step < 0):
            raise ValueError(f"{where} must be a non-negative whole number, got {v!r}")
        return int(step)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    arr = np.asarray(v._array if isinstance(v, Tensor) else v)
    if arr.shape != p._array.shape:
        raise ValueError(f"{where} has shape {arr.shape} but its parameter has shape "
                         f"{p._array.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{where} has dtype {arr.dtype}, not a real number type")
    dtype = p._array.dtype if arr.dtype.kind == "f" else arr.dtype
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.array(arr, dtype=dtype, order="C", copy=True)
    if not np.array_equal(np.isfinite(out), np.isfinite(arr)):
        raise ValueError(f"{where}: {arr.dtype} values overflow {dtype}")
    return Tensor._wrap(out)


def lerp_(start, end, weight, scratch):
    """start.lerp_(end, weight) in place, with PyTorch's two formulas (the one for weights of
    at least 0.5 is exact at weight 1)."""
    np.subtract(end, start, out=scratch)
    if weight < 0.5:
        scratch *= weight
        start += scratch
    else:
        scratch *= 1 - weight
        np.subtract(end, scratch, out=start)


__all__ = ["CHUNK", "Optimizer", "lerp_", "register_optimizer_step_post_hook",
           "register_optimizer_step_pre_hook"]
