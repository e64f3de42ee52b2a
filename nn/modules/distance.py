"""`torch.nn.modules.distance`'s path: the distance modules; PyTorch code imports them from there,
and here they come from the modules of nn/ named below."""
from ..distance import CosineSimilarity, PairwiseDistance

__all__ = ["CosineSimilarity", "PairwiseDistance"]
