"""Port test: a small attention encoder for padded token sequences, in ordinary PyTorch style:
heads split with `view`/`transpose` from one fused qkv projection and combined by
`F.scaled_dot_product_attention` with a boolean key-padding mask (True = may attend), with
`is_causal=True`, and with an additive float mask built by `masked_fill(..., float("-inf"))`;
a learned position table as an `nn.Parameter`; AdamW with two parameter groups (no weight
decay for biases, norms and embeddings); a linear warm-up and decay written as a `LambdaLR`;
cross entropy with label smoothing and `ignore_index`. Run by PyTorch and by minigrad (passed in
as `torch`) from the same weights: losses, attention outputs and predictions must agree."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def sdpa_program(torch, ids_batches, label_batches, init=None, vocab=10, d_model=24, n_head=4,
                 max_len=12, pad=0):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)

    class SelfAttention(nn.Module):
        def __init__(self, d_model, n_head, causal=False):
            super().__init__()
            self.n_head, self.causal = n_head, causal
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)

        def forward(self, x, key_padding=None, additive=None):
            B, T, C = x.size()
            q, k, v = self.qkv(x).split(C, dim=2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if self.causal:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            elif additive is not None:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=additive)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=key_padding)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self, d_model, n_head, causal=False):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d_model)
            self.attn = SelfAttention(d_model, n_head, causal)
            self.ln_2 = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(approximate="tanh"),
                                     nn.Linear(2 * d_model, d_model))

        def forward(self, x, **masks):
            x = x + self.attn(self.ln_1(x), **masks)
            return x + self.mlp(self.ln_2(x))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d_model, padding_idx=pad)
            self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
            self.causal = Block(d_model, n_head, causal=True)
            self.padded = Block(d_model, n_head)
            self.additive = Block(d_model, n_head)
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab)

        def forward(self, ids):
            B, T = ids.shape
            keep = ids != pad                                    # (B, T)
            key_padding = keep[:, None, None, :]                 # (B, 1, 1, T): True attends
            additive = torch.zeros(B, 1, T, T).masked_fill(~key_padding, float("-inf"))
            x = self.tok(ids) + self.pos[:, :T]
            x = self.causal(x)
            x = self.padded(x, key_padding=key_padding)
            x = self.additive(x, additive=additive)
            return self.head(self.ln_f(x))

    model = Encoder()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    else:
        nn.init.normal_(model.pos, std=0.02)
    start = state_numpy(model)

    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.dim() < 2 or "ln" in name or name in ("tok.weight", "pos") else
         decay).append(p)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
    total, warmup = len(ids_batches), 4

    def warmup_then_linear(step):
        if step < warmup:
            return float(step + 1) / warmup
        return max(0.0, float(total - step) / float(max(1, total - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_then_linear)

    losses = []
    model.train()
    for ids_np, labels_np in zip(ids_batches, label_batches):
        ids, labels = torch.from_numpy(ids_np), torch.from_numpy(labels_np)
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1),
                               ignore_index=-100, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        ids = torch.from_numpy(ids_batches[0])
        logits = model(ids)
        predictions = logits.argmax(-1).masked_fill(ids == pad, -1)
    return {"init": start, "losses": losses, "logits": logits.numpy(),
            "predictions": predictions.tolist(), "final": state_numpy(model),
            "groups": [len(g["params"]) for g in optimizer.param_groups],
            "lrs": [g["lr"] for g in optimizer.param_groups]}


def reverse_task(rng, n_batches, batch=8, max_len=12, vocab=10):
    """Padded sequences of ids 1..vocab-1 whose target at each real position is the id at the
    mirrored position (the task needs attention in both directions); -100 at the padding."""
    ids, labels = [], []
    for _ in range(n_batches):
        lengths = rng.integers(3, max_len + 1, size=batch)
        x = np.zeros((batch, max_len), dtype=np.int64)
        y = np.full((batch, max_len), -100, dtype=np.int64)
        for b, n in enumerate(lengths):
            x[b, :n] = rng.integers(1, vocab, size=n)
            y[b, :n] = x[b, :n][::-1]
        ids.append(x)
        labels.append(y)
    return ids, labels


def test_attention_encoder_trains_the_same_in_both(torch):
    ids, labels = reverse_task(np.random.default_rng(11), n_batches=16)
    expected, got = run_both(sdpa_program, torch, ids, labels)
    assert_curves_match("sdpa", expected["losses"], got["losses"], rtol=1e-4, every=2)
    assert got["groups"] == expected["groups"]
    np.testing.assert_allclose(got["lrs"], expected["lrs"], rtol=1e-12)
    np.testing.assert_allclose(got["logits"], expected["logits"], rtol=1e-3, atol=1e-4)
    assert got["predictions"] == expected["predictions"]
    for k, v in expected["final"].items():
        theirs, ours = v, got["final"][k]
        if k.endswith("qkv.bias"):
            # the keys' bias adds the same q.b to every score of a query, which softmax
            # ignores: its gradient is rounding noise in both libraries, and Adam turns
            # noise into full-size steps, so only the queries' and values' biases compare
            d = v.shape[0] // 3
            theirs, ours = np.delete(v, np.s_[d:2 * d]), np.delete(ours, np.s_[d:2 * d])
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-5, err_msg=k)
