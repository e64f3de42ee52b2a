"""Which of PyTorch's functions take `out=`, read from PyTorch itself, written to
minigrad/out_names.py (`python tests/out_names_gen.py`; tests/test_out_arg.py fails when that
file is not current).

A Python-level function (most of `torch.nn.functional`) takes `out` when its signature has it.
A built-in one (`torch.add`, `torch.linalg.solve`, ...) does when its ATen operator has an out
overload (`aten::add.out`, `aten::linalg_solve.out`) or its docstring shows `out=None`, and
PyTorch's argument parser does not refuse the keyword (`out=` is probed with an object that
is not a tensor: the parser names the keyword it refuses, lists the overloads it has, or says
`out` must be a tensor).
"""
from __future__ import annotations

import inspect
import pathlib
import re

TARGET = pathlib.Path(__file__).resolve().parents[1] / "minigrad" / "out_names.py"

# minigrad's namespace, PyTorch's module path, the prefix of its ATen operators
NAMESPACES = (("torch", "torch", ""), ("linalg", "torch.linalg", "linalg_"),
              ("special", "torch.special", "special_"), ("fft", "torch.fft", "fft_"),
              ("nn.functional", "torch.nn.functional", ""))


class _NotATensor:
    pass


def _parser_allows_out(torch, f):
    """Call `f` with a few kinds of arguments and an `out` that is not a tensor: the parser
    refuses the keyword, lists its overloads, or says `out` must be a tensor. With no answer
    (every call refused for its other arguments), the schema's word stands."""
    t = torch.zeros(2, 2)
    for args in ((t,), (t, t), (t, t, t), (t, 1), (t, 1, 1), (1,), (1, 1), (1, 1, 1), ([t, t],)):
        try:
            f(*args, out=_NotATensor())
        except TypeError as e:
            msg = str(e)
            if "expected" in msg and "invalid combination" in msg and "got (" in msg:
                return bool(re.search(r"\bout = None\b", msg))
            if re.search(r"unexpected keyword argument '?out|unrecognized keyword.*\bout", msg):
                return False
            if "argument 'out'" in msg:
                return True
        except Exception:  # refused for another reason: try other arguments
            pass
    return True


def takes_out(torch, f, op):
    try:
        return "out" in inspect.signature(f).parameters
    except (TypeError, ValueError):
        pass
    schema = any(s.overload_name.endswith("out") or any(a.name == "out" for a in s.arguments)
                 for s in torch._C._jit_get_schemas_for_operator("aten::" + op))
    doc = bool(re.search(r"\bout=None\b", f.__doc__ or ""))
    return (schema or doc) and _parser_allows_out(torch, f)


def out_names():
    """{minigrad namespace: sorted names of PyTorch's functions there that take out=}."""
    import importlib

    import torch
    table = {}
    for key, path, prefix in NAMESPACES:
        ns = importlib.import_module(path)
        table[key] = sorted(
            n for n in dir(ns) if not n.startswith("_") and not n.endswith("_")
            and callable(getattr(ns, n)) and not isinstance(getattr(ns, n), type)
            and takes_out(torch, getattr(ns, n), prefix + n))
    return table


def render(table):
    import torch
    version = torch.__version__.split("+")[0]
    lines = ['"""The functions whose PyTorch counterparts take `out=`, by namespace: '
             'generated from',
             f"PyTorch {version} by tests/out_names_gen.py (do not edit by hand). "
             "`out_arg.accept_out`",
             'gives minigrad\'s functions of these names the keyword."""', "", "OUT_NAMES = {"]
    for key, names in table.items():
        lines.append(f"    {key!r}: (")
        line = "       "
        for n in names:
            item = f" {n!r},"
            if len(line) + len(item) > 99:
                lines.append(line)
                line = "       "
            line += item
        lines.append(line)
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    TARGET.write_text(render(out_names()))
    print(f"wrote {TARGET}")
