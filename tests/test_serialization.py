"""minigrad.save / minigrad.load: exact round trips, atomic writes and clear errors."""
import copy
import io
import os
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.nn.module import Module, Parameter


class Toy(Module):
    def __init__(self, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w = Parameter(rng.standard_normal((3, 2)).astype(np.float32))
        self.b = Parameter(np.zeros(2, np.float32))


def same(a, b):
    """Equal values *and* types, all the way down (NaN equals NaN)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, mg.Tensor):
        assert a.requires_grad == b.requires_grad
        a, b = a.numpy(), b.numpy()
    if isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b)
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a.keys()) == list(b.keys())
        assert [type(k) for k in a] == [type(k) for k in b]
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float) and a != a:
        assert b != b
    else:
        assert a == b


def round_trip(obj, path):
    mg.save(obj, path)
    return mg.load(path)


def test_nested_round_trip_is_exact(tmp_path):
    dtypes = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint64, np.bool_, np.complex64]
    obj = OrderedDict([
        ("zebra", {f"a_{np.dtype(d).name}": np.arange(6).reshape(2, 3).astype(d) for d in dtypes}),
        ("alpha", [mg.tensor([1.5, 2.5]), mg.tensor([[1, 2]], dtype=np.int64),
                   mg.tensor(3.0, requires_grad=True), np.zeros((0, 4), np.float32),
                   np.array(7, np.int32), np.asfortranarray(np.ones((2, 3)))]),
        ("tuple", (1, (2, [3, (4,)]), [])),
        ("scalars", [None, True, False, 0, -7, 2 ** 70, -(2 ** 100), 1.25, float("inf"),
                     float("nan"), "", "héllo ✓", b"\x00\xffbytes"]),
        ("numpy scalars", [np.float32(1.5), np.int64(-3), np.bool_(True), np.float16(0.1)]),
        ("keys", {3: "int", "3": "str", 1.5: "float", None: "none", True: "bool",
                  (1, "a"): "tuple", -2 ** 80: "big"}),
    ])
    back = round_trip(obj, tmp_path / "x.npz")
    same(obj, back)
    assert type(back) is OrderedDict and list(back) == ["zebra", "alpha", "tuple", "scalars",
                                                        "numpy scalars", "keys"]


def test_plain_dict_stays_dict_and_root_can_be_anything(tmp_path):
    assert type(round_trip({"b": 1, "a": 2}, tmp_path / "d.npz")) is dict
    for obj in [None, 3, "s", [1, 2], (np.arange(3),), mg.tensor([1.0])]:
        same(obj, round_trip(obj, tmp_path / "r.npz"))


def test_model_state_dict_round_trip(tmp_path):
    m = Toy()
    mg.save(m.state_dict(), str(tmp_path / "m.npz"))
    m2 = Toy(seed=5)
    sd = mg.load(str(tmp_path / "m.npz"))
    assert isinstance(sd, OrderedDict) and list(sd) == ["w", "b"]
    m2.load_state_dict(sd)
    np.testing.assert_array_equal(m2.w.numpy(), m.w.numpy())
    assert m2.w.numpy().dtype == np.float32


def test_rng_state_round_trip(tmp_path):
    mg.manual_seed(123)
    mg.randn(5)
    mg.save({"rng": mg.random.get_rng_state()}, tmp_path / "rng.npz")
    expected = mg.randn(4).numpy().copy()
    mg.manual_seed(0)
    mg.random.set_rng_state(mg.load(tmp_path / "rng.npz")["rng"])
    np.testing.assert_array_equal(mg.randn(4).numpy(), expected)


def test_other_objects_are_pickled_and_refused_by_default(tmp_path):
    """As torch.save: anything picklable is saved; as torch.load: the default weights_only=True
    refuses it with an error naming where it is and weights_only=False, which unpickles."""
    obj = {"state": {3: {"foo": {1, 2j}}}, "items": [1, Toy()], "a": np.array([1, "x"], object),
           "odd": {frozenset({1}): "key"}, "plain": mg.ones(2)}
    mg.save(obj, tmp_path / "o.npz")
    with pytest.raises(pickle.UnpicklingError, match=r"'state/3/foo'.*pickled builtins.set.*"
                                                     r"pass weights_only=False"):
        mg.load(tmp_path / "o.npz")
    with pytest.raises(ValueError, match="weights_only=True refuses"):  # also a ValueError
        mg.load(tmp_path / "o.npz", weights_only=True)
    back = mg.load(tmp_path / "o.npz", weights_only=False)
    assert back["state"][3]["foo"] == {1, 2j} and back["odd"][frozenset({1})] == "key"
    assert isinstance(back["items"][1], Toy) and back["a"].dtype == object
    np.testing.assert_array_equal(back["items"][1].w.numpy(), Toy().w.numpy())
    same(back["plain"], obj["plain"])


def test_sets_dtypes_and_devices_need_no_pickle(tmp_path):
    """What torch.load's weights_only=True allows beyond tensors and containers."""
    obj = {"s": {1, "a", (2, 3)}, "f": frozenset({0.5}), "dtype": mg.float16,
           "device": mg.device("cpu"), "index": [mg.int64, mg.bool_]}
    back = round_trip(obj, tmp_path / "s.npz")
    assert back == obj and type(back["f"]) is frozenset
    assert back["dtype"] is mg.float16 and back["index"][0] is mg.int64   # dtypes, not copies
    assert round_trip({"np": np.float32}, tmp_path / "n.npz")["np"] is mg.float32


def test_unpicklable_objects_name_the_key_path_and_write_nothing(tmp_path):
    with pytest.raises(TypeError, match="cannot store object of type function at 'items/1'"):
        mg.save({"items": [1, lambda x: x]}, tmp_path / "bad.npz")
    assert not os.listdir(tmp_path)  # nothing written, not even a temporary file


def test_whole_model_round_trip_through_a_file_object(tmp_path):
    """torch.save(model, f) and torch.load(f, weights_only=False), f a path or a buffer."""
    model = Toy(seed=3)
    buf = io.BytesIO()
    mg.save(model, buf)
    buf.seek(0)
    back = mg.load(buf, weights_only=False)
    assert type(back) is Toy
    same(back.state_dict(), model.state_dict())
    with open(tmp_path / "m.pt", "wb") as f:
        mg.save({"w": mg.ones(2)}, f)
    with open(tmp_path / "m.pt", "rb") as f:
        same(mg.load(f), {"w": mg.ones(2)})


def test_part_of_a_model_that_ran_is_saved_and_copied_alone(torch, tmp_path):
    """A sub-module taken from a model that was called pickles and deep-copies without that
    model, as in PyTorch: here the model holds an unpicklable local class, so carrying it
    along would fail; the copy of a sub-module shares nothing with the model either."""
    results = {}
    for lib in (torch, mg):
        class Lambda(lib.nn.Module):  # local: pickle cannot find it
            def __init__(self, func):
                super().__init__()
                self.func = func

            def forward(self, x):
                return self.func(x)

        model = lib.nn.Sequential(lib.nn.Linear(2, 3), Lambda(lambda x: x.relu()))
        model(lib.ones(4, 2)).sum().backward()
        head = lib.nn.Sequential(model[0], lib.nn.Flatten())
        path = tmp_path / f"{lib.__name__}.pt"
        with open(path, "wb") as f:
            lib.save(head, f)
        with open(path, "rb") as f:
            back = lib.load(f, weights_only=False)
        copied = copy.deepcopy(model[0])
        results[lib.__name__] = (type(back[0]).__name__, tuple(back(lib.ones(1, 2)).shape),
                                 len(list(back.parameters())),
                                 type(copied).__name__, copied.weight is not model[0].weight)
        with pytest.raises(AttributeError, match="local object"):
            pickle.dumps(model)  # the whole model cannot be pickled, in both
    assert results["minigrad"] == results["torch"]


def test_failed_save_keeps_previous_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    mg.save({"v": np.arange(3)}, path)
    before = path.read_bytes()

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")
    monkeypatch.setattr(np, "savez", explode)
    with pytest.raises(RuntimeError, match="disk full"):
        mg.save({"v": np.arange(1000)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.npz"]


def test_crash_mid_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    mg.save({"v": 1}, path)
    real = np.savez

    def half_then_crash(file, **arrays):
        real(file, **arrays)
        file.truncate(file.tell() // 2)
        raise KeyboardInterrupt  # even an interrupt cleans up
    monkeypatch.setattr(np, "savez", half_then_crash)
    with pytest.raises(KeyboardInterrupt):
        mg.save({"v": np.arange(10_000)}, path)
    assert mg.load(path) == {"v": 1}
    assert os.listdir(tmp_path) == ["ckpt.npz"]


def test_overwrite_and_file_permissions(tmp_path):
    path = tmp_path / "c.npz"
    mg.save({"a": 1}, path)
    os.chmod(path, 0o640)
    mg.save({"a": 2}, path)
    assert mg.load(path) == {"a": 2}
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["c.npz"]


def test_missing_file(tmp_path):
    path = tmp_path / "nope.npz"
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        mg.load(path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mg.save({}, tmp_path / "no_dir" / "x.npz")


@pytest.mark.parametrize("cut", [0, 10, 0.5, -30])
def test_truncated_file(tmp_path, cut):
    path = tmp_path / "t.npz"
    mg.save({"w": np.arange(1000.0), "meta": "x"}, path)
    data = path.read_bytes()
    n = int(len(data) * cut) if isinstance(cut, float) else (cut if cut >= 0 else len(data) + cut)
    path.write_bytes(data[:n])
    with pytest.raises(ValueError, match="t.npz"):
        mg.load(path)


def test_corrupt_and_foreign_files(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"this is not a zip archive at all" * 10)
    with pytest.raises(ValueError, match="junk.npz"):
        mg.load(junk)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.ones(3), names=np.array(["a", "b"]))
    back = mg.load(foreign)  # NumPy's own archives load as np.load reads them
    assert list(back) == ["weights", "names"] and back["names"].tolist() == ["a", "b"]
    single = tmp_path / "single.npy"
    np.save(single, np.arange(3))
    np.testing.assert_array_equal(mg.load(single), np.arange(3))
    pickled = tmp_path / "pickled.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="pickled.npy.*NumPy object array.*weights_only=False"):
        mg.load(pickled)
    assert mg.load(pickled, weights_only=False)[0] == {"a": 1}


def test_load_never_unpickles(tmp_path, monkeypatch):
    seen = []
    real = np.load

    def spy(*args, **kwargs):
        seen.append(kwargs.get("allow_pickle"))
        return real(*args, **kwargs)
    monkeypatch.setattr(np, "load", spy)
    round_trip({"a": np.ones(2)}, tmp_path / "a.npz")
    assert seen == [False]


def test_optimizer_state_dict_round_trip(tmp_path):
    from minigrad.optim import Adam
    m = Toy()
    opt = Adam([{"params": [m.w]}, {"params": [m.b], "lr": 0.5}], lr=0.01)
    for p in m.parameters():
        p.grad = mg.tensor(np.ones(p.shape, np.float32))
    opt.step()
    sd = opt.state_dict()
    same(sd, round_trip(sd, tmp_path / "o.npz"))


scalars = (st.none() | st.booleans() | st.integers() | st.text(max_size=5)
           | st.floats(allow_nan=False))
arrays = st.builds(lambda xs, d: np.array(xs, dtype=d),
                   st.lists(st.integers(0, 100), max_size=4),
                   st.sampled_from([np.float32, np.int64, np.uint8, np.float16]))
keys = st.integers() | st.text(max_size=4) | st.booleans()
trees = st.recursive(scalars | arrays | arrays.map(mg.Tensor),
                     lambda kids: (st.lists(kids, max_size=3)
                                   | st.lists(kids, max_size=3).map(tuple)
                                   | st.dictionaries(keys, kids, max_size=3)
                                   | st.dictionaries(keys, kids, max_size=3).map(OrderedDict)),
                     max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(trees)
def test_property_round_trip(tmp_path_factory, obj):
    path = tmp_path_factory.mktemp("prop") / "p.npz"
    same(obj, round_trip(obj, path))


@pytest.mark.parametrize("meta", ["[1, 2, 3]", "[" * 5000 + "]" * 5000, '"text"'])
def test_crafted_metadata_is_a_clear_error(tmp_path, meta):
    """Metadata that is not a JSON object, or nested past the parser's depth, is refused with
    load's own message, not an AttributeError or RecursionError from deep inside."""
    from minigrad.checkpoint_format import META as _META
    path = tmp_path / "crafted.npz"
    np.savez(path, **{_META: np.array(meta)})
    with pytest.raises(ValueError, match="load: .* is truncated or corrupt"):
        mg.load(path)
