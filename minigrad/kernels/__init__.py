"""Fast kernels behind minigrad's heavy ops, with two interchangeable backends.

    from minigrad import kernels
    kernels.set_backend("numpy")     # or "numba" (default; env MINIGRAD_BACKEND)
    y = kernels.softmax(x)

"numba" runs every op in Numba, all matmuls included, so a training step uses one thread
pool only (docs/performance.md says why). "numpy" runs the plain NumPy references of
.reference. Both give the same results up to float rounding, and the identical dropout mask.
The policy (backend, thresholds, the floating-point setting) is .policy; every public
function checks its inputs (.checks) and raises ValueError or TypeError naming the op.

The modules, in the order a reader may take them:

    reference       the NumPy references: the "numpy" backend and the tests' ground truth
    policy, checks  backend and thresholds; argument checks
    naive           matmul as plain loops (the first step of the tutorial)
    simd            vector registers for Numba
    tiled_matmul    the register-tiled matmul kernel (the lesson; runs without OpenBLAS)
    openblas, blas  OpenBLAS found and called from Numba's pool
    batched         a batch of small products (attention's) in one compiled call
    products        matmul, addmm, matmul_and_sum: the one routing table of products
    mathfn          exp, erf and tanh that vectorise (no SVML here)
    softmax_kernels, layernorm, dropout_kernels, crossentropy, scatter, adam, activation:
                    the Numba kernels
    gamma           log |Gamma(x)|, the C library's lgamma compiled over an array
    masking         masked_fill's selection, with a mask repeated along leading axes
    driver_blocks   the one parallel kernel that runs the blocks of most of them (and of
                    blas's products): a parallel kernel is the most costly thing to compile
    driver          its entry points, which put each kernel's arguments in its places, and
                    the compiling of its two block functions
    compile_worker  a second process that compiles one of driver's block functions on an
                    empty cache, while this one compiles the other
    row_ops, dropout_ops, fused_ops, activation_ops: their checked entry points, which are
                    the functions of this package

Numba compiles a kernel on its first call, for the dtype it is called with, and keeps the
machine code in its on-disk cache (`cache=True`): a program pays only for what it uses, once.

This package imports nothing else from minigrad.
"""
from .activation_ops import (gelu, gelu_backward, relu, relu_backward, sigmoid,
                             sigmoid_backward, silu, silu_backward, silu_backward_from_sigmoid,
                             silu_with_sigmoid, tanh, tanh_backward)
from .dropout_ops import dropout, dropout_add, dropout_mask, relu_dropout, relu_dropout_backward
from .gamma import lgamma
from .masking import masked_fill
from .fused_ops import (adam_step, adam_steps, cross_entropy, cross_entropy_backward,
                        dropout_add_layer_norm, dropout_add_layer_norm_backward,
                        embedding_backward, masked_softmax_dropout,
                        masked_softmax_dropout_backward)
from .policy import BACKENDS, FASTMATH, get_backend, set_backend
from .products import addmm, matmul, matmul_and_sum, matmul_naive
from .row_ops import (layer_norm, layer_norm_backward, log_softmax, log_softmax_backward,
                      softmax, softmax_backward)

__all__ = ["BACKENDS", "FASTMATH", "adam_step", "adam_steps", "addmm", "cross_entropy",
           "cross_entropy_backward", "dropout", "dropout_add", "dropout_add_layer_norm",
           "dropout_add_layer_norm_backward",
           "dropout_mask", "embedding_backward", "gelu", "gelu_backward", "get_backend",
           "layer_norm", "layer_norm_backward", "lgamma", "log_softmax", "log_softmax_backward",
           "masked_fill", "masked_softmax_dropout", "masked_softmax_dropout_backward", "matmul",
           "matmul_and_sum", "matmul_naive", "relu", "relu_backward", "relu_dropout",
           "relu_dropout_backward", "set_backend", "sigmoid", "sigmoid_backward", "silu",
           "silu_backward", "silu_backward_from_sigmoid", "silu_with_sigmoid", "softmax", "softmax_backward", "tanh", "tanh_backward"]
