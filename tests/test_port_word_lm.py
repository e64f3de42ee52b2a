"""Port test: a word-level LSTM language model in the style of PyTorch's word_language_model
example (Dictionary and Corpus, batchify, truncated backpropagation through time with
repackage_hidden, embedding -> LSTM -> linear with dropout, clip_grad_norm_, plain SGD on
p.data, learning-rate annealing, sampling), run by PyTorch and by minigrad (passed in as
`torch`) from the same weights. The text is generated from a small grammar."""
import math

import numpy as np
import pytest

from port_runner import assert_curves_match, run_both, state_numpy


def word_lm_program(torch, train_lines, valid_lines, init=None, emsize=16, nhid=24, nlayers=2,
                    dropout=0.0, bptt=8, batch_size=6, lr=5.0, clip=1.0, epochs=4):
    nn = torch.nn
    F = torch.nn.functional
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(1111)

    class Dictionary(object):
        def __init__(self):
            self.word2idx = {}
            self.idx2word = []

        def add_word(self, word):
            if word not in self.word2idx:
                self.idx2word.append(word)
                self.word2idx[word] = len(self.idx2word) - 1
            return self.word2idx[word]

        def __len__(self):
            return len(self.idx2word)

    class Corpus(object):
        def __init__(self, train, valid):
            self.dictionary = Dictionary()
            self.train = self.tokenize(train)
            self.valid = self.tokenize(valid)

        def tokenize(self, lines):
            for line in lines:
                for word in line.split() + ["<eos>"]:
                    self.dictionary.add_word(word)
            idss = []
            for line in lines:
                ids = [self.dictionary.word2idx[word] for word in line.split() + ["<eos>"]]
                idss.append(torch.tensor(ids).type(torch.int64))
            return torch.cat(idss)

    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            self.init_weights()
            self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == "LSTM":
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    corpus = Corpus(train_lines, valid_lines)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        data = data.view(bsz, -1).t().contiguous()
        return data.to(device)

    eval_batch_size = 4
    train_data = batchify(corpus.train, batch_size)
    val_data = batchify(corpus.valid, eval_batch_size)

    ntokens = len(corpus.dictionary)
    model = RNNModel("LSTM", ntokens, emsize, nhid, nlayers, dropout).to(device)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    criterion = nn.NLLLoss()

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].view(-1)
        return data, target

    def evaluate(data_source):
        model.eval()
        total_loss = 0.
        hidden = model.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    losses, val_losses, best_val_loss = [], [], None
    for epoch in range(1, epochs + 1):
        model.train()
        hidden = model.init_hidden(batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            # Starting each batch, we detach the hidden state from how it was previously produced.
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
        val_loss = evaluate(val_data)
        val_losses.append(val_loss)
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0  # anneal the learning rate if no improvement on the validation set
    # generate.py: sample a few words (random streams differ: checked for form only)
    hidden = model.init_hidden(1)
    input = torch.randint(ntokens, (1, 1), dtype=torch.long).to(device)
    words = []
    with torch.no_grad():
        for i in range(10):
            output, hidden = model(input, hidden)
            word_weights = output.squeeze().div(1.0).exp().cpu()
            word_idx = torch.multinomial(word_weights, 1)[0]
            input.fill_(word_idx)
            words.append(corpus.dictionary.idx2word[word_idx])
    return {"init": start, "losses": losses, "val_losses": val_losses,
            "ppl": math.exp(val_losses[-1]), "sample": words, "vocab": corpus.dictionary.idx2word}


def generated_text(n_lines, seed):
    """Sentences from a small grammar: subject, verb, object, and sometimes a place."""
    rng = np.random.default_rng(seed)
    subjects = ["the cat", "a dog", "the old man", "my sister", "the bird"]
    verbs = ["sees", "likes", "chases", "finds"]
    objects = ["the ball", "a mouse", "the red car", "her friend", "some bread"]
    places = ["in the garden", "at home", "near the river"]
    lines = []
    for _ in range(n_lines):
        line = f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}"
        lines.append(line + (f" {rng.choice(places)}" if rng.random() < 0.5 else ""))
    return lines


@pytest.mark.parametrize("nlayers", [1, 2])
def test_word_lm_trains_the_same_in_both(torch, nlayers):
    train, valid = generated_text(60, seed=0), generated_text(12, seed=1)
    expected, got = run_both(word_lm_program, torch, train, valid, nlayers=nlayers)
    assert len(expected["losses"]) == 4 * 10  # four epochs of ten bptt windows
    assert_curves_match(f"word_lm_{nlayers}_layers", expected["losses"], got["losses"],
                        rtol=1e-4, every=4)
    np.testing.assert_allclose(got["val_losses"], expected["val_losses"], rtol=1e-4)
    assert len(got["sample"]) == 10 and set(got["sample"]) <= set(got["vocab"])
    # it learns: two layers (slower to start with plain SGD) at least the word frequencies
    uniform = math.log(len(expected["vocab"]))
    assert expected["val_losses"][-1] < (0.8 if nlayers == 1 else 0.97) * uniform


def test_word_lm_with_dropout_learns_alike(torch):
    """Dropout (on the embeddings, between the LSTM's layers and on its output) draws from
    each library's own random stream, so the curves differ step by step; they must still
    reach about the same validation loss."""
    train, valid = generated_text(60, seed=0), generated_text(12, seed=1)
    expected, got = run_both(word_lm_program, torch, train, valid, dropout=0.2)
    print(f"\nword_lm with dropout 0.2, validation losses: PyTorch {expected['val_losses']}, "
          f"minigrad {got['val_losses']}")
    assert got["losses"] != expected["losses"]  # dropout did act
    np.testing.assert_allclose(got["val_losses"][-1], expected["val_losses"][-1], rtol=0.05)
    assert got["val_losses"][-1] < 0.97 * math.log(len(got["vocab"]))
