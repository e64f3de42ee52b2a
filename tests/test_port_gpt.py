"""Port test: a character-level GPT in the style of the popular video lectures (heads with a
registered causal `tril` buffer, pre-norm blocks, AdamW, multinomial sampling), run by
PyTorch and by minigrad (passed in as `torch`) from the same weights. The model is the one
bench/small_models.py times (`char_gpt.build_gpt`); the training loop around it is here."""
import sys
from pathlib import Path

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from char_gpt import build_gpt  # noqa: E402

TEXT = ("First Citizen: Before we proceed any further, hear me speak. All: Speak, speak. "
        "First Citizen: You are all resolved rather to die than to famish? All: Resolved. "
        "resolved. First Citizen: First, you know Caius Marcius is chief enemy to the people.")


def gpt_program(torch, text, starts, init=None, block_size=8, n_embd=32, n_head=4, n_layer=2,
                dropout=0.0, learning_rate=3e-3):
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

    model = build_gpt(torch, vocab_size, n_embd, n_head, n_layer, block_size, dropout)
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
