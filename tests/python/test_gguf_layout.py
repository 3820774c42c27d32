# ===- test_gguf_layout.py - GGUF files of the llama model, read back -----=== #
#
# Writes the tiny llama model as GGUF (examples/llm/llama_gguf.py) in every
# weight type and parses each file with a minimal reader written here from the
# format description (ggml/docs/gguf.md), independent of gguf_writer.py and
# gguf_reader.py: magic and version 3, counts, metadata types and values
# (general.architecture = llama, the llama.* hyperparameters, the 32000-style
# dummy vocabulary), tensor infos with dims innermost first (torch [out, in]
# is ggml [in, out]), llama.cpp's tensor names, each offset a multiple of the
# 32-byte alignment, the data section aligned, tensors in bounds and not
# overlapping, and each tensor's bytes equal to the ggml encoding of the
# state_dict tensor. Then gguf_reader.py's round trip (f32 exact; Q8_0 equal
# to quantize-dequantize) and the error cases of writer and reader.
#
#   /usr/bin/python3 -m pytest -q tests/python/test_gguf_layout.py
# ===---------------------------------------------------------------------=== #
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch

LLM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "llm")
sys.path.insert(0, LLM)
import ggml_quants  # noqa: E402
import gguf_writer  # noqa: E402
from gguf_reader import GGUFFile, GGUFReadError  # noqa: E402
from llama_gguf import gguf_name, model_from_gguf, state_dict_key, write_gguf  # noqa: E402
from llama_model import LlamaConfig, build_model  # noqa: E402

TYPE_IDS = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "bf16": 30}
BLOCK = {0: (1, 4), 1: (1, 2), 30: (1, 2), 8: (32, 34), 2: (32, 18)}


class MiniReader:
    """Just enough GGUF v3 parsing for the checks, by hand with struct."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.raw = f.read()
        self.pos = 0
        assert self.take(4) == b"GGUF"
        self.version, n_tensors, n_kv = self.unpack("<IQQ")
        self.kv = {}
        for _ in range(n_kv):
            key = self.string()
            (vtype,) = self.unpack("<I")
            self.kv[key] = (vtype, self.value(vtype))
        self.infos = []
        for _ in range(n_tensors):
            name = self.string()
            (n_dims,) = self.unpack("<I")
            dims = list(self.unpack("<%dQ" % n_dims))
            ggml_type, offset = self.unpack("<IQ")
            self.infos.append((name, dims, ggml_type, offset))
        self.end_of_infos = self.pos

    def take(self, n):
        out = self.raw[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def string(self):
        (n,) = self.unpack("<Q")
        return self.take(n).decode("utf-8")

    def value(self, vtype):
        scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                  10: "<Q", 11: "<q", 12: "<d"}
        if vtype in scalar:
            return self.unpack(scalar[vtype])[0]
        if vtype == 8:
            return self.string()
        assert vtype == 9, "unexpected value type %d" % vtype
        etype, count = self.unpack("<IQ")
        return (etype, [self.value(etype) for _ in range(count)])


@pytest.fixture(scope="module")
def tiny():
    config = LlamaConfig.tiny()
    return config, build_model(config, seed=5)


@pytest.mark.parametrize("weight_type", ["f32", "f16", "bf16", "q8_0", "q4_0"])
def test_layout(tiny, tmp_path, weight_type):
    config, model = tiny
    path = str(tmp_path / ("m-%s.gguf" % weight_type))
    offsets = write_gguf(model.state_dict(), config, path, weight_type)
    r = MiniReader(path)
    assert r.version == 3
    kv = r.kv
    assert kv["general.architecture"] == (8, "llama")
    assert kv["general.alignment"] == (4, 32)
    expected_u32 = {"llama.embedding_length": 64, "llama.block_count": 2,
                    "llama.feed_forward_length": 96, "llama.attention.head_count": 4,
                    "llama.attention.head_count_kv": 2, "llama.context_length": 128,
                    "llama.rope.dimension_count": 16, "llama.vocab_size": 320}
    for key, value in expected_u32.items():
        assert kv[key] == (4, value), key
    assert kv["llama.attention.layer_norm_rms_epsilon"] == (6, pytest.approx(1e-5))
    assert kv["tokenizer.ggml.model"] == (8, "llama")
    etype, tokens = kv["tokenizer.ggml.tokens"][1]
    assert kv["tokenizer.ggml.tokens"][0] == 9 and etype == 8
    assert len(tokens) == 320 and len(set(tokens)) == 320
    assert tokens[:3] == ["<unk>", "<s>", "</s>"] and tokens[3 + 0x0A] == "<0x0A>"
    assert kv["tokenizer.ggml.scores"][1][0] == 6 and len(kv["tokenizer.ggml.scores"][1][1]) == 320
    types = kv["tokenizer.ggml.token_type"][1]
    assert types[0] == 5 and types[1][:4] == [2, 3, 3, 6] and types[1][-1] == 1

    # Tensor infos: names, dims innermost first, types, aligned offsets.
    state = model.state_dict()
    assert sorted(name for name, _, _, _ in r.infos) == sorted(gguf_name(k) for k in state)
    data_start = (r.end_of_infos + 31) // 32 * 32
    assert all(b == 0 for b in r.raw[r.end_of_infos:data_start])
    spans = []
    for name, dims, ggml_type, offset in r.infos:
        tensor = state[state_dict_key(name)].numpy()
        assert dims == list(reversed(tensor.shape)), name
        expected_type = TYPE_IDS[weight_type] if tensor.ndim == 2 else 0
        assert ggml_type == expected_type, name
        assert offset % 32 == 0, name
        block, size = BLOCK[ggml_type]
        nbytes = tensor.size // block * size
        start = data_start + offset
        assert offsets[name] == start
        assert start + nbytes <= len(r.raw), name
        spans.append((start, start + nbytes))
        data = np.frombuffer(r.raw[start:start + nbytes], np.uint8)
        np.testing.assert_array_equal(data, ggml_quants.encode(tensor, ggml_type), err_msg=name)
        if ggml_type == 0:
            np.testing.assert_array_equal(data.view("<f4").reshape(tensor.shape), tensor)
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "tensors overlap"
    # the specific dims of a GQA projection and of the embedding
    infos = {name: dims for name, dims, _, _ in r.infos}
    assert infos["blk.0.attn_k.weight"] == [64, 32]
    assert infos["token_embd.weight"] == [64, 320]
    assert infos["blk.1.ffn_down.weight"] == [96, 64]


def test_reader_round_trip(tiny, tmp_path):
    config, model = tiny
    path = str(tmp_path / "f32.gguf")
    write_gguf(model.state_dict(), config, path, "f32")
    back = model_from_gguf(path)
    for key, value in model.state_dict().items():
        assert torch.equal(value, back.state_dict()[key]), key
    path = str(tmp_path / "q8.gguf")
    write_gguf(model.state_dict(), config, path, "q8_0")
    back = model_from_gguf(path)
    w = model.state_dict()["layers.1.attention.wv.weight"].numpy()
    np.testing.assert_array_equal(back.state_dict()["layers.1.attention.wv.weight"].numpy(),
                                  ggml_quants.round_trip(w, "q8_0"))


def test_name_map_is_one_to_one(tiny):
    _, model = tiny
    keys = list(model.state_dict())
    names = [gguf_name(k) for k in keys]
    assert len(set(names)) == len(names)
    assert [state_dict_key(n) for n in names] == keys
    assert gguf_name("layers.1.feed_forward.w3.weight") == "blk.1.ffn_up.weight"
    with pytest.raises(ValueError, match="no GGUF name"):
        gguf_name("layers.0.attention.k_cache")


def test_writer_errors(tmp_path):
    w = gguf_writer.GGUFWriter()
    w.add_tensor("a", [32, 2], "q8_0", np.zeros(68, np.uint8))
    with pytest.raises(gguf_writer.GGUFError, match="duplicate tensor 'a'"):
        w.add_tensor("a", [32], "f32", np.zeros(128, np.uint8))
    with pytest.raises(gguf_writer.GGUFError, match="100 bytes given"):
        w.add_tensor("b", [32, 2], "q8_0", np.zeros(100, np.uint8))
    with pytest.raises(gguf_writer.GGUFError, match="multiple of 32"):
        w.add_tensor("c", [48, 2], "q4_0", np.zeros(54, np.uint8))
    with pytest.raises(gguf_writer.GGUFError, match="longer than 63 bytes"):
        w.add_tensor("x" * 64, [1], "f32", np.zeros(4, np.uint8))
    with pytest.raises(gguf_writer.GGUFError, match="duplicate metadata key"):
        w.add_uint32("general.alignment", 64)
    with pytest.raises(gguf_writer.GGUFError, match="cannot store"):
        w.add_uint32("k", -1)


def test_write_gguf_errors(tmp_path):
    config = LlamaConfig(dim=48, n_layers=1, n_heads=3, n_kv_heads=1, ffn_dim=64,
                         vocab_size=300, max_seq_len=16)
    model = build_model(config)
    with pytest.raises(ValueError, match=r"token_embd.weight.*multiple of 32"):
        write_gguf(model.state_dict(), config, str(tmp_path / "bad.gguf"), "q4_0")
    with pytest.raises(ValueError, match="unsupported weight type 'q5_k'"):
        write_gguf(model.state_dict(), config, str(tmp_path / "bad.gguf"), "q5_k")
    result = subprocess.run([sys.executable, os.path.join(LLM, "llama_gguf.py"),
                             str(tmp_path / "x.gguf"), "--type", "q2_k", "--tiny"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_reader_errors(tiny, tmp_path):
    config, model = tiny
    path = str(tmp_path / "good.gguf")
    write_gguf(model.state_dict(), config, path, "q4_0")
    raw = open(path, "rb").read()
    r = MiniReader(path)

    def corrupt(data, name):
        p = str(tmp_path / name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    with pytest.raises(GGUFReadError, match="bad magic"):
        GGUFFile(corrupt(b"GGUG" + raw[4:], "magic.gguf"))
    with pytest.raises(GGUFReadError, match="version 7"):
        GGUFFile(corrupt(raw[:4] + struct.pack("<I", 7) + raw[8:], "version.gguf"))
    with pytest.raises(GGUFReadError, match="truncated"):
        GGUFFile(corrupt(raw[:5000], "metadata-cut.gguf"))
    with pytest.raises(GGUFReadError, match="runs past the end"):
        GGUFFile(corrupt(raw[:len(raw) - 100], "data-cut.gguf"))
    with pytest.raises(GGUFReadError, match="tensor count"):
        GGUFFile(corrupt(raw[:8] + struct.pack("<Q", 1 << 60) + raw[16:], "count.gguf"))
    # the last tensor info's offset field: misaligned
    offset_at = r.end_of_infos - 8
    bad = raw[:offset_at] + struct.pack("<Q", r.infos[-1][3] + 4) + raw[offset_at + 8:]
    with pytest.raises(GGUFReadError, match="not a multiple of 32"):
        GGUFFile(corrupt(bad, "misaligned.gguf"))
    # its type field: an unsupported ggml type (Q5_K = 13)
    bad = raw[:offset_at - 4] + struct.pack("<I", 13) + raw[offset_at:]
    with pytest.raises(GGUFReadError, match="unsupported ggml type 13"):
        GGUFFile(corrupt(bad, "type.gguf"))
