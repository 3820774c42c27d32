#!/usr/bin/env python3
# ===- benchmark_models.py - the models of `make bench`, and torch timing ==== #
#
# The whole-model benchmarks of issue 4, built from PyTorch with random
# weights and a fixed seed:
#   mlp          256-512-512-10 with ReLU                      batch 64
#   cnn          two conv-bn-relu-maxpool stages + linear,
#                3x64x64 input                                 batch 1 and 8
#   transformer  post-norm encoder block, seq 128, d 256,
#                4 heads, ffn 1024                             batch 1
#   resnet18     torchvision's architecture, 3x224x224         batch 1
# The MLP and the encoder block are the classes of tests/models/export_models.py.
#
#   benchmark_models.py export OUT_DIR
#       writes OUT_DIR/<model>/model.onnx (opset 17, dynamic batch) and
#       input_b<B>.npy / expected_b<B>.npy (torch's output) per batch size.
#   benchmark_models.py torch OUT_DIR MODEL BATCH THREADS REPETITIONS WARMUP
#       rebuilds MODEL (same seed, same weights), runs it eagerly on the saved
#       input with torch.set_num_threads(THREADS) under no_grad, and prints
#       "median_ms <ms> max_abs_err <err>".
# Run with /usr/bin/python3 (Debian's python3-torch 1.13 and torchvision).
# ===---------------------------------------------------------------------=== #
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "models"))
from export_models import EncoderBlock, Mlp, randomize_batch_norms  # noqa: E402

OPSET = 17


class Cnn64(nn.Module):
    """3x64x64 input: two conv-bn-relu-maxpool stages, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 16 * 16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(torch.flatten(x, 1))


def resnet18():
    import torchvision
    return torchvision.models.resnet18()


# name: (builder, input shape without the batch dim, batch sizes)
MODELS = {
    "mlp": (Mlp, (256,), (64,)),
    "cnn": (Cnn64, (3, 64, 64), (1, 8)),
    "transformer": (lambda: EncoderBlock(d_model=256, heads=4, ffn=1024), (128, 256), (1,)),
    "resnet18": (resnet18, (3, 224, 224), (1,)),
}


def build(name):
    """The model with its fixed random weights, in eval mode."""
    builder = MODELS[name][0]
    torch.manual_seed(0)
    model = builder()
    randomize_batch_norms(model)
    return model.eval()


def export_all(out_dir):
    for name, (_, shape, batches) in MODELS.items():
        model = build(name)
        model_dir = os.path.join(out_dir, name)
        os.makedirs(model_dir, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                model, (torch.randn((2,) + shape),), os.path.join(model_dir, "model.onnx"),
                opset_version=OPSET, do_constant_folding=True,
                input_names=["input"], output_names=["output"],
                dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        generator = torch.Generator().manual_seed(1)
        for batch in batches:
            x = torch.randn((batch,) + shape, generator=generator)
            with torch.no_grad():
                y = model(x)
            np.save(os.path.join(model_dir, "input_b%d.npy" % batch), x.numpy())
            np.save(os.path.join(model_dir, "expected_b%d.npy" % batch), y.numpy())


def time_torch(out_dir, name, batch, threads, repetitions, warmup):
    torch.set_num_threads(threads)
    model = build(name)
    model_dir = os.path.join(out_dir, name)
    x = torch.from_numpy(np.load(os.path.join(model_dir, "input_b%d.npy" % batch)))
    expected = np.load(os.path.join(model_dir, "expected_b%d.npy" % batch))
    times = []
    with torch.no_grad():
        for i in range(warmup + repetitions):
            start = time.perf_counter()
            y = model(x)
            elapsed = time.perf_counter() - start
            if i >= warmup:
                times.append(elapsed * 1e3)
    err = float(np.max(np.abs(y.numpy() - expected)))
    print("median_ms %.6f max_abs_err %.3g" % (float(np.median(times)), err))


def main(argv):
    if len(argv) == 3 and argv[1] == "export":
        export_all(argv[2])
        return 0
    if len(argv) == 8 and argv[1] == "torch":
        time_torch(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), int(argv[7]))
        return 0
    sys.stderr.write("usage: benchmark_models.py export OUT_DIR\n"
                     "       benchmark_models.py torch OUT_DIR MODEL BATCH THREADS REPS WARMUP\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
