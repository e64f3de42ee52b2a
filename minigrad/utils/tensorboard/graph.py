"""`add_graph`'s record: a model's forward pass as the GraphDef TensorBoard's graph plugin
draws, laid out as PyTorch lays it out.

The pass is recorded by the ONNX exporter's tracer (`minigrad.onnx.trace`, every op and every
NumPy operation on values from the inputs, each tagged with the module that ran it). The ops
the outputs need become nodes named by module scope as PyTorch names them
(`Net/Sequential[seq]/Linear[0]/<op>_<n>`, the root module's class name first, then each
sub-module's class with its attribute name), with the op's output shape as `_output_shapes`
and its non-tensor arguments in `attr`. Inputs are `input/<forward's parameter name>` and
outputs `output/output.<i>` ("IO Node"s; several results are one tuple,
`prim::TupleConstruct`, as in PyTorch's trace), parameters and buffers `prim::GetAttr` nodes in
their module's scope, constants `prim::Constant` nodes."""
import numpy as np
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from minigrad.onnx.export import trace_call
from minigrad.onnx.trace import values_in

__all__ = ["graph"]


def _node(name, op, inputs=(), shape=None, attributes=""):
    attr = {"attr": AttrValue(s=attributes.encode("utf_8"))}
    if shape is not None:
        attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(
            dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])]))
    return NodeDef(name=name, op=op, input=list(inputs), attr=attr)


def _scopes(model):
    """{module path as minigrad tags ops: PyTorch's scope}: "seq.0" ->
    "Net/Sequential[seq]/Linear[0]", the root's own ops in "Net"."""
    root = type(model).__name__
    modules = dict(model.named_modules())
    scopes = {root: root, "": root}
    for name in modules:
        if name:
            parts = name.split(".")
            scopes[name] = "/".join([root] + [
                f"{type(modules['.'.join(parts[:i + 1])]).__name__}[{p}]"
                for i, p in enumerate(parts)])
    return scopes


def _attributes(rec):
    """The op's non-tensor arguments, written as PyTorch writes a JIT node's attributes."""
    found = {f"arg{i}": x for i, x in enumerate(rec.inputs)
             if x is not None and not list(values_in(x))}
    found.update((k, v) for k, v in rec.kwargs.items()
                 if v is not None and not list(values_in(v)))
    return str(found).replace("'", " ")


def _needed(outputs):
    """The Values the outputs depend on (walked without recursion: graphs can be deep)."""
    seen, stack = set(), list(outputs)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.kind == "node":
            stack.extend(u for x in (*v.record.inputs, *v.record.kwargs.values())
                         for u in values_in(x))
    return seen


class _Builder:
    """Nodes for the records, in the order they ran (each operand before its user)."""

    def __init__(self, scopes):
        self.scopes = scopes
        self.nodes, self.names = [], {}  # Value -> its node's name

    def scope(self, path):
        return self.scopes.get(path or "", self.scopes[""])

    def add_op(self, rec):
        scope = self.scope(rec.path)
        inputs = [self.name_of(u, scope)
                  for x in (*rec.inputs, *rec.kwargs.values()) for u in values_in(x)]
        name = f"{scope}{rec.out.name}"
        op = f"numpy::{rec.op}" if isinstance(rec.op, str) else rec.op.__name__
        self.nodes.append(_node(name, op, inputs, rec.out.shape, _attributes(rec)))
        self.names[rec.out] = name

    def name_of(self, v, user_scope):
        """The node of an operand: an op's (already added), or a parameter's or constant's,
        added at its first use."""
        if v in self.names:
            return self.names[v]
        if v.kind == "param":
            owner, _, attr = v.name.rpartition(".")
            name = f"{self.scope(owner)}/{attr}"
            self.nodes.append(_node(name, "prim::GetAttr", shape=v.shape,
                                    attributes=f"{{ name :  {attr} }}"))
        else:  # a constant (or a value the tracer could not follow, drawn as one)
            name = f"{user_scope}{v.name}"
            small = v.array is not None and v.array.size <= 8
            value = np.asarray(v.array).tolist() if small else f"<{v.dtype} {list(v.shape)}>"
            self.nodes.append(_node(name, "prim::Constant", shape=v.shape,
                                    attributes=f"{{ value : {value}}}"))
        self.names[v] = name
        return name


def graph(model, input_to_model=None, verbose=False):
    """(GraphDef, RunMetadata) of one traced forward pass of `model` on `input_to_model`
    (a tensor or a tuple of them), run in eval mode (put back afterwards) as PyTorch does."""
    if not hasattr(model, "named_modules"):
        raise TypeError(f"add_graph: expected a Module, got {type(model).__name__}")
    # a tuple is the arguments; anything else (a list too) is the one argument, as in
    # torch.jit.trace
    args = () if input_to_model is None else input_to_model
    args = args if isinstance(args, tuple) else (args,)
    modes = [(m, m.training) for m in model.modules()]
    model.train(False)
    try:
        tracer, outputs = trace_call(model, args)
    finally:
        for m, training in modes:
            object.__setattr__(m, "training", training)
    builder = _Builder(_scopes(model))
    inputs = [_node(f"input/{v.name}", "IO Node", shape=v.shape) for v in tracer.inputs]
    builder.names.update((v, f"input/{v.name}") for v in tracer.inputs)
    results = [tracer.value_of(t) for t in outputs]
    needed = _needed(results)
    for rec in tracer.records:
        if rec.out in needed:
            builder.add_op(rec)
    ends = [builder.name_of(v, builder.scope(None)) for v in results]
    shapes = [v.shape for v in results]
    if len(results) > 1:  # several results: one tuple, as PyTorch's trace makes it
        tuple_node = _node(f"{builder.scope(None)}/TupleConstruct", "prim::TupleConstruct", ends)
        builder.nodes.append(tuple_node)
        ends, shapes = [tuple_node.name], [[1]]  # PyTorch's size of a value not a tensor
    outs = [_node(f"output/output.{i + 1}", "IO Node", [end], shape=shape)
            for i, (end, shape) in enumerate(zip(ends, shapes))]
    if verbose:
        for n in builder.nodes:
            print(n.name, n.op, list(n.input))
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=inputs + builder.nodes + outs, versions=VersionDef(producer=22)), stats
