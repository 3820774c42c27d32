"""Compiles ONNX DFT models and checks `turbine run` against numpy.fft.

Usage: dft_against_numpy.py TURBINE WORKDIR
Signals [2, 12, 5, 1 or 2] (real or complex) transformed along axis 1 or 2
with dft_length equal to, shorter than (truncation) and longer than (zero
padding) the axis, forward, inverse and onesided. Prints "OK" per case when
the largest difference is within 1e-4 relative to the largest magnitude.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper

turbine, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(3)
x_path, y_path = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
cases = [  # (complex input, axis, dft_length or None, inverse, onesided)
    (False, 1, None, 0, 0), (False, 2, 8, 0, 0), (True, 1, 7, 0, 0), (True, 1, 16, 1, 0),
    (False, 1, 10, 0, 1)]
for is_complex, axis, length, inverse, onesided in cases:
    shape = [2, 12, 5, 2 if is_complex else 1]
    x = rng.standard_normal(shape).astype(np.float32)
    np.save(x_path, x)
    signal = x[..., 0] + (1j * x[..., 1] if is_complex else 0)
    n = length or shape[axis]
    spectrum = (np.fft.ifft if inverse else np.fft.fft)(signal, n=n, axis=axis)
    if onesided:
        spectrum = np.take(spectrum, range(n // 2 + 1), axis=axis)
    expected = np.stack([spectrum.real, spectrum.imag], -1)
    inputs = ["x"] + (["len"] if length else [])
    inits = [helper.make_tensor("len", T.INT64, [], [length])] if length else []
    node = helper.make_node("DFT", inputs, ["y"], axis=axis, inverse=inverse, onesided=onesided)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", T.FLOAT, list(expected.shape))], inits)
    model = os.path.join(work, "dft.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    artifact = os.path.join(work, "dft.tmod")
    subprocess.run([turbine, "compile", model, "-o", artifact], check=True)
    subprocess.run([turbine, "run", artifact, "--input=@" + x_path, "--output=@" + y_path],
                   check=True, capture_output=True)
    got = np.load(y_path)
    error = float(np.abs(got - expected).max() / np.abs(expected).max()) if got.shape == expected.shape else 1.0
    name = f"complex={int(is_complex)} axis={axis} length={length} inverse={inverse} onesided={onesided}"
    print(f"{name}: {'OK' if error <= 1e-4 else f'MISMATCH relative error {error}'}")
