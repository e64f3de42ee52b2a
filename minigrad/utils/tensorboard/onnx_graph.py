"""`add_onnx_graph`'s record: a model saved as an ONNX file, as the GraphDef PyTorch makes of
it: the graph's inputs and outputs as "Variable" nodes (element type and shape), then one node
per ONNX node, named by its first output, its attributes as one string. Needs the `onnx`
package (as PyTorch's does)."""
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

__all__ = ["load_onnx_graph"]


def _variable(value):
    tensor_type = value.type.tensor_type
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d.dim_value)
                                  for d in tensor_type.shape.dim])
    return NodeDef(name=value.name, op="Variable", input=[],
                   attr={"dtype": AttrValue(type=tensor_type.elem_type),
                         "shape": AttrValue(shape=shape)})


def _operation(node):
    parameters = ", ".join(" = ".join(str(field[1]) for field in a.ListFields())
                           for a in node.attribute)
    return NodeDef(name=node.output[0], op=node.op_type, input=node.input,
                   attr={"parameters": AttrValue(s=parameters.encode("utf_8"))})


def load_onnx_graph(path):
    """The GraphDef of the ONNX model in the file `path`."""
    import onnx
    graph = onnx.load(path).graph
    nodes = [_variable(v) for v in (*graph.input, *graph.output)]
    nodes += [_operation(n) for n in graph.node]
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
