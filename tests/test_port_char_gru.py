"""Port test: a character-level GRU language model in the style of char-rnn tutorials: a
vocabulary from `sorted(set(text))`, `nn.Embedding` -> two-layer `nn.GRU(batch_first=True)` ->
`nn.Linear`, cross entropy over `(B*T, V)` logits from `view(-1, V)`, truncated
backpropagation through time that carries the hidden state across batches and cuts it with
`detach()` (and, in the older style, `detach_()`), `clip_grad_norm_`, perplexity from
`math.exp`, a sequence log-likelihood by `log_softmax(...).gather(...)`, the same network
stepped one character at a time through `nn.GRUCell`s loaded from the GRU's weights, and
sampling under `@torch.no_grad()`: greedy, and temperature + top-k with `torch.multinomial`
under a seeded `torch.Generator`. Run by PyTorch and by minigrad (passed in as `torch`) from
the same weights: losses, gradient norms, likelihoods and greedy text must agree; the sampled
text comes from each library's own random stream, so it must repeat under the same seed and
draw only top-k characters."""
import math

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

TEXT = "the cat sat on the mat. the dog ate the hat. a cat and a dog sat. " * 6


def char_gru_program(torch, text, starts, init=None, seq_len=16, top_k=3):
    nn = torch.nn
    F = torch.nn.functional
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    vocab = len(chars)
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    torch.manual_seed(1337)

    class CharRNN(nn.Module):
        def __init__(self, vocab, emb=16, hidden=32, layers=2):
            super().__init__()
            self.hidden, self.layers = hidden, layers
            self.embed = nn.Embedding(vocab, emb)
            self.rnn = nn.GRU(emb, hidden, num_layers=layers, batch_first=True)
            self.fc = nn.Linear(hidden, vocab)

        def forward(self, x, h=None):
            out, h = self.rnn(self.embed(x), h)
            return self.fc(out), h

        def init_hidden(self, batch):
            return torch.zeros(self.layers, batch, self.hidden)

    model = CharRNN(vocab)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

    losses, grad_norms = [], []
    h = model.init_hidden(len(starts[0]))
    for step, batch_starts in enumerate(starts):
        x = torch.stack([data[i:i + seq_len] for i in batch_starts])
        y = torch.stack([data[i + 1:i + seq_len + 1] for i in batch_starts])
        if step % 2:
            h.detach_()
        else:
            h = h.detach()
        model.train()
        logits, h = model(x, h)
        loss = F.cross_entropy(logits.view(-1, vocab), y.view(-1))
        optimizer.zero_grad()
        loss.backward()
        grad_norms.append(nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
        optimizer.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        x, y = data[:-1].unsqueeze(0), data[1:].unsqueeze(0)
        logits, _ = model(x)
        eval_loss = F.cross_entropy(logits.view(-1, vocab), y.view(-1)).item()
        token_logp = F.log_softmax(logits, dim=-1).gather(-1, y.unsqueeze(-1)).squeeze(-1)

        # the GRU stepped by hand: one GRUCell per layer, sharing the GRU's weights
        cells = nn.ModuleList([nn.GRUCell(16 if l == 0 else 32, 32) for l in range(2)])
        for l, cell in enumerate(cells):
            cell.weight_ih.copy_(getattr(model.rnn, f"weight_ih_l{l}"))
            cell.weight_hh.copy_(getattr(model.rnn, f"weight_hh_l{l}"))
            cell.bias_ih.copy_(getattr(model.rnn, f"bias_ih_l{l}"))
            cell.bias_hh.copy_(getattr(model.rnn, f"bias_hh_l{l}"))
        hs = [torch.zeros(1, 32) for _ in cells]
        stepped = []
        for t in range(20):
            inp = model.embed(x[:, t])
            for l, cell in enumerate(cells):
                hs[l] = cell(inp, hs[l])
                inp = hs[l]
            stepped.append(model.fc(inp))
        stepped = torch.stack(stepped, dim=1)

    @torch.no_grad()
    def generate(prefix, n, temperature=1.0, generator=None, greedy=False):
        idx = torch.tensor([[stoi[c] for c in prefix]])
        logits, h = model(idx)
        out, allowed = list(prefix), []
        for _ in range(n):
            logits = logits[:, -1, :] / temperature
            v, _ = torch.topk(logits, top_k)
            allowed.append(sorted(torch.topk(logits, top_k).indices[0].tolist()))
            logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
            probs = F.softmax(logits, dim=-1)
            if greedy:
                nxt = probs.argmax(dim=-1, keepdim=True)
            else:
                nxt = torch.multinomial(probs, num_samples=1, generator=generator)
            out.append(itos[nxt.item()])
            logits, h = model(nxt, h)
        return "".join(out), allowed

    greedy, _ = generate("the ", 24, greedy=True)
    sample, allowed = generate("the ", 24, 0.8, torch.Generator().manual_seed(7))
    again, _ = generate("the ", 24, 0.8, torch.Generator().manual_seed(7))
    in_top_k = all(stoi[c] in a for c, a in zip(sample[4:], allowed))
    return {"init": start, "losses": losses, "grad_norms": grad_norms,
            "eval_loss": eval_loss, "perplexity": math.exp(eval_loss),
            "token_logp": token_logp.numpy(), "full_logits": logits[:, :20].numpy(),
            "stepped_logits": stepped.numpy(), "greedy": greedy, "sample": sample,
            "repeats": sample == again, "in_top_k": in_top_k,
            "h_shape": tuple(h.shape), "h_is_leaf": h.is_leaf}


def test_char_gru_trains_and_samples_the_same_in_both(torch):
    rng = np.random.default_rng(0)
    starts = [rng.integers(0, len(TEXT) - 17, 4) for _ in range(12)]
    expected, got = run_both(char_gru_program, torch, TEXT, starts)
    assert_curves_match("char_gru", expected["losses"], got["losses"], rtol=1e-4, every=2)
    assert_curves_match("char_gru grad norm", expected["grad_norms"], got["grad_norms"],
                        rtol=1e-4, every=2)
    assert expected["losses"][-1] < 0.9 * expected["losses"][0]  # it learns
    np.testing.assert_allclose(got["perplexity"], expected["perplexity"], rtol=1e-5)
    for key in ("token_logp", "full_logits", "stepped_logits"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-5, err_msg=key)
    # the hand-stepped cells reproduce the whole-sequence GRU in each library
    np.testing.assert_allclose(got["stepped_logits"], got["full_logits"], rtol=1e-4, atol=1e-5)
    assert got["greedy"] == expected["greedy"]
    assert got["repeats"] and expected["repeats"]
    assert got["in_top_k"] and expected["in_top_k"]
    assert got["h_shape"] == expected["h_shape"] == (2, 4, 32)
    assert got["h_is_leaf"] == expected["h_is_leaf"]
