"""A word2vec-style skip-gram with negative sampling on a generated corpus: nn.Embedding for
centre and context words, negatives drawn with torch.multinomial over unigram counts ** 0.75,
window offsets drawn by torch.randint, the loss built of F.logsigmoid, plain Adam."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(corpus|unigram|negatives|pairs)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)
topics = [["cat", "dog", "pet", "fur", "paw"], ["car", "road", "wheel", "drive", "fuel"],
          ["sun", "moon", "star", "sky", "night"]]
vocab = sorted({w for t in topics for w in t} | {"the", "a", "and"})
stoi = {w: i for i, w in enumerate(vocab)}
corpus = []
for _ in range(120):
    topic = topics[torch.randint(0, 3, (1,)).item()]
    for j in torch.randint(0, 5, (6,)).tolist():
        corpus.append(stoi[topic[j]])
        if torch.rand(1).item() < 0.3:
            corpus.append(stoi[["the", "a", "and"][torch.randint(0, 3, (1,)).item()]])
corpus = torch.tensor(corpus)
print("corpus", len(corpus), corpus[:12].tolist())
counts = torch.bincount(corpus, minlength=len(vocab)).float()
unigram = counts ** 0.75
unigram = unigram / unigram.sum()
print("unigram", unigram[:5].tolist())


class SkipGram(nn.Module):
    def __init__(self, V, D):
        super().__init__()
        self.centre = nn.Embedding(V, D)
        self.context = nn.Embedding(V, D)
        nn.init.uniform_(self.centre.weight, -0.5 / D, 0.5 / D)
        nn.init.zeros_(self.context.weight)

    def forward(self, centre, context, negatives):
        c = self.centre(centre)                      # (B, D)
        pos = (c * self.context(context)).sum(-1)    # (B,)
        neg = torch.bmm(self.context(negatives), c.unsqueeze(2)).squeeze(2)  # (B, K)
        return -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(-1)).mean()


model = SkipGram(len(vocab), 12)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
window, K, B = 2, 4, 64
for step in range(60):
    centre_pos = torch.randint(window, len(corpus) - window, (B,))
    offsets = torch.randint(1, window + 1, (B,)) * (torch.randint(0, 2, (B,)) * 2 - 1)
    centre, context = corpus[centre_pos], corpus[centre_pos + offsets]
    negatives = torch.multinomial(unigram, B * K, replacement=True).view(B, K)
    if step == 0:
        print("pairs", centre[:6].tolist(), context[:6].tolist())
        print("negatives", negatives[0].tolist())
    loss = model(centre, context, negatives)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 0:
        print(step, f"{loss.item():.6f}")

with torch.no_grad():
    emb = F.normalize(model.centre.weight, dim=1)
    sims = emb @ emb.T
    for w in ["cat", "car", "moon"]:
        top = sims[stoi[w]].topk(3)
        print(w, [vocab[i] for i in top.indices.tolist()], top.values.round(decimals=4).tolist())
    print("cosine", F.cosine_similarity(emb[stoi["cat"]], emb[stoi["dog"]], dim=0).item())
