"""Nested containers of tensors ("pytrees"), as torch.func walks them: the arguments and results
of a transformed function may be tuples, lists, dicts and namedtuples of tensors, nested.

`tree_flatten(tree)` gives the leaves in order and a spec; `tree_unflatten(leaves, spec)`
rebuilds the same structure around new leaves. Anything that is not one of those containers
(a tensor, a number, None) is a leaf.
"""
from __future__ import annotations

_LEAF = None  # the spec of a leaf


def tree_flatten(tree):
    """(leaves, spec): the leaves depth first, dict entries in their insertion order."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, dict):
        return (type(tree), tuple(tree), tuple(_flatten(v, leaves) for v in tree.values()))
    if isinstance(tree, (tuple, list)):
        return (type(tree), len(tree), tuple(_flatten(v, leaves) for v in tree))
    leaves.append(tree)
    return _LEAF


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    out = _unflatten(it, spec)
    if next(it, _END) is not _END:
        raise ValueError("tree_unflatten: more leaves than the spec holds")
    return out


_END = object()


def _unflatten(it, spec):
    if spec is _LEAF:
        return next(it)
    kind, keys, children = spec
    values = [_unflatten(it, c) for c in children]
    if issubclass(kind, dict):
        return kind(zip(keys, values))
    if _is_namedtuple_type(kind):
        return kind(*values)
    return kind(values)


def _is_namedtuple_type(kind):
    return issubclass(kind, tuple) and hasattr(kind, "_fields")


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def spec_repr(spec):
    """The structure as text, for errors: `(*, {'a': *})`."""
    if spec is _LEAF:
        return "*"
    kind, keys, children = spec
    if issubclass(kind, dict):
        return "{" + ", ".join(f"{k!r}: {spec_repr(c)}" for k, c in zip(keys, children)) + "}"
    inner = ", ".join(spec_repr(c) for c in children)
    if issubclass(kind, list):
        return f"[{inner}]"
    return f"({inner}{',' if len(children) == 1 else ''})"


def broadcast_prefix(prefix, tree):
    """`prefix` (a leaf, or a structure that is a prefix of `tree`'s) repeated down to each of
    tree's leaves: the flat list of them, one per leaf of `tree`. None if it does not fit."""
    out = []
    return out if _broadcast(prefix, tree, out) else None


def _broadcast(prefix, tree, out):
    if not isinstance(prefix, (tuple, list, dict)):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return True
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            return False
        return all(_broadcast(prefix[k], tree[k], out) for k in tree)
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        return False
    return all(_broadcast(p, t, out) for p, t in zip(prefix, tree))


__all__ = ["broadcast_prefix", "spec_repr", "tree_flatten", "tree_map", "tree_unflatten"]
