"""Speech-style sequence labelling with CTC: generated "utterances" (each label a short burst
of a label-specific feature pattern plus noise, of random lengths), a 2-layer bidirectional
LSTM over packed sequences, F.log_softmax over classes of its time-major output, nn.CTCLoss
with blank 0 and zero_infinity, then greedy decoding with unique_consecutive and a
character error rate by edit distance."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(21)
n_labels, feat = 5, 8  # labels 1..5; 0 is CTC's blank
patterns = torch.randn(n_labels + 1, feat)


def utterance():
    length = int(torch.randint(2, 5, ()).item())
    labels = torch.randint(1, n_labels + 1, (length,))
    frames = []
    for lab in labels.tolist():
        repeat = int(torch.randint(2, 4, ()).item())
        frames.append(patterns[lab].expand(repeat, feat))
        frames.append(patterns[0].expand(1, feat))  # a short pause
    x = torch.cat(frames) + 0.3 * torch.randn(sum(f.shape[0] for f in frames), feat)
    return x, labels


data = [utterance() for _ in range(40)]
print("data", [len(lab) for _, lab in data[:10]], [x.shape[0] for x, _ in data[:10]])


class Recognizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(feat, 24, num_layers=2, bidirectional=True)
        self.out = nn.Linear(48, n_labels + 1)

    def forward(self, x, lengths):  # x: (T, B, F), time-major
        packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
        h, _ = self.rnn(packed)
        h, _ = pad_packed_sequence(h)
        return F.log_softmax(self.out(h), dim=-1)  # (T, B, C)


def batch(items):
    xs = pad_sequence([x for x, _ in items])  # (T, B, F)
    in_lens = torch.tensor([x.shape[0] for x, _ in items])
    targets = torch.cat([lab for _, lab in items])
    tgt_lens = torch.tensor([len(lab) for _, lab in items])
    return xs, in_lens, targets, tgt_lens


def greedy(log_probs, lengths):
    best = log_probs.argmax(-1).T  # (B, T)
    out = []
    for row, n in zip(best, lengths.tolist()):
        collapsed = torch.unique_consecutive(row[:n])
        out.append(collapsed[collapsed != 0].tolist())
    return out


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
    return d[-1]


model = Recognizer()
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
train, test = data[:32], data[32:]
for epoch in range(14):
    total = 0.0
    for i in range(0, len(train), 8):
        xs, in_lens, targets, tgt_lens = batch(train[i:i + 8])
        log_probs = model(xs, in_lens)
        loss = ctc(log_probs, targets, in_lens, tgt_lens)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        total += loss.item()
    if epoch % 2 == 1:
        print("epoch", epoch, f"{total / 4:.5f}")

model.eval()
with torch.no_grad():
    xs, in_lens, targets, tgt_lens = batch(test)
    log_probs = model(xs, in_lens)
    per_seq = F.ctc_loss(log_probs, targets, in_lens, tgt_lens, reduction="none")
    hyps = greedy(log_probs, in_lens)
refs = [lab.tolist() for _, lab in test]
errors = sum(edit_distance(h, r) for h, r in zip(hyps, refs))
print("per-sequence", [round(v, 4) for v in per_seq.tolist()])
print("cer", f"{errors / sum(len(r) for r in refs):.4f}")
print("decoded", hyps[:4], refs[:4])
print("frame probs", [round(v, 5) for v in log_probs[:3, 0].exp().max(-1).values.tolist()])
