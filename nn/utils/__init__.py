"""`minigrad.nn.utils`, as `torch.nn.utils`: gradient clipping, parameters as one vector, and
`rnn`, the padding and packing of variable-length sequences for the recurrent layers, and
`stateless.functional_call`, a module run with other parameters."""
from . import rnn, stateless
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "rnn", "stateless", "vector_to_parameters"]
