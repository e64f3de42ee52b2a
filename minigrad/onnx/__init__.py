"""`minigrad.onnx`: export a model to an ONNX file, as `torch.onnx.export` does.

The model runs once under a tracer that records every op applied and every NumPy operation on
values computed from the inputs (`trace.py`); each op becomes ONNX nodes (`op_table.py`, with
the shared pieces and the NumPy operations in `lowering.py`), parameters become initializers
named as in the state dict (`build.py`, `graph.py`). A second trace on perturbed inputs makes
sure no value computed from the inputs out of the tracer's sight was fixed (`check.py`).
Needs the `onnx` package (`pip install minigrad[onnx]`; onnxruntime runs the files).
"""
from . import errors
from .errors import OnnxExporterError
from .export import ONNXProgram, TrainingMode, export, is_in_onnx_export

__all__ = ["ONNXProgram", "OnnxExporterError", "TrainingMode", "errors", "export",
           "is_in_onnx_export"]
