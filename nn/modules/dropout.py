"""`torch.nn.modules.dropout`'s path: the dropouts (`_DropoutNd` too); PyTorch code imports them
from there, and here they come from the modules of nn/ named below."""
from ..alpha_dropout import AlphaDropout, FeatureAlphaDropout
from ..channel_dropout import Dropout1d, Dropout2d, Dropout3d, _DropoutNd
from ..layers import Dropout

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]
