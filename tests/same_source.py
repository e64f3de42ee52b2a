"""Runs one program text written for PyTorch twice: as it is, with PyTorch, and with its import
lines rewritten for minigrad, each in its own process; then compares what the two printed.

The rewrite is a fixed table of import lines (`import torch` becomes `import minigrad as
torch`, `import torch.nn.functional as F` becomes `import minigrad.nn.functional as F`, `from
torch.utils.data import DataLoader` becomes `from minigrad.utils.data import DataLoader`, ...);
no other line of the program changes, and an import of a torch module the table does not name
is an error, not a silent miss.

The comparison is line by line, token by token (tokens split at spaces, commas, brackets,
colons and `=`): a token that is not a float (a word, an integer such as a sampled token, a
count, an argmax, an epoch number, a printed tensor's `grad_fn=<...>`) must be the same text;
a float token must agree within the program's tolerance, stated in its own text as a comment
line `# same-source tolerance: RTOL ATOL`. Elementwise math gives the same float32 numbers in
both libraries, but every number that went through a matrix product, a reduction or a
recurrence has its terms summed in another order, and training compounds that: each program
states the tolerance its arithmetic needs. A repr names its library (`torch.Size`,
`dtype=torch.int32`, `torch.return_types.topk`, a listed difference): a minigrad token
`minigrad.X` reads as `torch.X`. Lines whose numbers are elementwise-deterministic
(generated data, a learning rate from a schedule, a draw from the generator) are compared
exactly: a program names them with `# same-source exact: REGEX`, and every float token on a
line the regex finds must be the same text as PyTorch's.

Dropout in training draws PyTorch's masks by default (minigrad.random.use_pytorch_dropout), so
after the same `manual_seed` both libraries drop the same elements and leave the generator in
the same state: the minigrad worker runs the programs as they are, with no line of its own.

Several programs run in one process per library (PyTorch's import costs a second or two): the
worker runs each program as `__main__` in a fresh namespace and keeps its printed text.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

# The import lines a PyTorch program is allowed to have, by module: PyTorch's path -> minigrad's.
MODULES = {
    "torch": "minigrad",
    "torch.autograd": "minigrad.autograd",
    "torch.autograd.function": "minigrad.autograd.function",
    "torch.autograd.functional": "minigrad.autograd.functional",
    "torch.distributions": "minigrad.distributions",
    "torch.distributions.transforms": "minigrad.distributions.transforms",
    "torch.func": "minigrad.func",
    "torch.nn": "minigrad.nn",
    "torch.nn.functional": "minigrad.nn.functional",
    "torch.nn.init": "minigrad.nn.init",
    "torch.nn.parameter": "minigrad.nn.parameter",
    "torch.nn.modules.batchnorm": "minigrad.nn.modules.batchnorm",
    "torch.nn.modules.conv": "minigrad.nn.modules.conv",
    "torch.nn.modules.loss": "minigrad.nn.modules.loss",
    "torch.nn.modules.transformer": "minigrad.nn.modules.transformer",
    "torch.nn.modules.utils": "minigrad.nn.modules.utils",
    "torch.nn.utils": "minigrad.nn.utils",
    "torch.nn.utils.parametrizations": "minigrad.nn.utils.parametrizations",
    "torch.nn.utils.parametrize": "minigrad.nn.utils.parametrize",
    "torch.nn.utils.prune": "minigrad.nn.utils.prune",
    "torch.nn.utils.rnn": "minigrad.nn.utils.rnn",
    "torch.onnx": "minigrad.onnx",
    "torch.optim": "minigrad.optim",
    "torch.optim.lr_scheduler": "minigrad.optim.lr_scheduler",
    "torch.optim.swa_utils": "minigrad.optim.swa_utils",
    "torch.torch_version": "minigrad.torch_version",
    "torch.utils.checkpoint": "minigrad.utils.checkpoint",
    "torch.utils.data": "minigrad.utils.data",
    "torch.utils.tensorboard": "minigrad.utils.tensorboard",
}

_IMPORT = re.compile(r"^(?P<indent>\s*)import (?P<module>torch[\w.]*)(?: as (?P<alias>\w+))?\s*$")
_FROM = re.compile(r"^(?P<indent>\s*)from (?P<module>torch[\w.]*) import (?P<names>.+)$")


def rewrite_imports(source):
    """The program with its torch import lines rewritten from MODULES; every other line as is.

    `import torch` -> `import minigrad as torch`; `import torch.nn as nn` -> `import
    minigrad.nn as nn`; `from torch.optim import SGD` -> `from minigrad.optim import SGD`.
    A bare `import torch.nn` (which binds `torch`) becomes `import minigrad.nn` plus the name
    `torch` bound to minigrad on the same line, so that the program's `torch.nn...` still reads."""
    out = []
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        text = line.rstrip("\n")
        end = line[len(text):]
        m = _IMPORT.match(text) or _FROM.match(text)
        if m is None:
            if re.search(r"\bimport\s+torch|\bfrom\s+torch\b|__import__\(", text.split("#")[0]):
                raise ValueError(f"line {number}: an import of torch the table cannot rewrite: "
                                 f"{text!r}")
            out.append(line)
            continue
        module = m["module"]
        if module not in MODULES:
            raise ValueError(f"line {number}: no minigrad path for {module!r} in the table")
        target = MODULES[module]
        if "names" in m.groupdict():
            text = f"{m['indent']}from {target} import {m['names']}"
        elif m["alias"]:
            text = f"{m['indent']}import {target} as {m['alias']}"
        elif module == "torch":
            text = f"{m['indent']}import minigrad as torch"
        else:
            text = f"{m['indent']}import {target}; import minigrad as torch"
        out.append(text + end)
    return "".join(out)


def tolerance(source):
    """(rtol, atol) from the program's `# same-source tolerance: rtol atol` line."""
    m = re.search(r"^# same-source tolerance: (\S+) (\S+)\s*$", source, re.M)
    if m is None:
        raise ValueError("the program states no `# same-source tolerance: rtol atol` line")
    return float(m[1]), float(m[2])


# The worker: runs each program as __main__ with its own namespace and stdout, in a temporary
# working directory (programs save checkpoints there), and prints one JSON list of outputs.
_WORKER = r"""
import contextlib, io, json, os, sys, tempfile, traceback
if sys.argv[1] == "torch":
    import torch
    torch.set_num_threads(1)  # one thread: the comparison, not the speed, is tested
sources = json.loads(sys.stdin.read())
outputs = []
for name, source in sources:
    buffer = io.StringIO()
    with tempfile.TemporaryDirectory() as where:
        os.chdir(where)
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(source, name, "exec"), {"__name__": "__main__"})
            outputs.append({"out": buffer.getvalue()})
        except BaseException:
            outputs.append({"out": buffer.getvalue(), "error": traceback.format_exc()})
        finally:
            os.chdir("/")
sys.stdout.write(json.dumps(outputs))
"""


def run_programs(named_sources, library, timeout=600):
    """[{'out': text, 'error'?: traceback}] of each (name, source) run with `library`
    ('torch' runs the sources as they are; 'minigrad' runs them rewritten)."""
    if library == "minigrad":
        named_sources = [(name, rewrite_imports(src)) for name, src in named_sources]
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _WORKER, library], input=json.dumps(named_sources),
                          capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"the {library} worker failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


_TOKEN = re.compile(r"[\s,()\[\]{}:=]+")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$|^[-+]?(inf|nan)$")


def _is_float(token):
    return bool(_FLOAT.match(token)) and not re.fullmatch(r"[-+]?\d+", token)


def exact_lines(source):
    """The compiled `# same-source exact: REGEX` of the program, or None."""
    m = re.search(r"^# same-source exact: (.+?)\s*$", source, re.M)
    return re.compile(m[1]) if m else None


def compare_outputs(expected, got, rtol, atol, exact=None):
    """None if the two printed texts agree; else the first difference, said in words.

    Non-float tokens must be equal; float tokens within rtol and atol of PyTorch's, or the
    same text on the lines of PyTorch's output that the regex `exact` finds."""
    want_lines, have_lines = expected.splitlines(), got.splitlines()
    if len(want_lines) != len(have_lines):
        return f"{len(have_lines)} lines printed, PyTorch printed {len(want_lines)}"
    for n, (want, have) in enumerate(zip(want_lines, have_lines), 1):
        a = [t for t in _TOKEN.split(want) if t]
        b = [t for t in _TOKEN.split(have) if t]
        if len(a) != len(b):
            return f"line {n}: {have!r}, PyTorch: {want!r}"
        strict = exact is not None and exact.search(want)
        for x, y in zip(a, b):
            if y.startswith("minigrad."):  # a repr's module name (a listed difference)
                y = "torch." + y[len("minigrad."):]
            if _is_float(x) and _is_float(y) and not strict:
                fx, fy = float(x), float(y)
                if not np.isclose(fy, fx, rtol=rtol, atol=atol, equal_nan=True):
                    return (f"line {n}: {y} against PyTorch's {x} (rtol {rtol}, atol {atol}): "
                            f"{have!r}, PyTorch: {want!r}")
            elif x != y:
                return f"line {n}: {have!r}, PyTorch: {want!r}"
    return None


def compare_programs(named_sources):
    """{name: None or the first difference} for programs run with both libraries."""
    expected = run_programs(named_sources, "torch")
    got = run_programs(named_sources, "minigrad")
    results = {}
    for (name, source), want, have in zip(named_sources, expected, got):
        if "error" in want:
            results[name] = "PyTorch's run failed:\n" + want["error"]
        elif "error" in have:
            results[name] = "minigrad's run failed:\n" + have["error"]
        elif not want["out"].strip():
            results[name] = "the program printed nothing"
        else:
            results[name] = compare_outputs(want["out"], have["out"], *tolerance(source),
                                            exact=exact_lines(source))
    return results, expected, got
