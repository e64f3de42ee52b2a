"""`minigrad.nn.utils`, as `torch.nn.utils`: gradient clipping, parameters as one vector,
`rnn` (the padding and packing of variable-length sequences for the recurrent layers),
`parametrize` and `parametrizations` (tensors computed from others: weight and spectral norm,
orthogonal matrices), the older hook-based `weight_norm` and `spectral_norm`, `prune`, and
`fusion` (convolution or linear layer and batch norm folded into one), and
`stateless.functional_call`, a module run with other parameters."""
from . import fusion, parametrizations, parametrize, prune, rnn, stateless
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, \
    fuse_linear_bn_weights
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
           "fusion", "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
           "prune", "remove_spectral_norm", "remove_weight_norm", "rnn", "spectral_norm",
           "stateless", "vector_to_parameters", "weight_norm"]
