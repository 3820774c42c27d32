#!/usr/bin/env python3
# ===- artifact_ab.py - Paired A/B of compiled artifacts, one function -----=== #
#
# Whether a codegen change helped, on a host whose speed drifts between
# minutes: the artifacts (the same model compiled by a base and a new build,
# or with two flags) are timed by `turbine bench` in alternating rounds (the
# order reverses every round), each round the median of the calls of
# --min-time seconds; per round the speedup of each artifact over the first,
# and the median and quartiles of those speedups across rounds.
#
#   artifact_ab.py BASE.tmod NEW.tmod [MORE.tmod ...] --function=prefill
#       --input=1x32xi64=5 [--input=...] [--parameters=F.gguf]
#       [--rounds=10] [--min-time=0.5] [--turbine=build/bin/turbine]
# ===----------------------------------------------------------------------=== #
import argparse
import os
import re
import statistics
import subprocess
import sys


def bench(args, artifact):
    cmd = [args.turbine, "bench", artifact, "--function=" + args.function,
           "--device=local-sync", "--min_time=%g" % args.min_time]
    cmd += ["--input=" + i for i in args.input]
    cmd += ["--parameters=" + p for p in args.parameters]
    done = subprocess.run(cmd, capture_output=True, text=True)
    found = re.search(r"median ms/call:\s+([\d.]+)", done.stdout)
    if done.returncode != 0 or not found:
        sys.exit("artifact_ab.py: %s failed:\n%s%s" % (" ".join(cmd), done.stdout, done.stderr))
    return float(found.group(1))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("artifacts", nargs="+", help="the first is the base of the ratios")
    parser.add_argument("--function", default="main")
    parser.add_argument("--input", action="append", default=[], help="as turbine bench takes it")
    parser.add_argument("--parameters", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per artifact and round")
    parser.add_argument("--turbine", default=os.path.join(root, "build", "bin", "turbine"))
    args = parser.parse_args()
    if len(args.artifacts) < 2 or args.rounds < 2:
        parser.error("give two artifacts or more and two rounds or more")

    times = {a: [] for a in args.artifacts}
    for r in range(args.rounds):
        for artifact in args.artifacts if r % 2 == 0 else reversed(args.artifacts):
            times[artifact].append(bench(args, artifact))
    base = times[args.artifacts[0]]
    for artifact in args.artifacts:
        speedups = [b / t for b, t in zip(base, times[artifact])]
        low, _, high = statistics.quantiles(speedups, n=4)
        print("%-40s median %9.3f ms   speedup over the first: median %.3f (quartiles %.3f-%.3f)"
              % (artifact, statistics.median(times[artifact]), statistics.median(speedups), low, high))


if __name__ == "__main__":
    main()
