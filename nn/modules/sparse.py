"""`torch.nn.modules.sparse`'s path: Embedding and EmbeddingBag; PyTorch code imports them from
there, and here they come from the modules of nn/ named below."""
from ..embedding_bag import EmbeddingBag
from ..layers import Embedding

__all__ = ["Embedding", "EmbeddingBag"]
