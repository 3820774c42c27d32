# ===- test_gguf_weights_from.py - compile(weights_from=F.gguf) from Python -=== #
#
# The Python compile entry takes a GGUF file as `turbine compile
# --weights-from` does: `ExportedProgram.compile(weights_from=F.gguf,
# parameter_name_map=NAMES)`. A small model (token embedding, a norm weight,
# a Linear) is written as GGUF files of each type (examples/llm's
# gguf_writer / ggml_quants, bit-exact with llama.cpp's encoders) under
# llama.cpp-style names; the compiled module, loaded with the file, gives
# torch eager's output on the weights decoded from the file (atol 1e-4: f32
# summation order only), and the artifact carries none of the weights (it
# is smaller than the f32 weights it would otherwise embed). Errors: a file
# that is not GGUF, a name map without weights_from, a weight of another
# shape. Environment (set by ctest): TURBINE_TORCH_LIBRARY, PYTHONPATH.
# ===---------------------------------------------------------------------=== #
import os
import sys

import numpy as np
import pytest
import torch

import turbine_torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "llm"))
import ggml_quants  # noqa: E402
from gguf_writer import GGUFWriter  # noqa: E402

VOCAB, DIM, OUT = 96, 64, 40
NAMES = {"token_embd.weight": "emb.weight", "blk.0.fc.weight": "fc.weight", "norm_w": "norm"}


class Net(torch.nn.Module):
    def __init__(self, vocab=VOCAB):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, DIM)
        self.norm = torch.nn.Parameter(1 + 0.1 * torch.randn(DIM))
        self.fc = torch.nn.Linear(DIM, OUT, bias=False)

    def forward(self, ids):
        return self.fc(self.emb(ids) * self.norm)


def write_gguf(net, path, weight_type):
    """net's weights under the GGUF names of NAMES, 2-D ones as weight_type
    (norm F32, as llama.cpp keeps them); returns the decoded state_dict."""
    writer = GGUFWriter()
    decoded = {}
    by_key = {v: k for k, v in NAMES.items()}
    for key, value in net.state_dict().items():
        x = value.detach().numpy().astype(np.float32)
        t = weight_type if x.ndim == 2 else "F32"
        data = ggml_quants.encode(x, t)
        writer.add_tensor(by_key[key], list(reversed(x.shape)), t, data)
        decoded[key] = torch.from_numpy(
            ggml_quants.decode(data, t, x.size).reshape(x.shape).astype(np.float32))
    writer.write(path)
    return decoded


@pytest.fixture(scope="module")
def names_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "net.names"
    path.write_text("".join("%s = %s\n" % kv for kv in NAMES.items()))
    return str(path)


@pytest.mark.parametrize("weight_type", ["F32", "F16", "BF16", "Q8_0", "Q4_0"])
def test_weights_from_gguf_match_eager(tmp_path, names_file, weight_type):
    torch.manual_seed(0)
    net = Net().eval()
    gguf = str(tmp_path / "net.gguf")
    decoded = write_gguf(net, gguf, weight_type)
    reference = Net().eval()
    reference.load_state_dict(decoded)
    ids = torch.tensor([[3, 17, 95, 0, 42]])
    exported = turbine_torch.export(net, ids)
    tmod = tmp_path / "net.tmod"
    module = exported.compile(save_to=str(tmod), weights_from=gguf,
                              parameter_name_map=names_file)
    got = module(ids)
    with torch.no_grad():
        want = reference(ids)
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    # The weights are the file's: the artifact holds none of them.
    f32_bytes = 4 * (VOCAB * DIM + DIM + OUT * DIM)
    assert os.path.getsize(tmod) < f32_bytes, (os.path.getsize(tmod), f32_bytes)
    # A saved artifact loads with the file alone (no name map at run time).
    again = turbine_torch.load(str(tmod), parameters=[gguf])
    torch.testing.assert_close(again(ids), want, atol=1e-4, rtol=1e-4)


def test_weights_from_errors(tmp_path, names_file):
    torch.manual_seed(0)
    net = Net().eval()
    ids = torch.tensor([[1, 2]])
    exported = turbine_torch.export(net, ids)
    with pytest.raises(ValueError, match="parameter_name_map renames the tensors of weights_from"):
        exported.compile(parameter_name_map=names_file)
    with pytest.raises(RuntimeError, match="weights_from: .*not GGUF|weights_from: .*corrupt"):
        exported.compile(weights_from=names_file)
    # A token embedding of another vocabulary size.
    bigger = str(tmp_path / "bigger.gguf")
    write_gguf(Net(vocab=VOCAB + 32).eval(), bigger, "F16")
    with pytest.raises(RuntimeError, match=r"GGUF tensor 'token_embd.weight' \(128x64xF16\) "
                                           r"does not match the model's weight 'emb.weight'"):
        exported.compile(weights_from=bigger, parameter_name_map=names_file)
