# ===- test_torch_runtime.py - libturbine_torch.so and turbine_torch.load ---=== #
#
# Compiles the MLP test model (tests/models/export_models.py) with
# `turbine compile`, loads it through the TorchScript extension and checks the
# results against torch's outputs (atol 1e-4, rtol 1e-3), then the error
# paths. Environment (set by ctest): TURBINE_BIN, TURBINE_TEST_MODELS,
# TURBINE_TORCH_LIBRARY, PYTHONPATH=python.
# ===---------------------------------------------------------------------=== #
import os
import subprocess

import numpy as np
import pytest
import torch

import turbine_torch

MODELS = os.environ["TURBINE_TEST_MODELS"]
TURBINE = os.environ["TURBINE_BIN"]


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    out = tmp_path_factory.mktemp("mlp")
    tmod = out / "mlp.tmod"
    irpa = out / "mlp.irpa"
    subprocess.run([TURBINE, "compile", os.path.join(MODELS, "mlp", "model.onnx"),
                    "-o", str(tmod)], check=True)
    ext = out / "mlp_ext.tmod"
    subprocess.run([TURBINE, "compile", os.path.join(MODELS, "mlp", "model.onnx"),
                    "-o", str(ext), "--externalize-params=%s" % irpa], check=True)
    return {"tmod": tmod, "ext": ext, "irpa": irpa}


def reference(batch):
    x = np.load(os.path.join(MODELS, "mlp", "input_%d.npy" % batch))
    y = np.load(os.path.join(MODELS, "mlp", "expected_%d.npy" % batch))
    return torch.from_numpy(x), torch.from_numpy(y)


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
@pytest.mark.parametrize("batch", [1, 3])
def test_matches_torch(mlp, device, batch):
    m = turbine_torch.load(mlp["tmod"], device=device)
    assert m.functions() == ["main"]
    assert m.signature() == "(input: ?x256xf32) -> (output: ?x10xf32)"
    x, expected = reference(batch)
    y = m(x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    torch.testing.assert_close(y, expected, atol=1e-4, rtol=1e-3)
    torch.testing.assert_close(m.main(x), y)


def test_non_contiguous_input(mlp):
    m = turbine_torch.load(mlp["tmod"])
    x, expected = reference(3)
    strided = x.t().contiguous().t()  # same values, column-major strides
    assert not strided.is_contiguous()
    torch.testing.assert_close(m(strided), expected, atol=1e-4, rtol=1e-3)


def test_results_outlive_module(mlp):
    x, expected = reference(3)
    y = turbine_torch.load(mlp["tmod"])(x)
    del x
    torch.testing.assert_close(y.clone(), expected, atol=1e-4, rtol=1e-3)


def test_external_parameters(mlp):
    x, expected = reference(3)
    m = turbine_torch.load(mlp["ext"], parameters=[mlp["irpa"]])
    torch.testing.assert_close(m(x), expected, atol=1e-4, rtol=1e-3)
    with pytest.raises(RuntimeError, match="needs a parameter file"):
        turbine_torch.load(mlp["ext"])


def test_external_parameters_from_gguf(mlp, tmp_path):
    # The irpa's tensors as a GGUF file named "gguf.NAME", bound through a
    # name map (tests/e2e/params/gguf_files.py writes the GGUF).
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e", "params"))
    import gguf_files
    st = tmp_path / "mlp.safetensors"
    subprocess.run([TURBINE, "params", "convert", str(mlp["irpa"]), "-o", str(st)], check=True)
    tensors = gguf_files.read_safetensors(str(st))
    gguf = tmp_path / "mlp.gguf"
    gguf_files.write_gguf(str(gguf), [("gguf." + n, list(a.shape), gguf_files.F32,
                                       a.astype("<f4").tobytes()) for n, a in tensors.items()])
    names = tmp_path / "mlp.names"
    names.write_text("gguf.* = *\n")
    x, expected = reference(3)
    m = turbine_torch.load(mlp["ext"], parameters=[gguf], parameter_name_map=names)
    torch.testing.assert_close(m(x), expected, atol=1e-4, rtol=1e-3)
    with pytest.raises(RuntimeError, match="is not in '.*mlp.gguf'"):
        turbine_torch.load(mlp["ext"], parameters=[gguf])
    names.write_text("gguf.*\n")
    with pytest.raises(RuntimeError, match="expected FILE_NAME = MODULE_NAME"):
        turbine_torch.load(mlp["ext"], parameters=[gguf], parameter_name_map=names)


def test_torchscript_class(mlp):
    # The class is a TorchScript custom class: usable from scripted code.
    module = torch.classes.turbine.Module(str(mlp["tmod"]), "local-sync", [], "")

    @torch.jit.script
    def run(m: torch.classes.turbine.Module, x: torch.Tensor) -> torch.Tensor:
        return m.call("main", [x])[0]

    x, expected = reference(1)
    torch.testing.assert_close(run(module, x), expected, atol=1e-4, rtol=1e-3)


def test_errors(mlp, tmp_path):
    m = turbine_torch.load(mlp["tmod"])
    x, _ = reference(1)
    with pytest.raises(RuntimeError, match=r"expected \?x256xf32 \(dtype f32\), got 1x256xf64"):
        m(x.double())
    with pytest.raises(RuntimeError, match="expects 1 input, got 2"):
        m(x, x)
    with pytest.raises(RuntimeError, match="has no Turbine equivalent"):
        m(x.to(torch.complex64))
    with pytest.raises(AttributeError, match="no function 'forward'"):
        m.forward(x)
    with pytest.raises(RuntimeError, match="cannot open artifact"):
        turbine_torch.load(tmp_path / "missing.tmod")
    bad = tmp_path / "bad.tmod"
    bad.write_bytes(b"not an artifact")
    with pytest.raises(RuntimeError, match="not a Turbine artifact"):
        turbine_torch.load(bad)
    with pytest.raises(RuntimeError, match="unknown device 'gpu'"):
        turbine_torch.load(mlp["tmod"], device="gpu")
