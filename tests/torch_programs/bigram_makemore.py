"""A bigram character model in the style of makemore: a torch.Generator seeded once, the
weights drawn with torch.randn(generator=g), one-hot inputs, plain gradient descent on
p.data, then names sampled with torch.multinomial(generator=g)."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^W row
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
syllables = ["ka", "ri", "mo", "na", "le", "to", "sa", "vi", "el", "an"]
names = []
for _ in range(300):
    n = torch.randint(1, 4, (1,), generator=g).item()
    parts = torch.randint(0, len(syllables), (n,), generator=g).tolist()
    names.append("".join(syllables[i] for i in parts))
chars = sorted(set("".join(names)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)

xs, ys = [], []
for w in names:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs, ys = torch.tensor(xs), torch.tensor(ys)
print("examples", xs.nelement(), "vocab", V)

W = torch.randn((V, V), generator=g, requires_grad=True)
print("W row", W[0, :6].tolist())
for k in range(30):
    xenc = F.one_hot(xs, num_classes=V).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(xs.nelement()), ys].log().mean() + 0.01 * (W ** 2).mean()
    if k % 5 == 0:
        print(k, f"{loss.item():.6f}")
    W.grad = None
    loss.backward()
    W.data += -30 * W.grad

for i in range(8):
    out, ix = [], 0
    while True:
        xenc = F.one_hot(torch.tensor([ix]), num_classes=V).float()
        p = (xenc @ W).exp()
        p = p / p.sum(1, keepdims=True)
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        if ix == 0 or len(out) > 20:
            break
        out.append(itos[ix])
    print("".join(out) + ".")
