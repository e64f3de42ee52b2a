"""Port test: a word-level language model in the style of PyTorch's official examples: a
`Dataset` over a text file, a `DataLoader` that shuffles with a seeded generator, a small
model, a training loop that logs to TensorBoard. It is run by PyTorch and by minigrad (passed
in as `torch`) from the same weights.

The two libraries' shuffles come from different random streams (see docs/pytorch-api.md), so
the step-by-step comparison feeds the batches in an order given from outside, through a
`Sampler` subclass; the run with `shuffle=True` is compared by its validation losses, which
do not depend much on the order, and must repeat itself exactly."""
import importlib

import numpy as np
import pytest

import minigrad

from port_runner import assert_curves_match, run_both, state_numpy

WORDS = {"det": ["the", "a", "every", "one"], "noun": ["cat", "dog", "bird", "child", "farmer"],
         "verb": ["sees", "chases", "feeds", "finds"], "adj": ["small", "old", "red", "quiet"]}


def write_corpus(path, sentences=80, seed=0):
    """A text file of generated sentences, one a line (det adj? noun verb det adj? noun .)."""
    rng = np.random.default_rng(seed)
    pick = lambda kind: WORDS[kind][rng.integers(len(WORDS[kind]))]  # noqa: E731
    lines = []
    for _ in range(sentences):
        words = []
        for part in ("subject", "verb", "object"):
            if part == "verb":
                words.append(pick("verb"))
                continue
            words.append(pick("det"))
            if rng.random() < 0.5:
                words.append(pick("adj"))
            words.append(pick("noun"))
        lines.append(" ".join(words) + " .")
    path.write_text("\n".join(lines) + "\n")
    return path


def lm_program(torch, text_path, log_root, order=None, init=None, epochs=3, batch_size=32,
               context=3):
    nn = torch.nn
    F = torch.nn.functional
    data = torch.utils.data
    # the equivalent of `from torch.utils.tensorboard import SummaryWriter`
    SummaryWriter = importlib.import_module(f"{torch.__name__}.utils.tensorboard").SummaryWriter
    torch.manual_seed(0)

    class Corpus(data.Dataset):
        """(the `context` previous words, the next word) for every position of the file."""

        def __init__(self, path, context):
            with open(path) as f:
                words = f.read().split()
            self.vocab = sorted(set(words))
            self.stoi = {w: i for i, w in enumerate(self.vocab)}
            self.ids = [self.stoi[w] for w in words]
            self.context = context

        def __len__(self):
            return len(self.ids) - self.context

        def __getitem__(self, i):
            x = torch.tensor(self.ids[i:i + self.context], dtype=torch.long)
            return x, self.ids[i + self.context]

    class EpochOrder(data.Sampler):
        """The order of each epoch, given from outside (set_epoch picks one)."""

        def __init__(self, orders):
            self.orders, self.epoch = orders, 0

        def set_epoch(self, epoch):
            self.epoch = epoch

        def __iter__(self):
            return iter(self.orders[self.epoch].tolist())

        def __len__(self):
            return len(self.orders[self.epoch])

    class NGramModel(nn.Module):
        def __init__(self, vocab_size, context, dim=16, hidden=64):
            super().__init__()
            self.embed = nn.Embedding(vocab_size, dim)
            self.hidden = nn.Linear(context * dim, hidden)
            self.out = nn.Linear(hidden, vocab_size)

        def forward(self, x):  # x: (B, context) word ids
            h = torch.tanh(self.hidden(self.embed(x).reshape(x.shape[0], -1)))
            return self.out(h)

    corpus = Corpus(text_path, context)
    valid_idx = list(range(0, len(corpus), 5))
    train_set = data.Subset(corpus, [i for i in range(len(corpus)) if i % 5])
    valid_set = data.Subset(corpus, valid_idx)
    if order is None:
        sampler = None
        train_loader = data.DataLoader(train_set, batch_size=batch_size, shuffle=True,
                                       generator=torch.Generator().manual_seed(42))
    else:
        sampler = EpochOrder(order)
        train_loader = data.DataLoader(train_set, batch_size=batch_size, sampler=sampler)
    valid_loader = data.DataLoader(valid_set, batch_size=64)

    model = NGramModel(len(corpus.vocab), context)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    writer = SummaryWriter(f"{log_root}/{torch.__name__}")

    def evaluate():
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for x, y in valid_loader:
                total += F.cross_entropy(model(x), y, reduction="sum").item()
                count += len(y)
        return total / count

    losses, valid_losses, step = [], [], 0
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            writer.add_scalar("loss/train", loss.item(), step)
            losses.append(loss.item())
            step += 1
        valid_losses.append(evaluate())
        writer.add_scalars("loss", {"train": losses[-1], "valid": valid_losses[-1]}, epoch)
        writer.add_histogram("embedding", model.embed.weight, epoch)
    writer.close()
    return {"init": start, "losses": losses, "valid": valid_losses, "steps": step}


def logged(log_dir, tag="loss/train"):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path / "corpus.txt")


def test_language_model_trains_the_same_in_both(corpus, tmp_path, torch):
    pytest.importorskip("tensorboard")
    n_train = sum(1 for i in range(len(corpus.read_text().split()) - 3) if i % 5)
    rng = np.random.default_rng(3)
    order = [rng.permutation(n_train) for _ in range(3)]
    expected, got = run_both(lm_program, torch, corpus, tmp_path, order=order)
    assert_curves_match("textlm", expected["losses"], got["losses"], rtol=2e-3, every=4)
    np.testing.assert_allclose(got["valid"], expected["valid"], rtol=2e-3)
    assert expected["valid"][-1] < 0.75 * expected["losses"][0]  # it learns
    for lib in ("torch", "minigrad"):  # what TensorBoard shows is what the loop saw
        run = {"torch": expected, "minigrad": got}[lib]
        assert [s for s, _ in logged(tmp_path / lib)] == list(range(run["steps"]))
        np.testing.assert_allclose([v for _, v in logged(tmp_path / lib)], run["losses"],
                                   rtol=1e-6)
    epochs = logged(tmp_path / "minigrad" / "loss_valid", "loss")
    assert [e for e, _ in epochs] == [0, 1, 2]
    np.testing.assert_allclose([v for _, v in epochs], got["valid"], rtol=1e-6)


def test_shuffled_run_repeats_and_ends_near_pytorch(corpus, tmp_path, torch):
    pytest.importorskip("tensorboard")
    expected, got = run_both(lm_program, torch, corpus, tmp_path / "first")
    again = lm_program(minigrad, corpus, tmp_path / "again", init=expected["init"])
    assert again["losses"] == got["losses"]  # the seeded generator repeats the shuffle
    print(f"\nshuffled, validation loss per epoch: PyTorch {expected['valid']}, "
          f"minigrad {got['valid']}")
    np.testing.assert_allclose(got["valid"], expected["valid"], rtol=0.05)
    assert got["losses"] != expected["losses"]  # other batches (other streams), same end
