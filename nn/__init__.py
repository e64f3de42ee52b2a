"""`minigrad.nn`: modules, layers, attention and losses, mirroring `torch.nn`."""
from . import functional, init, modules, parallel, utils
from .adaptive_max_pool import AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d
from .activation import (CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU6, SiLU, Softmax2d, Softmin,
                         Softplus, Softshrink, Softsign, Tanhshrink, Threshold)
from .alpha_dropout import AlphaDropout, FeatureAlphaDropout
from .attention import MultiheadAttention
from .bilinear import Bilinear
from .channel_dropout import Dropout1d, Dropout2d, Dropout3d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                   Fold, Unfold)
from .distance import CosineSimilarity, PairwiseDistance
from .embedding_bag import EmbeddingBag
from .fractional_max_pool import FractionalMaxPool2d, FractionalMaxPool3d
from .layers import (GELU, Dropout, Embedding, Identity, LeakyReLU, Linear, ReLU, Sigmoid,
                     Softmax, Tanh)
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .instance_norm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .lazy_linear import LazyLinear
from .lazy_modules import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d,
                           LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                           LazyConvTranspose3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
                           LazyInstanceNorm3d)
from .local_response_norm import LocalResponseNorm
from .lp_pool import LPPool1d, LPPool2d, LPPool3d
from .max_unpool import MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from .module import Module, Parameter
from .parameter import Buffer
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm,
                            RMSNorm)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d,
                      ZeroPad2d, ZeroPad3d)
from .parallel import DataParallel
from .pixel_shuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool1d,
                      AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d)
from .positional import PositionalEncoding, sinusoidal_table
from .randomized_relu import RReLU
from .recurrent import RNNBase, RNNCellBase
from .reshape import Flatten, Unflatten
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .sync_batch_norm import SyncBatchNorm
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
