"""L-BFGS, as `torch.optim.LBFGS` (after minFunc): a quasi-Newton method for full-batch
problems, stepped with a closure that re-evaluates the loss.

    optimizer = LBFGS(model.parameters(), lr=1, line_search_fn="strong_wolfe")
    def closure():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss
    optimizer.step(closure)          # up to max_iter iterations

All parameters are treated as one flat vector. Each iteration moves along d = -H g, where H,
an estimate of the inverse Hessian, is never formed: the two-loop recursion applies it from
the last `history_size` pairs (s, y) of steps and gradient changes, with H_0 = (y.s / y.y) I.
The step length is lr (the first iteration: min(1, 1 / |g|_1) * lr), or found by a line search
satisfying the strong Wolfe conditions (`line_search_fn="strong_wolfe"`, cubic interpolation
with bracketing and zoom, as minFunc's). An optimizer step ends after `max_iter` iterations,
`max_eval` evaluations of the closure, or when the gradient, the step or the loss change falls
below its tolerance.

The arithmetic is PyTorch's, in NumPy: scalars such as y.s are NumPy scalars of the
parameters' dtype, as PyTorch's are 0-d tensors of it, so float32 problems round alike. The
state (kept for the first parameter, as in PyTorch) holds NumPy arrays and scalars; its state
dict holds tensors, and the state dicts of the two libraries load into each other.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd import bump_version, enable_grad
from minigrad.tensor import Tensor

from .optimizer import Optimizer
from .wolfe import strong_wolfe


class LBFGS(Optimizer):
    """L-BFGS as `torch.optim.LBFGS`: one parameter group, `step(closure)`."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # --- the parameters as one flat vector ------------------------------------------------
    def _gather_flat_grad(self):
        return np.concatenate([p.grad._array.reshape(-1) if p.grad is not None
                               else np.zeros(p._array.size, p._array.dtype)
                               for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p._array.size
            p._array += (update[offset:offset + n] * step_size).reshape(p._array.shape)
            bump_version(p)
            offset += n

    def _set_param(self, arrays):
        for p, a in zip(self._params, arrays):
            np.copyto(p._array, a)
            bump_version(p)

    def _directional_evaluate(self, closure, x, t, d):
        """The loss and flat gradient at x + t d; the parameters are left at x."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # --- the step ---------------------------------------------------------------------------
    def step(self, closure):
        """Up to max_iter L-BFGS iterations; returns the closure's first loss."""
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

        def evaluate():
            with enable_grad():
                return closure()
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search_fn = group["history_size"], group["line_search_fn"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:  # the L-BFGS direction from the history of (s, y) pairs
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only if the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += old_dirs[i] * -al[i]
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += old_stps[i] * (al[i] - be_i)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                np.copyto(prev_flat_grad, flat_grad)
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._array.copy() for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)
                loss, flat_grad, t, ls_func_evals = strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # re-evaluate, unless this was the last iteration
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    # --- state dicts: tensors outside, NumPy inside -----------------------------------------
    def _save_value(self, key, value):
        return _export(value)

    def _load_value(self, key, value, p):
        if key in ("func_evals", "n_iter"):
            return super()._load_value("step", value, p)  # whole numbers, checked alike
        try:
            return _import(value, p._array.dtype)
        except (TypeError, ValueError) as e:
            raise ValueError(f"LBFGS.load_state_dict: state '{key}' is not a number, a vector "
                             f"or a list of them ({e})") from None


def _export(v):
    """NumPy arrays and scalars as (copied) tensors, lists element by element."""
    if isinstance(v, list):
        return [_export(x) for x in v]
    if isinstance(v, (np.ndarray, np.generic)):
        return Tensor._wrap(np.array(v, copy=True))
    return v


def _import(v, dtype):
    """The inverse of `_export`, for minigrad's and PyTorch's (tensor) values alike."""
    if isinstance(v, (list, tuple)):
        return [_import(x, dtype) for x in v]
    if v is None or isinstance(v, (bool, int, float)):
        return v
    arr = np.asarray(v._array if isinstance(v, Tensor) else v)
    if arr.dtype.kind not in "iuf" or arr.ndim > 1:
        raise TypeError(f"got {type(v).__name__} of dtype {arr.dtype} and shape {arr.shape}")
    arr = arr.astype(dtype if arr.dtype.kind == "f" else arr.dtype)
    return arr[()] if arr.ndim == 0 else arr.copy()


__all__ = ["LBFGS"]
