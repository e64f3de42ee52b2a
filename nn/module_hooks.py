"""A module's forward hooks: registering them (a handle removes one) and running them.

`hook(module, args)` runs before forward and may replace the arguments; `hook(module, args,
output)` runs after it and may replace the output: a non-None return replaces, as in PyTorch.
"""
import itertools

_ids = itertools.count()


def register(table, hook):
    key = next(_ids)  # not id(hook): the same function may be registered twice
    table[key] = hook

    class Handle:
        def remove(self):
            table.pop(key, None)
    return Handle()


def run_forward_pre_hooks(module, args):
    for hook in module._forward_pre_hooks.values():
        result = hook(module, args)
        if result is not None:
            args = result if isinstance(result, tuple) else (result,)
    return args


def run_forward_hooks(module, args, out):
    for hook in module._forward_hooks.values():
        result = hook(module, args, out)
        if result is not None:
            out = result
    return out
