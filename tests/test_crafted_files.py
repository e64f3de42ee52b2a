"""Crafted files: every malformed field of every format `minigrad.load` reads (minigrad's
npz + JSON, safetensors, torch.save's zip) is one FileFormatError (a ValueError) naming the
file and the field, and every file the reference writers produce (safetensors' own writer,
torch.save for what weights_only allows, NumPy's npz) loads. Each table row is one file."""
import io
import json
import pickle
import re
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad.file_errors import FileFormatError, WeightsOnlyError


def _refused(path, words, weights_only=False, error=FileFormatError):
    with pytest.raises(error) as info:
        mg.load(path, weights_only=weights_only)
    message = str(info.value)
    assert path.name in message and "\n" not in message, message
    assert re.search(words, message), message
    assert isinstance(info.value, ValueError)


# --- minigrad's npz + JSON ---------------------------------------------------------------------

A = {"a0": np.arange(4.0, dtype=np.float32), "a1": np.arange(3), "a2": np.array(["x"])}
T = '{"format": "minigrad-checkpoint", "version": 1, "root": %s}'

NPZ_CASES = [  # (id, metadata text, arrays, words the message must contain)
    ("huge index", T % '{"t": "tensor", "i": 1e999}', A, "field 'i' is inf"),
    ("negative index", T % '{"t": "tensor", "i": -1}', A, "field 'i' is -1"),
    ("index past the entries", T % '{"t": "array", "i": 3}', A, "field 'i' is 3"),
    ("index a string", T % '{"t": "tensor", "i": "0"}', A, "field 'i' is '0'"),
    ("index a bool", T % '{"t": "tensor", "i": true}', A, "field 'i' is True"),
    ("index a float", T % '{"t": "tensor", "i": 1.5}', A, "field 'i' is 1.5"),
    ("index missing", T % '{"t": "tensor"}', A, "field 'i' is None"),
    ("entry missing", T % '{"t": "array", "i": 1}', {"a0": A["a0"], "zz": A["a1"]},
     "entry a1, which the archive lacks"),
    ("unknown tag", T % '{"t": "module", "i": 0}', A, "field 't' is 'module'"),
    ("tag a number", T % '{"t": 3}', A, "field 't' is 3"),
    ("no tag", T % '{"x": 1}', A, "field 't' is None"),
    ("requires_grad a string", T % '{"t": "tensor", "i": 0, "rg": "yes"}', A, "field 'rg'"),
    ("gradients of integers", T % '{"t": "tensor", "i": 1, "rg": true}', A, "int64 tensor"),
    ("tensor of strings", T % '{"t": "tensor", "i": 2}', A, "dtype <U1"),
    ("scalar of a vector", T % '{"t": "scalar", "i": 0}', A, r"shape \(4,\), not \(\)"),
    ("bytes of floats", T % '{"t": "bytes", "i": 0}', A, "1-d uint8"),
    ("tuple without a list", T % '{"t": "tuple", "v": 5}', A, "field 'v' is 5"),
    ("dict without items", T % '{"t": "dict"}', A, "field 'items' is None"),
    ("dict item not a pair", T % '{"t": "dict", "items": [[1, 2, 3]]}', A, "item 0"),
    ("dict key a list", T % '{"t": "dict", "items": [[[1], 2]]}', A, "key 0 is a list"),
    ("set of lists", T % '{"t": "set", "v": [[1], [2]]}', A, "set of unhashable items"),
    ("set without a list", T % '{"t": "frozenset", "v": 1}', A, "field 'v' is 1"),
    ("unknown dtype", T % '{"t": "dtype", "v": "float99"}', A, "not a dtype"),
    ("unknown device", T % '{"t": "device", "v": "gpu"}', A, "not a device"),
    ("wrong deep inside a list", T % '[1, {"t": "odict", "items": 7}]', A, "'1': field"),
    ("metadata a list", "[1, 2]", A, "not an object"),
    ("metadata not JSON", "{nope", A, "not readable JSON"),
    ("metadata nested 5,000 deep", "[" * 5000 + "]" * 5000, A, "__minigrad__"),
    ("root nested 5,000 deep", T % ("[" * 5000 + "]" * 5000), A, "nested too deeply|JSON"),
    ("wrong format", '{"format": "other", "version": 1, "root": 1}', A, "field 'format'"),
    ("version a string", '{"format": "minigrad-checkpoint", "version": "1", "root": 1}', A,
     "field 'version'"),
    ("version from the future", '{"format": "minigrad-checkpoint", "version": 99, "root": 1}',
     A, "newer than this minigrad"),
    ("no root", '{"format": "minigrad-checkpoint", "version": 1}', A, "field 'root'"),
    ("pickle of garbage", T % '{"t": "pickle", "i": 0, "type": "x.Y"}',
     {"a0": np.frombuffer(b"\x80\x02garbage", np.uint8)}, "cannot be unpickled"),
    ("object array entry", T % '{"t": "array", "i": 0}',
     {"a0": np.array([{"a": 1}], dtype=object)}, "entry a0"),
]


@pytest.mark.parametrize("meta, arrays, words", [c[1:] for c in NPZ_CASES],
                         ids=[c[0] for c in NPZ_CASES])
def test_malformed_npz_metadata(tmp_path, meta, arrays, words):
    path = tmp_path / "crafted.npz"
    np.savez(path, __minigrad__=np.array(meta), **arrays)
    _refused(path, words)


def _npy(shape, data, descr="<f8"):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue() + data


@pytest.mark.parametrize("entry, words", [
    (_npy((10**12,), bytes(8)), "promises float64 \\(1000000000000,\\)"),
    (_npy((4,), bytes(8)), "32 bytes\\) but it holds 8"),
    (b"\x93NUMPY\x01\x00\xff\x00{bad", "unreadable"),
    (_npy((2,), bytes(16), descr="<x9"), "unreadable"),
], ids=["shape of a terabyte", "shape past the bytes", "header garbage", "unknown dtype"])
@pytest.mark.parametrize("name", ["a0", "__minigrad__"])
def test_malformed_npy_entries(tmp_path, entry, words, name):
    """An entry's own .npy header is checked against its bytes before NumPy allocates."""
    path = tmp_path / "crafted.npz"
    with zipfile.ZipFile(path, "w") as z:
        if name != "__minigrad__":
            meta = np.array(T % '{"t": "array", "i": 0}')
            z.writestr("__minigrad__.npy", _npy((), meta.tobytes(), descr=meta.dtype.str))
        z.writestr(f"{name}.npy", entry)
    _refused(path, f"entry {name}.*" + words)


def test_a_pickled_part_is_refused_by_default(tmp_path):
    path = tmp_path / "crafted.npz"
    np.savez(path, __minigrad__=np.array(T % '[0, {"t": "pickle", "i": 0, "type": "os.system"}]'),
             a0=np.frombuffer(pickle.dumps(print), np.uint8))
    _refused(path, "'1'.*pickled os.system.*weights_only=False", weights_only=None,
             error=WeightsOnlyError)


# --- safetensors --------------------------------------------------------------------------------

def _st(header, data=b"", length=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


W = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
D8 = bytes(8)

ST_CASES = [  # (id, file bytes, words)
    ("shorter than the length", b"\x01\x02", "header length"),
    ("huge header length", _st({"w": W}, D8, length=2**63), "header length"),
    ("header past the end", _st({"w": W}, D8, length=200), "header length"),
    ("header not UTF-8", _st(b"{\xff\xfe}", D8), "header is not JSON"),
    ("header not JSON", _st(b"{nope}", D8), "header is not JSON"),
    ("header a list", _st(b"[1, 2]   ", D8), "header: its header is a JSON list"),
    ("a name twice", _st(b'{"w": %s, "w": %s}' % ((json.dumps(W).encode(),) * 2), D8),
     "appears twice"),
    ("metadata not strings", _st({"__metadata__": {"a": 1}, "w": W}, D8), "__metadata__"),
    ("entry not an object", _st({"w": [1, 2]}, D8), "tensor 'w'"),
    ("unknown dtype", _st({"w": {**W, "dtype": "F33"}}, D8), "field 'dtype'.*'F33'"),
    ("dtype a number", _st({"w": {**W, "dtype": 3}}, D8), "field 'dtype'"),
    ("8-bit float", _st({"w": {**W, "dtype": "F8_E4M3", "shape": [8]}}, D8),
     "F8_E4M3.*convert it in PyTorch"),
    ("shape a string", _st({"w": {**W, "shape": "2"}}, D8), "field 'shape'"),
    ("shape negative", _st({"w": {**W, "shape": [-2]}}, D8), "field 'shape'"),
    ("shape huge", _st(b'{"w": {"dtype": "F32", "shape": [1e999], "data_offsets": [0, 8]}}',
                       D8), "field 'shape'"),
    ("shape of bools", _st({"w": {**W, "shape": [True, True]}}, D8), "field 'shape'"),
    ("shape bigger than the bytes", _st({"w": {**W, "shape": [3]}}, D8),
     "holds 8 bytes, but F32 \\[3\\] needs 12"),
    ("shape overflowing int64", _st({"w": {**W, "shape": [2**40, 2**40]}}, D8), "needs"),
    ("offsets missing", _st({"w": {"dtype": "F32", "shape": [2]}}, D8), "'data_offsets'"),
    ("offsets one number", _st({"w": {**W, "data_offsets": [0]}}, D8), "'data_offsets'"),
    ("offsets reversed", _st({"w": {**W, "data_offsets": [8, 0]}}, D8), "begin <= end"),
    ("offsets negative", _st({"w": {**W, "data_offsets": [-8, 0]}}, D8), "'data_offsets'"),
    ("offsets huge", _st(b'{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 1e999]}}',
                         D8), "'data_offsets'"),
    ("offsets past the end", _st({"w": {**W, "data_offsets": [8, 16]}}, D8),
     "do not follow|truncated"),
    ("overlapping tensors", _st({"w": W, "v": {**W, "data_offsets": [4, 12]}}, bytes(12)),
     "do not follow the previous tensor's end \\(8\\)"),
    ("a gap between tensors", _st({"w": W, "v": {**W, "data_offsets": [12, 20]}}, bytes(20)),
     "do not follow"),
    ("bytes that belong to none", _st({"w": W}, bytes(12)), "4 bytes after the last tensor"),
    ("truncated data", _st({"w": W}, bytes(6)), "truncated"),
]


@pytest.mark.parametrize("blob, words", [c[1:] for c in ST_CASES], ids=[c[0] for c in ST_CASES])
def test_malformed_safetensors_headers(tmp_path, blob, words):
    path = tmp_path / "crafted.safetensors"
    path.write_bytes(blob)
    _refused(path, words)


# --- torch.save's zip files ---------------------------------------------------------------------

class _Storage:
    def __init__(self, key, numel, kind="FloatStorage"):
        self.key, self.numel, self.kind = key, numel, kind


class _Tensor:
    """Pickles as torch.save pickles a tensor: _rebuild_tensor_v2 on a persistent storage."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, OrderedDict())

    def __reduce__(self):
        import torch
        return torch._utils._rebuild_tensor_v2, self.args


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            import torch
            return ("storage", getattr(torch, obj.kind), obj.key, "cpu", obj.numel)
        return None


def _torch_zip(obj, storages, byteorder=b"little", pkl=None):
    """A zip laid out as torch.save lays it out, holding `obj` pickled as above."""
    buf = io.BytesIO()
    if pkl is None:
        out = io.BytesIO()
        _Pickler(out, protocol=2).dump(obj)
        pkl = out.getvalue()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", byteorder)
        for key, raw in storages.items():
            z.writestr(f"archive/data/{key}", raw)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


S4 = {"0": np.arange(4, dtype=np.float32).tobytes()}


def _good():
    return {"w": _Tensor(_Storage("0", 4), 0, (2, 2), (2, 1))}


TORCH_CASES = [  # (id, file bytes, words)
    ("storage entry missing", lambda: _torch_zip(_good(), {}), "storage '0'.*missing"),
    ("storage shorter than its count", lambda: _torch_zip(
        _good(), {"0": bytes(12)}), "holds 12 bytes, not 4 elements"),
    ("tensor past its storage", lambda: _torch_zip(
        {"w": _Tensor(_Storage("0", 4), 1, (2, 2), (2, 1))}, S4), "past the storage's 4"),
    ("negative stride", lambda: _torch_zip(
        {"w": _Tensor(_Storage("0", 4), 3, (4,), (-1,))}, S4), "non-negative integers"),
    ("size and stride of two ranks", lambda: _torch_zip(
        {"w": _Tensor(_Storage("0", 4), 0, (2, 2), (1,))}, S4), "of one rank"),
    ("size a string", lambda: _torch_zip(
        {"w": _Tensor(_Storage("0", 4), 0, "22", (1,))}, S4), "non-negative integers"),
    ("bad byteorder", lambda: _torch_zip(_good(), S4, byteorder=b"middle"), "entry byteorder"),
    ("pickle of garbage", lambda: _torch_zip(None, S4, pkl=b"\x80\x02garbage"), "data.pkl"),
    ("empty pickle", lambda: _torch_zip(None, S4, pkl=b""), "data.pkl"),
    ("persistent id not a storage", lambda: _torch_zip(
        None, S4, pkl=b"\x80\x02X\x03\x00\x00\x00abcQ."), "not a storage"),
]


@pytest.mark.parametrize("make, words", [c[1:] for c in TORCH_CASES],
                         ids=[c[0] for c in TORCH_CASES])
def test_malformed_torch_zips(tmp_path, make, words):
    path = tmp_path / "crafted.pt"
    path.write_bytes(make())
    _refused(path, words)


@pytest.mark.parametrize("obj, words", [
    (print, "builtin.*print"),
    (OrderedDict(), None),  # a BUILD that sets a tensor's attributes is refused below
])
def test_torch_zips_naming_other_globals_are_refused_by_default(tmp_path, obj, words):
    path = tmp_path / "crafted.pt"
    if words is None:  # BUILD on a tensor: (tensor, {"_array": "x"}) state
        out = io.BytesIO()
        _Pickler(out, protocol=2).dump(_good()["w"])
        pkl = out.getvalue()[:-1] + b'}X\x06\x00\x00\x00_arrayX\x01\x00\x00\x00xsb.'
        path.write_bytes(_torch_zip(None, S4, pkl=pkl))
        words = "BUILD"
    else:
        path.write_bytes(_torch_zip({"f": obj}, S4))
    _refused(path, words, weights_only=None, error=WeightsOnlyError)


def test_the_crafting_helper_writes_what_torch_reads(tmp_path, torch):
    """The malformed files above differ from this good one in one field each."""
    path = tmp_path / "good.pt"
    path.write_bytes(_torch_zip(_good(), S4))
    expected = torch.load(path, weights_only=True)["w"].numpy()
    np.testing.assert_array_equal(mg.load(path)["w"].numpy(), expected)


# --- files the reference writers produce load ---------------------------------------------------

def test_safetensors_own_writer(tmp_path, torch):
    from safetensors.torch import save_file
    state = {"f32": torch.randn(3, 4), "f64": torch.randn(2, dtype=torch.float64),
             "f16": torch.randn(5).half(), "bf16": torch.randn(4).bfloat16(),
             "i64": torch.arange(6).reshape(2, 3), "i8": torch.tensor([-1, 2], dtype=torch.int8),
             "u8": torch.tensor([255], dtype=torch.uint8), "b": torch.tensor([True, False]),
             "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3)}
    save_file(state, tmp_path / "m.safetensors", metadata={"format": "pt", "note": "x"})
    back = mg.load(tmp_path / "m.safetensors")
    assert list(back) == list(state) or sorted(back) == sorted(state)
    for k, v in state.items():
        want = v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy()
        assert back[k].dtype == want.dtype and back[k].shape == want.shape, k
        np.testing.assert_array_equal(back[k].numpy(), want)


def test_torch_save_of_what_weights_only_allows(tmp_path, torch):
    lin = torch.nn.Linear(3, 2)
    base = torch.arange(12.0).reshape(3, 4)
    obj = {"state": lin.state_dict(), "param": lin.weight, "view": base[:, 1:3],
           "transposed": base.t(), "every other": base.flatten()[::2],
           "dtypes": [torch.ones(2, dtype=d) for d in (torch.float64, torch.float16,
                                                      torch.int32, torch.int16, torch.uint8,
                                                      torch.bool, torch.uint16)],
           "bf16": torch.tensor([1.5, -0.25], dtype=torch.bfloat16), "empty": torch.zeros(0),
           "scalar": torch.tensor(7), "size": torch.Size([2, 3]), "dtype": torch.float32,
           "plain": (1, 2.5, "s", None, True, {3: [4]}), "set": {1, 2}}
    path = tmp_path / "obj.pt"
    torch.save(obj, path)
    ref = torch.load(path, weights_only=True)
    buf = io.BytesIO(path.read_bytes())
    for back in (mg.load(path), mg.load(buf)):
        def same(a, b):
            if isinstance(b, torch.Tensor):
                want = b.float().numpy() if b.dtype == torch.bfloat16 else b.detach().numpy()
                assert isinstance(a, mg.Tensor) and a.dtype == want.dtype
                np.testing.assert_array_equal(a.numpy(), want)
                assert a.requires_grad == b.requires_grad
            elif isinstance(b, dict):
                assert list(a) == list(b) and type(a) is type(b)
                for k in b:
                    same(a[k], b[k])
            elif isinstance(b, (list, tuple)):
                assert len(a) == len(b)
                for x, y in zip(a, b):
                    same(x, y)
            elif isinstance(b, torch.dtype):
                assert a is mg.float32
            else:
                assert a == b
        same(back, ref)
    mg.nn.Linear(3, 2).load_state_dict(mg.load(path)["state"])


def test_numpy_npz_and_npy(tmp_path):
    arrays = {"w": np.arange(6.0).reshape(2, 3), "ids": np.array([3, 1]), "s": np.array("x")}
    np.savez(tmp_path / "a.npz", **arrays)
    np.savez_compressed(tmp_path / "c.npz", **arrays)
    for name in ("a.npz", "c.npz"):
        back = mg.load(tmp_path / name)
        assert list(back) == list(arrays)
        for k in arrays:
            np.testing.assert_array_equal(back[k], arrays[k])
    np.save(tmp_path / "x.npy", arrays["w"])
    np.testing.assert_array_equal(mg.load(tmp_path / "x.npy"), arrays["w"])
