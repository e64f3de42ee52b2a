"""The differentiable ops, one small `Op` class each, grouped by kind."""
from .elementwise import (Abs, Add, Cast, Clamp, Div, Exp, Gelu, LeakyRelu, Log, MaskedFill,
                          Maximum, Minimum, Mul, Neg, Pow, Relu, Sigmoid, Silu, Sqrt, Sub, Tanh,
                          Where)
from .index import AdaptiveMaxGather, Embedding, Gather, GetItem, IndexSelect
from .matmul import MatMul
from .reduce import Amax, Amin, LogSumExp, Mean, Std, Sum, Var
from .shape import Cat, Contiguous, Expand, Permute, Reshape, Stack
from .softmax import LogSoftmax, MaskedSoftmaxDropout, Softmax
from .dropout import Dropout, DropoutAdd, ReluDropout
from .linear import Linear
from .layer_norm import DropoutAddLayerNorm, LayerNorm
from .cross_entropy import CrossEntropy
from .assign import CopySlices, IndexPut, Scatter
from .scatter_reduce import ScatterReduce
from .bce import BinaryCrossEntropy
from .cumulative import Cumsum
from .diagonal import Diagonal, DiagonalEmbed
from .einsum import Einsum
from .norm import Norm
from .rounding import Ceil, Floor, FloorDivide, Remainder, Round, Sign, Trunc
from .trig import Cos, Sin, Tan
from . import strided  # noqa: E402  (as_strided's op and memory helpers)
from . import sort  # noqa: E402  (index helpers, no Op)
