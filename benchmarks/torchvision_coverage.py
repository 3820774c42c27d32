#!/usr/bin/env python3
# ===- torchvision_coverage.py - which torchvision models import and run ---=== #
#
# For each torchvision 0.14 classification model (random weights, seed 0,
# BatchNorm statistics randomized, ViT's zero-initialized head re-initialized
# so its output is not all zeros): trace and script it, `turbine compile` each
# .pt with a dynamic batch dim, run batch 1 and 3, and compare with torch
# eager. Prints one Markdown row per model and variant: compile seconds (whole
# command) and the max abs error with the largest |reference| beside it, or the
# first line of the error.
#
# Usage: /usr/bin/python3 benchmarks/torchvision_coverage.py BUILD_DIR WORK_DIR
#            [--models resnet18,squeezenet1_0,...] [--image-size 64]
# Takes minutes per large model on 2 cores; not part of the test suite.
# ===---------------------------------------------------------------------=== #
import argparse
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from export_torchscript_models import randomize_batch_norms  # noqa: E402

DEFAULT_MODELS = ("resnet18,resnet50,mobilenet_v2,mobilenet_v3_small,squeezenet1_0,"
                  "shufflenet_v2_x1_0,efficientnet_b0,alexnet,vgg11,densenet121,mnasnet0_5,"
                  "regnet_y_400mf,convnext_tiny,googlenet,vit_b_16")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("work_dir")
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--image-size", type=int, default=64, help="ViT always uses 224")
    args = parser.parse_args()
    turbine = os.path.join(args.build_dir, "bin", "turbine")
    torch.set_num_threads(1)
    print("| model | variant | compile s | batch 1 max abs err (max abs ref) | batch 3 |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        torch.manual_seed(0)
        size = 224 if name.startswith("vit") else args.image_size
        model = getattr(torchvision.models, name)()
        if name.startswith("vit"):
            torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        randomize_batch_norms(model)
        model.eval()
        d = os.path.join(args.work_dir, name)
        os.makedirs(d, exist_ok=True)
        inputs, expected = {}, {}
        for b in (1, 3):
            inputs[b] = torch.randn(b, 3, size, size)
            with torch.no_grad():
                y = model(inputs[b])
            expected[b] = (y[0] if isinstance(y, tuple) else y).numpy()
            np.save(os.path.join(d, "input_%d.npy" % b), inputs[b].numpy())
        for variant in ("traced", "scripted"):
            pt = os.path.join(d, variant + ".pt")
            try:
                with warnings.catch_warnings(), torch.no_grad():
                    warnings.simplefilter("ignore")
                    module = (torch.jit.trace(model, (inputs[1],)) if variant == "traced"
                              else torch.jit.script(model))
                module.save(pt)
            except Exception as e:  # noqa: BLE001 - report torch's own failure
                print("| %s | %s | - | torch cannot %s it: %s | |" %
                      (name, variant, variant[:-1], str(e).splitlines()[0][:120]))
                continue
            tmod = os.path.join(d, variant + ".tmod")
            start = time.perf_counter()
            done = subprocess.run([turbine, "compile", pt, "-o", tmod,
                                   "--input-shape=1x3x%dx%dxf32" % (size, size), "--dynamic-dim=0:0"],
                                  capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if done.returncode != 0:
                message = done.stderr.strip().splitlines()[0] if done.stderr.strip() else "exit %d" % done.returncode
                print("| %s | %s | %.1f | compile failed: %s | |" % (name, variant, seconds, message[:200]))
                continue
            cells = []
            for b in (1, 3):
                out = os.path.join(d, "%s_out_%d.npy" % (variant, b))
                ran = subprocess.run([turbine, "run", tmod, "--input=@" + os.path.join(d, "input_%d.npy" % b),
                                      "--output=@" + out], capture_output=True, text=True)
                if ran.returncode != 0:
                    cells.append("run failed: " + ran.stderr.strip()[:120])
                    continue
                err = float(np.abs(np.load(out) - expected[b]).max())
                cells.append("%.2g (%.3g)" % (err, float(np.abs(expected[b]).max())))
            print("| %s | %s | %.1f | %s | %s |" % (name, variant, seconds, cells[0], cells[1]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
