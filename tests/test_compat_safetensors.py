"""Graduating to PyTorch: `minigrad.save(state_dict, "x.safetensors")` writes the safetensors
format, which PyTorch's `safetensors.torch.load_file` reads into the same model, and
`minigrad.load` reads the files PyTorch writes. Writes are atomic and nothing is unpickled."""
import json
import os
import struct

import numpy as np
import pytest

import minigrad as mg

safetensors = pytest.importorskip("safetensors")


def _transformer(lib):
    return lib.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                              dim_feedforward=32, dropout=0.0, batch_first=True)


def _data(seed):
    rng = np.random.default_rng(seed)
    src = rng.standard_normal((3, 5, 16)).astype(np.float32)
    tgt = rng.standard_normal((3, 4, 16)).astype(np.float32)
    return src, tgt, rng.standard_normal((3, 4, 16)).astype(np.float32)


def _train(lib, model, steps=3, seed=0):
    """A few Adam steps towards a fixed target, so the weights are not their initial ones."""
    src, tgt, goal = (lib.tensor(a) for a in _data(seed))
    mask = lib.nn.Transformer.generate_square_subsequent_mask(4)
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(src, tgt, tgt_mask=mask) - goal) ** 2).mean()
        loss.backward()
        opt.step()
    return loss.item()


def _outputs(lib, model):
    src, tgt, _ = (lib.tensor(a) for a in _data(1))
    pad = lib.tensor([[False] * 4 + [True], [False] * 5, [False] * 5])
    with lib.no_grad():
        out = model(src, tgt, tgt_mask=lib.nn.Transformer.generate_square_subsequent_mask(4),
                    src_key_padding_mask=pad, memory_key_padding_mask=pad)
    return out.detach().numpy()


def test_minigrad_trained_weights_run_in_pytorch_and_back(tmp_path, torch):
    from safetensors.torch import load_file, save_file
    mg.manual_seed(0)
    model = _transformer(mg)
    _train(mg, model)
    path = tmp_path / "model.safetensors"
    mg.save(model.state_dict(), path)

    theirs = _transformer(torch)
    theirs.load_state_dict(load_file(path))  # strict: every name and shape must fit
    np.testing.assert_allclose(_outputs(torch, theirs), _outputs(mg, model), rtol=1e-4,
                               atol=1e-5)

    _train(torch, theirs, seed=2)  # PyTorch trains on, then hands the weights back
    back = tmp_path / "from_torch.safetensors"
    save_file(theirs.state_dict(), back)
    ours = _transformer(mg)
    ours.load_state_dict(mg.load(back))
    np.testing.assert_allclose(_outputs(mg, ours), _outputs(torch, theirs), rtol=1e-4, atol=1e-5)


def test_every_dtype_round_trips_through_the_reference_reader(tmp_path):
    from safetensors.numpy import load_file, save_file
    arrays = {"f64": np.linspace(0, 1, 6).reshape(2, 3), "f32": np.float32([1.5, -2]),
              "f16": np.float16([0.25]), "i64": np.arange(4), "i32": np.int32([-7]),
              "i16": np.int16([3]), "i8": np.int8([-1, 2]), "u8": np.uint8([255, 0]),
              "bool": np.array([True, False]), "scalar": np.array(3.5, np.float32),
              "empty": np.zeros((0, 3), np.float32), "strided": np.arange(12.0).reshape(3, 4).T}
    path = tmp_path / "all.safetensors"
    mg.save({k: mg.from_numpy(v) for k, v in arrays.items()}, path)
    theirs = load_file(path)
    for k, v in arrays.items():
        assert theirs[k].dtype == v.dtype and theirs[k].shape == v.shape, k
        np.testing.assert_array_equal(theirs[k], v)
    save_file(arrays | {"strided": np.ascontiguousarray(arrays["strided"])}, tmp_path / "np.st")
    ours = mg.load(tmp_path / "np.st")
    for k, v in arrays.items():
        assert ours[k].dtype == v.dtype and ours[k].shape == v.shape, k
        np.testing.assert_array_equal(ours[k].numpy(), v)


def test_the_layout_is_the_documented_one(tmp_path):
    path = tmp_path / "m.safetensors"
    mg.save({"b": mg.ones(3), "a": mg.arange(2)}, path)
    blob = path.read_bytes()
    n = struct.unpack("<Q", blob[:8])[0]
    assert (8 + n) % 8 == 0  # the data starts aligned
    header = json.loads(blob[8:8 + n])
    assert header["__metadata__"] == {"format": "pt"}
    assert header["b"] == {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}
    assert header["a"] == {"dtype": "I64", "shape": [2], "data_offsets": [12, 28]}
    assert len(blob) == 8 + n + 28
    assert list(mg.load(path)) == ["b", "a"]  # the writer's order comes back


def test_loaded_tensors_are_ordinary_tensors(tmp_path):
    path = tmp_path / "w.safetensors"
    mg.save({"w": mg.ones(2, 2, requires_grad=True)}, path)
    for location in (None, "cpu", mg.device("cpu"), lambda storage, loc: storage):
        w = mg.load(path, map_location=location)["w"]
        assert not w.requires_grad and w.dtype == np.float32
        w.add_(1)  # writable, owns its memory
        assert w.tolist() == [[2.0, 2.0], [2.0, 2.0]]


@pytest.mark.parametrize("obj, error, message", [
    ([mg.ones(2)], TypeError, "holds a flat dict of tensors"),
    ({"w": 1.5}, TypeError, "holds only tensors, but 'w' is a float"),
    ({3: mg.ones(2)}, TypeError, "names must be strings"),
    ({"__metadata__": mg.ones(1)}, ValueError, "reserved"),
    ({"c": np.array([1 + 2j])}, TypeError, "'c' has dtype complex128, which safetensors cannot"),
])
def test_bad_state_dicts_are_refused_and_leave_the_old_file(tmp_path, obj, error, message):
    path = tmp_path / "keep.safetensors"
    mg.save({"w": mg.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(error, match=message):
        mg.save(obj, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["keep.safetensors"]


def _corrupt(blob, kind):
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    if kind == "truncated":
        return blob[:-3]
    if kind == "trailing":
        return blob + b"\0" * 4
    if kind == "length":
        return struct.pack("<Q", 10**7) + blob[8:]
    if kind == "json":
        return blob[:8] + b"{" + b"x" * (n - 1) + blob[8 + n:]
    if kind == "gap":
        header["w"]["data_offsets"] = [4, 20]
    if kind == "f8":
        header["w"]["dtype"] = "F8_E4M3"
        header["w"]["shape"] = [32]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + blob[8 + n:]


@pytest.mark.parametrize("kind, message", [
    ("truncated", "do not follow the previous tensor's end|truncated|belong to none"),
    ("trailing", "4 bytes after the last tensor belong to none"),
    ("length", "not a minigrad checkpoint|does not fit"),
    ("json", "header is not JSON"),
    ("gap", r"do not follow the previous tensor's end \(0\)"),
    ("f8", "tensor 'w' has dtype F8_E4M3, which NumPy .* cannot hold; convert it in PyTorch"),
])
def test_corrupt_or_unsupported_files_name_the_problem(tmp_path, kind, message):
    good = tmp_path / "good.safetensors"
    mg.save({"w": mg.arange(4.0)}, good)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(_corrupt(good.read_bytes(), kind))
    with pytest.raises(ValueError, match=message):
        mg.load(bad)


def test_the_npz_checkpoint_format_is_unchanged(tmp_path):
    state = {"step": 3, "w": mg.ones(2), "nested": [mg.zeros(1), {"lr": 0.1}]}
    mg.save(state, tmp_path / "ckpt.npz")
    back = mg.load(tmp_path / "ckpt.npz", map_location="cpu", weights_only=True)
    assert back["step"] == 3 and back["nested"][1] == {"lr": 0.1}
    with pytest.raises(TypeError, match="holds a flat dict"):
        mg.save(state["nested"], tmp_path / "no.safetensors")
