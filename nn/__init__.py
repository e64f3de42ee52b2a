"""`minigrad.nn`: modules, layers, attention and losses, mirroring `torch.nn`."""
from . import functional, init, parallel, utils
from .activation import (CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU6, SiLU, Softmin, Softplus,
                         Softshrink, Softsign, Tanhshrink, Threshold)
from .attention import MultiheadAttention
from .channel_dropout import Dropout1d, Dropout2d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                   Fold, Unfold)
from .distance import CosineSimilarity, PairwiseDistance
from .embedding_bag import EmbeddingBag
from .layers import (GELU, Dropout, Embedding, Identity, LeakyReLU, Linear, ReLU, Sigmoid,
                     Softmax, Tanh)
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm
from .parallel import DataParallel
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool1d,
                      AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d)
from .positional import PositionalEncoding, sinusoidal_table
from .recurrent import RNNBase, RNNCellBase
from .reshape import Flatten, Unflatten
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .scores import (AdditiveScore, BilinearScore, DotScore, ScaledDotScore, attend,
                     diversity_penalty)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .loss import BCELoss, KLDivLoss, L1Loss  # noqa: E402
from .loss import (CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, MultiLabelMarginLoss,  # noqa: E402
                   MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss,
                   TripletMarginWithDistanceLoss)
from .loss import (CosineEmbeddingLoss, HuberLoss, MarginRankingLoss, SmoothL1Loss,  # noqa: E402
                   TripletMarginLoss)
