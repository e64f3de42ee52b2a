"""`functional_call`: a module run with other tensors in place of its parameters and buffers,
as `torch.func.functional_call` (also `torch.nn.utils.stateless.functional_call`).

    out = functional_call(model, {"weight": w, "bias": b}, (x,))

The tensors are put in the module's tables for the call and the originals put back after it,
even if it raises. That makes a module a function of its parameters, which is what grad, vmap
and jacrev need (per-example gradients, model ensembles).
"""
from __future__ import annotations

import contextlib

from ..module import Module


def _dicts(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    if not (isinstance(parameter_and_buffer_dicts, (list, tuple))
            and all(isinstance(d, dict) for d in parameter_and_buffer_dicts)):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    merged, repeated = {}, []
    for d in parameter_and_buffer_dicts:
        for k, v in d.items():
            if k in merged:
                repeated.append(k)
            merged[k] = v
    if repeated:
        raise ValueError(f"{sorted(set(repeated))} appeared in multiple dictionaries; behavior "
                         f"of functional call is ambiguous")
    return merged


def _tied_groups(module):
    """{name: every name of the same tensor} for the parameters and buffers shared by names."""
    by_id = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)):
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() if len(names) > 1 for n in names}


def _with_tied(module, values):
    """`values` with each tied name given its partner's tensor (PyTorch's tie_weights)."""
    groups, out = _tied_groups(module), dict(values)
    for name in values:
        given = [n for n in groups.get(name, ()) if n in values]
        if any(values[n] is not values[name] for n in given):
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, "
                             f"which are tied. Consider using tie_weights=False")
        for n in groups.get(name, ()):
            out.setdefault(n, values[name])
    return out


def _check_strict(module, values):
    expected = [n for n, _ in module.named_parameters(remove_duplicate=False)] + [
        n for n, _ in module.named_buffers(remove_duplicate=False)]
    missing = [n for n in expected if n not in values]
    unexpected = [n for n in values if n not in set(expected)]
    if missing or unexpected:
        lines = []
        if unexpected:
            lines.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
        if missing:
            lines.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                           + "\n\t".join(lines))


@contextlib.contextmanager
def _reparametrized(module, values):
    """Each `name -> tensor` put in place for the block, and the originals put back."""
    saved = []
    try:
        for name, tensor in values.items():
            prefix, _, attr = name.rpartition(".")
            owner = module.get_submodule(prefix) if prefix else module
            d = owner.__dict__
            table = next((t for t in (d["_parameters"], d["_buffers"]) if attr in t), None)
            saved.append((owner, attr, table, table[attr] if table is not None else None,
                          attr in d, d.get(attr)))
            if table is not None:
                table[attr] = tensor
            object.__setattr__(owner, attr, tensor)
        yield
    finally:
        for owner, attr, table, old, had, old_attr in reversed(saved):
            if table is not None:
                table[attr] = old
            if had:
                object.__setattr__(owner, attr, old_attr)
            else:
                object.__delattr__(owner, attr)


def functional_call(module: Module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named tensors (one dict, or several without common
    keys) in place of its parameters and buffers. `tie_weights`: a value given for one name
    of a shared parameter serves all its names. `strict`: every parameter and buffer must be
    given, and nothing else."""
    values = _dicts(parameter_and_buffer_dicts)
    if tie_weights:
        values = _with_tied(module, values)
    if strict:
        _check_strict(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrized(module, values):
        return module(*args, **(kwargs or {}))


__all__ = ["functional_call"]
