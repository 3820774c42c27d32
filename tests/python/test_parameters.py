# ===- test_parameters.py - Parameter archives from Python ---------------=== #
#
# ParameterArchive / ParameterArchiveBuilder / save_module_parameters over
# the runtime's .irpa and safetensors readers and writers:
#  * a module's state_dict round-trips (names, dtypes, values) in both
#    formats; as_tensor() is zero copy (a view of the mapping: the same
#    address twice) and writing to it leaves the file unchanged;
#  * blobs (untyped bytes), splats, entries copied from another archive with
#    renames and exclusions;
#  * the safetensors file is read back by a minimal independent parser of
#    the format (8-byte header length, JSON header, data);
#  * per-tensor externalization when exporting: only the marked weights go
#    out, renamed when asked; the artifact runs with the file and a weight
#    set written by the builder under those names;
#  * errors: unknown entry, blob read as a tensor, safetensors with a blob,
#    externalizing a name the model does not have.
# ===---------------------------------------------------------------------=== #
import json
import struct

import pytest
import torch

import turbine_torch
from turbine_torch import (ParameterArchive, ParameterArchiveBuilder,
                           save_module_parameters)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)
        self.register_buffer("scale", torch.arange(4, dtype=torch.float32))

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) * self.scale


@pytest.mark.parametrize("suffix", [".irpa", ".safetensors"])
def test_module_round_trip(tmp_path, suffix):
    torch.manual_seed(0)
    net = Net()
    path = tmp_path / ("net" + suffix)
    save_module_parameters(path, net)
    archive = ParameterArchive(path)
    assert archive.format == suffix[1:]
    state = net.state_dict()
    assert sorted(archive.names()) == sorted(state)
    for name, entry in archive.items():
        assert entry.dtype == "f32" and entry.shape == tuple(state[name].shape)
        assert torch.equal(entry.as_tensor(), state[name])


def test_zero_copy_and_copy_on_write(tmp_path):
    path = tmp_path / "w.irpa"
    w = torch.randn(64, 64)
    ParameterArchiveBuilder().add_tensor("w", w).save(path)
    archive = ParameterArchive(path)
    a, b = archive["w"].as_tensor(), archive["w"].as_tensor()
    assert a.data_ptr() == b.data_ptr()          # both views of the one mapping
    assert a.data_ptr() % 64 == 0
    a.fill_(7.0)                                 # private pages only
    assert torch.equal(ParameterArchive(path)["w"].as_tensor(), w)


def test_blobs_splats_dtypes_and_renames(tmp_path):
    source = tmp_path / "src.irpa"
    (ParameterArchiveBuilder()
        .add_tensor("a", torch.arange(6, dtype=torch.int64).reshape(2, 3))
        .add_tensor("h", torch.randn(5).half())
        .add_blob("tokenizer", b"\x00\x01hello")
        .add_splat("ones", 1.0, (3, 4))
        .save(source))
    src = ParameterArchive(source)
    assert src["tokenizer"].dtype is None and src["tokenizer"].as_bytes() == b"\x00\x01hello"
    assert torch.equal(src["tokenizer"].as_flat_tensor(),
                       torch.tensor([0, 1, 104, 101, 108, 108, 111], dtype=torch.uint8))
    with pytest.raises(ValueError, match="has no tensor type"):
        src["tokenizer"].as_tensor()
    assert src["ones"].kind == "splat"
    assert torch.equal(src["ones"].as_tensor(), torch.ones(3, 4))
    assert src["h"].as_tensor().dtype == torch.float16
    with pytest.raises(KeyError, match="has no entry 'missing'"):
        src["missing"]

    out = tmp_path / "renamed.irpa"
    (ParameterArchiveBuilder()
        .add_archive(src, rename={"a": "layer.a"}, exclude=["h"])
        .save(out))
    renamed = ParameterArchive(out)
    assert sorted(renamed.names()) == ["layer.a", "ones", "tokenizer"]
    assert torch.equal(renamed["layer.a"].as_tensor(), src["a"].as_tensor())
    assert renamed["ones"].kind == "splat"       # kept as a splat
    with pytest.raises(KeyError, match="no entries"):
        ParameterArchiveBuilder().add_archive(src, rename={"nope": "x"})
    with pytest.raises(ValueError, match="safetensors"):
        ParameterArchiveBuilder().add_blob("b", b"xyz").save(tmp_path / "b.safetensors")
    with pytest.raises(ValueError, match="added twice"):
        ParameterArchiveBuilder().add_tensor("x", torch.ones(1)).add_tensor("x", torch.ones(1))


def test_safetensors_layout_read_independently(tmp_path):
    path = tmp_path / "t.safetensors"
    t = {"w": torch.randn(3, 5), "i": torch.arange(4, dtype=torch.int32)}
    b = ParameterArchiveBuilder()
    for k, v in t.items():
        b.add_tensor(k, v)
    b.save(path)
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    dtypes = {"F32": torch.float32, "I32": torch.int32}
    for name, tensor in t.items():
        info = header[name]
        start, end = info["data_offsets"]
        got = torch.frombuffer(bytearray(body[start:end]), dtype=dtypes[info["dtype"]])
        assert info["shape"] == list(tensor.shape)
        assert torch.equal(got.reshape(tensor.shape), tensor)


def test_irpa_magic(tmp_path):
    path = tmp_path / "h.irpa"
    ParameterArchiveBuilder().add_tensor("x", torch.ones(2)).save(path)
    # IREE's parameter archive header starts with the magic 'IRPA'.
    assert path.read_bytes()[:4] == b"IRPA"


def test_per_tensor_externalization_and_renames(tmp_path):
    torch.manual_seed(1)
    net = Net().eval()
    x = torch.randn(3, 16)
    with torch.no_grad():
        expected = net(x)
    exported = turbine_torch.export(net, x)
    # Which compiled parameters come from fc1 (the compiler may store the
    # weight rearranged, under a name derived from the state_dict key).
    first = tmp_path / "first.irpa"
    exported.compile(externalize_params=first, externalize=[net.fc1.weight, "fc1.bias"])
    names = ParameterArchive(first).names()
    assert len(names) == 2 and all(n.startswith("fc1.") for n in names), names
    weight = next(n for n in names if n.startswith("fc1.weight"))
    bias = next(n for n in names if n.startswith("fc1.bias"))
    params = tmp_path / "fc1.irpa"
    compiled = exported.compile(save_to=tmp_path / "m.tmod", externalize_params=params,
                                externalize=[net.fc1.weight, "fc1.bias"],
                                rename={weight: "encoder.w"})
    torch.testing.assert_close(compiled(x), expected, atol=1e-5, rtol=1e-5)
    archive = ParameterArchive(params)
    # Only the marked weights went out (fc2 stays in the artifact, however big).
    assert sorted(archive.names()) == sorted(["encoder.w", bias])
    assert torch.equal(archive["encoder.w"].as_tensor(),
                       turbine_torch.stored_tensor(weight, net.state_dict()))
    # Another weight set under the same names, without recompiling.
    other = Net()
    swapped = tmp_path / "other.irpa"
    (ParameterArchiveBuilder()
        .add_tensor("encoder.w", turbine_torch.stored_tensor(weight, other.state_dict()))
        .add_tensor(bias, turbine_torch.stored_tensor(bias, other.state_dict()))
        .save(swapped))
    m = turbine_torch.load(tmp_path / "m.tmod", parameters=[swapped])
    with torch.no_grad():
        net.fc1.load_state_dict(other.fc1.state_dict())
        torch.testing.assert_close(m(x), net(x), atol=1e-5, rtol=1e-5)
    with pytest.raises(RuntimeError, match="'fc3.weight' names no parameter of the artifact"):
        exported.compile(externalize_params=tmp_path / "x.irpa", externalize=["fc3.weight"])
    with pytest.raises(RuntimeError, match="'fc2.bias' is renamed but stays"):
        exported.compile(externalize_params=tmp_path / "y.irpa", externalize=["fc1.bias"],
                         rename={"fc2.bias": "z"})
    with pytest.raises(ValueError, match="need externalize_params"):
        exported.compile(externalize=["fc1.bias"])
