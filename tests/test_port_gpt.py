"""Port test: a character-level GPT in the style of the popular video lectures (heads with a
registered causal `tril` buffer, pre-norm blocks, AdamW, multinomial sampling), run by
PyTorch and by minigrad (passed in as `torch`) from the same weights."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

TEXT = ("First Citizen: Before we proceed any further, hear me speak. All: Speak, speak. "
        "First Citizen: You are all resolved rather to die than to famish? All: Resolved. "
        "resolved. First Citizen: First, you know Caius Marcius is chief enemy to the people.")


def gpt_program(torch, text, starts, init=None, block_size=8, n_embd=32, n_head=4, n_layer=2,
                dropout=0.0, learning_rate=3e-3):
    nn = torch.nn
    F = torch.nn.functional
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(1337)

    chars = sorted(list(set(text)))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731
    decode = lambda l: "".join([itos[i] for i in l])  # noqa: E731, E741

    data = torch.tensor(encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    def get_batch(split, ix=None):
        data = train_data if split == "train" else val_data
        if ix is None:
            ix = torch.randint(len(data) - block_size, (len(starts[0]),))
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        return x.to(device), y.to(device)

    class Head(nn.Module):
        """one head of self-attention"""

        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)
            q = self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            wei = self.dropout(wei)
            v = self.value(x)
            return wei @ v

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            return self.dropout(self.proj(out))

    class FeedFoward(nn.Module):
        def __init__(self, n_embd):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(),
                                     nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            head_size = n_embd // n_head
            self.sa = MultiHeadAttention(n_head, head_size)
            self.ffwd = FeedFoward(n_embd)
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            x = x + self.ffwd(self.ln2(x))
            return x

    class GPTLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size)
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)
            pos_emb = self.position_embedding_table(torch.arange(T, device=device))
            x = tok_emb + pos_emb
            x = self.blocks(x)
            x = self.ln_f(x)
            logits = self.lm_head(x)
            if targets is None:
                loss = None
            else:
                B, T, C = logits.shape
                logits = logits.view(B * T, C)
                targets = targets.view(B * T)
                loss = F.cross_entropy(logits, targets)
            return logits, loss

        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                idx_cond = idx[:, -block_size:]
                logits, loss = self(idx_cond)
                logits = logits[:, -1, :]
                probs = F.softmax(logits, dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    model = GPTLanguageModel()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    m = model  # model.to(device) is left out: minigrad's Module.to takes dtypes only (reported)
    n_params = sum(p.numel() for p in m.parameters())

    @torch.no_grad()
    def estimate_loss(eval_iters=3):
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    losses = []
    for iter, ix in enumerate(starts):
        if iter % 10 == 0:
            estimate_loss()  # random batches: run for coverage, not compared
        xb, yb = get_batch("train", torch.from_numpy(ix))
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    context = torch.zeros((1, 1), dtype=torch.long, device=device)
    sample = decode(m.generate(context, max_new_tokens=20)[0].tolist())
    return {"init": start, "losses": losses, "n_params": n_params, "sample": sample,
            "vocab": chars}


def test_gpt_trains_the_same_in_both(torch):
    n_train = int(0.9 * len(TEXT))
    rng = np.random.default_rng(0)
    starts = [rng.integers(0, n_train - 8, 16) for _ in range(30)]
    expected, got = run_both(gpt_program, torch, TEXT, starts)
    assert got["n_params"] == expected["n_params"]
    assert_curves_match("gpt", expected["losses"], got["losses"], rtol=2e-3, every=3)
    assert len(got["sample"]) == 21 and set(got["sample"]) <= set(got["vocab"])
    assert expected["losses"][-1] < 0.8 * expected["losses"][0]  # it learns
