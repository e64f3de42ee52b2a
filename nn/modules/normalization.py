"""`torch.nn.modules.normalization`'s path: the normalisation layers; PyTorch code imports them
from there, and here they come from the modules of nn/ named below."""
from ..local_response_norm import LocalResponseNorm
from ..normalization import GroupNorm, LayerNorm, RMSNorm

__all__ = ["GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]
