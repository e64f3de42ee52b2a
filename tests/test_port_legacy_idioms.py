"""Port test: a recurrent language model written as PyTorch 0.3-era scripts (the examples'
first word_language_model among them) wrote it, idioms that still run on PyTorch 2:
`Variable(x)` around every batch, `init_hidden` by `weight = next(self.parameters()).data`
and `Variable(weight.new(nlayers, bsz, nhid).zero_())`, `repackage_hidden` by
`isinstance(h, Variable)` and `Variable(h.data)`, `nn.init`'s `uniform_` on `weight.data`,
the update `p.data.add_(-lr, p.grad.data)` written as `p.data.add_(p.grad.data, alpha=-lr)`,
`torch.autograd.set_detect_anomaly(True)` switched on while debugging, `loss.data.item()`, and
a mask of the diagonal by `fill_diagonal_` to keep a token from being scored against itself in
a similarity penalty on the embeddings. Run by PyTorch and by minigrad (passed in as `torch`)
from the same weights."""
import warnings

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def legacy_program(torch, tokens, init=None, ntoken=12, ninp=10, nhid=16, nlayers=2, bsz=4,
                   bptt=6, lr=5.0, clip=0.5):
    nn = torch.nn
    F = torch.nn.functional
    Variable = torch.autograd.Variable
    torch.manual_seed(1111)

    class RNNModel(nn.Module):
        def __init__(self, ntoken, ninp, nhid, nlayers):
            super(RNNModel, self).__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.GRU(ninp, nhid, nlayers)
            self.decoder = nn.Linear(nhid, ntoken)
            self.init_weights()
            self.nhid, self.nlayers = nhid, nlayers

        def init_weights(self):
            initrange = 0.1
            self.encoder.weight.data.uniform_(-initrange, initrange)
            self.decoder.bias.data.fill_(0)
            self.decoder.weight.data.uniform_(-initrange, initrange)

        def forward(self, input, hidden):
            emb = self.encoder(input)
            output, hidden = self.rnn(emb, hidden)
            decoded = self.decoder(output.view(output.size(0) * output.size(1), output.size(2)))
            return decoded.view(output.size(0), output.size(1), decoded.size(1)), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters()).data
            return Variable(weight.new(self.nlayers, bsz, self.nhid).zero_())

    def repackage_hidden(h):
        """Wraps hidden states in new Variables, to detach them from their history."""
        if isinstance(h, Variable):
            return Variable(h.data)
        return tuple(repackage_hidden(v) for v in h)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        return data.view(bsz, -1).t().contiguous()

    def get_batch(source, i, evaluation=False):
        seq_len = min(bptt, len(source) - 1 - i)
        data = Variable(source[i:i + seq_len], volatile=evaluation)
        target = Variable(source[i + 1:i + 1 + seq_len].view(-1))
        return data, target

    train_data = batchify(torch.LongTensor(tokens), bsz)
    model = RNNModel(ntoken, ninp, nhid, nlayers)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    criterion = nn.CrossEntropyLoss()

    losses, penalties = [], []
    torch.autograd.set_detect_anomaly(True)  # left on from debugging: it must change nothing
    try:
        model.train()
        hidden = model.init_hidden(bsz)
        for epoch in range(3):
            for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
                data, targets = get_batch(train_data, i)
                hidden = repackage_hidden(hidden)
                model.zero_grad()
                output, hidden = model(data, hidden)
                loss = criterion(output.view(-1, ntoken), targets)
                # keep the embeddings apart: cosine similarity of every pair but a word's own
                emb = F.normalize(model.encoder.weight, dim=1)
                sim = emb @ emb.t()
                sim = sim.clone().fill_diagonal_(0.0)
                penalty = 0.01 * sim.pow(2).sum()
                (loss + penalty).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                for p in model.parameters():
                    p.data.add_(p.grad.data, alpha=-lr)
                losses.append(loss.data.item())
                penalties.append(penalty.item())
    finally:
        torch.autograd.set_detect_anomaly(False)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # volatile's deprecation
        model.eval()
        data, targets = get_batch(train_data, 0, evaluation=True)
        with torch.no_grad():
            output, _ = model(data, model.init_hidden(bsz))
        eval_loss = criterion(output.view(-1, ntoken), targets).item()
    return {"init": start, "losses": losses, "penalties": penalties, "eval": eval_loss,
            "final": state_numpy(model), "hidden": (type(hidden).__name__, tuple(hidden.shape))}


def test_legacy_idioms_train_the_same_in_both(torch):
    rng = np.random.default_rng(0)
    # a sequence with structure to learn: each token mostly followed by the next one
    tokens = [0]
    for _ in range(399):
        tokens.append((tokens[-1] + 1) % 12 if rng.random() < 0.8 else int(rng.integers(12)))
    expected, got = run_both(legacy_program, torch, np.array(tokens))
    assert_curves_match("legacy", expected["losses"], got["losses"], rtol=2e-3, every=8)
    np.testing.assert_allclose(got["penalties"], expected["penalties"], rtol=2e-3)
    np.testing.assert_allclose(got["eval"], expected["eval"], rtol=2e-3)
    assert got["hidden"][1] == expected["hidden"][1]
    for key, want in expected["final"].items():
        np.testing.assert_allclose(got["final"][key], want, rtol=2e-3, atol=1e-4, err_msg=key)
    assert np.mean(expected["losses"][-8:]) < 0.8 * np.mean(expected["losses"][:8])  # it learns
