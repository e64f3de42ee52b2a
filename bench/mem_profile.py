"""Where a minigrad training step's memory goes: the tools behind bench/memory.py's profile.

- `graph_memory(loss)` walks the graph behind `loss` (through the public `grad_fn` /
  `next_functions`) and books every array the graph keeps alive, each buffer once: arrays an
  op saved for its backward (by op type), arrays kept only because a node references its input
  tensors (by the op that produced them), and leaf tensors (parameters, inputs).
- `BackwardTimeline` wraps every op's backward and records, after each one, the bytes traced
  by tracemalloc and the peak reached inside it, so the peak of backward can be placed.
- `numpy_bytes()` is the memory of live NumPy arrays (tracemalloc's NumPy domain);
  `malloc_stats()` reads glibc's mallinfo2 (bytes in use, free but kept, mmapped);
  `rss_mb()` / `maxrss_mb()` the current and peak resident set size, `reset_peak_rss()` starts
  the peak again from the current size.

These read minigrad internals (`saved`, `inputs`, `_array`) where no public API exists; each
access is guarded, so a changed engine yields empty rows rather than wrong ones.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import tracemalloc
from collections import defaultdict

import numpy as np

MB = 1024.0 * 1024.0


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB


def _status_kib(field):
    """A `VmXXX:` line of /proc/self/status in KiB, or None where there is no such file."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def maxrss_mb():
    """Peak resident set size of this process since it started or since `reset_peak_rss()`.

    Read from VmHWM, not from getrusage's ru_maxrss: a process started by fork/vfork + exec
    inherits its parent's ru_maxrss, so a worker launched by a big parent (bench/run.py after
    a few sections) would report the parent's peak and a growth of 0 MB."""
    kib = _status_kib("VmHWM")
    if kib is None:  # not Linux: the rusage figure, with the caveat above
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024.0


def reset_peak_rss():
    """Make the peak RSS (VmHWM) start again from the current RSS; False where unsupported.

    Measuring from here excludes transient peaks before this point (importing a library)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks",
                                               "keepcost")]


def malloc_stats():
    """glibc's view, in MB: in use, free but kept by malloc (not returned to the OS), mmapped."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = _Mallinfo2
    m = fn()
    return dict(in_use_mb=(m.uordblks + m.hblkhd) / MB, free_kept_mb=m.fordblks / MB,
                heap_mb=m.arena / MB, mmapped_mb=m.hblkhd / MB)


def numpy_bytes():
    """Bytes of NumPy array data alive now (needs tracemalloc running)."""
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)])
    return sum(t.size for t in snap.traces)


def _owner(a):
    """The array that owns `a`'s memory (views point at it through `.base`)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _arrays_in(value, depth=0):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (tuple, list)) and depth < 2:
        for v in value:
            yield from _arrays_in(v, depth + 1)


def _nodes(loss):
    """Every op node behind `loss` (not the leaves' accumulators), each once, in the order the
    forward pass created them (every node after the nodes that produced its inputs)."""
    order, seen = [], set()
    stack = [(loss.grad_fn, iter(getattr(loss.grad_fn, "next_functions", ())))]
    seen.add(id(loss.grad_fn))
    while stack:  # depth-first; a node is appended after all of its inputs' nodes
        node, it = stack[-1]
        for child, _ in it:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(getattr(child, "next_functions", ()))))
                break
        else:
            stack.pop()
            if not hasattr(node, "variable"):  # an op, not a leaf's AccumulateGrad
                order.append(node)
    return order


def _op(node):
    return type(node).__name__


def graph_memory(loss, marks=None):
    """Bytes the graph behind `loss` keeps alive, by category; each buffer counted once.

    `marks` maps a name to a tensor (for instance "logits"): the report says where its buffer
    is booked. Returns dict(saved={op: bytes}, unneeded={op: bytes saved that its backward
    never reads}, input_refs={producing op: bytes},
    leaves=bytes, total=bytes (saved + input_refs), nodes=count, ops={op: count},
    marks={name: category})."""
    nodes = _nodes(loss)
    booked = {}                      # id(owner) -> (category, op, nbytes)
    saved, refs = defaultdict(int), defaultdict(int)
    ops = defaultdict(int)
    leaves = 0
    for n in nodes:                  # 0. leaves (parameters): not activations, wherever saved
        inputs = getattr(n, "inputs", None)  # older engines kept input tensors on the node
        if inputs is None:
            inputs = [c.variable for c, _ in n.next_functions if hasattr(c, "variable")]
        for t in inputs:
            arr = getattr(t, "_array", None)
            if arr is not None and t.grad_fn is None and id(_owner(arr)) not in booked:
                booked[id(_owner(arr))] = ("leaf", None, _owner(arr).nbytes)
                leaves += _owner(arr).nbytes
    read = defaultdict(bool)         # id(owner) -> does some backward read it
    for n in nodes:                  # 1. what each op keeps for its backward
        ops[_op(n)] += 1
        own = list(getattr(n, "saved", ()) or ())
        unread = _unread_positions(n, own)
        values = [(v, i not in unread) for i, v in enumerate(own)]
        values += [(v, True) for k, v in vars(n).items() if k not in ("saved", "inputs")] \
            if hasattr(n, "__dict__") else []
        for v, needed in values:
            for a in _arrays_in(v):
                o = _owner(a)
                read[id(o)] |= needed
                if id(o) not in booked:
                    booked[id(o)] = ("saved", _op(n), o.nbytes)
                    saved[_op(n)] += o.nbytes
    unneeded = defaultdict(int)      # saved, but only by backwards that never read it
    for key, (cat, op, nbytes) in booked.items():
        if cat == "saved" and not read[key]:
            unneeded[op] += nbytes
    for n in nodes:                  # 2. what is alive only because a node holds its inputs
        for t in getattr(n, "inputs", ()) or ():
            arr = getattr(t, "_array", None)
            if arr is not None and id(_owner(arr)) not in booked:
                o = _owner(arr)
                booked[id(o)] = ("input_ref", _op(t.grad_fn), o.nbytes)
                refs[_op(t.grad_fn)] += o.nbytes
    where = {}
    for name, t in (marks or {}).items():
        b = booked.get(id(_owner(t._array)))
        where[name] = "not held by the graph" if b is None else (
            f"saved by {b[1]}" if b[0] == "saved" else
            f"input reference (output of {b[1]})" if b[0] == "input_ref" else "leaf")
    return dict(saved=dict(saved), unneeded=dict(unneeded), input_refs=dict(refs),
                leaves=leaves, nodes=len(nodes),
                ops=dict(ops), marks=where,
                total=sum(saved.values()) + sum(refs.values()))  # activations: leaves excluded


# A product's gradient for one factor reads only the other factor: d(a*b)/da = b, and for
# matmul dA = dC B^T, dB = A^T dC. So a saved factor is never read when the OTHER input
# needs no gradient (x * 0.5, or q @ k^T with a constant k).
_PRODUCTS = {"Mul", "MatMul"}


def _unread_positions(node, saved):
    need = getattr(node, "needs_input_grad", None)
    if _op(node) not in _PRODUCTS or need is None or len(saved) != 2 or len(need) != 2:
        return set()
    return {i for i in (0, 1) if not need[1 - i]}


class BackwardTimeline:
    """While active, records (op, traced bytes after it, peak traced bytes inside it) for every
    op backward, in call order. Needs tracemalloc running."""

    def __init__(self):
        from minigrad.autograd.op import Op
        self._classes = [c for c in _subclasses(Op) if "backward" in vars(c)]
        self.rows = []
        self._saved = []

    def __enter__(self):
        for cls in self._classes:
            orig = vars(cls)["backward"]
            self._saved.append((cls, orig))
            setattr(cls, "backward", staticmethod(self._wrap(orig.__func__ if isinstance(
                orig, staticmethod) else orig)))
        return self

    def __exit__(self, *exc):
        for cls, orig in self._saved:
            setattr(cls, "backward", orig)
        self._saved = []
        return False

    def _wrap(self, fn):
        rows = self.rows

        def backward(ctx, g):
            tracemalloc.reset_peak()
            out = fn(ctx, g)
            cur, peak = tracemalloc.get_traced_memory()
            rows.append((type(ctx).__name__, cur, peak))
            return out
        return backward

    def peak(self):
        """(op whose backward reached the highest traced bytes, those bytes, its index)."""
        if not self.rows:
            return None, 0, -1
        i = max(range(len(self.rows)), key=lambda j: self.rows[j][2])
        return self.rows[i][0], self.rows[i][2], i


def _subclasses(cls):
    out, stack = [], [cls]
    while stack:
        for s in stack.pop().__subclasses__():
            out.append(s)
            stack.append(s)
    return out


def kernel_scratch_bytes():
    """Bytes of the buffers minigrad's kernels keep between calls (the matmul packing panels
    of this thread)."""
    import importlib
    try:  # the module, not the `matmul` function the package exports under the same name
        mod = importlib.import_module("minigrad.kernels.tiled_matmul")
    except ImportError:
        return 0
    local = getattr(mod, "_local", None)  # per-thread buffers (older versions: one dict)
    workspace = local.__dict__.get("workspace", {}) if local is not None else \
        getattr(mod, "_workspace", {})
    return sum(b.nbytes for b in workspace.values())
