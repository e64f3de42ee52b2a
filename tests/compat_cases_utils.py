"""Compatibility cases: torch.utils.data (datasets, samplers, collation, DataLoader) and
torch.utils.tensorboard (SummaryWriter read back by TensorBoard's own reader)."""
import collections
import importlib
import tempfile

import numpy as np

from compat_table import A, Case, case, f32, ints, watch

CASES = []
add = CASES.append

Pair = collections.namedtuple("Pair", "a b")


def _data(lib):
    return lib.utils.data


@add
@case("utils.data.DataLoader", "utils.data.TensorDataset", "utils.data.default_collate",
      "utils.data.dataloader.DataLoader", "utils.data.dataloader.default_collate",
      "utils.data._utils.collate.default_collate", inputs=(f32(7, 3, grad=False), ints(7)))
def _(lib, x, y):
    data = _data(lib)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=3, sampler=[6, 0, 2, 5, 1, 3])
    direct = data._utils.collate.default_collate([(x[0], y[0]), (x[4], y[4])])
    return [len(loader), list(loader), direct,
            list(data.dataloader.DataLoader(data.TensorDataset(x), batch_size=4, drop_last=True))]


@add
@case("utils.data.Dataset", "utils.data.dataset.Dataset", "utils.data.default_convert")
def _(lib):
    data = _data(lib)

    class Records(data.dataset.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"features": np.arange(3, dtype=np.float32) * i, "weight": i / 4,
                    "label": i % 2, "flag": i > 2, "name": f"r{i}",
                    "pair": Pair(lib.tensor([i, i]), (np.int16(i), [i]))}
    batches = list(data.DataLoader(Records(), batch_size=2))
    converted = data.default_convert([np.ones(2), (np.float64(3.5), "s")])
    return batches, converted, list(data.DataLoader(Records(), batch_size=None))[1]


@add
@case("utils.data.Subset", "utils.data.ConcatDataset", "utils.data.StackDataset",
      "utils.data.random_split", inputs=(f32(6, 2, grad=False), f32(4, 2, grad=False)))
def _(lib, x, z):
    data = _data(lib)
    first, second = data.TensorDataset(x), data.TensorDataset(z)
    both = data.ConcatDataset([first, second])
    stacked = data.StackDataset(first, data.Subset(both, [9, 8, 7, 6, 5, 4]))
    parts = data.random_split(both, [0.5, 0.3, 0.2], generator=lib.Generator().manual_seed(0))
    return [len(both), both[8], both[-1], data.Subset(both, [7, 1])[0], stacked[2],
            [len(p) for p in parts], sorted(i for p in parts for i in p.indices)]


@add
@case("utils.data.IterableDataset", "utils.data.ChainDataset", "utils.data.get_worker_info")
def _(lib):
    data = _data(lib)

    class Stream(data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(lib.tensor([float(i), -i]) for i in range(self.n))

        def __len__(self):
            return self.n
    chained = data.ChainDataset([Stream(3), Stream(4)])
    return (list(data.DataLoader(Stream(5), batch_size=2)), len(chained),
            list(data.DataLoader(chained, batch_size=3, drop_last=True)),
            data.get_worker_info() is None)


@add
@case("utils.data.Sampler", "utils.data.SequentialSampler", "utils.data.BatchSampler",
      "utils.data.sampler.Sampler", "utils.data.DistributedSampler",
      "utils.data.distributed.DistributedSampler", inputs=(f32(9, 2, grad=False),))
def _(lib, x):
    data = _data(lib)

    class Reversed(data.sampler.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n - 1, -1, -1))

        def __len__(self):
            return self.n
    batches = data.BatchSampler(Reversed(9), 4, drop_last=False)
    shards = [list(data.distributed.DistributedSampler(range(9), 2, r, shuffle=False))
              for r in (0, 1)]
    return (list(data.SequentialSampler(x)), list(batches), len(batches),
            list(data.DataLoader(data.TensorDataset(x), batch_sampler=batches)), shards)


@add
@case("utils.data.RandomSampler", "utils.data.SubsetRandomSampler",
      "utils.data.WeightedRandomSampler", inputs=(f32(8, 2, grad=False),))
def _(lib, x):
    data = _data(lib)
    g = lib.Generator().manual_seed(1)
    drawn = list(data.RandomSampler(x, replacement=True, num_samples=40, generator=g))
    return (sorted(data.RandomSampler(x, generator=g)), len(drawn), min(drawn) >= 0,
            max(drawn) < 8, sorted(data.SubsetRandomSampler([3, 5, 7], generator=g)),
            list(data.WeightedRandomSampler([0.0, 0.0, 2.0], 5, generator=g)),
            sorted(data.WeightedRandomSampler([1, 0, 1, 1], 3, replacement=False, generator=g)),
            len(data.RandomSampler(x, num_samples=10**10)))


def _shuffled(lib, x, **workers):
    data = _data(lib)
    loader = data.DataLoader(data.TensorDataset(x), batch_size=4, shuffle=True,
                             generator=lib.Generator().manual_seed(0), **workers)
    batches = [b[0] for b in loader]
    rows = sorted(r for b in batches for r in b.tolist())
    return [b.shape for b in batches], rows


add(Case(("utils.data.DataLoader",), _shuffled, (f32(10, 2, grad=False),)))
add(Case(("utils.data.DataLoader",),
         lambda lib, x: _shuffled(lib, x, num_workers=2, persistent_workers=True,
                                  worker_init_fn=lambda worker_id: None),
         (f32(10, 2, grad=False),)))
add(Case(("utils.data.DataLoader",),
         lambda lib, x: _data(lib).DataLoader(_data(lib).TensorDataset(x), batch_size=2,
                                              sampler=[0], shuffle=True),
         (f32(3, grad=False),), compare="raises", match="sampler option is mutually exclusive"))
add(Case(("utils.data.DataLoader",),
         lambda lib, x: _data(lib).DataLoader(_data(lib).TensorDataset(x), batch_size=2,
                                              batch_sampler=[[0]]),
         (f32(3, grad=False),), compare="raises", match="batch_sampler option is mutually"))


def _read_back(log_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(log_dir, size_guidance={"tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    out = [sorted(tags["scalars"]), sorted(tags["histograms"]), sorted(tags["images"])]
    out += [[(e.step, e.value) for e in acc.Scalars(t)] for t in sorted(tags["scalars"])]
    out += [list(acc.Histograms(t)[0].histogram_value.bucket) for t in sorted(tags["histograms"])]
    out += [[e.tensor_proto.string_val[0].decode() for e in acc.Tensors(t)]
            for t in sorted(tags["tensors"])]
    return out


@add
@case("utils.tensorboard.SummaryWriter", "utils.tensorboard.SummaryWriter.add_scalar",
      "utils.tensorboard.SummaryWriter.add_scalars",
      "utils.tensorboard.SummaryWriter.add_histogram", "utils.tensorboard.SummaryWriter.add_text",
      "utils.tensorboard.SummaryWriter.add_figure", "utils.tensorboard.SummaryWriter.flush",
      "utils.tensorboard.SummaryWriter.close", "utils.tensorboard.SummaryWriter.add_image",
      "utils.tensorboard.FileWriter", inputs=(A(np.linspace(-2, 2, 50)),))
def _(lib, values):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tensorboard = importlib.import_module(f"{lib.__name__}.utils.tensorboard")
    with tempfile.TemporaryDirectory() as log_dir:
        writer = tensorboard.SummaryWriter(log_dir)
        for step in range(3):
            writer.add_scalar("loss", 2.0 / (step + 1), step)
            writer.add_scalars("acc", {"train": step / 4, "test": step / 5}, step)
        writer.add_histogram("values", values, 2, bins=8)
        writer.add_text("note", "done", 2)
        writer.add_figure("plot", plt.figure(figsize=(1, 1), dpi=16), 2)
        writer.add_image("image", np.linspace(0, 1, 24).reshape(2, 4, 3), 3, dataformats="HWC")
        raw = tensorboard.FileWriter(f"{log_dir}/raw")
        raw_dir = raw.get_logdir().endswith("raw")
        raw.close()
        writer.flush()
        writer.close()
        return _read_back(log_dir), _read_back(f"{log_dir}/acc_test"), raw_dir


def _relu_onnx_file(folder):
    """An ONNX model of one Relu node (an input of dims (batch, 3)), saved in `folder`."""
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("LeakyRelu", ["y"], ["z"],
                                                                   alpha=0.1)], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 3])])
    path = f"{folder}/relu.onnx"
    onnx.save(helper.make_model(graph), path)
    return path


@add
@case("utils.tensorboard.SummaryWriter.add_hparams", "utils.tensorboard.SummaryWriter.add_pr_curve",
      "utils.tensorboard.SummaryWriter.add_pr_curve_raw",
      "utils.tensorboard.SummaryWriter.add_custom_scalars",
      "utils.tensorboard.SummaryWriter.add_custom_scalars_multilinechart",
      "utils.tensorboard.SummaryWriter.add_custom_scalars_marginchart",
      "utils.tensorboard.SummaryWriter.add_audio", "utils.tensorboard.SummaryWriter.add_video",
      "utils.tensorboard.SummaryWriter.add_mesh", "utils.tensorboard.SummaryWriter.add_images",
      "utils.tensorboard.SummaryWriter.add_histogram_raw",
      "utils.tensorboard.SummaryWriter.add_tensor",
      "utils.tensorboard.SummaryWriter.add_image_with_boxes",
      "utils.tensorboard.SummaryWriter.add_onnx_graph",
      "utils.tensorboard.SummaryWriter.add_embedding", "utils.tensorboard.SummaryWriter.add_graph",
      inputs=(A(np.linspace(0, 1, 12).reshape(4, 3)),))
def _(lib, x):
    import warnings

    from tensorboard_events import graph_summary, other_files, runs
    tensorboard = importlib.import_module(f"{lib.__name__}.utils.tensorboard")
    with tempfile.TemporaryDirectory() as log_dir:
        with tensorboard.SummaryWriter(log_dir) as w:
            w.add_hparams({"lr": 0.1, "opt": "sgd"}, {"acc": 0.5}, run_name="hp")
            w.add_pr_curve("pr", x.reshape(-1) > 0.5, x.reshape(-1).flip(0), 1, num_thresholds=9)
            w.add_pr_curve_raw("raw", [3, 1], [2, 0], [0, 2], [0, 2], [0.6, 1.0], [1.0, 0.3], 2,
                               num_thresholds=2)
            w.add_custom_scalars({"c": {"t": ["Multiline", ["a", "b"]]}})
            w.add_custom_scalars_multilinechart(["a"])
            w.add_custom_scalars_marginchart(["a", "b", "c"])
            w.add_audio("sound", x.reshape(-1) - 0.5, 3, sample_rate=100)
            w.add_mesh("mesh", x[None, :, :], global_step=4)
            w.add_images("images", x[None, None].expand(2, 3, 4, 3), 5)
            w.add_histogram_raw("hist", 0, 1, 2, 1, 1, [0.5, 1.0], [1, 1], 6)
            w.add_tensor("tensor", x, 8)
            w.add_image_with_boxes("boxes", x[None], np.array([[0, 0, 2, 3]]), 9, labels=["a"])
            w.add_embedding(x, metadata=list("abcd"), label_img=x[:, None, None, :].expand(
                4, 3, 3, 3), global_step=7)
            w.add_onnx_graph(_relu_onnx_file(log_dir))
            model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit.trace's
                w.add_graph(model, x.float())
        logs = {run: [graph_summary(e[2]) if e[0] == "graph_def" else e for e in events
                      if e[0] != "summary" or e[2][0]["tag"] != "__run_graph__"]
                for run, events in runs(log_dir).items()}
        return [repr(logs), other_files(log_dir)]


@add
@case("utils.checkpoint.checkpoint", inputs=(f32(3, 4),))
def _(lib, x):
    lin = lib.nn.Linear(4, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.arange(8.0).reshape(2, 4) / 10 - 0.3)
        lin.bias.fill_(0.1)
    watch(lin.weight, lin.bias)
    block = lib.nn.Sequential(lin, lib.nn.Tanh())
    ck = lib.utils.checkpoint.checkpoint
    return (ck(block, x, use_reentrant=False) * 2,
            ck(lambda a, k: block(a) * k, x, 3.0, use_reentrant=True))
