"""Port test: a Transformer language model over padded sentences, in the style of PyTorch's
word_language_model example and of nanoGPT's sampling: a `PositionalEncoding` module with a
registered `pe` buffer, `nn.TransformerEncoder` under the causal mask from
`nn.Transformer.generate_square_subsequent_mask`, the decoder's weight tied to the embedding's
(`self.decoder.weight = self.encoder.weight`), `CrossEntropyLoss(ignore_index=PAD)`,
`clip_grad_norm_`, perplexity by `math.exp`, a checkpoint dict (epoch, model, optimizer, loss)
written by `torch.save` and read by `torch.load` into a fresh model and optimizer that go on
training, and generation under `@torch.no_grad()`: greedy, and temperature with top-k filtering
(`torch.topk`, `logits[logits < v[:, [-1]]] = -float("inf")`) and `torch.multinomial` under a
seeded `torch.Generator`. Run by PyTorch and by minigrad (passed in as `torch`) from the same
weights: losses, perplexities and greedy text must agree; resuming from the file must continue
bit for bit as the uninterrupted run does; sampled text comes from each library's own random
stream, so it must repeat under the same seed and use only top-k tokens."""
import math

import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy

PAD, BOS, EOS = 0, 1, 2


def lm_program(torch, batches, valid, ckpt_path, init=None, vocab=24, d_model=32, nhead=4,
               nlayers=2, resume_at=None, epochs=3):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(42)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=64):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float()
                                 * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0))  # (1, max_len, d_model)

        def forward(self, x):
            return self.dropout(x + self.pe[:, :x.size(1)])

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.0):
            super().__init__()
            self.model_type = "Transformer"
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout, batch_first=True,
                                               norm_first=True)
            self.transformer_encoder = nn.TransformerEncoder(layer, nlayers,
                                                             enable_nested_tensor=False)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            self.decoder.weight = self.encoder.weight  # weight tying
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)

        def forward(self, src):  # src: (B, T) token ids -> (B, T, ntoken) logits
            mask = nn.Transformer.generate_square_subsequent_mask(src.size(1))
            src = self.encoder(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.transformer_encoder(src, mask=mask, is_causal=True)
            return self.decoder(output)

    def build():
        model = TransformerModel(vocab, d_model, nhead, 64, nlayers)
        return model, torch.optim.Adam(model.parameters(), lr=5e-3)

    model, optimizer = build()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    tied = (model.decoder.weight is model.encoder.weight,
            len(list(model.parameters())), sorted(model.state_dict()) == sorted(start))
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)

    def train_step(batch):
        x, y = batch[:, :-1], batch[:, 1:]
        optimizer.zero_grad()
        output = model(x)
        loss = criterion(output.view(-1, vocab), y.reshape(-1))
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        return loss.item(), norm.item()

    def evaluate(data):
        model.eval()
        total, tokens = 0.0, 0
        with torch.no_grad():
            for batch in data:
                x, y = batch[:, :-1], batch[:, 1:]
                n = (y != PAD).sum().item()
                total += n * criterion(model(x).view(-1, vocab), y.reshape(-1)).item()
                tokens += n
        return total / tokens

    batches = [torch.from_numpy(b) for b in batches]
    valid = [torch.from_numpy(b) for b in valid]
    losses, norms, ppls = [], [], []
    for epoch in range(epochs):
        if epoch == resume_at:
            torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
                        "optimizer_state_dict": optimizer.state_dict(), "loss": losses[-1]},
                       ckpt_path)
            del model, optimizer
            model, optimizer = build()
            checkpoint = torch.load(ckpt_path, weights_only=True)
            model.load_state_dict(checkpoint["model_state_dict"])
            optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
            assert checkpoint["epoch"] == epoch and checkpoint["loss"] == losses[-1]
            tied = tied + (model.decoder.weight is model.encoder.weight,)
        model.train()
        for batch in batches:
            loss, norm = train_step(batch)
            losses.append(loss)
            norms.append(norm)
        ppls.append(math.exp(evaluate(valid)))

    @torch.no_grad()
    def generate(idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        model.eval()
        for _ in range(max_new_tokens):
            logits = model(idx)[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            if generator is None:
                idx_next = torch.argmax(probs, dim=-1, keepdim=True)
            else:
                idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx

    prompt = torch.full((2, 1), BOS, dtype=torch.long)
    greedy = generate(prompt, 8).tolist()
    samples = [generate(prompt, 8, temperature=0.8, top_k=3,
                        generator=torch.Generator().manual_seed(7)).tolist() for _ in range(2)]
    with torch.no_grad():  # the top-3 tokens after each prefix, to check what was sampled
        allowed = torch.topk(model(torch.tensor(samples[0]))[:, :-1], 3, dim=-1).indices
    return {"init": start, "losses": losses, "norms": norms, "ppls": ppls, "greedy": greedy,
            "samples": samples, "allowed": allowed.tolist(), "tied": tied,
            "final": state_numpy(model)}


def sentences(n, seed, max_len=12):
    """Padded (B, T) batches of BOS w... EOS; the words follow a fixed successor table."""
    table = np.random.default_rng(100)
    follow = {w: table.choice(np.arange(3, 24), 2, replace=False) for w in range(3, 24)}
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        length = int(rng.integers(3, max_len - 1))
        w = int(rng.integers(3, 24))
        row = [BOS, w]
        for _ in range(length - 1):
            w = int(follow[w][rng.integers(2)])
            row.append(w)
        rows.append(row + [EOS])
    out = np.zeros((n, max_len), dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return [out[i:i + 8] for i in range(0, n, 8)]


def test_transformer_lm_trains_resumes_and_generates_the_same_in_both(torch, tmp_path):
    train, valid = sentences(64, seed=0), sentences(16, seed=1)
    expected, got = run_both(lm_program, torch, train, valid, tmp_path / "lm.pt")
    assert got["tied"] == expected["tied"] == (True, 26, True)
    assert_curves_match("transformer_lm", expected["losses"], got["losses"], rtol=1e-4, every=3)
    np.testing.assert_allclose(got["norms"], expected["norms"], rtol=1e-4)
    np.testing.assert_allclose(got["ppls"], expected["ppls"], rtol=1e-4)
    # it learns: perplexity falls every epoch, to under half of a uniform guess's (24)
    assert expected["ppls"] == sorted(expected["ppls"], reverse=True)
    assert expected["ppls"][-1] < 12
    assert got["greedy"] == expected["greedy"]
    for lib in (expected, got):  # a seeded generator repeats; top-k keeps to the top k
        assert lib["samples"][0] == lib["samples"][1]
        for t, token in enumerate(lib["samples"][0][0][1:]):
            assert token in lib["allowed"][0][t]
    assert_states_match(expected["final"], got["final"], rtol=1e-3, atol=2e-5)

    resumed = lm_program(__import__("minigrad"), train, valid, tmp_path / "mg.pt",
                         init=expected["init"], resume_at=2)
    assert resumed["tied"] == (True, 26, True, True)  # the fresh model is tied again
    assert resumed["losses"] == got["losses"] and resumed["ppls"] == got["ppls"]
