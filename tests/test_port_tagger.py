"""Port test: part-of-speech taggers, as PyTorch's "Sequence Models and LSTM Networks" tutorial
and the NER/POS blog posts after it write them. The tutorial's tagger: `word_to_ix` and
`tag_to_ix` built from the sentences, `prepare_sequence` returning a `torch.long` tensor, one
sentence at a time through `nn.LSTM` fed `embeds.view(len(sentence), 1, -1)`, `F.log_softmax`
+ `nn.NLLLoss`, SGD(lr=0.1), `model.zero_grad()`, scores under `torch.no_grad()` before and
after training. The batched tagger: sentences sorted by length, words padded by `pad_sequence`
and tags padded with -100, `nn.Embedding.from_pretrained(vectors, freeze=False,
padding_idx=0)`, a bidirectional LSTM through `pack_padded_sequence` (sorted, the
default `enforce_sorted=True`) and `pad_packed_sequence(total_length=...)`, `Dropout` off,
`CrossEntropyLoss(ignore_index=-100)` over `view(-1, n_tags)`, Adam, `clip_grad_norm_`, and
per-token accuracy counted through a mask (`tags != -100`, `masked_select`), with the predicted
tags read back as strings. Run by PyTorch and by minigrad (passed in as `torch`) from the same
weights."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

GRAMMAR = {"DET": ["the", "a", "every"], "NN": ["dog", "cat", "apple", "book", "man", "park"],
           "V": ["ate", "read", "saw", "likes"], "ADJ": ["big", "red", "old"],
           "P": ["in", "near"]}
PATTERNS = [["DET", "NN", "V", "DET", "NN"], ["DET", "ADJ", "NN", "V", "DET", "NN"],
            ["DET", "NN", "V", "DET", "ADJ", "NN", "P", "DET", "NN"], ["NN", "V", "NN"],
            ["DET", "NN", "V"]]


def sentences(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        tags = PATTERNS[rng.integers(len(PATTERNS))]
        out.append(([GRAMMAR[t][rng.integers(len(GRAMMAR[t]))] for t in tags], list(tags)))
    return out


def tutorial_program(torch, training_data, init=None, epochs=3, EMBEDDING_DIM=6, HIDDEN_DIM=6):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    torch.manual_seed(1)

    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)

    word_to_ix = {}
    for sent, tags in training_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2, "ADJ": 3, "P": 4}

    class LSTMTagger(nn.Module):
        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super(LSTMTagger, self).__init__()
            self.hidden_dim = hidden_dim
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            tag_scores = F.log_softmax(tag_space, dim=1)
            return tag_scores

    model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        before = model(inputs).numpy().copy()

    losses = []
    for epoch in range(epochs):
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)
            tag_scores = model(sentence_in)
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())

    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        after = model(inputs)
    return {"init": start, "losses": losses, "before": before, "after": after.numpy(),
            "tags": after.argmax(dim=1).tolist()}


def batched_program(torch, train, test, vectors, batches, init=None, hidden=12, n_layers=1):
    nn = torch.nn
    rnn = torch.nn.utils.rnn
    torch.manual_seed(0)
    PAD, UNK, IGNORE = 0, 1, -100
    words = sorted({w for s, _ in train for w in s})
    word2idx = {"<pad>": PAD, "<unk>": UNK, **{w: i + 2 for i, w in enumerate(words)}}
    tag_names = sorted({t for _, ts in train for t in ts})
    tag2idx = {t: i for i, t in enumerate(tag_names)}
    idx2tag = {i: t for t, i in tag2idx.items()}

    def encode(batch):
        batch = sorted(batch, key=lambda pair: len(pair[0]), reverse=True)
        xs = [torch.tensor([word2idx.get(w, UNK) for w in s]) for s, _ in batch]
        ys = [torch.tensor([tag2idx[t] for t in ts]) for _, ts in batch]
        lengths = torch.tensor([len(s) for s, _ in batch])
        return (rnn.pad_sequence(xs, batch_first=True, padding_value=PAD),
                rnn.pad_sequence(ys, batch_first=True, padding_value=IGNORE), lengths, batch)

    class BiLSTMTagger(nn.Module):
        def __init__(self, embeddings, hidden_dim, n_tags, n_layers, dropout=0.0):
            super().__init__()
            self.embedding = nn.Embedding.from_pretrained(embeddings, freeze=False,
                                                          padding_idx=PAD)
            self.lstm = nn.LSTM(embeddings.shape[1], hidden_dim, num_layers=n_layers,
                                bidirectional=True, batch_first=True,
                                dropout=dropout if n_layers > 1 else 0)
            self.dropout = nn.Dropout(dropout)
            self.fc = nn.Linear(hidden_dim * 2, n_tags)

        def forward(self, text, text_lengths):
            embedded = self.dropout(self.embedding(text))
            packed = rnn.pack_padded_sequence(embedded, text_lengths.cpu(), batch_first=True)
            packed_output, (hidden, cell) = self.lstm(packed)
            outputs, _ = rnn.pad_packed_sequence(packed_output, batch_first=True,
                                                 total_length=text.shape[1])
            return self.fc(self.dropout(outputs))

    model = BiLSTMTagger(torch.tensor(vectors), hidden, len(tag2idx), n_layers)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    criterion = nn.CrossEntropyLoss(ignore_index=IGNORE)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)

    def categorical_accuracy(preds, y):
        max_preds = preds.argmax(dim=1, keepdim=True)
        non_pad_elements = (y != IGNORE).nonzero()
        correct = max_preds[non_pad_elements].squeeze(1).eq(y[non_pad_elements])
        return correct.sum() / y[non_pad_elements].shape[0]

    losses, accs, norms = [], [], []
    for batch in batches:
        model.train()
        text, tags, lengths, _ = encode([train[i] for i in batch])
        optimizer.zero_grad()
        predictions = model(text, lengths)
        predictions = predictions.view(-1, predictions.shape[-1])
        tags = tags.view(-1)
        loss = criterion(predictions, tags)
        acc = categorical_accuracy(predictions, tags)
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0).item())
        optimizer.step()
        losses.append(loss.item())
        accs.append(acc.item())

    model.eval()
    with torch.no_grad():
        text, tags, lengths, ordered = encode(test)
        logits = model(text, lengths)
        mask = tags != IGNORE
        preds = logits.argmax(-1)
        correct = (preds == tags).masked_select(mask).sum().item()
        token_acc = correct / mask.sum().item()
        predicted = [[idx2tag[i] for i in row[:n]]
                     for row, n in zip(preds.tolist(), lengths.tolist())]
    return {"init": start, "losses": losses, "accs": accs, "norms": norms,
            "token_acc": token_acc, "predicted": predicted, "gold": [ts for _, ts in ordered],
            "logits": logits.numpy(), "pad_rows": int((~mask).sum().item()),
            "embedding_pad": state_numpy(model)["embedding.weight"][PAD]}


def test_tutorial_tagger_trains_the_same_in_both(torch):
    data = sentences(12, 0)
    expected, got = run_both(tutorial_program, torch, data)
    # plain SGD, one sentence at a time: float32 rounding apart
    assert_curves_match("tutorial tagger", expected["losses"], got["losses"], rtol=1e-5, every=4)
    np.testing.assert_allclose(got["before"], expected["before"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["after"], expected["after"], rtol=1e-5, atol=1e-6)
    assert got["tags"] == expected["tags"]
    assert np.mean(expected["losses"][-12:]) < np.mean(expected["losses"][:12])


def test_batched_bilstm_tagger_trains_the_same_in_both(torch):
    train, test = sentences(48, 1), sentences(16, 2)
    rng = np.random.default_rng(3)
    vocab = len({w for s, _ in train for w in s}) + 2
    vectors = rng.normal(0, 1, (vocab, 8)).astype(np.float32)
    vectors[0] = 0.0
    batches = [rng.permutation(48)[:12] for _ in range(20)]
    expected, got = run_both(batched_program, torch, train, test, vectors, batches)
    # Adam's step divides by the gradient's running size: weights whose gradient is about zero
    # move by each library's rounding; the losses stay within 1e-5
    assert_curves_match("bilstm tagger", expected["losses"], got["losses"], rtol=1e-5, every=3)
    np.testing.assert_allclose(got["accs"], expected["accs"], rtol=1e-6)
    np.testing.assert_allclose(got["norms"], expected["norms"], rtol=1e-5)
    np.testing.assert_allclose(got["logits"], expected["logits"], rtol=1e-4, atol=1e-4)
    assert got["token_acc"] == expected["token_acc"]
    assert got["predicted"] == expected["predicted"]
    assert got["pad_rows"] == expected["pad_rows"] > 0
    # padding_idx: the pad row gets no gradient, so it stays zero
    assert not got["embedding_pad"].any() and not expected["embedding_pad"].any()
    assert expected["token_acc"] > 0.8 and expected["losses"][-1] < expected["losses"][0]
