"""Compiles ONNX Resize models and checks `turbine run` against PyTorch.

Usage: resize_against_torch.py TURBINE WORKDIR
X [2, 3, 17, 23] random resized to 40 x 11 (up in one axis, down in the
other) with torch.nn.functional.interpolate as the reference: linear and
cubic (A = -0.75) with half_pixel (align_corners=False) and align_corners,
nearest asymmetric + floor (torch's 'nearest'). Each case once with static
dims (import-time tap tables) and once with every dim dynamic (taps computed
in the kernel). Prints "OK" per case within 1e-5.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto as T
from onnx import helper

turbine, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(2)
x = rng.standard_normal((2, 3, 17, 23)).astype(np.float32)
x_path, y_path = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
np.save(x_path, x)
out = (40, 11)
cases = [("linear", "half_pixel", dict(mode="bilinear", align_corners=False)),
         ("cubic", "half_pixel", dict(mode="bicubic", align_corners=False)),
         ("linear", "align_corners", dict(mode="bilinear", align_corners=True)),
         ("cubic", "align_corners", dict(mode="bicubic", align_corners=True)),
         ("nearest", "asymmetric", dict(mode="nearest"))]
for dynamic in [False, True]:
    for mode, transform, torch_args in cases:
        attrs = dict(mode=mode, coordinate_transformation_mode=transform)
        if mode == "nearest":
            attrs["nearest_mode"] = "floor"
        in_dims = ["n", "c", "h", "w"] if dynamic else [2, 3, 17, 23]
        out_dims = ["n", "c", "oh", "ow"] if dynamic else [2, 3, *out]
        graph = helper.make_graph(
            [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)], "g",
            [helper.make_tensor_value_info("x", T.FLOAT, in_dims)],
            [helper.make_tensor_value_info("y", T.FLOAT, out_dims)],
            [helper.make_tensor("sizes", T.INT64, [4], [2, 3, *out])])
        model = os.path.join(work, "resize.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
        artifact = os.path.join(work, "resize.tmod")
        subprocess.run([turbine, "compile", model, "-o", artifact], check=True)
        subprocess.run([turbine, "run", artifact, "--input=@" + x_path, "--output=@" + y_path],
                       check=True, capture_output=True)
        expected = F.interpolate(torch.from_numpy(x), size=out, **torch_args).numpy()
        diff = float(np.abs(expected - np.load(y_path)).max())
        where = "dynamic" if dynamic else "static"
        print(f"{where} {mode} {transform}: {'OK' if diff <= 1e-5 else f'MISMATCH max |diff| {diff}'}")
