#!/usr/bin/env python3
# ===- conv_ab.py - One convolution, two Turbine builds, paired rounds ----=== #
#
# A codegen change to one kind of convolution is judged on that convolution
# alone: a one-node ONNX model (NCHW input of batch 1, Conv with bias and
# "same" padding, an optional activation), compiled by each build given, then
# `turbine bench` of each artifact in quick alternation (the order flips
# every round), 0.2 s per call of bench. These shared hosts drift by 10-40 %
# over minutes, so the line reports per-round ratios to the first build
# (adjacent in time) and their median and quartiles, next to each build's
# minimum and median ms per call. Checks that every build's output equals
# the first's within 1e-4 relative.
#
#   conv_ab.py --turbine=/base/bin/turbine,BUILD/bin/turbine \
#       --conv=HxCxFxK[:Activation] [--conv=...] [--rounds=16] [--out=DIR]
#   e.g. --conv=14x244x244x1:Relu (14x14 image, 244 -> 244 channels, 1x1)
# ===----------------------------------------------------------------------=== #
import argparse
import os
import re
import statistics
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_model(path, h, c, f, k, activation):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((f, c, k, k)) * 0.1).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32)
    out = "c" if activation else "y"
    nodes = [helper.make_node("Conv", ["x", "w", "b"], [out], pads=[k // 2] * 4)]
    if activation:
        nodes.append(helper.make_node(activation, ["c"], ["y"]))
    graph = helper.make_graph(
        nodes, "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, h, h])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    np.save(path + ".in.npy", rng.standard_normal((1, c, h, h)).astype(np.float32))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turbine", required=True, help="comma-separated turbine binaries")
    parser.add_argument("--conv", action="append", required=True, help="HxCxFxK[:Activation]")
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--out", default="/tmp/turbine-conv-ab")
    args = parser.parse_args()
    builds = args.turbine.split(",")
    os.makedirs(args.out, exist_ok=True)
    cases = []
    for spec in args.conv:
        shape, _, activation = spec.partition(":")
        h, c, f, k = (int(v) for v in shape.split("x"))
        name = f"conv_{h}x{c}x{f}x{k}{activation}"
        model = os.path.join(args.out, name + ".onnx")
        make_model(model, h, c, f, k, activation)
        artifacts = []
        for i, turbine in enumerate(builds):
            artifact = os.path.join(args.out, f"{name}.{i}.tmod")
            subprocess.run([turbine, "compile", model, "-o", artifact], check=True)
            result = artifact + ".out.npy"
            subprocess.run([turbine, "run", artifact, f"--input=@{model}.in.npy",
                            f"--output=@{result}"], check=True, capture_output=True)
            artifacts.append((turbine, artifact, np.load(result)))
        first = artifacts[0][2]
        for turbine, _, got in artifacts[1:]:
            error = float(np.abs(got - first).max() / max(np.abs(first).max(), 1e-30))
            if error > 1e-4:
                raise SystemExit(f"{name}: {turbine} differs from {builds[0]} by {error:.2e}")
        cases.append((name, model, artifacts))

    times = {}
    for r in range(args.rounds):
        for name, model, artifacts in cases:
            order = list(enumerate(artifacts))
            for i, (turbine, artifact, _) in (order if r % 2 == 0 else order[::-1]):
                out = subprocess.run([turbine, "bench", artifact, f"--input=@{model}.in.npy",
                                      "--device=local-sync", "--min_time=0.2"],
                                     check=True, capture_output=True, text=True).stdout
                ms = float(re.search(r"min ms/call:\s+([\d.]+)", out).group(1))
                times.setdefault((name, i), []).append(ms)
    for name, _, artifacts in cases:
        base = times[(name, 0)]
        for i in range(len(artifacts)):
            t = times[(name, i)]
            ratios = sorted(a / b for a, b in zip(t, base))
            q = len(ratios) // 4
            print(f"{name:24s} build {i}: min {min(t):.4f} ms, median {statistics.median(t):.4f}"
                  f" ms; paired ratio median {statistics.median(ratios):.3f}"
                  f" (quartiles {ratios[q]:.3f}-{ratios[-1 - q]:.3f})")


if __name__ == "__main__":
    main()
