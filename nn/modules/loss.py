"""`torch.nn.modules.loss`'s path: the losses (`_Loss` too, the base of a loss written by hand);
PyTorch code imports them from there, and here they come from the modules of nn/ named below."""
from ..loss import (BCELoss, BCEWithLogitsLoss, CTCLoss, CosineEmbeddingLoss, CrossEntropyLoss,
                    GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss,
                    MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                    MultiMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss,
                    TripletMarginLoss, TripletMarginWithDistanceLoss, _Loss)

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss",
           "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss"]
