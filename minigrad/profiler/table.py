"""The text table of `key_averages().table()`, laid out as PyTorch's (CPU columns only)."""
from __future__ import annotations

_COLUMN = 12  # the width of every column but the name's


def format_time(us):
    """A time given in microseconds, in s, ms or us with three decimals (PyTorch's format)."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _percent(part, whole):
    return f"{100.0 * part / whole:.2f}%" if whole else "0.00%"


def _cut(name, width):
    """A name cut to `width` characters with "..." (PyTorch's), so that columns stay aligned."""
    return name if len(name) <= width else name[:width - 3] + "..."


def build_table(rows, self_total, row_limit=100, max_name_column_width=55, header=None):
    """`rows` (events or their averages, already sorted) as a table; `self_total`, the self
    CPU time of everything profiled, is what the percentages are of."""
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    shapes = any(getattr(r, "input_shapes", None) for r in rows)  # grouped by them
    names = [r.key for r in rows]
    name_width = min(max([len(n) for n in names] + [len("Name")]) + 4, max_name_column_width)
    titles = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    line = "-" * name_width + "  " + "".join("-" * _COLUMN + "  " for _ in titles)
    if shapes:
        shape_width = min(max(len(str(r.input_shapes)) for r in rows) + 2, 80)
        line += "-" * shape_width + "  "

    def row(name, cells, shape=None):
        text = f"{_cut(name, name_width):>{name_width}}  "
        text += "".join(f"{c:>{_COLUMN}}  " for c in cells)
        return text + (f"{shape:>{shape_width}}  " if shapes else "")

    out = [header] if header else []
    out += [line, row("Name", titles, "Input Shapes"), line]
    for r in rows:
        out.append(row(r.key, [
            _percent(r.self_cpu_time_total, self_total), format_time(r.self_cpu_time_total),
            _percent(r.cpu_time_total, self_total), format_time(r.cpu_time_total),
            format_time(r.cpu_time_total / r.count if r.count else 0.0), str(r.count)],
            str(r.input_shapes) if shapes else None))
    out += [line, f"Self CPU time total: {format_time(self_total)}", ""]
    return "\n".join(out)
