"""`minigrad.utils.tensorboard`: `SummaryWriter`, logging scalars, histograms, text, images,
figures, hyperparameters, precision-recall curves, embeddings, audio, video, meshes, custom
scalar layouts and the model's graph to TensorBoard event files through the `tensorboard`
package, with the records `torch.utils.tensorboard` writes.

TensorBoard is an optional dependency (`pip install tensorboard`, or minigrad's
`tensorboard` extra); without it this import fails as PyTorch's does, with
`ModuleNotFoundError: No module named 'tensorboard'`."""
try:
    import tensorboard as _tensorboard
except ModuleNotFoundError as e:
    if e.name != "tensorboard":
        raise
    raise ModuleNotFoundError(
        "No module named 'tensorboard' (minigrad.utils.tensorboard writes its event files "
        "through it: pip install tensorboard)", name="tensorboard") from None


def _version(text):
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())


if _version(getattr(_tensorboard, "__version__", "0")) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
