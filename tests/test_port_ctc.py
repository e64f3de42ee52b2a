"""Port test: a small CTC recogniser as speech and handwriting tutorials write it: a Conv1d
front end over (N, T, features) frames, a bidirectional LSTM, a Linear to the classes plus
blank, `log_softmax(2)` and `.permute(1, 0, 2)` to (T, N, C), `nn.CTCLoss(blank=0,
zero_infinity=True)` against padded targets with per-sequence input and target lengths,
`clip_grad_norm_` and Adam, then greedy decoding (argmax, merge repeats, drop blanks). The
sequences are generated: each label is a run of frames of its own feature pattern, runs of
random length with silences between, padded to the batch's longest. The same source runs under
PyTorch and under minigrad (passed in as `torch`) from the same weights: the losses, the
decoded strings and the trained weights must agree."""
import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def ctc_program(torch, batches, init=None, n_feats=8, n_classes=6, hidden=16, lr=1e-2):
    nn = torch.nn
    torch.manual_seed(0)

    class Recogniser(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv1d(n_feats, hidden, kernel_size=3, padding=1),
                                      nn.ReLU())
            self.rnn = nn.LSTM(hidden, hidden, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, n_classes)

        def forward(self, x):                                  # x: (N, T, features)
            x = self.conv(x.transpose(1, 2)).transpose(1, 2)   # (N, T, hidden)
            x, _ = self.rnn(x)
            return self.fc(x).log_softmax(2)                   # (N, T, classes)

    def greedy_decode(log_probs, lengths):
        best = log_probs.argmax(2)                             # (N, T)
        out = []
        for seq, n in zip(best.tolist(), lengths.tolist()):
            labels, prev = [], 0
            for k in seq[:n]:
                if k != prev and k != 0:
                    labels.append(k)
                prev = k
            out.append(labels)
        return out

    model = Recogniser()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    criterion = nn.CTCLoss(blank=0, zero_infinity=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses, norms = [], []
    model.train()
    for x, targets, input_lengths, target_lengths in batches:
        x, targets = torch.from_numpy(x), torch.from_numpy(targets)
        input_lengths = torch.tensor(input_lengths, dtype=torch.long)
        target_lengths = torch.tensor(target_lengths, dtype=torch.long)
        optimizer.zero_grad()
        log_probs = model(x).permute(1, 0, 2)                  # (T, N, C) for CTCLoss
        loss = criterion(log_probs, targets, input_lengths, target_lengths)
        loss.backward()
        norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), 5.0)))
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    x, targets, input_lengths, target_lengths = batches[0]
    with torch.no_grad():
        decoded = greedy_decode(model(torch.from_numpy(x)), torch.tensor(input_lengths))
    return {"init": start, "losses": losses, "norms": norms, "decoded": decoded,
            "final": state_numpy(model)}


def utterances(n, seed, n_feats=8, n_labels=5):
    """A batch of n sequences (N, T, features) with padded targets (N, S) and the lengths:
    each label a run of 2-4 frames of its own feature pattern, silences of 0-2 frames."""
    rng = np.random.default_rng(seed)
    patterns = rng.normal(0, 1, (n_labels + 1, n_feats))
    seqs, labels = [], []
    for _ in range(n):
        target = rng.integers(1, n_labels + 1, rng.integers(1, 5))
        frames = [patterns[0]] * rng.integers(0, 3)
        for k in target:
            frames += [patterns[k]] * rng.integers(2, 5) + [patterns[0]] * rng.integers(0, 3)
        seqs.append(np.array(frames))
        labels.append(target)
    t_max, s_max = max(len(s) for s in seqs), max(len(t) for t in labels)
    x = np.zeros((n, t_max, n_feats), np.float32)
    targets = np.zeros((n, s_max), np.int64)
    for i, (s, t) in enumerate(zip(seqs, labels)):
        x[i, :len(s)] = s + rng.normal(0, 0.3, s.shape)
        targets[i, :len(t)] = t
    return x, targets, [len(s) for s in seqs], [len(t) for t in labels]


def test_ctc_recogniser_trains_the_same_in_both(torch):
    batches = [utterances(12, seed) for seed in range(8)]
    expected, got = run_both(ctc_program, torch, batches)
    # Adam divides by each gradient's running size, so rounding grows a little step by step
    assert_curves_match("ctc", expected["losses"], got["losses"], rtol=1e-4)
    np.testing.assert_allclose(got["norms"], expected["norms"], rtol=1e-4)
    assert got["decoded"] == expected["decoded"]
    assert_states_match(expected["final"], got["final"], rtol=1e-3, atol=1e-4)
    assert expected["losses"][-1] < 0.8 * expected["losses"][0]  # it learns
