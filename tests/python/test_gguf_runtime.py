# ===- test_gguf_runtime.py - Turbine's GGUF reader on examples/llm's files -=== #
#
# GGUF files of the tiny llama model written by examples/llm (gguf_writer.py
# and ggml_quants.py, which match llama.cpp's reference quantizers bit for
# bit; a writer independent of the C++ reader), read by `turbine params`:
# with examples/llm/llama.names every tensor gets its state_dict key, with
# the state_dict's shape (outermost first), the GGUF type and the offset the
# writer reported; the metadata prints; and every weight extracted by the
# C++ reader (Q8_0 / Q4_0 decoded by runtime/src/Ggml.cpp) equals
# gguf_reader.py's decoding bit for bit. Environment (set by ctest):
# TURBINE_BIN.
# ===---------------------------------------------------------------------=== #
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "llm"))
import llama_gguf  # noqa: E402
from gguf_reader import GGUFFile  # noqa: E402
from llama_model import LlamaConfig, build_model  # noqa: E402

TURBINE = os.environ["TURBINE_BIN"]
NAMES = os.path.join(ROOT, "examples", "llm", "llama.names")
TYPE_TEXT = {"f32": "f32", "f16": "f16", "bf16": "bf16", "q8_0": "Q8_0", "q4_0": "Q4_0"}


@pytest.fixture(scope="module")
def tiny():
    config = LlamaConfig.tiny()
    return config, build_model(config, seed=3).state_dict()


def write(tmp_path, tiny, weight_type):
    config, state = tiny
    path = str(tmp_path / ("tiny_%s.gguf" % weight_type))
    offsets = llama_gguf.write_gguf(state, config, path, weight_type)
    return path, offsets


def turbine(*args):
    result = subprocess.run([TURBINE, *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("weight_type", ["f32", "f16", "bf16", "q8_0", "q4_0"])
def test_list_with_name_map(tmp_path, tiny, weight_type):
    _, state = tiny
    path, offsets = write(tmp_path, tiny, weight_type)
    out = turbine("params", "list", path, "--parameter-name-map", NAMES)
    lines = out.splitlines()
    assert lines[0] == "%s: gguf file, %d parameters" % (path, len(state))
    assert lines[1].startswith("GGUF version 3, ")
    assert '  general.architecture (string) = "llama"' in lines
    assert any(line.startswith('  tokenizer.ggml.tokens (array[string]) = ["<unk>", "<s>", '
                               '"</s>", "<0x00>"') and line.endswith("(320 elements)]")
               for line in lines)
    header = lines.index(next(line for line in lines if line.startswith("name ")))
    rows = {}
    for line in lines[header + 1:-1]:
        name, kind, offset, size, type_text = line.split()
        rows[name] = (kind, int(offset), int(size), type_text)
    assert set(rows) == set(state)
    for key, tensor in state.items():
        shape = "x".join(str(d) for d in tensor.shape)
        element = TYPE_TEXT[weight_type] if tensor.dim() == 2 else "f32"
        kind, offset, _, type_text = rows[key]
        assert (kind, type_text) == ("data", "%sx%s" % (shape, element)), key
        assert offset == offsets[llama_gguf.gguf_name(key)], key


@pytest.mark.parametrize("weight_type", ["f32", "f16", "q8_0", "q4_0"])
def test_extracted_weights_match_reference_decoder(tmp_path, tiny, weight_type):
    _, state = tiny
    path, _ = write(tmp_path, tiny, weight_type)
    reference = GGUFFile(path)
    extracts = ["--extract=%s=%s" % (key, tmp_path / (key + ".npy")) for key in state]
    turbine("params", "dump", path, "--parameter-name-map", NAMES, "--name=norm.weight",
            *extracts)
    for key, tensor in state.items():
        got = np.load(tmp_path / (key + ".npy"))
        expected = reference.tensors[llama_gguf.gguf_name(key)].to_f32()
        assert got.shape == tuple(tensor.shape), key
        if weight_type == "f16" and tensor.dim() == 2:
            assert got.dtype == np.float16, key
            got = got.astype(np.float32)
        else:
            assert got.dtype == np.float32, key
        bad = np.flatnonzero(got.reshape(-1).view(np.uint32) !=
                             expected.reshape(-1).view(np.uint32))
        assert bad.size == 0, "%s: %d elements differ, first at %d: %r vs %r" % (
            key, bad.size, bad[0], got.reshape(-1)[bad[0]], expected.reshape(-1)[bad[0]])


def test_quantized_weight_cannot_bind_as_f32(tmp_path, tiny):
    path, _ = write(tmp_path, tiny, "q8_0")
    result = subprocess.run([TURBINE, "params", "convert", path, "-o",
                             str(tmp_path / "out.irpa")], capture_output=True, text=True)
    assert result.returncode == 1
    assert "a block-quantized GGUF tensor" in result.stderr
