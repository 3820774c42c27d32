#!/usr/bin/env python3
# ===- run_model_benchmark.py - Turbine vs ONNX Runtime vs torch ----------=== #
#
# Usage: /usr/bin/python3 benchmarks/models/run_model_benchmark.py [BUILD_DIR]
#
# For each model of benchmark_models.py, batch size and thread count (1, 2):
# compiles the ONNX export with `turbine compile` (timed), checks Turbine's
# output against torch's, then times the three side by side in ROUNDS rounds
# (the order of the three rotates each round, so drifting machine load hits
# all alike); each round reports a median over REPS calls after a warmup, and
# the table shows the median of the round medians.
#   Turbine: `turbine bench` (local-sync for 1 thread, local-task with 2
#            workers for 2).
#   ORT:     onnxruntime-node (npm; installed into BUILD_DIR/benchmarks/ort on
#            first use with --onnxruntime-node-install=skip), intra-op threads.
#   torch:   eager nn.Module under no_grad, torch.set_num_threads; OpenBLAS
#            with OPENBLAS_CORETYPE=Cooperlake (see PLATFORM.md).
# Environment knobs: MODEL_ROUNDS (3), MODEL_REPS (30), MODEL_WARMUP (5),
# MODEL_THREADS ("1 2"), MODEL_FILTER (regex on the model name),
# MODEL_BASELINE (another `turbine` binary, e.g. of an earlier commit: its
# compile of each model is timed in the same rounds as a fourth tool, so a
# before/after comparison comes from one run).
# ===---------------------------------------------------------------------=== #
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchmark_models import MODELS  # noqa: E402


def run(cmd, env=None):
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), result.stdout))
    return result.stdout


def ensure_ort(build_dir):
    """NODE_PATH holding onnxruntime-node, or None when it cannot be had."""
    prefix = os.path.join(build_dir, "benchmarks", "ort")
    modules = os.path.join(prefix, "node_modules")
    if not os.path.isdir(os.path.join(modules, "onnxruntime-node")):
        if not shutil.which("npm"):
            return None
        os.makedirs(prefix, exist_ok=True)
        try:
            run(["npm", "install", "--prefix", prefix, "--no-save", "onnxruntime-node",
                 "--onnxruntime-node-install=skip"])
        except RuntimeError as e:
            print("note: cannot install onnxruntime-node, ORT column skipped:\n%s" % e)
            return None
    return modules


def parse(output, key):
    match = re.search(key + r"\s*:?\s*([0-9.eE+-]+)", output)
    if not match:
        raise RuntimeError("no '%s' in:\n%s" % (key, output))
    return float(match.group(1))


def main(argv):
    build_dir = os.path.abspath(argv[1] if len(argv) > 1 else "build")
    turbine = os.path.join(build_dir, "bin", "turbine")
    rounds = int(os.environ.get("MODEL_ROUNDS", "3"))
    reps = int(os.environ.get("MODEL_REPS", "30"))
    warmup = int(os.environ.get("MODEL_WARMUP", "5"))
    thread_counts = [int(t) for t in os.environ.get("MODEL_THREADS", "1 2").split()]
    model_filter = re.compile(os.environ.get("MODEL_FILTER", "."))
    baseline = os.environ.get("MODEL_BASELINE")
    out_dir = os.path.join(build_dir, "benchmarks", "models")
    os.makedirs(out_dir, exist_ok=True)

    run([sys.executable, os.path.join(HERE, "benchmark_models.py"), "export", out_dir])
    node_path = ensure_ort(build_dir)
    env = dict(os.environ, OPENBLAS_CORETYPE="Cooperlake")

    rows = []
    compile_times = {}
    for name, (_, _, batches) in MODELS.items():
        if not model_filter.search(name):
            continue
        model_dir = os.path.join(out_dir, name)
        onnx = os.path.join(model_dir, "model.onnx")
        tmod = os.path.join(model_dir, "model.tmod")
        start = time.perf_counter()
        run([turbine, "compile", onnx, "-o", tmod])
        compile_times[name] = time.perf_counter() - start
        baseline_tmod = os.path.join(model_dir, "model.baseline.tmod")
        if baseline:
            run([baseline, "compile", onnx, "-o", baseline_tmod])
        for batch in batches:
            inp = os.path.join(model_dir, "input_b%d.npy" % batch)
            expected = os.path.join(model_dir, "expected_b%d.npy" % batch)
            run([turbine, "run", tmod, "--input=@" + inp, "--expected_output=@" + expected,
                 "--atol=1e-3", "--rtol=1e-3"])
            if baseline:
                run([baseline, "run", baseline_tmod, "--input=@" + inp,
                     "--expected_output=@" + expected, "--atol=1e-3", "--rtol=1e-3"])
            for threads in thread_counts:
                tenv = dict(env, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
                device = (["--device=local-sync"] if threads == 1 else
                          ["--device=local-task", "--task_workers=%d" % threads])
                tools = {
                    "turbine": lambda: parse(run([turbine, "bench", tmod, "--input=@" + inp,
                                                  "--repetitions=%d" % reps] + device, tenv),
                                             "median ms/call"),
                    "torch": lambda: parse(run([sys.executable,
                                                os.path.join(HERE, "benchmark_models.py"),
                                                "torch", out_dir, name, str(batch), str(threads),
                                                str(reps), str(warmup)], tenv), "median_ms"),
                }
                if baseline:
                    tools["baseline"] = lambda: parse(run(
                        [baseline, "bench", baseline_tmod, "--input=@" + inp,
                         "--repetitions=%d" % reps] + device, tenv), "median ms/call")
                if node_path:
                    tools["ort"] = lambda: parse(run(
                        ["node", os.path.join(HERE, "ort_benchmark.js"), onnx, inp, expected,
                         str(threads), str(reps), str(warmup)],
                        dict(tenv, NODE_PATH=node_path)), "median_ms")
                medians = {tool: [] for tool in tools}
                order = list(tools)
                for r in range(rounds):
                    for tool in order[r % len(order):] + order[:r % len(order)]:
                        medians[tool].append(tools[tool]())
                result = {tool: statistics.median(v) for tool, v in medians.items()}
                rows.append((name, batch, threads, result))
                print_row(rows[-1])
    print()
    print("medians of %d rounds x %d calls (warmup %d); ratio = turbine / anchor "
          "(< 1: Turbine faster)" % (rounds, reps, warmup))
    print("turbine compile wall time: " +
          ", ".join("%s %.1f s" % (n, t) for n, t in compile_times.items()))
    return 0


HEADER_PRINTED = [False]


def print_row(row):
    if not HEADER_PRINTED[0]:
        print("%-12s %5s %7s %11s %9s %9s %9s %9s" % (
            "model", "batch", "threads", "turbine ms", "ORT ms", "torch ms", "t/ORT", "t/torch"))
        HEADER_PRINTED[0] = True
    name, batch, threads, r = row
    ort = r.get("ort")
    base = r.get("baseline")
    line = "%-12s %5d %7d %11.3f %9s %9.3f %9s %9.2f" % (
        name, batch, threads, r["turbine"], "%.3f" % ort if ort else "n/a", r["torch"],
        "%.2f" % (r["turbine"] / ort) if ort else "n/a", r["turbine"] / r["torch"])
    if base:
        line += "   baseline %.3f ms, baseline/ORT %s" % (
            base, "%.2f" % (base / ort) if ort else "n/a")
    print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
