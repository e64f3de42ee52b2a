"""Port test: a classifier over tabular data with categorical and numeric columns, in the style
of PyTorch tutorials: the device boilerplate (`"cuda" if torch.cuda.is_available() else "cpu"`,
`.to(device)`, `torch.backends.cudnn.benchmark`, `set_float32_matmul_precision`), one
`nn.Embedding` per categorical column in an `nn.ModuleList`, a head built as
`nn.Sequential(OrderedDict(...))` and reached by name, weights initialised through
`model.apply(init_fn)` with `kaiming_uniform_`/`xavier_normal_`, a `TensorDataset` cut by
`random_split` with fractions and a seeded `Generator`, a `DataLoader` with `pin_memory`,
`autocast(enabled=False)`, and metrics under `inference_mode()`: `torch.cat` of batch outputs,
`argmax`, `topk`, a confusion matrix by `index_put_(accumulate=True)`, `parameters_to_vector`
and `vector_to_parameters`. Run by PyTorch and by minigrad (passed in as `torch`) from the
same weights: losses, metrics and parameters must agree."""
import warnings
from collections import OrderedDict

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

CARDS = (5, 7, 3)


def tabular_program(torch, Xc, Xn, Y, init=None, epochs=3):
    nn = torch.nn
    F = torch.nn.functional
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision("high")
    torch.manual_seed(0)
    split_generator = torch.Generator().manual_seed(42)

    class TabularNet(nn.Module):
        def __init__(self, cards, n_numeric, n_classes, emb_dim=4):
            super().__init__()
            self.embeddings = nn.ModuleList([nn.Embedding(c, emb_dim) for c in cards])
            self.norm = nn.BatchNorm1d(n_numeric)
            self.head = nn.Sequential(OrderedDict([
                ("fc1", nn.Linear(emb_dim * len(cards) + n_numeric, 32)),
                ("act1", nn.LeakyReLU(0.1)),
                ("drop", nn.Dropout(0.0)),
                ("fc2", nn.Linear(32, 16)),
                ("act2", nn.GELU()),
                ("out", nn.Linear(16, n_classes)),
            ]))

        def forward(self, x_cat, x_num):
            e = torch.cat([emb(x_cat[:, i]) for i, emb in enumerate(self.embeddings)], dim=1)
            return self.head(torch.cat([e, self.norm(x_num)], dim=-1))

    def init_fn(m):
        if isinstance(m, nn.Linear):
            nn.init.kaiming_uniform_(m.weight, a=0.1, nonlinearity="leaky_relu")
            if m.bias is not None:
                nn.init.constant_(m.bias, 0.01)
        elif isinstance(m, nn.Embedding):
            nn.init.xavier_normal_(m.weight)

    model = TabularNet(CARDS, Xn.shape[1], 4)
    model.apply(init_fn)
    model = model.to(device)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    structure = [repr(model.head.fc1), repr(model.head[0]), len(model.head),
                 list(dict(model.head.named_children()))]
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    start_vector = nn.utils.parameters_to_vector(model.parameters())

    dataset = torch.utils.data.TensorDataset(
        torch.from_numpy(Xc).long(), torch.from_numpy(Xn).float(), torch.from_numpy(Y).long())
    train_set, val_set = torch.utils.data.random_split(dataset, [0.8, 0.2],
                                                       generator=split_generator)
    sizes = [len(train_set), len(val_set), type(train_set).__name__,
             sorted(train_set.indices + val_set.indices) == list(range(len(dataset)))]
    # the split's order comes from the library's own random stream, so training reads the
    # whole set in order; the two libraries then see the same batches
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pin_memory without an accelerator warns in both
        loader = torch.utils.data.DataLoader(dataset, batch_size=32, shuffle=False,
                                             num_workers=0, pin_memory=True)
        batches = list(loader)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for epoch in range(epochs):
        model.train()
        for x_cat, x_num, y in batches:
            x_cat, x_num = x_cat.to(device, non_blocking=True), x_num.to(device)
            y = y.to(device)
            with torch.autocast(device_type="cpu", enabled=False):
                loss = F.cross_entropy(model(x_cat, x_num), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())

    model.eval()
    outputs, targets = [], []
    with torch.inference_mode():
        for x_cat, x_num, y in torch.utils.data.DataLoader(dataset, batch_size=50):
            outputs.append(model(x_cat, x_num))
            targets.append(y)
        logits, targets = torch.cat(outputs), torch.cat(targets)
        probs = F.softmax(logits, dim=1)
        top2 = probs.topk(2, dim=1)
        predicted = logits.argmax(1)
        accuracy = (predicted == targets).float().mean().item()
        top2_accuracy = (top2.indices == targets.unsqueeze(1)).any(dim=1).float().mean().item()
        confusion = torch.zeros(4, 4, dtype=torch.long)
        confusion.index_put_((targets, predicted), torch.ones_like(targets), accumulate=True)
        recorded = logits.requires_grad

    vector = nn.utils.parameters_to_vector(model.parameters())
    nn.utils.vector_to_parameters(vector * 0.5, model.parameters())
    halved = nn.utils.parameters_to_vector(model.parameters())
    return {"init": start, "losses": losses, "accuracy": accuracy,
            "top2_accuracy": top2_accuracy, "confusion": confusion.tolist(),
            "top2_values": top2.values.numpy(), "probs_sum": probs.sum(1).numpy(),
            "n_params": n_params, "start_vector": start_vector.detach().numpy(),
            "vector": vector.detach().numpy(), "halved": halved.detach().numpy(),
            "structure": structure, "sizes": sizes, "recorded": recorded,
            "running_mean": model.norm.running_mean.numpy().copy()}


def tabular_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    Xc = np.stack([rng.integers(0, c, n) for c in CARDS], 1)
    Xn = rng.normal(size=(n, 6)).astype(np.float32)
    Y = ((Xc[:, 0] + (Xn[:, 0] > 0) * 2 + (Xc[:, 1] > 3)) % 4).astype(np.int64)
    return Xc, Xn, Y


def test_tabular_model_trains_the_same_in_both(torch):
    expected, got = run_both(tabular_program, torch, *tabular_data())
    assert_curves_match("tabular", expected["losses"], got["losses"], rtol=1e-4, every=7)
    assert expected["losses"][-1] < 0.8 * expected["losses"][0]  # it learns
    for key in ("structure", "sizes", "n_params", "confusion", "recorded"):
        assert got[key] == expected[key], key
    assert got["sizes"] == [160, 40, "Subset", True]
    assert got["recorded"] is False
    assert abs(got["accuracy"] - expected["accuracy"]) <= 0.01
    assert abs(got["top2_accuracy"] - expected["top2_accuracy"]) <= 0.01
    for key in ("top2_values", "probs_sum", "start_vector", "vector", "halved", "running_mean"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-5, err_msg=key)
    np.testing.assert_allclose(got["halved"], 0.5 * got["vector"], rtol=1e-6)
    np.testing.assert_allclose(got["start_vector"][:4 * CARDS[0]],
                               expected["init"]["embeddings.0.weight"].ravel())
