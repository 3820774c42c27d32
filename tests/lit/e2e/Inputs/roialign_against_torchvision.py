"""Compiles ONNX RoiAlign models and checks `turbine run` against torchvision.

Usage: roialign_against_torchvision.py TURBINE WORKDIR
X [2, 3, 12, 10] random, five rois (inside, fractional, partly and wholly
outside the image, tiny) over both batch entries, output 3x4, sampling_ratio
2, spatial_scale 1 and 0.5, for half_pixel (torchvision aligned=True) and
output_half_pixel (aligned=False). Prints the largest absolute difference
verdict per case ("OK" within 1e-5).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto as T
from onnx import helper

turbine, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(1)
x = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
rois = np.array([[0, 0, 9, 11], [1.5, 2.2, 7.3, 6.1], [-2, -1, 4, 3], [5, 6, 12, 14],
                 [3, 3, 3.5, 3.2]], np.float32)
batch = np.array([0, 1, 1, 0, 1], np.int64)
paths = {name: os.path.join(work, name + ".npy") for name in ["x", "rois", "batch", "y"]}
np.save(paths["x"], x)
np.save(paths["rois"], rois)
np.save(paths["batch"], batch)
for mode, aligned in [("half_pixel", True), ("output_half_pixel", False)]:
    for scale in [1.0, 0.5]:
        node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"],
                                coordinate_transformation_mode=mode, output_height=3,
                                output_width=4, sampling_ratio=2, spatial_scale=scale)
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info("x", T.FLOAT, [2, 3, 12, 10]),
             helper.make_tensor_value_info("rois", T.FLOAT, [5, 4]),
             helper.make_tensor_value_info("batch", T.INT64, [5])],
            [helper.make_tensor_value_info("y", T.FLOAT, [5, 3, 3, 4])])
        model = os.path.join(work, "roialign.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), model)
        artifact = os.path.join(work, "roialign.tmod")
        subprocess.run([turbine, "compile", model, "-o", artifact], check=True)
        subprocess.run([turbine, "run", artifact, "--input=@" + paths["x"], "--input=@" + paths["rois"],
                        "--input=@" + paths["batch"], "--output=@" + paths["y"]],
                       check=True, capture_output=True)
        boxes = torch.cat([torch.from_numpy(batch).float()[:, None], torch.from_numpy(rois)], 1)
        expected = torchvision.ops.roi_align(torch.from_numpy(x), boxes, (3, 4), spatial_scale=scale,
                                             sampling_ratio=2, aligned=aligned).numpy()
        diff = float(np.abs(expected - np.load(paths["y"])).max())
        print(f"{mode} scale={scale}: {'OK' if diff <= 1e-5 else f'MISMATCH max |diff| {diff}'}")
