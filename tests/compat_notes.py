"""What the compatibility page says beyond the table: the deliberate differences from PyTorch
(each with a check that it still holds), the names educational PyTorch code uses that minigrad
lacks (checked to be absent), and minigrad's own additions."""
import numpy as np


def _softmax_all_masked(torch, mg):
    row = [float("-inf")] * 3
    assert np.isnan(torch.tensor([row]).softmax(-1).numpy()).all()
    assert (mg.tensor([row]).softmax(-1).numpy() == 0).all()


def _numpy_with_grad(torch, mg):
    try:
        torch.ones(2, requires_grad=True).numpy()
        raise AssertionError("PyTorch allowed numpy() on a tensor that requires grad")
    except RuntimeError:
        pass
    assert mg.ones(2, requires_grad=True).numpy().shape == (2,)


def _type_names(torch, mg):
    assert torch.zeros(1).type() == "torch.FloatTensor"
    assert mg.zeros(1).type() == "minigrad.FloatTensor"
    assert mg.zeros(1).type("torch.LongTensor").dtype == mg.long


def _dtypes_are_numpy(torch, mg):
    assert mg.float32 is np.float32 and mg.zeros(1).dtype == np.float32
    assert str(mg.zeros(1).dtype) == "float32" and str(torch.zeros(1).dtype) == "torch.float32"


def _legacy_shape_constructor(torch, mg):
    assert (mg.FloatTensor(2, 3).numpy() == 0).all()


def _random_streams(torch, mg):
    torch.manual_seed(0)
    mg.manual_seed(0)
    assert not np.allclose(torch.rand(5).numpy(), mg.rand(5).numpy())


def _stable_sort(torch, mg):
    x = [2.0, 1.0, 2.0, 1.0] * 8
    assert (mg.tensor(x).sort().indices.numpy() == np.argsort(x, kind="stable")).all()


def _integer_write_of_a_gradient(torch, mg):
    for lib in (torch, mg):
        v = lib.tensor(0.5, requires_grad=True)
        t = lib.zeros(2, dtype=lib.int64)
        t.fill_(v)
        assert t.tolist() == [0, 0]
        assert t.requires_grad is (lib is torch)


def _floor_divide_gradient(torch, mg):
    x = mg.tensor([2.5, -1.5], requires_grad=True)
    (x // 2).sum().backward()
    assert (x.grad.numpy() == 0).all()


def _format_one_element(torch, mg):
    assert format(mg.tensor([3.14159]), ".2f") == "3.14"
    try:
        format(torch.tensor([3.14159]), ".2f")
        raise AssertionError("PyTorch formatted a 1-element 1-d tensor")
    except TypeError:
        pass


def _save_format(torch, mg):
    assert mg.load.__doc__ and "safetensors" in mg.load.__doc__


def _fused_relu_dropout_nan(torch, mg):
    from minigrad.nn.fused import relu_dropout
    nan = float("nan")
    grads = {}
    for name, lib, run in (
            ("fused", mg, lambda x: relu_dropout(x, 0.5)),
            ("separate", mg, lambda x: mg.nn.functional.dropout(mg.nn.functional.relu(x), 0.5)),
            ("torch", torch, lambda x: torch.nn.functional.dropout(torch.relu(x), 0.5))):
        lib.manual_seed(0)
        x = lib.ones(1, 64, requires_grad=True)
        y = run(x)
        y.backward(lib.full((1, 64), nan))
        grads[name] = (y.detach().numpy() == 0, x.grad.numpy())
    for name in grads:
        dropped, g = grads[name]
        assert dropped.any() and np.isnan(g[~dropped]).all()
        assert (g[dropped] == 0).all() if name == "fused" else np.isnan(g[dropped]).all()


DIFFERENCES = [
    ("Softmax of a row that is all -inf gives zeros, not NaN.",
     "A query whose keys are all masked then attends to nothing instead of poisoning the "
     "loss with NaN (PyTorch gives NaN).", _softmax_all_masked),
    ("`numpy()` works on a tensor that requires grad.",
     "It returns the array without a copy; PyTorch asks for `detach().numpy()`, which works "
     "in both.", _numpy_with_grad),
    ("Dtypes are NumPy's types.",
     "`minigrad.float32 is numpy.float32`, `t.dtype` is a NumPy dtype and prints as "
     "`float32`; comparisons such as `t.dtype == minigrad.float32` work as in PyTorch.",
     _dtypes_are_numpy),
    ("`t.type()` returns `'minigrad.FloatTensor'`.",
     "PyTorch returns `'torch.FloatTensor'`; `t.type('torch.LongTensor')` and "
     "`t.type(minigrad.LongTensor)` convert as in PyTorch.", _type_names),
    ("Legacy constructors with sizes give zeros.",
     "`FloatTensor(2, 3)` is zero-filled where PyTorch leaves memory uninitialised; "
     "`empty` is uninitialised in both.", _legacy_shape_constructor),
    ("Random numbers follow the same distributions from different streams.",
     "`manual_seed(0)` makes minigrad repeatable, but its numbers are not PyTorch's: copy "
     "weights (state dicts, safetensors) to compare the two.", _random_streams),
    ("`sort` is always stable.",
     "Equal elements keep their order; PyTorch's default sort may order ties either way "
     "(`stable=True` is accepted).", _stable_sort),
    ("An integer tensor never requires grad, even after an in-place write of one that does.",
     "`t.fill_(v)` or `t.masked_fill_(m, v)` on an integer or bool tensor `t`, with a float "
     "`v` that requires grad: PyTorch gives `t` a `grad_fn` (a graph nothing can "
     "differentiate, since integer tensors have no gradients); minigrad writes the converted "
     "values and leaves `t` outside the graph.", _integer_write_of_a_gradient),
    ("`//` and `remainder` have gradients in every argument.",
     "Zero for `floor_divide`, and -floor(a / b) for the second argument of `remainder`, "
     "where PyTorch raises 'derivative not implemented'.", _floor_divide_gradient),
    ("`format(t, '.4f')` works for any one-element tensor.",
     "PyTorch accepts a format spec only for 0-d tensors.", _format_one_element),
    ("`save` and `load` never use pickle.",
     "`minigrad.save` writes NumPy's .npz with a JSON structure, or the safetensors format "
     "for a path ending in `.safetensors`, which is how weights move to and from PyTorch; "
     "`minigrad.load` cannot read `torch.save`'s pickle files (save a state dict with "
     "`safetensors.torch.save_file` instead). `weights_only=` is accepted and has no "
     "effect, since nothing is ever unpickled.", _save_format),
    ("Only the CPU exists.",
     "`device('cuda')` can be built, so `'cuda' if cuda.is_available() else 'cpu'` works, "
     "but moving a tensor to it raises one error saying that minigrad runs on the CPU. "
     "`inference_mode()` is `no_grad()`; `is_contiguous()` is always True.", None),
    ("A Transformer layer in training fuses dropout with its neighbours.",
     "`TransformerEncoderLayer` and `TransformerDecoderLayer` run ReLU + dropout, dropout + "
     "residual add (+ LayerNorm) and attention's mask + softmax + dropout as single ops when "
     "their `Dropout`/`LayerNorm` modules are the plain classes without forward hooks; the "
     "numbers are those of the separate ops, bit for bit. One edge differs: in the "
     "feed-forward network, a NaN or infinite gradient arriving at an element that dropout "
     "zeroed (and whose ReLU input was positive) gives 0 in the fused backward, where the "
     "separate ops (and PyTorch) pass on NaN. A forward hook on the `Dropout` module selects "
     "the separate ops.", _fused_relu_dropout_nan),
]

# (names as PyTorch code writes them, what to do instead, the minigrad paths that must be
# absent: tests/test_compat_coverage.py fails when one appears, so the list stays true)
NOT_SUPPORTED = [
    ("torch.prod, Tensor.prod, torch.cumprod", "no product reductions yet",
     ("prod", "Tensor.prod", "cumprod")),
    ("torch.log1p, expm1, log2, log10, erf, exp2", "use log, exp and a constant factor",
     ("log1p", "expm1", "log2", "log10", "erf", "exp2")),
    ("torch.diag, diagonal, trace, tensordot, kron, cross, torch.linalg", "no linear algebra "
     "beyond matmul and einsum (norms: Tensor.norm)",
     ("diag", "diagonal", "trace", "tensordot", "kron", "cross", "linalg")),
    ("torch.meshgrid, tile, hstack, vstack, triu_indices, tril_indices, bincount, searchsorted",
     "compose from arange, expand, cat and stack",
     ("meshgrid", "tile", "hstack", "vstack", "triu_indices", "tril_indices", "bincount",
      "searchsorted")),
    ("torch.median, mode, kthvalue, quantile, var_mean, std_mean, count_nonzero",
     "use sort, var and mean, or the sum of a comparison",
     ("median", "mode", "kthvalue", "quantile", "var_mean", "std_mean", "count_nonzero")),
    ("torch.nan_to_num, fmod, lerp, addmm, baddbmm", "write the arithmetic out",
     ("nan_to_num", "fmod", "lerp", "addmm", "baddbmm")),
    ("Tensor.sigmoid_, exp_ and other in-place activations", "use the out-of-place "
     "forms; the in-place writes minigrad has are t[idx] = v, relu_, masked_fill_, scatter_, "
     "index_fill_, index_add_, clamp_, fill_, zero_, add_/sub_/mul_/div_, +=, -=, *=, /=",
     ("Tensor.sigmoid_", "Tensor.exp_")),
    ("Tensor.squeeze_, unsqueeze_, transpose_, t_, resize_, as_strided, stride, data_ptr, "
     "storage, pin_memory, share_memory_", "no memory-layout API: tensors are NumPy arrays",
     ("Tensor.squeeze_", "Tensor.unsqueeze_", "Tensor.transpose_", "Tensor.resize_",
      "Tensor.as_strided", "Tensor.stride", "Tensor.data_ptr", "Tensor.pin_memory")),
    ("torch.Size", "shapes are plain tuples", ("Size",)),
    ("torch.utils.data (Dataset, TensorDataset, DataLoader)", "index tensors with randperm "
     "slices", ("utils",)),
    ("torch.autograd.grad", "use backward() and .grad; custom ops subclass "
     "minigrad.autograd.Function (forward and backward on NumPy arrays)", ("autograd.grad",)),
    ("torch.autocast, torch.compile, torch.jit", "not applicable to a NumPy CPU library",
     ("autocast", "compile", "jit")),
    ("torch.nn.LSTM, LSTMCell, Conv1d, Conv2d, MaxPool2d, BatchNorm2d, GroupNorm, RMSNorm, "
     "Flatten, SiLU, ELU, Softplus, EmbeddingBag", "no such layers yet (F.silu and "
     "F.softplus exist as functions)",
     ("nn.LSTM", "nn.LSTMCell", "nn.Conv1d", "nn.Conv2d", "nn.MaxPool2d", "nn.BatchNorm2d",
      "nn.GroupNorm", "nn.RMSNorm", "nn.Flatten", "nn.SiLU", "nn.Softplus", "nn.EmbeddingBag")),
    ("torch.nn.utils.rnn (pad_sequence, pack_padded_sequence)", "RNN and GRU take lengths= "
     "or mask= instead of packed sequences", ("nn.utils.rnn",)),
    ("torch.nn.functional conv1d, conv2d, max_pool2d, interpolate, relu6, glu, logsigmoid, "
     "smooth_l1_loss, huber_loss", "not implemented",
     ("nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.max_pool2d",
      "nn.functional.interpolate", "nn.functional.relu6", "nn.functional.glu",
      "nn.functional.logsigmoid", "nn.functional.smooth_l1_loss", "nn.functional.huber_loss")),
    ("torch.nn.init.trunc_normal_, orthogonal_, eye_", "use normal_ and clamp_",
     ("nn.init.trunc_normal_", "nn.init.orthogonal_", "nn.init.eye_")),
    ("torch.optim.RMSprop, Adagrad; lr_scheduler CosineAnnealingLR, OneCycleLR, "
     "ExponentialLR, MultiStepLR, ReduceLROnPlateau", "LambdaLR expresses any schedule",
     ("optim.RMSprop", "optim.Adagrad", "optim.lr_scheduler.CosineAnnealingLR",
      "optim.lr_scheduler.OneCycleLR", "optim.lr_scheduler.ExponentialLR",
      "optim.lr_scheduler.MultiStepLR", "optim.lr_scheduler.ReduceLROnPlateau")),
    ("F.pad(mode=) given positionally", "pass mode= by keyword", ()),
]

# the public names of minigrad that PyTorch does not have (exempt from needing a case)
MINIGRAD_ONLY_NAMES = {
    "minigrad.bool_", "minigrad.detect_anomaly", "minigrad.gelu", "minigrad.one_hot",
    "minigrad.get_backend", "minigrad.set_backend", "minigrad.tune_malloc", "Tensor.gelu",
    "F.attention", "nn.PositionalEncoding", "nn.sinusoidal_table", "nn.DotScore",
    "nn.ScaledDotScore", "nn.BilinearScore", "nn.AdditiveScore", "nn.attend",
    "nn.diversity_penalty", "nn.init.calculate_fans", "optim.NoamLR", "optim.WarmupScheduler",
    "optim.noam_lr", "optim.lr_scheduler.NoamLR", "optim.lr_scheduler.WarmupScheduler",
    "optim.lr_scheduler.noam_lr", "nn.Module.summary", "nn.Module.num_parameters",
    "optim.LRScheduler", "optim.LambdaLR", "optim.StepLR",
}

MINIGRAD_ONLY = [
    ("set_backend, get_backend, kernels", "choose the Numba kernels or their NumPy references"),
    ("tune_malloc", "glibc malloc settings for long training runs"),
    ("gelu, one_hot, detect_anomaly (top level), Tensor.gelu", "PyTorch has them as "
     "torch.nn.functional.gelu/one_hot and torch.autograd.detect_anomaly, which work too"),
    ("nn.Module.summary, num_parameters", "a table of parameters per module; their count"),
    ("nn.init.calculate_fans", "PyTorch's private _calculate_fan_in_and_fan_out"),
    ("bool_", "NumPy's name of minigrad.bool"),
    ("autograd.gradcheck", "float64 central-difference gradient checks"),
    ("viz.draw_graph", "draw the autograd graph with Graphviz"),
    ("nn.PositionalEncoding, nn.sinusoidal_table, attention scores (DotScore, ScaledDotScore, "
     "BilinearScore, AdditiveScore), relative_positions=, diversity=",
     "the lectures' Transformer variants"),
    ("optim.lr_scheduler.NoamLR, WarmupScheduler, noam_lr", "the Transformer paper's "
     "warm-up schedule"),
    ("optim.LRScheduler, optim.LambdaLR, optim.StepLR", "shortcuts for the lr_scheduler "
     "classes"),
]
