"""The character-level GPT of the popular video lectures, written once in ordinary PyTorch style.

`build_gpt(torch, vocab_size, ...)` returns the model; `torch` may be the real PyTorch or
minigrad passed in its place. bench/small_models.py times it with both libraries and
tests/test_port_gpt.py checks that both train it the same way from the same weights.

The program: per-head key/query/value projections, a lower-triangular `tril` buffer,
`masked_fill` with -inf, softmax, dropout on the attention weights, heads concatenated and
projected, a ReLU MLP, pre-LayerNorm residual blocks, learned position embeddings, weights
drawn from N(0, 0.02), and `generate()`, which feeds the last `block_size` tokens back in and
draws the next one with `torch.multinomial`.
"""
from __future__ import annotations


def build_gpt(torch, vocab_size, n_embd=64, n_head=4, n_layer=2, block_size=32, dropout=0.1):
    """The GPT language model over `vocab_size` characters, built with `torch`'s modules."""
    nn = torch.nn
    F = torch.nn.functional

    class Head(nn.Module):
        """One head of causal self-attention."""

        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)    # (B, T, hs)
            q = self.query(x)  # (B, T, hs)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, T)
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            wei = self.dropout(wei)
            v = self.value(x)
            return wei @ v  # (B, T, hs)

    class MultiHeadAttention(nn.Module):
        """Several heads side by side, concatenated and projected back to n_embd."""

        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            return self.dropout(self.proj(out))

    class FeedForward(nn.Module):
        """A position-wise MLP: widen 4x, ReLU, narrow back."""

        def __init__(self, n):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n, 4 * n), nn.ReLU(), nn.Linear(4 * n, n),
                                     nn.Dropout(dropout))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        """Communication (attention) then computation (MLP), each pre-normed and residual."""

        def __init__(self, n, n_head):
            super().__init__()
            self.sa = MultiHeadAttention(n_head, n // n_head)
            self.ffwd = FeedForward(n)
            self.ln1 = nn.LayerNorm(n)
            self.ln2 = nn.LayerNorm(n)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPTLanguageModel(nn.Module):
        """Token and position embeddings, the blocks, a final LayerNorm and the LM head."""

        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block(n_embd, n_head) for _ in range(n_layer)])
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
            tok_emb = self.token_embedding_table(idx)  # (B, T, C)
            pos_emb = self.position_embedding_table(torch.arange(T, device=idx.device))
            x = self.blocks(tok_emb + pos_emb)
            logits = self.lm_head(self.ln_f(x))  # (B, T, vocab_size)
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            loss = F.cross_entropy(logits.view(B * T, C), targets.view(B * T))
            return logits, loss

        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                idx_cond = idx[:, -block_size:]
                logits, _ = self(idx_cond)
                probs = F.softmax(logits[:, -1, :], dim=-1)  # the last position: (B, C)
                idx_next = torch.multinomial(probs, num_samples=1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    return GPTLanguageModel()
