"""From a trace to an ONNX graph: keep the records the outputs need, convert each in order."""
from __future__ import annotations

from onnx import helper

from .errors import UnsupportedOperatorError
from .graph import Graph, onnx_type
from .layer_ops import UNREAD
from .lowering import NUMPY
from .op_table import OPS
from .trace import Value, values_in as _values_in


def _operands(rec):
    unread = UNREAD.get(rec.op, ())
    for x in (*rec.inputs, *(v for k, v in rec.kwargs.items() if k not in unread)):
        yield from _values_in(x)


def converter(op):
    """The converter of an op (an Op class, or a NumPy operation's name): the table's,
    or the op's own `to_onnx(g, rec)` (how a layer above the core, whose ops this package
    cannot import, exports its op), or None."""
    if isinstance(op, str):
        return NUMPY.get(op)
    return OPS.get(op) or getattr(op, "to_onnx", None)


def _where(rec):
    return f" (in module '{rec.path}')" if rec.path else ""


class _Planner:
    """Orders the records the outputs depend on; an op without a converter stands for the
    NumPy operations its forward ran, or for a constant if it depends on no input."""

    def __init__(self):
        self.order, self.done, self.alias, self._depends = [], set(), {}, {}

    def depends(self, v):
        """Whether Value v depends on a graph input."""
        if v.kind == "input":
            return True
        if v.kind != "node":
            return False
        if v not in self._depends:
            self._depends[v] = False  # a record's operands come before it: no cycle
            self._depends[v] = any(self.depends(u) for u in _operands(v.record))
        return self._depends[v]

    def need(self, v, user=None):
        """Plan the computation of Value v (used by record `user`, for error messages)."""
        stack = [(v, user, False)]
        while stack:
            v, user, expanded = stack.pop()
            if v.kind == "bad":
                what = f"{user.op_name}{_where(user)}" if user is not None else "an output"
                raise UnsupportedOperatorError(
                    f"onnx.export: a value of shape {v.shape} used by {what} was computed from "
                    f"the inputs by {v.reason}, which the exporter cannot follow")
            if v.kind != "node" or v in self.done:
                continue
            if expanded:  # its operands are planned: it can be computed
                self.done.add(v)
                if v not in self.alias:
                    self.order.append(v.record)
                continue
            rec = v.record
            stack.append((v, user, True))
            target = self._target(rec, user)
            if target is not None:  # the op is its forward's NumPy operations
                self.alias[v] = target
                stack.append((target, rec, False))
            else:
                stack += [(u, rec, False) for u in _operands(rec)]

    def _target(self, rec, user):
        """For an op without a converter: the Value its forward's NumPy operations computed."""
        if converter(rec.op) is not None:
            return None
        if isinstance(rec.op, str):
            inside = user is not None and not isinstance(user.op, str)
            what = (f"the op {user.op_name}{_where(user)} cannot be expressed in ONNX: its "
                    f"forward calls " if inside else f"{_where(rec)[1:]}: ".lstrip())
            raise UnsupportedOperatorError(
                f"onnx.export: {what}numpy.{rec.op}, which has no ONNX mapping")
        if rec.inner is not None:
            return rec.inner
        if not any(self.depends(u) for u in _operands(rec)):
            return None  # computed from parameters and constants only: a constant
        raise UnsupportedOperatorError(
            f"onnx.export: the op {rec.op_name}{_where(rec)} cannot be expressed in ONNX: it "
            f"has no ONNX mapping and its forward runs compiled code the exporter cannot trace")


def plan(outputs):
    """The records that compute `outputs` (Values), in order (`.order`), and the ops standing
    for their NumPy operations (`.alias`)."""
    planner = _Planner()
    for v in outputs:
        planner.need(v)
    return planner


def build_graph(tracer, plan, outputs, output_names, opset, export_params):
    """The Graph computing `outputs` (Values) from the trace's inputs, following `plan`."""
    g = Graph(opset, export_params)
    g.alias = plan.alias
    for v in tracer.inputs:
        g.names[v] = v.name
    for rec in plan.order:
        fn = converter(rec.op)
        if fn is None:  # an op on parameters and constants only: its value, folded
            g.names[rec.out] = g.const(rec.out.array)
            continue
        try:
            g.names[rec.out] = fn(g, rec)
        except UnsupportedOperatorError as e:
            raise UnsupportedOperatorError(
                f"onnx.export: {rec.op_name}{_where(rec)}: {e}") from None
    for v, name in zip(outputs, output_names):
        src = g.name(v)
        g.nodes.append(helper.make_node("Identity", [src], [name], name=f"/output/{name}"))
    return g


def value_info(name, v, dynamic):
    """A graph input's or output's declared type: dims listed in `dynamic` get their names."""
    dims = [dynamic.get(i, n) for i, n in enumerate(v.shape)]
    return helper.make_tensor_value_info(name, onnx_type(v.dtype), dims)

