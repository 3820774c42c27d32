"""Compiles ONNX TopK models and checks `turbine run` against NumPy.

Usage: topk_against_numpy.py TURBINE WORKDIR
Input [3, 40, 2] of small integers (many ties), TopK over axis 1 for K = 5
(selection passes) and K = 20, 40 (ranking), largest and smallest. The
reference is a stable argsort (ties by smaller index, as ONNX specifies).
Prints "K=<k> largest=<0|1>: OK" or the first mismatch per case.
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
x = rng.integers(0, 6, size=(3, 40, 2)).astype(np.float32)
np.save(os.path.join(work, "x.npy"), x)
for k, largest in [(5, 1), (5, 0), (20, 1), (20, 0), (40, 1)]:
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)], "g",
        [helper.make_tensor_value_info("x", T.FLOAT, [3, 40, 2])],
        [helper.make_tensor_value_info("v", T.FLOAT, [3, k, 2]),
         helper.make_tensor_value_info("i", T.INT64, [3, k, 2])],
        [helper.make_tensor("k", T.INT64, [1], [k])])
    model = os.path.join(work, "topk.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), model)
    artifact = os.path.join(work, "topk.tmod")
    subprocess.run([turbine, "compile", model, "-o", artifact], check=True)
    got_v, got_i = os.path.join(work, "v.npy"), os.path.join(work, "i.npy")
    subprocess.run([turbine, "run", artifact, "--input=@" + os.path.join(work, "x.npy"),
                    "--output=@" + got_v, "--output=@" + got_i], check=True, capture_output=True)
    order = np.argsort(-x if largest else x, axis=1, kind="stable")[:, :k, :]
    expected_v = np.take_along_axis(x, order, axis=1)
    v, i = np.load(got_v), np.load(got_i)
    if np.array_equal(expected_v, v) and np.array_equal(order, i):
        print(f"K={k} largest={largest}: OK")
    else:
        bad = np.argwhere((expected_v != v) | (order != i))[0]
        print(f"K={k} largest={largest}: MISMATCH at {tuple(bad)}: expected "
              f"{expected_v[tuple(bad)]}@{order[tuple(bad)]}, got {v[tuple(bad)]}@{i[tuple(bad)]}")
