"""`minigrad.utils`: the scaffolding around a model, as `torch.utils` has it: data loading
(`minigrad.utils.data`), TensorBoard logging (`minigrad.utils.tensorboard`) and activation
checkpointing (`minigrad.utils.checkpoint`).

Each is imported on first use (`minigrad.utils.data` after `import minigrad` works as
`torch.utils.data` does after `import torch`), so importing minigrad never loads them, and
TensorBoard, an optional dependency, is only needed by code that logs to it."""

_LAZY_SUBMODULES = ("checkpoint", "data", "tensorboard")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'minigrad.utils' has no attribute {name!r}")
