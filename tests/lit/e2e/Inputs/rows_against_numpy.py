"""Compiles ONNX Softmax / ReduceMax / ReduceSum over the last axis and checks
`turbine run` against NumPy, for row lengths that 64-lane tiles do not
divide (the CPU target peels the remainder: 197 = 3 x 64 + 5 as in ViT's
attention rows, 144 = 2 x 64 + 16, 1000 = 15 x 64 + 40) and one shorter
than a tile (7), with a dynamic batch of 3, on local-sync and local-task.

Usage: rows_against_numpy.py TURBINE WORKDIR
Prints "<op> <length> <device>: OK" or the largest error per case.
Tolerances: max exact; sum 1e-5 relative; softmax 1e-6 absolute.
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
rng = np.random.default_rng(0)
for length in (197, 144, 1000, 7):
    x = (rng.standard_normal((3, 4, length)) * 4).astype(np.float32)
    # The largest value of some rows in the peeled remainder, of others in
    # the first tile.
    x[0, :, -1] = 50.0
    x[1, :, 0] = 50.0
    data = os.path.join(work, "x.npy")
    np.save(data, x)
    shape = ["N", 4, length]
    for op, reference, tolerance in [
            ("Softmax", lambda v: np.exp(v - v.max(-1, keepdims=True)) /
             np.exp(v - v.max(-1, keepdims=True)).sum(-1, keepdims=True), 1e-6),
            ("ReduceMax", lambda v: v.max(-1, keepdims=True), 0.0),
            ("ReduceSum", lambda v: v.sum(-1, keepdims=True), 1e-5)]:
        if op == "Softmax":
            node = helper.make_node(op, ["x"], ["y"], axis=-1)
            out_shape = shape
            inits = []
        elif op == "ReduceSum":
            node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)
            out_shape = ["N", 4, 1]
            inits = [helper.make_tensor("axes", T.INT64, [1], [-1])]
        else:
            node = helper.make_node(op, ["x"], ["y"], axes=[-1], keepdims=1)
            out_shape = ["N", 4, 1]
            inits = []
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", T.FLOAT, out_shape)], inits)
        model = os.path.join(work, "rows.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
        artifact = os.path.join(work, "rows.tmod")
        subprocess.run([turbine, "compile", model, "-o", artifact], check=True)
        expected = reference(x.astype(np.float64))
        for device in ("local-sync", "local-task"):
            got = os.path.join(work, "y.npy")
            subprocess.run([turbine, "run", artifact, "--device=" + device, "--input=@" + data,
                            "--output=@" + got], check=True, capture_output=True)
            y = np.load(got).astype(np.float64)
            error = np.abs(y - expected)
            if op == "ReduceSum":
                error = error / np.abs(expected).max()
            if y.shape == expected.shape and error.max() <= tolerance:
                print(f"{op} {length} {device}: OK")
            else:
                print(f"{op} {length} {device}: error {error.max()} (shape {y.shape})")
