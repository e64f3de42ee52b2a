"""`Module.summary()`: every parameter with its shape and count, and totals per sub-module."""
from __future__ import annotations


def summary_table(model, depth=None) -> str:
    """A text table: one row per parameter, then per-module totals down to `depth` levels."""
    rows = [(name, tuple(p.shape), p._array.size) for name, p in model.named_parameters()]
    width = max([len(r[0]) for r in rows] + [20])
    lines = [f"{'parameter':<{width}}  {'shape':<18} {'count':>12}", "-" * (width + 33)]
    for name, shape, n in rows:
        lines.append(f"{name:<{width}}  {str(shape):<18} {n:>12,}")
    lines.append("-" * (width + 33))
    lines.append(f"{'module':<{width}}  {'':<18} {'total':>12}")
    for name, m in model.named_modules():
        level = name.count(".") + 1 if name else 0
        if depth is not None and level > depth:
            continue
        total = sum(p._array.size for p in m.parameters())
        if total == 0:  # parameter-free modules (dropout, activations) add nothing to the table
            continue
        label = name or f"{type(model).__name__} (all)"
        lines.append(f"{label:<{width}}  {type(m).__name__:<18} {total:>12,}")
    return "\n".join(lines)
