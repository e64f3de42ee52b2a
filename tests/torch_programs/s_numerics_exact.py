"""Numerics a PyTorch user prints and expects to the last digit: linspace, arange, cumprod,
std/var with unbiased/correction, quantile, histc, round(decimals=), fmod/remainder and integer
division on negative numbers, dtype promotion of mixed int/float/bool arithmetic, finfo/iinfo."""
# same-source tolerance: 1e-6 1e-7
# same-source exact: ^(lin|ar|cum|std|var|q |hist|round|fmod|rem|div|floor|trunc|prom|finfo|iinfo|mean)
import torch


def name(dtype):
    return str(dtype).split(".")[-1]


torch.manual_seed(0)
print("linspace", torch.linspace(-1, 1, 7).tolist())
print("linspace64", torch.linspace(0, 1, 11, dtype=torch.float64).tolist())
print("linspace int", torch.linspace(0, 10, 4).tolist(), torch.linspace(0, 10, 5, dtype=torch.int64).tolist())
print("arange", torch.arange(0, 1, 0.1).tolist(), name(torch.arange(5).dtype), name(torch.arange(0.5, 3).dtype))
print("arange neg", torch.arange(3, -3, -1.5).tolist(), torch.arange(10, 0, -3).tolist())
x = torch.tensor([1.5, 2.0, 0.5, 3.0, 1.25])
print("cumprod", x.cumprod(0).tolist(), torch.cumsum(x, dim=0).tolist())
print("cumsum tenths", torch.full((10,), 0.1).cumsum(0).tolist(), torch.linspace(1, 1.1, 12).cumprod(0)[-3:].tolist())
print("cummax", torch.cummax(torch.tensor([1, 3, 2, 5, 4]), dim=0).values.tolist())
d = torch.tensor([[1.0, 2.0, 4.0, 8.0], [3.0, 3.0, 3.0, 6.0]])
print("std all", d.std().item(), d.var().item(), torch.linspace(-3, 7, 101).std().item())
print("std", d.std(dim=1).tolist(), d.std(dim=1, unbiased=False).tolist())
print("var", d.var(dim=0).tolist(), d.var(dim=1, correction=0).tolist(), d.var(dim=1, correction=2).tolist())
print("var keepdim", d.var(1, keepdim=True).shape, torch.var_mean(d, dim=1))
print("mean", d.mean(dim=1).tolist(), d.mean().item())
q = torch.tensor([7.0, 1.0, 3.0, 5.0, 9.0, 2.0])
print("q ", torch.quantile(q, 0.5).item(), torch.quantile(q, torch.tensor([0.1, 0.25, 0.9])).tolist())
for how in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print("q ", how, torch.quantile(q, 0.3, interpolation=how).item())
print("q ", torch.quantile(d, 0.75, dim=1, keepdim=True).tolist(), torch.median(q).item(), torch.nanquantile(torch.tensor([1.0, float("nan"), 3.0]), 0.5).item())
print("hist", torch.histc(torch.tensor([1.0, 2.0, 1.0, 4.0, 2.5, 3.9]), bins=4, min=0, max=4).tolist())
print("hist auto", torch.histc(q, bins=5).tolist())
r = torch.tensor([1.2345, -2.5, 0.5, 1.5, 2.675, -0.125, 1234.5678])
print("round", torch.round(r).tolist(), torch.round(r, decimals=2).tolist(), torch.round(r, decimals=-2).tolist())
a = torch.tensor([-7, -3, 3, 7])
b = torch.tensor([2, -2, -2, 2])
print("fmod", torch.fmod(a, b).tolist(), torch.fmod(torch.tensor([-7.5, 7.5]), 2).tolist())
print("rem", torch.remainder(a, b).tolist(), torch.remainder(torch.tensor([-7.5, 7.5]), -2).tolist(), (a % 3).tolist())
print("div", (a // b).tolist(), (a // 2).tolist(), (a / b).tolist(), name((a / b).dtype))
print("floor", torch.div(a, b, rounding_mode="floor").tolist(), name(torch.div(a, 4, rounding_mode="floor").dtype))
print("trunc", torch.div(a, b, rounding_mode="trunc").tolist(), torch.div(torch.tensor([-7.0, 7.0]), 2, rounding_mode="trunc").tolist())
i = torch.tensor([1, 2, 3])
f = torch.tensor([0.5, 1.5, 2.5])
bo = torch.tensor([True, False, True])
h = torch.tensor([1, 2, 3], dtype=torch.int8)
u = torch.tensor([1, 2, 3], dtype=torch.uint8)
print("prom", name((i + f).dtype), name((i * bo).dtype), name((bo + bo).dtype), name((f * bo).dtype), name((i + 2.5).dtype), name((h + 1).dtype))
print("prom", name((h + u).dtype), name((h * 1000).dtype), name((i / 2).dtype), name((bo & bo).dtype), name((f.double() + f).dtype), name((h + f.half()).dtype))
print("prom", name(torch.result_type(i, 1.0)), name(torch.promote_types(torch.int32, torch.float16)), name((i.int() + torch.tensor(5)).dtype), name((f + torch.tensor(1.0, dtype=torch.float64)).dtype))
print("prom", name((i + True).dtype), (u - 5).tolist(), (h * 100).tolist(), torch.tensor([200], dtype=torch.uint8).to(torch.int8).tolist())
print("finfo", torch.finfo(torch.float32).eps, torch.finfo(torch.float32).max, torch.finfo(torch.float32).tiny, torch.finfo(torch.float16).eps)
print("finfo", torch.finfo(torch.float64).eps, torch.finfo().bits, torch.finfo(torch.float32).resolution)
print("iinfo", torch.iinfo(torch.int32).max, torch.iinfo(torch.int8).min, torch.iinfo(torch.uint8).max, torch.iinfo(torch.int64).bits)
print("clamp", torch.tensor([-2, 0, 5]).clamp(min=-1, max=3).tolist(), name(torch.tensor([1.5]).clamp(0, 1).dtype))
print("sum int", name(torch.tensor([1, 2], dtype=torch.int8).sum().dtype), torch.tensor([True, True]).sum().item(), torch.tensor([1, 2]).float().mean().item())
print("prod", torch.tensor([2, 3, 4]).prod().item(), torch.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1).tolist())
print(torch.tensor([0.1, 0.2, 0.3]), torch.tensor([1e-8, 1.0]), torch.tensor([1e10, 1.0]))
print(torch.arange(6).reshape(2, 3), torch.tensor([1.0, float("inf"), float("nan")]))
