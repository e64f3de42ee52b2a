"""Port test: the tutorial "NLP From Scratch: Translation with a Sequence to Sequence Network
and Attention", on generated sentence pairs of a made-up language (its words reversed in
order and spelt with accents) instead of the downloaded file: `Lang` with `word2index`,
`normalizeString` by `unicodedata` and `re.sub`, ids padded in NumPy int32 arrays and made
tensors with `torch.LongTensor(...)`, `EncoderRNN` (`nn.Embedding`, `nn.Dropout`,
`nn.GRU(batch_first=True)`), `BahdanauAttention` (`Va(tanh(Wa(query) + Ua(keys)))`,
`squeeze(2).unsqueeze(1)`, `F.softmax`, `torch.bmm`), `AttnDecoderRNN` starting from
`torch.empty(B, 1, dtype=torch.long).fill_(SOS_token)`, teacher forcing by
`target_tensor[:, i].unsqueeze(1)` and greedy steps by `topk(1)`/`squeeze(-1).detach()`,
`torch.cat` of the steps and `F.log_softmax`, `nn.NLLLoss` on `view(-1, ...)`, one Adam per
network, and `evaluate` under `torch.no_grad()` reading `topi.squeeze()` until `EOS`. Run by
PyTorch and by minigrad (passed in as `torch`) from the same weights; the `RandomSampler`'s
order comes from NumPy (the two libraries' random streams differ) and dropout is off for the
comparison."""
import re
import unicodedata

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

SOS_token = 0
EOS_token = 1
MAX_LENGTH = 7

WORDS = {"i": "jé", "you": "tü", "see": "véo", "like": "amô", "the": "lâ", "red": "rojô",
         "big": "grändé", "cat": "gätô", "dog": "pérro", "house": "casä", "car": "cöche",
         "we": "nös", "have": "tèngo", "a": "ün", "small": "pequéño", "bird": "äve"}


def make_pairs(n, seed=0):
    """English sentences of 3-6 words and their translations: each word translated, the order
    reversed, the first letter capitalised and a full stop added."""
    rng = np.random.default_rng(seed)
    subjects, verbs = ["i", "you", "we"], ["see", "like", "have"]
    articles, adjectives = ["the", "a"], ["red", "big", "small", ""]
    nouns = ["cat", "dog", "house", "car", "bird"]
    pairs = []
    for _ in range(n):
        words = [subjects[rng.integers(3)], verbs[rng.integers(3)], articles[rng.integers(2)]]
        adjective = adjectives[rng.integers(4)]
        words += ([adjective] if adjective else []) + [nouns[rng.integers(5)]]
        target = " ".join(WORDS[w] for w in reversed(words))
        pairs.append([" ".join(words).capitalize() + " .", target.capitalize() + " !"])
    return pairs


def attention_translation_program(torch, raw_pairs, orders, init=None, hidden_size=32,
                                  batch_size=16, dropout_p=0.0):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader
    device = torch.device("cpu")
    torch.manual_seed(0)
    out = {"init": {}}

    class Lang:
        def __init__(self, name):
            self.name = name
            self.word2index = {}
            self.word2count = {}
            self.index2word = {0: "SOS", 1: "EOS"}
            self.n_words = 2

        def addSentence(self, sentence):
            for word in sentence.split(" "):
                self.addWord(word)

        def addWord(self, word):
            if word not in self.word2index:
                self.word2index[word] = self.n_words
                self.word2count[word] = 1
                self.index2word[self.n_words] = word
                self.n_words += 1
            else:
                self.word2count[word] += 1

    def unicodeToAscii(s):
        return "".join(c for c in unicodedata.normalize("NFD", s)
                       if unicodedata.category(c) != "Mn")

    def normalizeString(s):
        s = unicodeToAscii(s.lower().strip())
        s = re.sub(r"([.!?])", r" \1", s)
        s = re.sub(r"[^a-zA-Z!?]+", r" ", s)
        return s.strip()

    pairs = [[normalizeString(s) for s in pair] for pair in raw_pairs]
    input_lang, output_lang = Lang("eng"), Lang("xx")
    for pair in pairs:
        input_lang.addSentence(pair[0])
        output_lang.addSentence(pair[1])
    out["pair0"] = pairs[0]
    out["n_words"] = (input_lang.n_words, output_lang.n_words)

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super(BahdanauAttention, self).__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super(AttnDecoderRNN, self).__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long,
                                        device=device).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    def indexesFromSentence(lang, sentence):
        return [lang.word2index[word] for word in sentence.split(" ")]

    def tensorFromSentence(lang, sentence):
        indexes = indexesFromSentence(lang, sentence)
        indexes.append(EOS_token)
        return torch.tensor(indexes, dtype=torch.long, device=device).view(1, -1)

    class EpochOrder:
        """The RandomSampler's place: each epoch's order from NumPy."""

        def __init__(self):
            self.epoch = 0

        def __iter__(self):
            self.epoch += 1
            return iter(orders[self.epoch - 1].tolist())

        def __len__(self):
            return len(orders[0])

    def get_dataloader(batch_size):
        n = len(pairs)
        input_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
        target_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
        for idx, (inp, tgt) in enumerate(pairs):
            inp_ids = indexesFromSentence(input_lang, inp)
            tgt_ids = indexesFromSentence(output_lang, tgt)
            inp_ids.append(EOS_token)
            tgt_ids.append(EOS_token)
            input_ids[idx, :len(inp_ids)] = inp_ids
            target_ids[idx, :len(tgt_ids)] = tgt_ids
        train_data = TensorDataset(torch.LongTensor(input_ids).to(device),
                                   torch.LongTensor(target_ids).to(device))
        train_dataloader = DataLoader(train_data, sampler=EpochOrder(), batch_size=batch_size)
        return train_dataloader

    def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer,
                    criterion):
        total_loss = 0
        for data in dataloader:
            input_tensor, target_tensor = data
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)),
                             target_tensor.view(-1))
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
            step_losses.append(loss.item())
        return total_loss / len(dataloader)

    def train(train_dataloader, encoder, decoder, n_epochs, learning_rate=0.001):
        encoder_optimizer = optim.Adam(encoder.parameters(), lr=learning_rate)
        decoder_optimizer = optim.Adam(decoder.parameters(), lr=learning_rate)
        criterion = nn.NLLLoss()
        return [train_epoch(train_dataloader, encoder, decoder, encoder_optimizer,
                            decoder_optimizer, criterion) for epoch in range(1, n_epochs + 1)]

    def evaluate(encoder, decoder, sentence, input_lang, output_lang):
        with torch.no_grad():
            input_tensor = tensorFromSentence(input_lang, sentence)
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs,
                                                                    encoder_hidden)
            _, topi = decoder_outputs.topk(1)
            decoded_ids = topi.squeeze()
            decoded_words = []
            for idx in decoded_ids:
                if idx.item() == EOS_token:
                    decoded_words.append("<EOS>")
                    break
                decoded_words.append(output_lang.index2word[idx.item()])
        return decoded_words, decoder_attn

    encoder = EncoderRNN(input_lang.n_words, hidden_size, dropout_p).to(device)
    decoder = AttnDecoderRNN(hidden_size, output_lang.n_words, dropout_p).to(device)
    for name, model in (("encoder", encoder), ("decoder", decoder)):
        if init is not None:
            model.load_state_dict({k: torch.from_numpy(v) for k, v in init[name].items()})
        out["init"][name] = state_numpy(model)

    train_dataloader = get_dataloader(batch_size)
    step_losses = []
    out["epoch_losses"] = train(train_dataloader, encoder, decoder, len(orders),
                                learning_rate=0.01)
    out["step_losses"] = step_losses

    encoder.eval()
    decoder.eval()
    out["translations"], out["attentions"] = [], []
    for pair in pairs[:4]:
        output_words, attentions = evaluate(encoder, decoder, pair[0], input_lang, output_lang)
        out["translations"].append(" ".join(output_words))
        out["attentions"].append(attentions.numpy().copy())
    out["attention_shape"] = tuple(attentions.shape)
    return out


def test_attention_translation_trains_the_same_in_both(torch):
    raw_pairs = make_pairs(96)
    rng = np.random.default_rng(1)
    orders = [rng.permutation(len(raw_pairs)) for _ in range(5)]
    expected, got = run_both(attention_translation_program, torch, raw_pairs, orders)
    assert got["pair0"] == expected["pair0"]
    assert got["n_words"] == expected["n_words"]
    assert_curves_match("translation", expected["step_losses"], got["step_losses"], rtol=2e-3,
                        every=6)
    np.testing.assert_allclose(got["epoch_losses"], expected["epoch_losses"], rtol=2e-3)
    assert got["translations"] == expected["translations"]
    for want, have in zip(expected["attentions"], got["attentions"]):
        np.testing.assert_allclose(have, want, rtol=1e-3, atol=1e-5)
    assert got["attention_shape"] == expected["attention_shape"]
    assert expected["epoch_losses"][-1] < 0.5 * expected["epoch_losses"][0]  # it learns
