"""`torch.nn.modules.batchnorm`'s path: the batch norms (`_BatchNorm` and `_NormBase` too, which
code tests with isinstance); PyTorch code imports them from there, and here they come from the
modules of nn/ named below."""
from ..lazy_modules import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from ..normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from ..sync_batch_norm import SyncBatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]
