#!/usr/bin/env python3
# ===- compare_kernel_profiles.py - Per-kernel before/after of two builds --=== #
#
# Usage: /usr/bin/python3 benchmarks/models/compare_kernel_profiles.py \
#            BASE_BUILD NEW_BUILD MODEL.onnx INPUT.npy [turbine bench options]
#
# Compiles MODEL.onnx with each build's `turbine compile`, then runs
# `turbine bench --profile` of the two artifacts alternately for ROUNDS
# rounds (env, default 8) of REPS calls (env, default 30), so that drifting
# machine load hits both alike. Prints, per build, the minimum and median of
# the rounds' call medians, the sum over kernels of each kernel's minimum
# (over the rounds) mean time per dispatch, and those minima per kernel.
# Kernel names differ between builds when dispatches are added or removed;
# match them by shape in the dumps (`turbine compile --dump-phases`).
# Extra arguments go to `turbine bench` (default: --device=local-sync).
# ===---------------------------------------------------------------------=== #
import os
import re
import statistics
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: compare_kernel_profiles.py BASE_BUILD NEW_BUILD MODEL.onnx INPUT.npy [turbine bench options]")
    builds = {"base": sys.argv[1], "new": sys.argv[2]}
    model, model_input = os.path.abspath(sys.argv[3]), os.path.abspath(sys.argv[4])
    bench_options = sys.argv[5:] or ["--device=local-sync"]
    rounds = int(os.environ.get("ROUNDS", "8"))
    reps = os.environ.get("REPS", "30")
    workdir = tempfile.mkdtemp(prefix="kernel_profiles_")
    artifacts = {}
    for name, build in builds.items():
        turbine = os.path.join(build, "bin", "turbine")
        artifact = os.path.join(workdir, name + ".tmod")
        subprocess.run([turbine, "compile", model, "-o", artifact], check=True)
        artifacts[name] = (turbine, artifact)
    minima = {name: {} for name in builds}
    medians = {name: [] for name in builds}
    for _ in range(rounds):
        for name, (turbine, artifact) in artifacts.items():
            out = subprocess.run(
                [turbine, "bench", artifact, "--input=@" + model_input, "--repetitions=" + reps,
                 "--profile", *bench_options],
                check=True, capture_output=True, text=True).stdout
            medians[name].append(float(re.search(r"median ms/call:\s+([\d.]+)", out).group(1)))
            # Profile rows: name, shape, total ms, share, count, average us.
            for line in out.splitlines():
                match = re.match(r"(\S+)\s+(\S+)\s+[\d.]+\s+[\d.]+%\s+\d+\s+([\d.]+)$", line)
                if match and match.group(1) != "all":
                    kernel, us = match.group(1) + " " + match.group(2), float(match.group(3))
                    minima[name][kernel] = min(minima[name].get(kernel, float("inf")), us)
    for name in builds:
        kernels = minima[name]
        print("%s: call medians min %.3f ms, median %.3f ms; sum of per-kernel minima %.1f us "
              "over %d kernels" % (name, min(medians[name]), statistics.median(medians[name]),
                                   sum(kernels.values()), len(kernels)))
        for kernel, us in sorted(kernels.items()):
            print("  %-60s %10.1f us" % (kernel, us))


if __name__ == "__main__":
    main()
