"""The ONNX graph under construction: nodes, initializers and the names of traced values."""
from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

INT64_MAX = np.iinfo(np.int64).max


def onnx_type(dtype):
    """The ONNX element type of a NumPy dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class Graph:
    """Collects nodes and initializers; `name(value)` gives a traced Value's ONNX name."""

    def __init__(self, opset, export_params=True):
        self.opset, self.export_params = opset, export_params
        self.nodes, self.initializers, self.param_inputs = [], [], []
        self.names = {}  # Value -> ONNX name
        self.alias = {}  # Value -> the Value that computes it (an op as its NumPy operations)
        self._count = 0

    def fresh(self, hint):
        self._count += 1
        return f"/{hint}_{self._count}"

    def node(self, op_type, inputs, outputs=1, name=None, **attrs):
        """Add a node; returns its output name (or the list of names for outputs > 1)."""
        outs = [self.fresh(f"{op_type}_output") for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs,
                                           name=name or self.fresh(op_type), **attrs))
        return outs[0] if outputs == 1 else outs

    def const(self, array, hint="Constant"):
        """An initializer holding `array`; returns its name."""
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C"), name))
        return name

    def ints(self, values):
        return self.const(np.asarray(values, dtype=np.int64))

    def name(self, v, dtype=None):
        """The ONNX name of Value `v`, cast to `dtype` if given (a constant is converted)."""
        while v in self.alias:
            v = self.alias[v]
        if dtype is not None and v.dtype != np.dtype(dtype):
            if v.kind == "const":
                return self.const(v.array.astype(dtype))
            return self.node("Cast", [self.name(v)], to=onnx_type(dtype))
        n = self.names.get(v)
        if n is None:
            if v.kind == "const":
                n = self.names[v] = self.const(v.array)
            elif v.kind == "param":
                n = self.names[v] = v.name
                tensor = numpy_helper.from_array(np.array(v.array, order="C"), v.name)
                if self.export_params:
                    self.initializers.append(tensor)
                self.param_inputs.append(helper.make_tensor_value_info(
                    v.name, onnx_type(v.dtype), list(v.shape)))
            else:
                raise RuntimeError(f"onnx.export: value {v.name} is used before it is made")
        return n
