"""`torch.nn.modules.activation`'s path: the activation modules and MultiheadAttention; PyTorch
code imports them from there, and here they come from the modules of nn/ named below."""
from ..activation import (CELU, ELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LogSigmoid,
                          LogSoftmax, Mish, PReLU, ReLU6, SELU, SiLU, Softmax2d, Softmin, Softplus,
                          Softshrink, Softsign, Tanhshrink, Threshold)
from ..attention import MultiheadAttention
from ..layers import GELU, LeakyReLU, ReLU, Sigmoid, Softmax, Tanh
from ..randomized_relu import RReLU

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
           "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "RReLU",
           "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin",
           "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold"]
