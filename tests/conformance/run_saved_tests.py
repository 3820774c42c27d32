#!/usr/bin/env python3
"""Runs ONNX backend tests saved by `turbine conformance --compile-only
--save-artifacts=DIR` with the runtime alone (`turbine-runtime run`).

What a machine with only the runtime (a lent GPU machine: no LLVM/MLIR, no
ONNX) can check: every saved test's every data set is run on --device and
its outputs compared with the expected ones at the test's tolerances
(test.json: the ONNX backend defaults, or the per-test overrides the
conformance runner applies). Prints "PASS name" / "FAIL name: reason" per
test in name order, then "N passed, N failed"; --json writes the same as a
file. Exit status 0 when every test passed, 1 otherwise, 2 on bad usage.
Python 3 standard library only.

    run_saved_tests.py DIR --runtime=bin/turbine-runtime --device=cuda [-j N]
                       [--filter=REGEX] [--json=results.json] [--timeout=S]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys


def value_spec(value, set_dir):
    """The `turbine run --input` text of one saved value (see test.json)."""
    if "npy" in value:
        return "@" + os.path.join(set_dir, value["npy"])
    if "raw" in value:
        return "%s=@%s" % (value["type"], os.path.join(set_dir, value["raw"]))
    return value["text"]


def run_test(test_dir, args):
    """(name, None) when every data set passed, else (name, reason)."""
    name = os.path.basename(test_dir)
    try:
        with open(os.path.join(test_dir, "test.json")) as f:
            manifest = json.load(f)
        data_sets = manifest["data_sets"]
        atol, rtol = float(manifest["atol"]), float(manifest["rtol"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        return name, "bad test.json: %s" % e
    if not data_sets:
        return name, "no data sets saved"
    for data_set in data_sets:
        where = " (%s)" % data_set["name"] if len(data_sets) > 1 else ""
        set_dir = os.path.join(test_dir, data_set["name"])
        command = [args.runtime, "run", os.path.join(test_dir, data_set["artifact"]),
                   "--device=" + args.device, "--function=" + data_set["function"],
                   "--print_max_element_count=0", "--atol=%r" % atol, "--rtol=%r" % rtol]
        try:
            command += ["--input=" + value_spec(v, set_dir) for v in data_set["inputs"]]
            command += ["--expected_output=" + value_spec(v, set_dir) for v in data_set["outputs"]]
        except (KeyError, TypeError) as e:
            return name, "bad test.json: value without npy/raw/text: %s" % e
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=args.timeout, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            return name, "timed out after %g s%s" % (args.timeout, where)
        except OSError as e:
            return name, "cannot run %s: %s" % (args.runtime, e)
        if done.returncode != 0:
            errors = [line for line in done.stdout.splitlines() if "error" in line]
            reason = errors[0] if errors else done.stdout.strip().splitlines()[-1:] or ["?"]
            if isinstance(reason, list):
                reason = reason[0]
            if done.returncode < 0:
                reason = "crashed (signal %d): %s" % (-done.returncode, reason)
            return name, reason.strip() + where
    return name, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", help="the --save-artifacts directory")
    parser.add_argument("--runtime", required=True, help="path of turbine-runtime (or turbine)")
    parser.add_argument("--device", default="cuda", help="device to run on (default cuda)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--filter", default="", help="regex on test names")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per data set")
    parser.add_argument("--json", help="write {test: reason or null} here")
    args = parser.parse_args()
    try:
        pattern = re.compile(args.filter)
    except re.error as e:
        parser.error("invalid --filter: %s" % e)
    if not os.path.isdir(args.dir):
        parser.error("no directory '%s'" % args.dir)
    tests = sorted(os.path.join(args.dir, d) for d in os.listdir(args.dir)
                   if os.path.isfile(os.path.join(args.dir, d, "test.json")) and pattern.search(d))
    if not tests:
        parser.error("no saved test (DIR/<test>/test.json) in '%s' matches" % args.dir)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = dict(pool.map(lambda t: run_test(t, args), tests))
    for name in sorted(results):
        reason = results[name]
        print("PASS " + name if reason is None else "FAIL %s: %s" % (name, reason))
    failed = sum(reason is not None for reason in results.values())
    print("%d passed, %d failed" % (len(results) - failed, failed))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "results": results}, f, indent=1, sort_keys=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
