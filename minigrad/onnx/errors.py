"""The exporter's errors, as `torch.onnx.errors` has them."""


class OnnxExporterError(RuntimeError):
    """Base class of the errors `export` raises."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op (or a NumPy operation inside one) that cannot be expressed in ONNX."""
