#!/usr/bin/env python3
# ===- torchscript_vs_torch.py - TorchScript models: Turbine vs torch -----=== #
#
# For each model (architectures from tests/models/export_torchscript_models.py,
# random weights, fixed seed): trace it, `turbine compile` the .pt with a
# dynamic batch dim (compile time measured), then per batch size time
# `turbine bench --device=local-sync` (one thread) next to torch eager and the
# traced TorchScript module in this same process with torch.set_num_threads(1),
# and report the max abs error of Turbine's output against torch eager's.
# Medians of --reps calls each. Prints a Markdown table.
#
# Usage: /usr/bin/python3 benchmarks/torchscript_vs_torch.py BUILD_DIR WORK_DIR
#            [--models mlp,gpt,resnet18,mobilenet_v2] [--batches 1,8]
#            [--image-size 224] [--reps 20]
# OPENBLAS_CORETYPE is set to Cooperlake (see benchmarks/README.md) and torch runs 1 thread.
# ===---------------------------------------------------------------------=== #
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import warnings

os.environ["OPENBLAS_CORETYPE"] = "Cooperlake"  # on purpose: shells here may export Haswell
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from export_torchscript_models import make_input, make_model  # noqa: E402


def median_ms(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("work_dir")
    parser.add_argument("--models", default="mlp,gpt,resnet18,mobilenet_v2")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    turbine = os.path.join(args.build_dir, "bin", "turbine")
    torch.set_num_threads(1)
    os.makedirs(args.work_dir, exist_ok=True)
    print("| model | batch | compile s | turbine ms/call | torch eager ms/call | torchscript ms/call | turbine / eager | max abs err |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        torch.manual_seed(0)
        model, shape, dtype = make_model(name)
        if name in ("resnet18", "mobilenet_v2"):
            shape = (3, args.image_size, args.image_size)
        model.eval()
        pt = os.path.join(args.work_dir, name + ".pt")
        tmod = os.path.join(args.work_dir, name + ".tmod")
        example = make_input((1,) + shape, dtype)
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(model, (example,))
        traced.save(pt)
        spec = "x".join(str(d) for d in (1,) + shape) + "x" + {torch.float32: "f32", torch.int64: "i64"}[dtype]
        start = time.perf_counter()
        subprocess.run([turbine, "compile", pt, "-o", tmod, "--input-shape=" + spec, "--dynamic-dim=0:0"],
                       check=True)
        compile_s = time.perf_counter() - start
        for batch in [int(b) for b in args.batches.split(",")]:
            x = make_input((batch,) + shape, dtype)
            x_path = os.path.join(args.work_dir, "%s_in_%d.npy" % (name, batch))
            y_path = os.path.join(args.work_dir, "%s_out_%d.npy" % (name, batch))
            np.save(x_path, x.numpy())
            subprocess.run([turbine, "run", tmod, "--device=local-sync", "--input=@" + x_path,
                            "--output=@" + y_path], check=True, stdout=subprocess.DEVNULL)
            bench = subprocess.run([turbine, "bench", tmod, "--device=local-sync", "--input=@" + x_path,
                                    "--repetitions=%d" % args.reps, "--warmup=3"],
                                   check=True, capture_output=True, text=True).stdout
            turbine_ms = float(re.search(r"median ms/call:\s+([0-9.]+)", bench).group(1))
            with torch.no_grad():
                expected = model(x).numpy()
                eager_ms = median_ms(lambda: model(x), args.reps)
                ts_ms = median_ms(lambda: traced(x), args.reps)
            err = float(np.abs(np.load(y_path) - expected).max())
            print("| %s | %d | %.1f | %.3f | %.3f | %.3f | %.2f | %.2g |" %
                  (name, batch, compile_s, turbine_ms, eager_ms, ts_ms, turbine_ms / eager_ms, err))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
