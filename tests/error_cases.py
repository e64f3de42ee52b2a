"""Bad inputs for tests/test_error_types.py: each case is (id, code, phrase). The code is run with
`t` bound to the library (minigrad or torch), `nn`, `F` and `optim` to its layers, functional
and optimizers; it must raise. `phrase`, when given, is a key part of PyTorch's message that
scripts search for, and minigrad's message must contain it too. The layer-level half of the
table is in tests/error_cases_more.py."""
import warnings

from error_cases_more import AUTOGRAD, CREATION, DTYPES, LINALG_IO, LOSSES, MORE, OPTIM


def run_case(lib, code):
    """The exception `code` raises with `lib` as `t`, or None when it raises nothing."""
    scope = {"t": lib, "nn": lib.nn, "F": lib.nn.functional, "optim": lib.optim}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns before some of these errors
        try:
            exec(code, scope)
        except Exception as e:  # noqa: BLE001 (any type: the type is what is compared)
            return e
    return None


def builtin_type(error):
    """The most derived built-in exception type of `error`: PyTorch's own classes
    (torch.linalg.LinAlgError, torch.OutOfMemoryError) derive from one, which a script's
    `except` names."""
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


# Binary elementwise ops on shapes that do not broadcast: PyTorch's RuntimeError "The size of
# tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0".
_BINARY = ["add", "sub", "mul", "div", "true_divide", "pow", "maximum", "minimum", "fmax",
           "fmin", "atan2", "hypot", "copysign", "fmod", "remainder", "eq", "ne", "lt", "le",
           "gt", "ge", "logaddexp", "xlogy", "nextafter", "float_power", "ldexp", "lerp_05",
           "floor_divide", "logical_and", "logical_or", "logical_xor", "where_c", "isclose",
           "heaviside", "dist"]
_BIN_CODE = {"lerp_05": "t.lerp(a, b, 0.5)", "where_c": "t.where(a > 0, a, b)",
             "dist": "t.dist(a, b)"}
BINARY = [(f"broadcast-{n}", "a, b = t.ones(2, 3), t.ones(4, 3); "
           + _BIN_CODE.get(n, f"t.{n}(a, b)"), "must match the size of tensor") for n in _BINARY]
BINARY += [(f"broadcast-operator-{op}", f"t.ones(2, 3) {op} t.ones(4, 3)", "must match the size")
           for op in ["+", "-", "*", "/", "**", "//", "%", "==", "<", ">="]]
BINARY += [(f"broadcast-inplace-{n}", f"t.ones(3).{n}(t.ones(2, 3))",
            "doesn't match the broadcast shape")
           for n in ["add_", "sub_", "mul_", "div_", "pow_"]]
BINARY += [("broadcast-int-bitwise", "t.ones(2, 3, dtype=t.int64) & t.ones(4, 3, dtype=t.int64)",
            "must match the size")]

# A dim past the tensor's rank: PyTorch's IndexError "Dimension out of range".
_DIM = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "std", "var", "logsumexp",
        "cumsum", "cumprod", "softmax", "log_softmax", "squeeze", "unsqueeze", "flip_l",
        "norm_d", "count_nonzero", "all", "any", "nansum", "max", "min", "median", "sort",
        "argsort", "unbind", "select_0", "narrow_01", "movedim_0", "size", "cummax",
        "logcumsumexp", "diff", "topk_1", "kthvalue_1", "renorm"]
_DIM_CODE = {"flip_l": "x.flip([4])", "norm_d": "x.norm(dim=4)", "select_0": "x.select(4, 0)",
             "narrow_01": "x.narrow(4, 0, 1)", "movedim_0": "x.movedim(4, 0)",
             "unsqueeze": "x.unsqueeze(5)", "diff": "t.diff(x, dim=4)",
             "topk_1": "x.topk(1, dim=4)", "kthvalue_1": "x.kthvalue(1, dim=4)",
             "renorm": "x.renorm(2, 4, 1.0)", "size": "x.size(4)"}
DIMS = [(f"dim-{n}", "x = t.ones(2, 3); " + _DIM_CODE.get(n, f"x.{n}(4)"), "Dimension out of range")
        for n in _DIM]
DIMS += [("dim-transpose", "t.ones(2, 3).transpose(0, 4)", "Dimension out of range"),
         ("dim-cat", "t.cat([t.ones(2, 3), t.ones(2, 3)], dim=4)", "Dimension out of range"),
         ("dim-stack", "t.stack([t.ones(2, 3), t.ones(2, 3)], dim=4)", "Dimension out of range"),
         ("dim-gather", "t.ones(2, 3).gather(4, t.zeros(2, 3, dtype=t.int64))",
          "Dimension out of range"),
         ("dim-F-softmax", "F.softmax(t.ones(2, 3), dim=2)", "Dimension out of range"),
         ("dim-flatten", "t.ones(2, 3).flatten(0, 4)", "Dimension out of range"),
         ("dim-chunk", "t.ones(2, 3).chunk(2, dim=4)", "Dimension out of range"),
         ("dim-split", "t.ones(2, 3).split(1, dim=4)", "Dimension out of range")]

# Matrix products with the wrong inner or batch sizes or ranks.
MATMUL = [
    ("matmul-inner", "t.ones(2, 3) @ t.ones(4, 5)", "cannot be multiplied"),
    ("matmul-fn", "t.matmul(t.ones(2, 3), t.ones(4, 5))", "cannot be multiplied"),
    ("matmul-1d", "t.ones(3) @ t.ones(4)", "inconsistent tensor size"),
    ("matmul-batch", "t.ones(2, 3, 4) @ t.ones(5, 4, 6)", "must match the size"),
    ("matmul-0d", "t.tensor(2.0) @ t.ones(3)", "at least 1D"),
    ("matmul-dtype", "t.ones(2, 3) @ t.ones(3, 2, dtype=t.float64)", None),
    ("mm-inner", "t.mm(t.ones(2, 3), t.ones(4, 5))", "cannot be multiplied"),
    ("mm-rank", "t.mm(t.ones(2, 3, 4), t.ones(4, 5))", None),
    ("bmm-inner", "t.bmm(t.ones(2, 3, 4), t.ones(2, 5, 6))", None),
    ("bmm-batch", "t.bmm(t.ones(2, 3, 4), t.ones(3, 4, 6))", None),
    ("bmm-rank", "t.bmm(t.ones(3, 4), t.ones(4, 6))", None),
    ("mv-size", "t.mv(t.ones(2, 3), t.ones(4))", None),
    ("dot-size", "t.dot(t.ones(3), t.ones(4))", "inconsistent tensor size"),
    ("dot-rank", "t.dot(t.ones(2, 3), t.ones(2, 3))", None),
    ("addmm", "t.addmm(t.ones(2, 5), t.ones(2, 3), t.ones(4, 5))", "cannot be multiplied"),
    ("baddbmm", "t.baddbmm(t.ones(2, 3, 6), t.ones(2, 3, 4), t.ones(2, 5, 6))", None),
    ("einsum", "t.einsum('ij,jk->ik', t.ones(2, 3), t.ones(4, 5))", None),
    ("tensordot", "t.tensordot(t.ones(2, 3), t.ones(4, 5), dims=1)", None),
    ("outer-rank", "t.outer(t.ones(2, 3), t.ones(3))", None),
    ("linear-fn", "F.linear(t.ones(2, 5), t.ones(4, 3))", "cannot be multiplied"),
    ("cross-shapes", "t.cross(t.ones(2, 3), t.ones(4, 3), dim=1)", None),
]

# Reshaping, joining and expanding.
SHAPES = [
    ("view-size", "t.arange(6).view(4)", "shape '[4]' is invalid for input of size 6"),
    ("reshape-size", "t.arange(6).reshape(4)", "shape '[4]' is invalid for input of size 6"),
    ("reshape-2d", "t.arange(6).reshape(4, 2)", "shape '[4, 2]' is invalid for input of size 6"),
    ("view-two-inferred", "t.arange(6).view(-1, -1)", "only one dimension can be inferred"),
    ("view-noncontiguous", "t.ones(2, 3).t().view(6)", "view size is not compatible"),
    ("view-negative", "t.arange(6).view(-2, 3)", "invalid shape dimension -2"),
    ("expand-size", "t.ones(3).expand(2, 4)", "must match the existing size"),
    ("expand-fewer", "t.ones(2, 3).expand(3)",
     "must be greater or equal to the number of dimensions"),
    ("expand-as", "t.ones(3).expand_as(t.ones(2, 4))", "must match the existing size"),
    ("broadcast-to", "t.broadcast_to(t.ones(3), (2, 4))", "must match the existing size"),
    ("broadcast-tensors", "t.broadcast_tensors(t.ones(3), t.ones(4))", None),
    ("cat-sizes", "t.cat([t.ones(2, 3), t.ones(2, 4)])",
     "Sizes of tensors must match except in dimension 0"),
    ("cat-empty", "t.cat([])", "non-empty"),
    ("cat-ranks", "t.cat([t.ones(2, 3), t.ones(3)])", None),
    ("stack-sizes", "t.stack([t.ones(2, 3), t.ones(2, 4)])",
     "stack expects each tensor to be equal size"),
    ("stack-empty", "t.stack([])", "non-empty"),
    ("hstack-sizes", "t.hstack([t.ones(2, 3), t.ones(3, 3)])", "Sizes of tensors must match"),
    ("vstack-sizes", "t.vstack([t.ones(2, 3), t.ones(2, 4)])", "Sizes of tensors must match"),
    ("permute-count", "t.ones(2, 3).permute(0)", None),
    ("permute-repeat", "t.ones(2, 3).permute(0, 0)", None),
    ("flatten-order", "t.ones(2, 3, 4).flatten(2, 0)", None),
    ("split-sizes", "t.ones(5).split([2, 2])", None),
    ("chunk-zero", "t.ones(5).chunk(0)", "chunk expects `chunks` to be greater than 0"),
    ("narrow-range", "t.ones(3).narrow(0, 2, 2)", None),
    ("repeat-fewer", "t.ones(2, 3).repeat(2)", None),
    ("unflatten-sizes", "t.ones(6).unflatten(0, (4, 2))", None),
    ("t-3d", "t.ones(2, 3, 4).t()", "expects a tensor with <= 2 dimensions"),
    ("roll-args", "t.ones(2, 3).roll((1, 1), (0,))", None),
    ("squeeze-dims", "t.ones(2, 3).squeeze((0, 4))", "Dimension out of range"),
    ("masked-fill-shape", "t.ones(2, 3).masked_fill(t.ones(4, 3, dtype=t.bool), 0.0)", None),
    ("tril-1d", "t.tril(t.ones(3))", None),
    ("diag-3d", "t.diag(t.ones(2, 2, 2))", None),
    ("unfold-size", "t.ones(3).unfold(0, 5, 1)", None),
    ("take-along-dim", "t.take_along_dim(t.ones(2, 3), t.zeros(3, 3, dtype=t.int64), dim=1)", None),
]

# Indexing: Python's IndexError for subscripts, RuntimeError for gather and scatter.
INDEXING = [
    ("getitem-int", "t.ones(3)[5]", None),
    ("getitem-neg", "t.ones(3)[-4]", None),
    ("getitem-2d", "t.ones(2, 3)[0, 3]", None),
    ("getitem-too-many", "t.ones(2, 3)[0, 0, 0]", None),
    ("getitem-tensor", "t.ones(3)[t.tensor([0, 5])]", None),
    ("getitem-list", "t.ones(3)[[0, 5]]", None),
    ("getitem-mask", "t.ones(3)[t.tensor([True, False])]", None),
    ("getitem-float-idx", "t.ones(3)[t.tensor([0.5])]", None),
    ("setitem-int", "x = t.ones(3); x[5] = 1.0", "out of bounds"),
    ("setitem-shape", "x = t.ones(3); x[0:2] = t.ones(3)", None),
    ("index-select", "t.ones(3).index_select(0, t.tensor([5]))", None),
    ("gather-range", "t.ones(2, 3).gather(1, t.tensor([[5], [0]]))",
     "index 5 is out of bounds for dimension 1 with size 3"),
    ("gather-rank", "t.ones(2, 3).gather(1, t.tensor([0]))", None),
    ("gather-dtype", "t.ones(2, 3).gather(1, t.ones(2, 1))", None),
    ("scatter-range", "t.zeros(2, 3).scatter(1, t.tensor([[5], [0]]), 1.0)", "out of bounds"),
    ("scatter-add-range", "t.zeros(2, 3).scatter_add(1, t.tensor([[5], [0]]), t.ones(2, 1))",
     "out of bounds"),
    ("index-add-range", "t.zeros(3).index_add(0, t.tensor([5]), t.ones(1))", None),
    ("index-fill-range", "t.zeros(3).index_fill(0, t.tensor([5]), 1.0)", None),
    ("index-copy-range", "t.zeros(3).index_copy(0, t.tensor([5]), t.ones(1))", None),
    ("take-range", "t.take(t.ones(2, 3), t.tensor([7]))", "out of range"),
    ("put-range", "t.zeros(3).put_(t.tensor([7]), t.ones(1))", "out of range"),
    ("embedding-range", "F.embedding(t.tensor([5]), t.ones(3, 2))", None),
    ("embedding-layer", "nn.Embedding(3, 2)(t.tensor([5]))", None),
    ("one-hot-negative", "F.one_hot(t.tensor([-1]), 3)", "Class values must be non-negative"),
    ("one-hot-large", "F.one_hot(t.tensor([5]), 3)",
     "Class values must be smaller than num_classes"),
    ("masked-select-shape", "t.ones(3).masked_select(t.ones(4, dtype=t.bool))",
     "must match the size"),
    ("bincount-negative", "t.bincount(t.tensor([-1]))", None),
]

# Layers given inputs of the wrong width, rank or channel count, and bad constructor arguments.
LAYERS = [
    ("linear-width", "nn.Linear(3, 4)(t.ones(2, 5))",
     "mat1 and mat2 shapes cannot be multiplied (2x5 and 3x4)"),
    ("linear-width-3d", "nn.Linear(3, 4)(t.ones(2, 7, 5))", "cannot be multiplied"),
    ("bilinear-width", "nn.Bilinear(3, 4, 2)(t.ones(2, 5), t.ones(2, 4))", None),
    ("layernorm-width", "nn.LayerNorm(4)(t.ones(2, 5))",
     "Given normalized_shape=[4], expected input with shape [*, 4]"),
    ("F-layer-norm", "F.layer_norm(t.ones(2, 5), (4,))", "expected input with shape [*, 4]"),
    ("rmsnorm-width", "nn.RMSNorm(4)(t.ones(2, 5))", None),
    ("groupnorm-divisible", "nn.GroupNorm(3, 4)", None),
    ("groupnorm-channels", "nn.GroupNorm(2, 4)(t.ones(2, 6, 3))", None),
    ("batchnorm-channels", "nn.BatchNorm1d(3)(t.ones(2, 4))", None),
    ("batchnorm2d-rank", "nn.BatchNorm2d(3)(t.ones(2, 3, 4))", None),
    ("batchnorm-one-value", "nn.BatchNorm1d(3)(t.ones(1, 3))",
     "Expected more than 1 value per channel when training"),
    ("instancenorm-rank", "nn.InstanceNorm2d(3)(t.ones(3, 4))", None),
    ("conv2d-channels", "nn.Conv2d(3, 2, 3)(t.ones(1, 4, 8, 8))",
     "to have 3 channels, but got 4 channels instead"),
    ("conv2d-rank", "nn.Conv2d(3, 2, 3)(t.ones(8, 8))",
     "Expected 3D (unbatched) or 4D (batched) input to conv2d"),
    ("conv2d-kernel", "nn.Conv2d(3, 2, 5)(t.ones(1, 3, 3, 3))",
     "Kernel size can't be greater than actual input size"),
    ("conv1d-channels", "nn.Conv1d(3, 2, 3)(t.ones(1, 4, 8))", "to have 3 channels"),
    ("conv-groups", "nn.Conv2d(3, 2, 3, groups=2)", "in_channels must be divisible by groups"),
    ("conv-padding-str", "nn.Conv2d(3, 2, 3, padding='bogus')", None),
    ("convT-channels", "nn.ConvTranspose2d(3, 2, 3)(t.ones(1, 4, 5, 5))", None),
    ("F-conv2d-weight", "F.conv2d(t.ones(1, 3, 5, 5), t.ones(2, 3, 3))", None),
    ("maxpool-small", "nn.MaxPool2d(5)(t.ones(1, 1, 3, 3))", "Output size is too small"),
    ("avgpool-small", "nn.AvgPool2d(5)(t.ones(1, 1, 3, 3))", "Output size is too small"),
    ("maxpool-padding", "nn.MaxPool2d(2, padding=2)(t.ones(1, 1, 4, 4))",
     "pad should be at most half"),
    ("lstm-width", "nn.LSTM(4, 3)(t.ones(5, 2, 6))",
     "input.size(-1) must be equal to input_size. Expected 4, got 6"),
    ("gru-width", "nn.GRU(4, 3)(t.ones(5, 2, 6))", "input.size(-1) must be equal to input_size"),
    ("rnn-width", "nn.RNN(4, 3)(t.ones(5, 2, 6))", "input.size(-1) must be equal to input_size"),
    ("lstm-rank", "nn.LSTM(4, 3)(t.ones(4))", None),
    ("lstmcell-width", "nn.LSTMCell(4, 3)(t.ones(2, 6))", None),
    ("dropout-p", "nn.Dropout(1.5)", None),
    ("F-dropout-p", "F.dropout(t.ones(3), p=-0.1)", None),
    ("mha-heads", "nn.MultiheadAttention(10, 3)", "embed_dim must be divisible by num_heads"),
    ("mha-width", "nn.MultiheadAttention(8, 2)(t.ones(3, 2, 6), t.ones(3, 2, 6), t.ones(3, 2, 6))",
     None),
    ("sdpa-width",
     "F.scaled_dot_product_attention(t.ones(2, 3, 4), t.ones(2, 3, 5), t.ones(2, 3, 5))",
     None),
    ("pixel-shuffle", "nn.PixelShuffle(2)(t.ones(1, 3, 2, 2))",
     "divisible by the square of upscale_factor"),
    ("unflatten-layer", "nn.Unflatten(1, (2, 2))(t.ones(2, 6))", None),
    ("sequential-index", "nn.Sequential(nn.ReLU())[5]", None),
    ("modulelist-index", "nn.ModuleList([nn.ReLU()])[5]", None),
    ("add-module-dot", "nn.Module().add_module('a.b', nn.ReLU())", None),
    ("missing-attribute", "nn.Linear(2, 2).bogus", "object has no attribute 'bogus'"),
    ("state-dict-missing", "nn.Linear(2, 2).load_state_dict({})", None),
    ("state-dict-unexpected",
     "m = nn.Linear(2, 2); s = m.state_dict(); s['x'] = t.ones(1); m.load_state_dict(s)",
     None),
    ("state-dict-size", "nn.Linear(2, 2).load_state_dict(nn.Linear(3, 2).state_dict())",
     "size mismatch for weight"),
    ("pad-odd", "F.pad(t.ones(2, 3), (1,))", None),
    ("pad-too-long", "F.pad(t.ones(3), (1, 1, 1, 1))", None),
    ("interpolate-both", "F.interpolate(t.ones(1, 1, 4), size=8, scale_factor=2.0)",
     "only one of size or scale_factor should be defined"),
    ("interpolate-neither", "F.interpolate(t.ones(1, 1, 4))",
     "either size or scale_factor should be defined"),
    ("interpolate-mode", "F.interpolate(t.ones(1, 1, 4), size=8, mode='bilinear')", None),
    ("embedding-float", "F.embedding(t.tensor([0.0]), t.ones(3, 2))", None),
    ("cosine-similarity", "F.cosine_similarity(t.ones(2, 3), t.ones(4, 3))", None),
    ("pairwise-distance", "F.pairwise_distance(t.ones(2, 3), t.ones(2, 4))", None),
    ("glu-odd", "F.glu(t.ones(2, 3))", "Halving dimension must be even"),
    ("unfold-fn-rank", "F.unfold(t.ones(3, 3), 2)", None),
    ("normalize-dim", "F.normalize(t.ones(2, 3), dim=4)", "Dimension out of range"),
]


CASES = (BINARY + DIMS + MATMUL + SHAPES + INDEXING + LAYERS + LOSSES + OPTIM + AUTOGRAD + DTYPES
         + CREATION + LINALG_IO + MORE)
