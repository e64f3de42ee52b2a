"""Compatibility cases: torch.nn.functional, torch.nn layers and losses, nn.init, nn.utils.
Each layer is built in both libraries and
given the same weights by `fill`, which walks `named_parameters()` (PyTorch's names and order
in both), so outputs, input gradients and weight gradients can be compared."""
from collections import OrderedDict

import numpy as np

from compat_table import A, case, f32, watch

CASES = []
add = CASES.append


def fill(lib, module, seed=0, scale=0.5):
    """Give `module` deterministic weights (the same in both libraries) and watch them."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in module.named_parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * scale))
    watch(*module.parameters())
    return module


# --- torch.nn.functional -------------------------------------------------------------------

@add
@case("F.pairwise_distance", inputs=(f32(4, 3), f32(4, 3)))
def _(lib, a, b):
    F = lib.nn.functional
    return (F.pairwise_distance(a, b), F.pairwise_distance(a, b, p=1.0, keepdim=True),
            F.pairwise_distance(a[0], b[0], eps=0.0), F.pairwise_distance(a, a.detach()))


@add
@case("F.triplet_margin_loss", "F.margin_ranking_loss",
      inputs=(f32(5, 3), f32(5, 3), f32(5, 3), f32(6), f32(6)))
def _(lib, a, p, n, s1, s2):
    F = lib.nn.functional
    target = lib.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    return (F.triplet_margin_loss(a, p, n), F.triplet_margin_loss(a, p, n, reduction="none"),
            F.triplet_margin_loss(a, p, n, margin=2.0, p=1.0, swap=True, reduction="sum"),
            F.margin_ranking_loss(s1, s2, target),
            F.margin_ranking_loss(s1, s2, target, margin=0.5, reduction="none"))


@add
@case("nn.Flatten", "nn.Unflatten", inputs=(f32(2, 3, 2, 4),))
def _(lib, x):
    nn = lib.nn
    net = nn.Sequential(nn.Flatten(), nn.Unflatten(1, (4, -1)))
    return (net(x), nn.Flatten(0, 2)(x), nn.Flatten(-2)(x).shape,
            nn.Unflatten(-1, [2, 2])(x).shape, repr(net))


@add
@case("F.relu", "F.gelu", "F.tanh", "F.sigmoid", "F.leaky_relu", "F.silu", "F.softplus",
      "F.elu", "F.softmax", "F.log_softmax", "minigrad.softmax", "minigrad.log_softmax", "Tensor.softmax",
      "Tensor.log_softmax", "minigrad.relu", "minigrad.sigmoid", "minigrad.tanh",
      inputs=(f32(3, 5, low=-4, high=4),))
def _(lib, x):
    F = lib.nn.functional
    return (F.relu(x), F.gelu(x), F.gelu(x, approximate="tanh"), F.tanh(x), F.sigmoid(x),
            F.leaky_relu(x, 0.2), F.silu(x), F.softplus(x), F.softplus(x, beta=2, threshold=3),
            F.elu(x), F.elu(x, alpha=0.5),
            F.softmax(x, dim=-1), F.log_softmax(x, dim=0), lib.softmax(x, 1),
            lib.log_softmax(x, -1), x.softmax(0), x.log_softmax(dim=1), lib.relu(x),
            lib.sigmoid(x), lib.tanh(x))


@add
@case("F.softmax", "F.log_softmax", "nn.Softmax", "F.leaky_relu", "F.elu", "F.silu",
      "nn.LeakyReLU", inputs=(f32(2, 3, 4, low=-3, high=3),))
def _(lib, x):
    import warnings
    F = lib.nn.functional
    with warnings.catch_warnings():  # both warn that the implicit dim is deprecated
        warnings.simplefilter("ignore")
        implicit = (F.softmax(x), F.log_softmax(x[0]), lib.nn.Softmax()(x.reshape(6, 4)),
                    F.softmax(x[0, 0]))
    inplace = [f(x * 1.0, inplace=True) for f in (F.elu, F.silu)]
    return implicit + (F.log_softmax(x, -1, dtype=lib.float64), *inplace,
                       F.leaky_relu(x * 1.0, 0.1, True), lib.nn.LeakyReLU(0.3, inplace=True)(x * 1.0))


@add
@case("F.linear", "F.layer_norm", "F.embedding", "F.normalize", "F.cosine_similarity",
      "F.pad", "F.one_hot", inputs=(f32(2, 3, 4), f32(5, 4), f32(5), f32(4), f32(4)))
def _(lib, x, w, b, g, beta):
    F = lib.nn.functional
    ids = lib.tensor([[0, 4], [2, 2]])
    return (F.linear(x, w, b), F.linear(x, w), F.layer_norm(x, (4,), g, beta),
            F.layer_norm(x, [3, 4]), F.embedding(ids, w), F.normalize(x, dim=-1),
            F.normalize(x, p=1.0, dim=1), F.cosine_similarity(x[0], x[1]),
            F.cosine_similarity(x, x.flip(0), dim=-1), F.pad(x, (1, 2)),
            F.pad(x, (0, 0, 1, 0), value=-1.0), F.one_hot(lib.tensor([0, 2, 1]), 4),
            F.one_hot(lib.tensor([[1], [3]])))


@add
@case("F.cross_entropy", "F.nll_loss", "nn.CrossEntropyLoss", "nn.NLLLoss",
      inputs=(f32(4, 5), f32(2, 5, 3)))
def _(lib, logits, seq):
    F, nn = lib.nn.functional, lib.nn
    y = lib.tensor([1, 0, 4, 2])
    ys = lib.tensor([[1, 0, 4], [2, 2, -100]])
    return (F.cross_entropy(logits, y), F.cross_entropy(logits, y, reduction="sum"),
            F.cross_entropy(logits, y, label_smoothing=0.1),
            F.cross_entropy(logits, lib.tensor([1, 0, 3, 3]), ignore_index=3),
            F.cross_entropy(seq, ys), F.cross_entropy(logits, y, reduction="none"),
            nn.CrossEntropyLoss(label_smoothing=0.2, ignore_index=0)(logits, y),
            F.nll_loss(logits.log_softmax(-1), y), nn.NLLLoss(reduction="sum")(logits, y))


@add
@case("F.mse_loss", "F.l1_loss", "F.binary_cross_entropy", "F.binary_cross_entropy_with_logits",
      "F.kl_div", "nn.MSELoss", "nn.L1Loss", "nn.BCELoss", "nn.BCEWithLogitsLoss",
      "nn.KLDivLoss", inputs=(f32(3, 4), f32(3, 4, grad=False, low=0.0, high=1.0)))
def _(lib, x, p):
    F, nn = lib.nn.functional, lib.nn
    logp = x.log_softmax(-1)
    q = p / p.sum(-1, keepdim=True)
    q0 = q.masked_fill(q < 0.2, 0.0)  # zero targets contribute nothing, not NaN
    return (F.mse_loss(x, p), F.l1_loss(x, p, reduction="sum"), nn.MSELoss()(x, p),
            nn.L1Loss(reduction="none")(x, p), F.binary_cross_entropy(x.sigmoid(), p),
            nn.BCELoss(reduction="sum")(x.sigmoid(), p), F.binary_cross_entropy_with_logits(x, p),
            nn.BCEWithLogitsLoss(pos_weight=lib.full((4,), 2.0))(x, p),
            F.kl_div(logp, q, reduction="batchmean"), F.kl_div(logp, q0, reduction="sum"),
            F.kl_div(logp, q0), F.kl_div(logp, q.log(), reduction="none", log_target=True),
            nn.KLDivLoss(reduction="sum")(logp, q0))


@add
@case("F.scaled_dot_product_attention", inputs=(f32(2, 3, 4), f32(2, 5, 4), f32(2, 5, 6)))
def _(lib, q, k, v):
    F = lib.nn.functional
    allowed = lib.tensor([[True, True, False, True, False]] * 3)
    return (F.scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(
        q, k, v, attn_mask=allowed), F.scaled_dot_product_attention(q, q, q, is_causal=True))


@add
@case("F.dropout", "minigrad.dropout", "nn.Dropout", inputs=(f32(4, 6),))
def _(lib, x):
    F = lib.nn.functional
    d = lib.nn.Dropout(0.5)
    d.eval()
    return F.dropout(x, 0.5, training=False), F.dropout(x, 0.0), lib.dropout(x, 0.0, True), d(x)


@add
@case("F.dropout", compare="meta", inputs=(f32(100, 100, grad=False, low=1.0, high=1.0),))
def _(lib, x):
    y = lib.nn.functional.dropout(x, 0.5)
    kept = y[y > 0]
    return y, round(float((y == 0).float().mean()), 1), float(kept.mean())  # survivors * 2


# --- layers ------------------------------------------------------------------------------------

@add
@case("nn.Linear", "nn.Sequential", "nn.ReLU", "nn.GELU", "nn.Tanh", "nn.Sigmoid",
      "nn.LeakyReLU", "nn.Softmax", "nn.Identity", "nn.Module", inputs=(f32(3, 4),))
def _(lib, x):
    nn = lib.nn
    net = fill(lib, nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 5, bias=False),
                                  nn.GELU(), nn.Linear(5, 3), nn.Tanh(), nn.Identity(),
                                  nn.LeakyReLU(0.1), nn.Sigmoid(), nn.Softmax(dim=-1)))
    return net(x), net[0](x), len(net), [tuple(p.shape) for p in net.parameters()]


@add
@case("nn.Embedding", "nn.LayerNorm", "nn.ModuleList", "nn.ModuleDict", "nn.Parameter",
      inputs=(f32(2, 3, 6),))
def _(lib, x):
    nn = lib.nn
    emb = fill(lib, nn.Embedding(7, 6, padding_idx=0), seed=1)
    with lib.no_grad():
        emb.weight[0] = 0.0  # PyTorch keeps the padding row at zero
    norms = fill(lib, nn.ModuleList([nn.LayerNorm(6), nn.LayerNorm(6, elementwise_affine=False)]))
    heads = fill(lib, nn.ModuleDict({"a": nn.Linear(6, 2), "b": nn.Linear(6, 3)}), seed=2)
    scale = nn.Parameter(lib.ones(6) * 0.5)
    watch(scale)
    ids = lib.tensor([[0, 3, 6], [2, 2, 0]])
    h = norms[1](norms[0](emb(ids) + x * scale))
    return h, heads["a"](h), heads["b"](h), len(norms), sorted(heads.keys())


@add
@case("nn.Sequential", "nn.ModuleList", "nn.ModuleDict", "nn.Module.named_children",
      inputs=(A(np.linspace(-1.5, 2.0, 8, dtype=np.float32).reshape(2, 4)),))
def _(lib, x):
    """The containers edited as lists and dicts: a named model cut by a slice (its names
    kept), items replaced, deleted (the names renumbered), inserted, repeated, updated."""
    nn = lib.nn
    layers = [fill(lib, nn.Linear(4, 4), seed=i) for i in range(4)]
    net = nn.Sequential(OrderedDict([("conv_1", layers[0]), ("relu_1", nn.Tanh()),
                                     ("loss_1", layers[1]), ("pool_1", layers[2])]))
    cut = net[:3]
    seq = nn.Sequential(*layers)
    seq[-1] = nn.Tanh()
    del seq[1]
    seq.insert(0, nn.Sigmoid())
    twice = nn.Sequential(layers[3], nn.Tanh()) * 2
    ml = nn.ModuleList(layers)
    del ml[::2]
    ml.insert(1, nn.ReLU())
    md = nn.ModuleDict([("a", layers[0])])
    md.update({"b": layers[1]})
    return (cut(x), [n for n, _ in cut.named_children()], seq(x),
            [n for n, _ in seq.named_children()], twice(x),
            [n for n, _ in twice.named_children()], len(twice), ml[1](ml[0](x)), len(ml),
            list(md.keys()))


@add
@case("nn.BatchNorm1d", "nn.Module.train", "nn.Module.eval",
      inputs=(f32(8, 3), f32(8, 3, 5)))
def _(lib, x, seq):
    bn = fill(lib, lib.nn.BatchNorm1d(3))
    y_train = bn(x) + bn(seq).mean(-1)
    stats = (bn.running_mean.clone(), bn.running_var.clone())
    bn.eval()
    return y_train, stats, bn(x), bn.training


@add
@case("nn.MultiheadAttention", inputs=(f32(2, 4, 8), f32(2, 5, 8)), rtol=1e-4, atol=1e-5)
def _(lib, q, kv):
    mha = fill(lib, lib.nn.MultiheadAttention(8, 2, batch_first=True), scale=0.3)
    pad = lib.tensor([[False, False, False, True, True], [False] * 5])
    causal = lib.ones(4, 4, dtype=lib.bool).triu(1)
    out, w = mha(q, kv, kv, key_padding_mask=pad)
    out2, w2 = mha(q, q, q, attn_mask=causal, average_attn_weights=False)
    out3, none = mha(q, q, q, need_weights=False)
    return out, w, out2, w2, out3, none


@add
@case("nn.TransformerEncoderLayer", "nn.TransformerEncoder", "nn.TransformerDecoderLayer",
      "nn.TransformerDecoder", inputs=(f32(2, 5, 8), f32(2, 4, 8)), rtol=1e-4, atol=1e-5)
def _(lib, src, tgt):
    nn = lib.nn
    enc = fill(lib, nn.TransformerEncoder(nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True), 2), scale=0.3)
    dec = fill(lib, nn.TransformerDecoder(nn.TransformerDecoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True, norm_first=True), 1), seed=3, scale=0.3)
    memory = enc(src, src_key_padding_mask=lib.tensor([[False] * 4 + [True], [False] * 5]))
    mask = lib.ones(4, 4, dtype=lib.bool).triu(1)
    return memory, dec(tgt, memory, tgt_mask=mask, tgt_is_causal=True)


@add
@case("nn.Transformer", inputs=(f32(2, 5, 8), f32(2, 4, 8)), rtol=1e-4, atol=1e-5)
def _(lib, src, tgt):
    model = fill(lib, lib.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True),
                 scale=0.3)
    mask = lib.nn.Transformer.generate_square_subsequent_mask(4)
    return model(src, tgt, tgt_mask=mask), mask


@add
@case("nn.Module.state_dict", "nn.Module.load_state_dict", "nn.Module.parameters",
      "nn.Module.named_parameters", "nn.Module.register_buffer", "nn.Module.buffers",
      "nn.Module.zero_grad", "nn.Module.apply", "nn.Module.modules", "nn.Module.children",
      "nn.Module.requires_grad_", "nn.Module.to")
def _(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.register_buffer("mask", lib.tril(lib.ones(2, 2)))

        def forward(self, x):
            return self.fc(x) @ self.mask

    net = fill(lib, Net())
    state = net.state_dict()
    other = Net()
    other.load_state_dict(state)
    names = [n for n, _ in net.named_parameters()]
    net.apply(lambda m: None)
    out = other(lib.ones(1, 3))
    out.sum().backward()
    other.zero_grad()
    other.requires_grad_(False)
    return (list(state), out.detach(), names, [b.sum().item() for b in net.buffers()],
            len(list(net.modules())), len(list(net.children())), other.fc.weight.grad,
            other.fc.weight.requires_grad, net.to(lib.float64).fc.weight.detach())


# --- nn.init and nn.utils ----------------------------------------------------------------------

@add
@case("nn.init.zeros_", "nn.init.ones_", "nn.init.constant_", "nn.init.calculate_gain")
def _(lib):
    init = lib.nn.init
    w = lib.empty(2, 3)
    return (init.zeros_(w).clone(), init.ones_(w).clone(), init.constant_(w, 0.3).clone(),
            init.calculate_gain("relu"), init.calculate_gain("tanh"),
            init.calculate_gain("leaky_relu", 0.2))


@add
@case("nn.init.normal_", "nn.init.uniform_", "nn.init.xavier_uniform_", "nn.init.xavier_normal_",
      "nn.init.kaiming_uniform_", "nn.init.kaiming_normal_", compare="meta")
def _(lib):
    init = lib.nn.init
    w = lib.empty(200, 300)
    bound = (6 / 500) ** 0.5
    return (init.normal_(w, 0.0, 0.02).clone(), init.uniform_(w, -1, 1).clone(),
            bool(init.xavier_uniform_(w).abs().max() <= bound),
            round(float(init.xavier_normal_(w).std()) / (2 / 500) ** 0.5, 1),
            bool(init.kaiming_uniform_(w, a=5 ** 0.5).abs().max() <= 1 / 300 ** 0.5),
            round(float(init.kaiming_normal_(w, nonlinearity="relu").std()) * 300 ** 0.5, 1))


@add
@case("nn.init.sparse_")
def _(lib):
    lib.manual_seed(3)
    w = lib.nn.init.sparse_(lib.empty(6, 4), 0.5, std=0.1)
    return w.clone(), lib.rand(2)  # PyTorch's numbers, and the stream after them


@add
@case("nn.init.trunc_normal_", "nn.init.orthogonal_", "nn.init.eye_", "nn.init.dirac_",
      compare="meta")
def _(lib):
    init = lib.nn.init
    w, wide, conv = lib.empty(300, 200), lib.empty(20, 50), lib.empty(8, 3, 5)
    t = init.trunc_normal_(w, mean=0.1, std=0.5, a=-0.5, b=0.6)
    q = init.orthogonal_(wide, gain=2.0)
    k = init.orthogonal_(conv).reshape(8, 15)
    return (t.clone(), bool(t.min() >= -0.5), bool(t.max() <= 0.6),
            round(float(init.trunc_normal_(w, std=0.02).std()) / 0.02, 1),
            bool((q @ q.t() - 4 * lib.eye(20)).abs().max() < 1e-4),
            bool((k @ k.t() - lib.eye(8)).abs().max() < 1e-5),
            init.eye_(lib.empty(2, 3)).clone(), init.dirac_(lib.empty(6, 2, 3, 3), groups=2).clone())


@add
@case("nn.utils.clip_grad_norm_", "nn.utils.clip_grad_value_", "nn.utils.parameters_to_vector",
      "nn.utils.vector_to_parameters", inputs=(f32(3, 4), f32(4)))
def _(lib, w, b):
    ((w * 3).sum() + (b ** 2).sum()).backward()
    norm = lib.nn.utils.clip_grad_norm_([w, b], max_norm=1.0)
    g1 = (w.grad.clone(), b.grad.clone())
    lib.nn.utils.clip_grad_value_([w, b], 0.1)
    vec = lib.nn.utils.parameters_to_vector([w, b])
    with lib.no_grad():
        lib.nn.utils.vector_to_parameters(vec * 2, [w, b])
    return norm, g1, w.grad, b.grad, vec.detach(), w.detach()


@add
@case("F.nll_loss", "nn.NLLLoss", "F.mse_loss", "F.l1_loss", "F.binary_cross_entropy_with_logits",
      "nn.BCEWithLogitsLoss", inputs=(f32(5, 4), f32(5, 4, low=0.1, high=1.0), f32(4, low=0.1,
                                                                                   high=1.0)))
def _(lib, x, w, cw):
    F, nn = lib.nn.functional, lib.nn
    ids, y = lib.tensor([0, 3, -100, 1, 2]), (x.detach() > 0).float()
    cw, w = cw.detach(), w.detach()  # PyTorch has no gradient for these weights
    # PyTorch's positional order: the class weight comes third, before ignore_index
    return (F.nll_loss(x.log_softmax(-1), ids, cw), nn.NLLLoss(cw, None, 3)(x.log_softmax(-1),
                                                                            ids.abs() % 4),
            F.nll_loss(x.log_softmax(-1), ids, cw, reduction="none"),
            F.mse_loss(x, y, weight=w), F.l1_loss(x, y, reduction="sum", weight=w),
            F.binary_cross_entropy_with_logits(x, y, w, pos_weight=cw),
            nn.BCEWithLogitsLoss(cw, reduction="sum")(x, y))


@add
@case("nn.utils.get_total_norm", "nn.utils.clip_grads_with_norm_", "nn.utils.clip_grad_norm_",
      inputs=(f32(3, 4), f32(4)))
def _(lib, w, b):
    ((w * 3).sum() + (b ** 2).sum()).backward()
    grads = [w.grad, b.grad]
    norms = [lib.nn.utils.get_total_norm(grads, p) for p in (2.0, 1.0, "inf", 3)]
    lib.nn.utils.clip_grads_with_norm_([w, b], 0.5, norms[0], foreach=True)
    clipped = (w.grad.clone(), b.grad.clone())
    again = lib.nn.utils.clip_grad_norm_([w, b], 0.1, foreach=False)
    return norms, clipped, again, w.grad, b.grad


@add
@case("nn.Module.state_dict", "nn.Module.load_state_dict", "nn.Module.get_extra_state",
      "nn.Module.set_extra_state", "nn.Module.named_buffers", "nn.Module.buffers",
      "nn.Module.named_parameters", "nn.Module.named_modules", "nn.Module.register_module",
      "nn.Module.get_submodule", "nn.Module.get_parameter", "nn.Module.get_buffer",
      inputs=(f32(2, 3),))
def _(lib, x):
    nn = lib.nn

    class Counter(nn.Module):  # state beyond tensors travels as `_extra_state`
        def __init__(self):
            super().__init__()
            self.calls = 0
            self.fc = nn.Linear(3, 3)

        def forward(self, t):
            self.calls += 1
            return self.fc(t)

        def get_extra_state(self):
            return {"calls": self.calls}

        def set_extra_state(self, state):
            self.calls = state["calls"]

    shared = nn.Linear(3, 3)
    net = nn.Sequential(Counter(), nn.BatchNorm1d(3), shared)
    net.register_module("tied", shared)
    fill(lib, net)
    y = net(x)
    sd = net.state_dict()
    with lib.no_grad():  # the state dict shares memory with the module, as in PyTorch
        sd["2.bias"].add_(1.0)
    fresh = nn.Sequential(Counter(), nn.BatchNorm1d(3), nn.Linear(3, 3))
    result = fresh.load_state_dict({k: v for k, v in sd.items() if not k.startswith("tied.")},
                                   strict=False)
    kept = fresh.load_state_dict(net.state_dict(keep_vars=True, prefix=""), strict=False,
                                 assign=True)
    return (y, list(sd), net.state_dict(prefix="m.")["m.2.bias"], shared.bias.detach(),
            fresh[0].calls, repr(result), repr(kept), fresh[2].weight is net[2].weight,
            isinstance(fresh[2].weight, nn.Parameter), fresh(x),
            [n for n, _ in net.named_parameters(remove_duplicate=False)],
            [n for n, _ in net.named_modules(remove_duplicate=False)],
            [n for n, _ in net.named_buffers(prefix="p", recurse=True)],
            len(list(net.buffers(recurse=False))),
            type(net.get_submodule("0.fc")).__name__, net.get_parameter("1.weight").detach(),
            net.get_buffer("1.running_mean"))


@add
@case("nn.ParameterList", "nn.ParameterDict", inputs=(f32(1, 2),))
def _(lib, x):
    nn = lib.nn

    class Mixture(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ParameterList([nn.Parameter(lib.ones(2, 2)), lib.eye(2)])
            self.layers.append(lib.full((2, 2), 0.5))
            self.scales = nn.ParameterDict({"b": lib.ones(2), "a": lib.zeros(2)})
            self.scales["c"] = lib.full((2,), 3.0)

        def forward(self, t):
            for w in self.layers[:2]:
                t = t @ w
            return t * self.scales["b"] + self.scales.get("c") + self.layers[-1].sum()

    m = fill(lib, Mixture())
    y = m(x)
    removed = m.scales.pop("a")
    return (y, list(m.state_dict()), len(m.layers), list(m.scales.keys()), "a" in m.scales,
            type(removed).__name__, [type(p).__name__ for p in m.layers])


@add
@case("nn.Module.get_submodule", compare="raises", match="no submodule")
def _(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 2)).get_submodule("0.missing")


@add
@case("nn.Module.add_module", "nn.Module.named_modules", "nn.Module.named_children",
      "nn.Module.named_buffers", "nn.Module.register_parameter",
      "nn.Module.register_forward_hook", "nn.Module.register_forward_pre_hook",
      "nn.Module.extra_repr", "nn.Module.forward", "nn.Module.double", "nn.Module.float",
      inputs=(f32(2, 3),))
def _(lib, x):
    nn = lib.nn
    net = nn.Module()
    net.add_module("fc", fill(lib, nn.Linear(3, 2)))
    net.register_parameter("scale", nn.Parameter(lib.full((2,), 2.0)))
    net.register_buffer("offset", lib.ones(2))
    net.forward = lambda t: net.fc(t) * net.scale + net.offset
    seen = []
    pre = net.fc.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    post = net.fc.register_forward_hook(lambda m, args, out: seen.append(tuple(out.shape)))
    y = net(x)
    pre.remove()
    post.remove()
    watch(net.scale)
    return (y, net(x), seen, [n for n, _ in net.named_modules()],
            [n for n, _ in net.named_children()], [n for n, _ in net.named_buffers()],
            net.fc.extra_repr(), net.double().fc.weight.dtype == lib.float64,
            net.float().offset.dtype == lib.float32)


@add
@case("nn.Module.to", "nn.Module.cpu", "nn.Module.double", "nn.Module.float",
      "nn.Module.half", "nn.Module.type", inputs=(f32(2, 4),))
def _(lib, x):
    nn = lib.nn
    net = fill(lib, nn.Sequential(nn.Linear(4, 3), nn.LayerNorm(3), nn.BatchNorm1d(3)))
    dev = lib.device("cuda" if lib.cuda.is_available() else "cpu")
    same = net.to(dev) is net and net.cpu() is net
    y32 = net(x).detach()  # the weights change dtype below, under the graph
    net.to(dev, lib.float64)
    dtypes = [p.dtype == lib.float64 for p in net.parameters()] + [
        b.dtype == lib.float64 for b in net.buffers()]
    y64 = net(x.double()).detach()
    net.to(dtype=lib.float16).to(lib.zeros(1))  # to(tensor) takes that tensor's dtype
    back = [p.dtype == lib.float32 for p in net.parameters()]
    net.half().type(lib.float64).float()
    return same, y32, y64, dtypes, back, [p.dtype == lib.float32 for p in net.parameters()]


@add
@case("nn.Module.to", compare="raises", match="runs on the CPU only")
def _(lib):
    if lib.cuda.is_available():
        raise RuntimeError("this case is about a machine without CUDA")
    return lib.nn.Linear(2, 2).to("cuda")


@add
@case("nn.Module.cuda", compare="raises", match="runs on the CPU only")
def _(lib):
    if lib.cuda.is_available():
        raise RuntimeError("this case is about a machine without CUDA")
    return lib.nn.Linear(2, 2).cuda()


@add
@case("nn.Linear", "nn.Embedding", "nn.LayerNorm", "nn.MultiheadAttention", "nn.BatchNorm1d",
      "nn.TransformerEncoderLayer", "nn.TransformerDecoderLayer", "nn.Transformer")
def _(lib):
    nn, kw = lib.nn, dict(device="cpu", dtype=lib.float64)
    layers = (nn.Linear(3, 2, **kw), nn.Embedding(5, 3, **kw), nn.LayerNorm(3, **kw),
              nn.MultiheadAttention(4, 2, **kw), nn.BatchNorm1d(3, **kw),
              nn.TransformerEncoderLayer(4, 2, 8, **kw),
              nn.TransformerDecoderLayer(4, 2, 8, bias=False, **kw),
              nn.Transformer(4, 2, 1, 1, 8, device=lib.device("cpu"), dtype=lib.float64),
              nn.Linear(3, 2, dtype=lib.float16))
    def name(t):
        return str(t.dtype).rsplit(".", 1)[-1]
    shapes = [[(tuple(p.shape), name(p)) for p in m.parameters()] for m in layers]
    return shapes, [name(b) for b in layers[4].buffers()]


@add
@case("F.relu", "F.dropout", "nn.ReLU", "nn.Dropout", "Tensor.relu_", inputs=(f32(3, 4),))
def _(lib, x):
    """inplace=True writes into the input, and autograd differentiates through the write."""
    F, nn = lib.nn.functional, lib.nn
    y = x * 2
    out = F.relu(y, inplace=True)
    z = x - 0.5
    nn.ReLU(inplace=True)(z)
    w = x * 3
    F.dropout(w, 0.5, training=False, inplace=True)
    nn.Dropout(0.0, inplace=True)(w)
    v = (x + 1).relu_()
    return out is y, y, z, w, v, (y * z + w + v).sum()


@add
@case("F.cross_entropy", "nn.CrossEntropyLoss",
      inputs=(f32(6, 4), f32(4, low=0.2, high=2.0, grad=False)))
def _(lib, logits, weight):
    """Class weights: PyTorch's weighted mean, with ignore_index and label smoothing."""
    F = lib.nn.functional
    y = lib.tensor([0, 3, 1, 1, 2, 0])
    return (F.cross_entropy(logits, y, weight=weight),
            F.cross_entropy(logits, y, weight, reduction="sum"),
            F.cross_entropy(logits, y, weight=weight, reduction="none", ignore_index=1),
            F.cross_entropy(logits, y, weight=weight, ignore_index=0, label_smoothing=0.2),
            lib.nn.CrossEntropyLoss(weight=weight, label_smoothing=0.1)(logits, y),
            F.cross_entropy(logits.reshape(2, 3, 4).permute(0, 2, 1), y.reshape(2, 3),
                            weight=weight, label_smoothing=0.3))
