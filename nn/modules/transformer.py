"""`torch.nn.modules.transformer`'s path: the Transformer and its layers, and the two helpers
code that builds its own Transformer imports from there (`_get_clones`, `_get_activation_fn`);
the layers come from nn/transformer.py."""
import copy

from .. import functional as F
from ..container import ModuleList
from ..transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                           TransformerEncoder, TransformerEncoderLayer)

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]


def _get_clones(module, N):
    """N deep copies of `module` in a ModuleList (each layer its own weights)."""
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _get_activation_fn(activation):
    """The function named "relu" or "gelu"."""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")
