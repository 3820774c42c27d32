#!/usr/bin/env python3
# ===- compare_builds.py - Two Turbine builds vs ONNX Runtime on zoo models -=== #
#
# A codegen change is judged as ratios measured in one run: per model, the
# base build's artifact, the new build's and ONNX Runtime in rotating rounds
# (the order rotates each round), each round the median of --reps calls
# after 3 warm-up calls, the line the median of the round medians. Uses the
# exports `run_zoo.py` made in BUILD/benchmarks/zoo/<model>/ (run it once
# first) and onnxruntime-node from BUILD/benchmarks/ort. Checks the new
# artifact against torch eager (batch 1, within 1e-4 of the output's largest
# magnitude) and prints its compile wall time.
#
#   compare_builds.py BUILD --base=/copy/of/bin/turbine --models=a,b [--new=PATH]
#       [--rounds=5] [--reps=10] [--threads=1] [--out=DIR]
# ===----------------------------------------------------------------------=== #
import argparse
import os
import re
import statistics
import subprocess
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("build")
    parser.add_argument("--base", required=True, help="base turbine binary (its ../lib is used)")
    parser.add_argument("--new", default=None, help="new turbine binary (default BUILD/bin/turbine)")
    parser.add_argument("--models", required=True, help="comma-separated zoo model names")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="/tmp/turbine-compare-builds")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    zoo = os.path.join(build, "benchmarks", "zoo")
    new = os.path.abspath(args.new or os.path.join(build, "bin", "turbine"))
    base = os.path.abspath(args.base)
    os.makedirs(args.out, exist_ok=True)
    base_env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(os.path.dirname(base), "..", "lib"))
    node_env = dict(os.environ, NODE_PATH=os.path.join(build, "benchmarks", "ort", "node_modules"))
    ort_js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models",
                          "ort_benchmark.js")
    device = (["--device=local-sync"] if args.threads == 1 else
              ["--device=local-task", "--task_workers=%d" % args.threads])
    for model in args.models.split(","):
        d = os.path.join(zoo, model)
        arts = {}
        for name, binary, env in (("base", base, base_env), ("new", new, None)):
            art = os.path.join(args.out, "%s_%s.tmod" % (model, name))
            start = time.time()
            p = subprocess.run([binary, "compile", os.path.join(d, "model.onnx"), "-o", art],
                               capture_output=True, text=True, env=env)
            if p.returncode:
                raise SystemExit("%s: %s compile failed:\n%s" % (model, name, p.stderr[-2000:]))
            if name == "new":
                print("%s: new compile %.1f s (wall)" % (model, time.time() - start), flush=True)
            arts[name] = (binary, art, env)
        # Within 1e-4 of the output's scale, as run_zoo.py checks.
        atol = 1e-4 * float(np.abs(np.load(d + "/out_b1.npy")).max())
        check = subprocess.run([new, "run", arts["new"][1], "--input=@" + d + "/in0_b1.npy",
                                "--expected_output=@" + d + "/out_b1.npy", "--atol=%g" % atol,
                                "--rtol=0"],
                               capture_output=True, text=True)
        times = {"base": [], "new": [], "ort": []}
        order = ["base", "new", "ort"]
        for r in range(args.rounds):
            for key in order[r % 3:] + order[:r % 3]:
                if key == "ort":
                    out = subprocess.run(["node", ort_js, d + "/model.onnx", d + "/in0_b1.npy", "-",
                                          str(args.threads), str(args.reps), "3"],
                                         capture_output=True, text=True, env=node_env).stdout
                    value = re.search(r"median_ms (\S+)", out)
                else:
                    binary, art, env = arts[key]
                    out = subprocess.run([binary, "bench", art] + device +
                                         ["--input=@" + d + "/in0_b1.npy",
                                          "--repetitions=%d" % args.reps, "--warmup=3"],
                                         capture_output=True, text=True, env=env).stdout
                    value = re.search(r"median ms/call:\s+(\S+)", out)
                if not value:
                    raise SystemExit("%s: %s printed no median:\n%s" % (model, key, out[-2000:]))
                times[key].append(float(value.group(1)))
        m = {k: statistics.median(v) for k, v in times.items()}
        print("| %s | %d | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %s | load %.1f" % (
            model, args.threads, m["base"], m["new"], m["ort"], m["new"] / m["base"],
            m["base"] / m["ort"], m["new"] / m["ort"],
            "matches" if check.returncode == 0 else "MISMATCH", os.getloadavg()[0]), flush=True)


if __name__ == "__main__":
    main()
