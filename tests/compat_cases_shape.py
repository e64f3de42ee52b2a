"""Compatibility cases: shapes, joining and splitting, indexing, and writes (in place too)."""

from compat_table import bools, case, f32, ints

CASES = []
add = CASES.append


@add
@case("Tensor.reshape", "Tensor.view", "Tensor.view_as", "Tensor.reshape_as", "minigrad.reshape",
      "Tensor.flatten", "minigrad.flatten", "Tensor.unflatten", "Tensor.squeeze",
      "Tensor.unsqueeze", "minigrad.squeeze", "minigrad.unsqueeze", "Tensor.contiguous",
      inputs=(f32(2, 1, 3, 4),))
def _(lib, x):
    return (x.reshape(6, 4), x.view(-1), x.view(2, -1), x.view_as(lib.zeros(3, 8)),
            x.reshape_as(lib.zeros(24)), lib.reshape(x, (4, 6)), x.flatten(), x.flatten(1),
            lib.flatten(x, 0, 2), x.unflatten(3, (2, 2)), x.squeeze(), x.squeeze(1),
            x.unsqueeze(0), x.unsqueeze(-1), lib.squeeze(x, 1), lib.unsqueeze(x, 2),
            x.contiguous(), x.reshape((8, 3)))


@add
@case("Tensor.permute", "Tensor.transpose", "Tensor.t", "minigrad.permute",
      "minigrad.transpose", "minigrad.t", "Tensor.movedim", "minigrad.movedim", "Tensor.swapaxes",
      "Tensor.swapdims", "Tensor.adjoint", inputs=(f32(2, 3, 4), f32(3, 5)))
def _(lib, x, m):
    return (x.permute(2, 0, 1), x.permute((1, 2, 0)), x.transpose(0, 2), x.transpose(-1, -2),
            m.t(), lib.permute(x, (0, 2, 1)), lib.transpose(x, 1, 2), lib.t(m),
            x.movedim(0, -1), lib.movedim(x, (0, 1), (2, 0)), x.swapaxes(0, 1), x.swapdims(1, 2),
            x.adjoint(), m.adjoint())


@add
@case("Tensor.expand", "Tensor.expand_as", "minigrad.broadcast_to", "Tensor.repeat",
      "Tensor.repeat_interleave", "minigrad.repeat_interleave", inputs=(f32(3, 1), f32(2, 3)))
def _(lib, x, y):
    return (x.expand(3, 4), x.expand(2, -1, 5), x.expand_as(lib.zeros(3, 2)),
            lib.broadcast_to(x, (2, 3, 3)), y.repeat(2, 3), y.repeat(2, 1, 1), x.repeat(1, 1),
            y.repeat_interleave(2), y.repeat_interleave(3, dim=0),
            lib.repeat_interleave(y, lib.tensor([1, 0, 2]), dim=1))


@add
@case("minigrad.cat", "minigrad.concat", "minigrad.stack", "minigrad.split", "minigrad.chunk",
      "Tensor.split", "Tensor.chunk", "Tensor.unbind", "minigrad.unbind",
      inputs=(f32(2, 3), f32(2, 2), f32(5, 2)))
def _(lib, a, b, c):
    return (lib.cat([a, b], dim=1), lib.cat((a, a)), lib.concat([b, a], -1),
            lib.stack([a, a + 1]), lib.stack((b, b), dim=2), lib.split(c, 2),
            c.split([1, 4]), c.split(3, dim=0), lib.chunk(c, 2), c.chunk(3, dim=1), a.unbind(1),
            lib.unbind(b))


@add
@case("Tensor.flip", "minigrad.flip", "Tensor.roll", "minigrad.roll", "Tensor.narrow",
      "minigrad.narrow", "Tensor.select", "minigrad.select", inputs=(f32(3, 4),))
def _(lib, x):
    return (x.flip(0), x.flip(0, 1), lib.flip(x, (1,)), x.roll(1, 0), x.roll(-2),
            lib.roll(x, (1, 2), (0, 1)), x.narrow(1, 1, 2), lib.narrow(x, 0, -2, 2),
            x.select(1, 2), lib.select(x, 0, -1))


# --- reading by index --------------------------------------------------------------------------

@add
@case("Tensor.__getitem__", inputs=(f32(3, 4, 5), bools(3, 4)))
def _(lib, x, m):
    idx = lib.tensor([2, 0, 2])
    return (x[0], x[-1, 1:3], x[:, None, ::2], x[..., 1], x[idx], x[idx, 1], x[m], x[x > 0],
            x[[0, 1], [1, 2]], x[1, idx], x[:, lib.tensor([[0, 1], [3, 3]])], x[lib.tensor(1)])


@add
@case("minigrad.gather", "Tensor.gather", "minigrad.index_select", "Tensor.index_select",
      "minigrad.masked_fill", "Tensor.masked_fill", "minigrad.masked_select",
      "Tensor.masked_select", inputs=(f32(3, 4), bools(3, 4), bools(4)))
def _(lib, x, m, row):
    i = lib.tensor([[0, 3], [1, 1], [2, 0]])
    return (lib.gather(x, 1, i), x.gather(0, lib.tensor([[2, 0, 1, 1]])),
            lib.index_select(x, 0, lib.tensor([2, 0])), x.index_select(1, lib.tensor([3, 3])),
            lib.masked_fill(x, m, 0.0), x.masked_fill(row, float("-inf")).softmax(-1),
            lib.masked_select(x, m), x.masked_select(row))


# --- writing -----------------------------------------------------------------------------------

@add
@case("Tensor.__setitem__", "Tensor.index_put_", "Tensor.index_put", "minigrad.index_put",
      inputs=(f32(3, 4), f32(4), f32(2)))
def _(lib, x, v, w):
    y = x * 1  # a non-leaf copy: in-place writes on it are recorded by autograd
    y[0] = v
    y[1, 2] = 5.0
    y[y > 1.5] = 0.0
    y[lib.tensor([2, 2]), lib.tensor([0, 3])] = w
    z = lib.zeros(3, 4)
    z[1:, ::2] = x[1:, ::2] * 2  # a leaf without grad becomes part of the graph
    z[:, 0] = lib.tensor([1.0, 2.0, 3.0])
    u = x.index_put((lib.tensor([0, 0]), lib.tensor([1, 1])), w, accumulate=True)
    t = lib.zeros(4)
    t.index_put_((lib.tensor([1, 3]),), w)
    return y, z, u, t, lib.index_put(x, (lib.tensor([2, 0]),), v.expand(2, 4), accumulate=True)


@add
@case("Tensor.__setitem__", inputs=(f32(2, 3),))
def _(lib, x):
    with lib.no_grad():  # in-place initialisation, the usual way to fill a weight
        x[0] = 0.0
        x[:, 1] = lib.tensor([7.0, 8.0])
    m = lib.zeros(2, 3, dtype=lib.long)
    m[m == 0] = 4
    b = lib.ones(3, dtype=lib.bool)
    b[1] = False
    return x.detach(), m, b


@add
@case("Tensor.masked_fill_", "Tensor.fill_", "Tensor.zero_", "Tensor.clamp_", "Tensor.clip_",
      "Tensor.__iadd__", "Tensor.__isub__", "Tensor.__imul__", "Tensor.__itruediv__",
      "Tensor.add_", "Tensor.sub_", "Tensor.mul_", "Tensor.div_", "Tensor.copy_", "Tensor.tril_",
      "Tensor.triu_", inputs=(f32(3, 3), bools(3, 3)))
def _(lib, x, m):
    y = x * 1
    y.masked_fill_(m, -1.0)
    y.clamp_(-0.5, 1.0)
    y += x
    y *= 2
    y -= 1
    y /= 4
    y.tril_()
    z = lib.ones(3, 3)
    z.add_(1).mul_(3).sub_(2, alpha=0.5).div_(2)
    z.triu_(1).clip_(0, 1)
    w = lib.empty(2).fill_(3.5)
    c = lib.zeros(3, 3).copy_(x.detach())
    return y, z, w, lib.ones(2).zero_(), c


@add
@case("Tensor.scatter", "Tensor.scatter_", "minigrad.scatter", "Tensor.scatter_add",
      "Tensor.scatter_add_", "minigrad.scatter_add", inputs=(f32(3, 5), f32(2, 5)))
def _(lib, x, src):
    idx = lib.tensor([[0, 1, 2, 0, 1], [2, 0, 0, 1, 2]])
    a = x.scatter(0, idx, src)
    b = lib.scatter(x, 1, lib.tensor([[4], [0], [2]]), 9.0)
    c = x.scatter_add(0, idx, src)
    d = lib.scatter_add(lib.zeros(3, 5), 0, idx, src)
    smooth = lib.full((3, 5), 0.1)  # the Annotated Transformer's label smoothing
    smooth.scatter_(1, lib.tensor([1, 4, 0]).unsqueeze(1), 0.6)
    e = x * 1
    e.scatter_(1, lib.tensor([[0], [1], [2]]), src[:, :1].repeat(2, 1)[:3])
    f = x * 1
    f.scatter_add_(0, idx, src)
    return a, b, c, d, smooth, e, f


@add
@case("Tensor.scatter_reduce", "Tensor.scatter_reduce_", inputs=(f32(3, 4), f32(4, 4)))
def _(lib, x, src):
    idx = lib.tensor([[0, 1, 2, 0], [2, 0, 0, 1], [0, 0, 1, 1], [1, 2, 2, 0]])
    per_node_max = lib.full((3, 4), float("-inf"))
    per_node_max.scatter_reduce_(0, idx, src.detach(), "amax")
    return (x.scatter_reduce(0, idx, src, "amax"), x.scatter_reduce(0, idx, src, "amin"),
            x.scatter_reduce(0, idx, src, "sum", include_self=False),
            x.scatter_reduce(1, idx[:3], src[:3], "mean"),
            x.scatter_reduce(0, idx, src, "prod"), per_node_max)


@add
@case("Tensor.index_fill", "Tensor.index_fill_", "minigrad.index_fill", "Tensor.index_add",
      "Tensor.index_add_", "minigrad.index_add", inputs=(f32(4, 3), f32(2, 3)))
def _(lib, x, s):
    t = lib.full((4, 3), 0.25)
    t.index_fill_(0, lib.tensor([1, 3]), 0.0)
    y = x * 1
    y.index_add_(0, lib.tensor([0, 0]), s)
    return (x.index_fill(1, lib.tensor([0, 2]), -1.0), lib.index_fill(x, 0, lib.tensor([2]), 5.0),
            t, x.index_add(0, lib.tensor([3, 1]), s, alpha=2), y,
            lib.index_add(x, 0, lib.tensor([1, 1]), s))


@add
@case("Tensor.__setitem__", compare="raises", match="leaf Variable that requires grad")
def _(lib):
    w = lib.zeros(3, requires_grad=True)
    w[0] = 1.0  # in place on a leaf that requires grad, outside no_grad


@add
@case("minigrad.take_along_dim", "Tensor.take_along_dim", inputs=(f32(3, 4), f32(2, 1, 3)))
def _(lib, x, y):
    """Indices broadcast against the input outside dim (and it against them), negative dims,
    no dim (both flattened), the argsort idiom."""
    order = x.argsort(dim=1)
    return (lib.take_along_dim(x, order, dim=1), x.take_along_dim(order[:, :2], -1),
            lib.take_along_dim(x, lib.tensor([[0], [3], [1]]), 1),
            lib.take_along_dim(y, lib.tensor([0, 2, 1, 0]).reshape(1, 4, 1), dim=2),
            lib.take_along_dim(x, lib.tensor([11, 0, 5])), x.t().take_along_dim(order.t(), 0))


@add
@case("minigrad.take_along_dim", compare="raises", match="same number of dimensions")
def _(lib):
    return lib.take_along_dim(lib.ones(2, 3), lib.tensor([0]), dim=1)


@add
@case("minigrad.tensor_split", "Tensor.tensor_split", inputs=(f32(7, 3), ints(5)))
def _(lib, x, i):
    """Sections that do not divide the size, more sections than elements, indices past the
    end and out of order, a tensor of indices or of sections, another dim."""
    return (lib.tensor_split(x, 3), x.tensor_split(9), x.tensor_split([1, 5, 9]),
            x.tensor_split((4, 2)), lib.tensor_split(x, lib.tensor([2, 3]), dim=0),
            x.tensor_split(lib.tensor(2), 1), i.tensor_split([-2]), x.t().tensor_split(2, dim=1))


@add
@case("minigrad.tensor_split", compare="raises", match="number of sections must be larger than 0")
def _(lib):
    return lib.tensor_split(lib.ones(3), 0)


@add
@case("minigrad.rot90", "Tensor.rot90", inputs=(f32(2, 3, 4),))
def _(lib, x):
    return (lib.rot90(x), x.rot90(2), x.rot90(3, (1, 2)), x.rot90(-1, [2, 0]), x.rot90(0),
            x.rot90(5, (-1, -2)))


@add
@case("minigrad.rot90", compare="raises", match="expected rotation dims to be different")
def _(lib):
    return lib.rot90(lib.ones(2, 2), 1, (1, 1))


@add
@case("minigrad.isin", inputs=(ints(3, 4, high=6), f32(5)))
def _(lib, i, x):
    return (lib.isin(i, lib.tensor([1, 4, 9])), lib.isin(i, 3), lib.isin(2, i),
            lib.isin(i, lib.tensor([[2, 5]]), invert=True), lib.isin(x, x[1:3]),
            lib.isin(i.t(), lib.tensor([0.0, 1.0])), lib.isin(i, lib.tensor([], dtype=lib.long)))
