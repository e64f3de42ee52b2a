"""Port test: the tutorial "NLP From Scratch: Classifying Names with a Character-Level RNN", on
generated names of five made-up languages (some with accents) instead of the downloaded files:
`unicodedata.normalize('NFD', ...)` to ASCII, one-hot letter tensors of shape
`(len, 1, n_letters)` written by `tensor[li][0][index] = 1`, a `Dataset` returning
`(label_tensor, text_tensor, label, text)`, the tutorial's first network (a hand-written RNN
cell, `torch.cat((input, hidden), 1)` into `i2h` and `i2o`, `nn.LogSoftmax(dim=1)`,
`initHidden()`) trained one name at a time with `nn.NLLLoss` and the manual
`p.data.add_(p.grad.data, alpha=-learning_rate)`, then its current one (`nn.RNN` whose last
hidden state `hidden[0]` goes through `h2o`), trained on mini-batches of summed losses from
`np.array_split` of a `random.shuffle`d index list with `clip_grad_norm_` and SGD,
`label_from_output` by `output.topk(1)`, `top_i[0].item()`, a normalised confusion matrix
(`confusion[label_i][guess_i] += 1`, `confusion[i] / denom`), and predictions of the top three
languages with `topk(3, 1, True)`. Run by PyTorch and by minigrad (passed in as `torch`) from
the same weights; the split and the shuffles come from the program's seeded Python stream."""
import random
import string
import unicodedata

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

LANGUAGES = {
    "Arvenic": (["ka", "ri", "to", "mé", "lu", "sa"], ["ov", "ić", "ek"]),
    "Belorn": (["ba", "dü", "gor", "ha", "ün", "ster"], ["mann", "berg", "ö"]),
    "Corvish": (["o'", "mac", "con", "ne", "ly", "gan"], ["ey", "an", "ell"]),
    "Doria": (["fer", "na", "ro", "gué", "es", "pa"], ["ez", "ón", "ia"]),
    "Ebbin": (["hi", "ta", "ka", "mo", "yu", "shi"], ["ro", "ko", "da"]),
}


def make_names(n_per_language, seed=0):
    """(name, language) pairs: two or three syllables of the language, then an ending."""
    rng = np.random.default_rng(seed)
    pairs = []
    for language, (syllables, endings) in LANGUAGES.items():
        for _ in range(n_per_language):
            parts = [syllables[i] for i in rng.integers(0, len(syllables), rng.integers(2, 4))]
            name = "".join(parts) + endings[rng.integers(0, len(endings))]
            pairs.append((name.capitalize(), language))
    return pairs


def char_rnn_names_program(torch, pairs, init=None, n_hidden=32, n_epoch=4, n_batch_size=16):
    nn = torch.nn
    Dataset = torch.utils.data.Dataset
    random.seed(2024)
    torch.manual_seed(2024)
    out = {"init": {}}

    allowed_characters = string.ascii_letters + " .,;'" + "_"
    n_letters = len(allowed_characters)

    def unicodeToAscii(s):
        return "".join(c for c in unicodedata.normalize("NFD", s)
                       if unicodedata.category(c) != "Mn" and c in allowed_characters)

    def letterToIndex(letter):
        if letter not in allowed_characters:
            return allowed_characters.find("_")
        return allowed_characters.find(letter)

    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor

    out["ascii"] = [unicodeToAscii(n) for n in ("Ślusàrski", "Müller", "Guérin")]
    t = lineToTensor("Jones")
    out["jones"] = (tuple(t.size()), t.sum().item(), t[0].argmax().item(), t.dtype == torch.float32)

    class NamesDataset(Dataset):
        def __init__(self, pairs):
            self.labels_uniq = sorted({label for _, label in pairs})
            self.data = [unicodeToAscii(name) for name, _ in pairs]
            self.data_tensors = [lineToTensor(name) for name in self.data]
            self.labels = [label for _, label in pairs]
            self.labels_tensors = [torch.tensor([self.labels_uniq.index(label)], dtype=torch.long)
                                   for label in self.labels]

        def __len__(self):
            return len(self.data)

        def __getitem__(self, idx):
            return (self.labels_tensors[idx], self.data_tensors[idx], self.labels[idx],
                    self.data[idx])

    alldata = NamesDataset(pairs)
    indices = list(range(len(alldata)))
    random.shuffle(indices)  # the tutorial's random_split, from the Python stream here
    n_train = int(0.85 * len(indices))
    train_set = torch.utils.data.Subset(alldata, indices[:n_train])
    test_set = torch.utils.data.Subset(alldata, indices[n_train:])
    classes = alldata.labels_uniq
    n_categories = len(classes)

    def load(name, model):
        if init is not None:
            model.load_state_dict({k: torch.from_numpy(v) for k, v in init[name].items()})
        out["init"][name] = state_numpy(model)
        return model

    # --- the first version: an RNN cell written by hand -----------------------------------
    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(input_size + hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = torch.cat((input, hidden), 1)
            hidden = self.i2h(combined)
            output = self.i2o(combined)
            output = self.softmax(output)
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size)

    rnn = load("cell", RNN(n_letters, n_hidden, n_categories))
    criterion = nn.NLLLoss()
    learning_rate = 0.005

    def train(category_tensor, line_tensor):
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item()

    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return classes[category_i], category_i

    cell_losses, cell_guesses = [], []
    for iter in range(1, n_train + 1):
        category_tensor, line_tensor, category, line = train_set[random.randrange(n_train)]
        output, loss = train(category_tensor, line_tensor)
        cell_losses.append(loss)
        if iter % 25 == 0:
            cell_guesses.append(categoryFromOutput(output))
    out["cell_losses"], out["cell_guesses"] = cell_losses, cell_guesses

    # --- the current version: nn.RNN, mini-batches, a confusion matrix --------------------
    class CharRNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(CharRNN, self).__init__()
            self.rnn = nn.RNN(input_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            output = self.h2o(hidden[0])
            output = self.softmax(output)
            return output

    rnn = load("rnn", CharRNN(n_letters, n_hidden, len(classes)))
    out["printed"] = str(rnn)

    def label_from_output(output, output_labels):
        top_n, top_i = output.topk(1)
        label_i = top_i[0].item()
        return output_labels[label_i], label_i

    input = lineToTensor("Albert")
    output = rnn(input)
    out["first_output"] = output.detach().numpy().copy()
    out["first_label"] = label_from_output(output, classes)

    def train(rnn, training_data, n_epoch=10, n_batch_size=64, learning_rate=0.2,
              criterion=nn.NLLLoss()):
        current_loss = 0
        all_losses, batch_losses = [], []
        rnn.train()
        optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)
        for iter in range(1, n_epoch + 1):
            rnn.zero_grad()
            batches = list(range(len(training_data)))
            random.shuffle(batches)
            batches = np.array_split(batches, len(batches) // n_batch_size)
            for idx, batch in enumerate(batches):
                batch_loss = 0
                for i in batch:
                    (label_tensor, text_tensor, label, text) = training_data[i]
                    output = rnn.forward(text_tensor)
                    loss = criterion(output, label_tensor)
                    batch_loss += loss
                batch_loss.backward()
                nn.utils.clip_grad_norm_(rnn.parameters(), 3)
                optimizer.step()
                optimizer.zero_grad()
                current_loss += batch_loss.item() / len(batch)
                batch_losses.append(batch_loss.item())
            all_losses.append(current_loss / len(batches))
            current_loss = 0
        return all_losses, batch_losses

    out["epoch_losses"], out["batch_losses"] = train(rnn, train_set, n_epoch=n_epoch,
                                                     n_batch_size=n_batch_size)

    def evaluate(rnn, testing_data, classes):
        confusion = torch.zeros(len(classes), len(classes))
        rnn.eval()
        with torch.no_grad():
            for i in range(len(testing_data)):
                (label_tensor, text_tensor, label, text) = testing_data[i]
                output = rnn(text_tensor)
                guess, guess_i = label_from_output(output, classes)
                label_i = classes.index(label)
                confusion[label_i][guess_i] += 1
        for i in range(len(classes)):
            denom = confusion[i].sum()
            if denom > 0:
                confusion[i] = confusion[i] / denom
        return confusion

    confusion = evaluate(rnn, test_set, classes)
    out["confusion"] = confusion.numpy().copy()
    out["diagonal"] = confusion.diag().mean().item()

    def predict(input_line, n_predictions=3):
        with torch.no_grad():
            output = rnn(lineToTensor(input_line))
            topv, topi = output.topk(n_predictions, 1, True)
            return [(topv[0][i].item(), classes[topi[0][i].item()])
                    for i in range(n_predictions)]

    out["predictions"] = [predict(n) for n in ("Kamélu", "Hashiro", "Macneley")]
    return out


def test_char_rnn_names_classifies_the_same_in_both(torch):
    pairs = make_names(40)
    expected, got = run_both(char_rnn_names_program, torch, pairs)
    assert got["ascii"] == expected["ascii"] == ["Slusarski", "Muller", "Guerin"]
    assert got["jones"] == expected["jones"]
    assert got["printed"] == expected["printed"]
    np.testing.assert_allclose(got["first_output"], expected["first_output"], rtol=1e-5)
    assert got["first_label"] == expected["first_label"]
    assert_curves_match("cell", expected["cell_losses"], got["cell_losses"], rtol=2e-3, every=40)
    assert got["cell_guesses"] == expected["cell_guesses"]
    assert_curves_match("rnn", expected["batch_losses"], got["batch_losses"], rtol=2e-3, every=5)
    np.testing.assert_allclose(got["epoch_losses"], expected["epoch_losses"], rtol=2e-3)
    np.testing.assert_allclose(got["confusion"], expected["confusion"], atol=1e-6)
    for want, have in zip(expected["predictions"], got["predictions"]):
        assert [c for _, c in have] == [c for _, c in want]
        np.testing.assert_allclose([v for v, _ in have], [v for v, _ in want], rtol=1e-3)
    assert expected["epoch_losses"][-1] < 0.7 * expected["epoch_losses"][0]  # it learns
    assert expected["diagonal"] > 0.5
