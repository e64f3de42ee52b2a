"""nn.MultiheadAttention used directly (batch_first, key_padding_mask, a causal attn_mask,
averaged and per-head weights), checked against the same attention written with
torch.einsum from its in_proj_weight, then scaled_dot_product_attention and a short fit."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^data
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
B, T, E, H = 3, 5, 8, 2
x = torch.randn(B, T, E)
print("data", x[0, 0, :4].tolist())
mha = nn.MultiheadAttention(E, H, batch_first=True)
lengths = torch.tensor([5, 3, 4])
key_padding_mask = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)
causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
out, weights = mha(x, x, x, key_padding_mask=key_padding_mask, attn_mask=causal)
print("out", out.shape, out[1, 2].tolist())
print("averaged weights\n", weights[1])
out_h, weights_h = mha(x, x, x, key_padding_mask=key_padding_mask, need_weights=True,
                       average_attn_weights=False)
print("per head", weights_h.shape, weights_h[2, 1, 0].tolist())
out_none, w_none = mha(x, x, x, need_weights=False)
print("no weights", w_none, out_none.shape)

# the same attention by hand, with einsum
Wq, Wk, Wv = mha.in_proj_weight.chunk(3, dim=0)
bq, bk, bv = mha.in_proj_bias.chunk(3)
q = torch.einsum("bte,fe->btf", x, Wq) + bq
k = torch.einsum("bte,fe->btf", x, Wk) + bk
v = torch.einsum("bte,fe->btf", x, Wv) + bv
q, k, v = (z.view(B, T, H, E // H) for z in (q, k, v))
scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(E // H)
scores = scores.masked_fill(causal, float("-inf"))
scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
attn = scores.softmax(dim=-1)
mixed = torch.einsum("bhqk,bkhd->bqhd", attn, v).reshape(B, T, E)
by_hand = mha.out_proj(mixed)
print("einsum matches", torch.allclose(by_hand, out, atol=1e-5), torch.allclose(attn.mean(1), weights, atol=1e-6))
print("diag", torch.einsum("ii->i", weights[0]).tolist(), torch.einsum("bij->b", weights).tolist())

qh, kh, vh = (z.transpose(1, 2) for z in (q, k, v))
sdpa = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
print("sdpa", sdpa.shape, sdpa[0, 1, 3].tolist())
bool_mask = ~causal
print("sdpa mask", torch.allclose(F.scaled_dot_product_attention(qh, kh, vh, attn_mask=bool_mask), sdpa, atol=1e-6))

target = torch.randn(B, T, E)
opt = torch.optim.SGD(mha.parameters(), lr=0.1, momentum=0.9)
for step in range(15):
    out, _ = mha(x, x, x, key_padding_mask=key_padding_mask)
    loss = F.mse_loss(out, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(step, round(loss.item(), 6), mha.in_proj_weight.grad.norm().item())
print("final", loss.item(), mha.out_proj.bias[:3].tolist())
