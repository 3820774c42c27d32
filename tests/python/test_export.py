# ===- test_export.py - turbine_torch.export: trace, import, compile, run -=== #
#
# The iree-turbine-style workflow on torch 1.13 (TorchScript): export, IR per
# phase, compile in process, run on torch tensors at two batch sizes through
# one dynamic-batch artifact, compared with eager (atol 1e-5); the shipped
# walkthrough (its softmax a Turbine kernel inside the compiled model); and
# the error paths.
# ===---------------------------------------------------------------------=== #
import os
import subprocess
import sys

import pytest
import torch

import turbine_torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return Mlp().eval()


def test_export_compile_run(model, tmp_path):
    exported = turbine_torch.export(model, torch.randn(2, 32), dynamic_dims={0: 0})
    ir = exported.import_to("input")
    assert "func.func @main(%arg0: tensor<?x32xf32>" in ir
    assert "turbine.dispatch" in exported.import_to("dispatch")
    exported.save_mlir(tmp_path / "m.mlir")
    assert (tmp_path / "m.mlir").read_text() == ir
    compiled = exported.compile(save_to=tmp_path / "m.tmod")
    assert (tmp_path / "m.tmod").exists()
    for batch in (1, 5):
        x = torch.randn(batch, 32)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), atol=1e-5, rtol=1e-4)


def test_compile_without_saving_and_scripted_module(model):
    scripted = torch.jit.script(model)
    compiled = turbine_torch.export(scripted, torch.randn(3, 32)).compile()
    x = torch.randn(3, 32)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), atol=1e-5, rtol=1e-4)
    # No dynamic dim: the batch is fixed at 3.
    with pytest.raises(RuntimeError, match="expected 3x32xf32"):
        compiled(torch.randn(4, 32))


def test_compile_options(model):
    """Strategy switches reach the compiler as options: fc1's constant
    weight (N = 64) is packed into panels by default, not with
    matmul_data_tiling="off"; the compiled module is right either way."""
    exported = turbine_torch.export(model, torch.randn(2, 32))
    assert "linalg.contract" in exported.import_to("global-opt")
    plain = exported.import_to("global-opt", matmul_data_tiling="off")
    assert "linalg.contract" not in plain and "linalg.matmul" in plain
    compiled = exported.compile(matmul_data_tiling="off", opt_level=2)
    x = torch.randn(2, 32)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), atol=1e-5, rtol=1e-4)
    with pytest.raises(RuntimeError, match="unknown compile option 'fast'"):
        exported.compile(fast=True)
    with pytest.raises(RuntimeError, match="'matmul-data-tiling' expects auto, off or all"):
        exported.compile(matmul_data_tiling="sometimes")


def _dequantized(weight, group, bits=8):
    """torch Linear weight [out, in] through int8 / int4 groups of `group`
    inputs, as turbine-quantize-weights stores it (int8 s = max|w| / 127;
    int4 s = m / -8 for the group's value m of largest magnitude; q =
    round(w / s) clamped)."""
    out = torch.empty_like(weight)
    lo, hi = (-127, 127) if bits == 8 else (-8, 7)
    for g0 in range(0, weight.shape[1], group):
        block = weight[:, g0:g0 + group]
        if bits == 8:
            scale = block.abs().amax(dim=1) / 127
        else:
            m = block.gather(1, block.abs().argmax(dim=1, keepdim=True))[:, 0]
            scale = m / -8
        inverse = torch.where(scale != 0, 1 / torch.where(scale != 0, scale, torch.ones_like(scale)),
                              torch.zeros_like(scale))
        v = (block * inverse[:, None]).double()
        q = (torch.sign(v) * torch.floor(v.abs() + 0.5)).clamp(lo, hi).float()
        out[:, g0:g0 + group] = q * scale[:, None]
    return out


def test_quantize_weights_option(model):
    """quantize_weights / group_size / quantize_exclude reach
    turbine-quantize-weights: the weights become i8 constants (column blocks
    [N/P, groups, G, P]) with f32 scales, and the compiled module equals
    eager on the dequantized weights (int8, int4; fc2 excluded by name)."""
    exported = turbine_torch.export(model, torch.randn(2, 32))
    ir = exported.import_to("global-opt", quantize_weights="int8", group_size=16)
    assert "tensor<1x2x16x64xi8>" in ir and "tensor<2x64xf32>" in ir  # fc1: K=32, G=16, N=64
    ir = exported.import_to("global-opt", quantize_weights="int4", group_size=16)
    assert "tensor<1x2x8x64xi8>" in ir  # fc1 int4: two K rows per byte
    reference = Mlp().eval()
    x = torch.randn(2, 32)
    for bits, exclude in ((8, None), (4, None), (8, "^fc2[.]")):
        options = dict(quantize_weights="int%d" % bits, group_size=16)
        if exclude:
            options["quantize_exclude"] = exclude
        compiled = exported.compile(**options)
        reference.load_state_dict(model.state_dict())
        with torch.no_grad():
            for layer in (reference.fc1,) if exclude else (reference.fc1, reference.fc2):
                layer.weight.copy_(_dequantized(layer.weight, 16, bits))
            torch.testing.assert_close(compiled(x), reference(x), atol=1e-5, rtol=1e-5)
    with pytest.raises(RuntimeError, match="'quantize-weights' expects none, int8 or int4, got 'int3'"):
        exported.compile(quantize_weights="int3")
    with pytest.raises(RuntimeError, match="'group-size' expects a positive integer, got '0'"):
        exported.compile(quantize_weights="int8", group_size=0)


def test_errors(model):
    with pytest.raises(TypeError, match="export takes tensors"):
        turbine_torch.export(model, [1.0, 2.0])
    exported = turbine_torch.export(model, torch.randn(2, 32))
    with pytest.raises(RuntimeError, match="unknown phase 'nope'"):
        exported.import_to("nope")

    class Unsupported(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, dim=1)

    with pytest.raises(RuntimeError, match="unsupported TorchScript op 'aten::cumsum'"):
        turbine_torch.export(Unsupported(), torch.randn(2, 4)).compile()


def test_walkthrough_example(tmp_path):
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "pytorch", "linear_softmax.py"),
         str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== match" in result.stdout
    assert "func.func @main" in result.stdout
    # The softmax is the Turbine kernel, a custom-op call in the imported IR.
    assert 'turbine.custom_op = "turbine.softmax"' in result.stdout
    assert 'turbine.param_name = "fc.weight.T"' in result.stdout
