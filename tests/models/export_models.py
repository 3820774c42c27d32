#!/usr/bin/env python3
# ===- export_models.py - deterministic PyTorch -> ONNX test models -------=== #
#
# Exports the end-to-end test models (mlp, cnn, transformer) with
# torch.onnx.export at opset 17, a dynamic batch dim on every input and output,
# and for each model and batch size writes the input and torch's output as
# .npy files:
#
#   <out>/<model>/model.onnx
#   <out>/<model>/input_<b>.npy
#   <out>/<model>/expected_<b>.npy
#
# Usage: /usr/bin/python3 export_models.py OUT_DIR   (prints nothing on success)
# Needs python3-torch (1.13) and python3-numpy from Debian.
# ===---------------------------------------------------------------------=== #
import math
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 17
BATCH_SIZES = (1, 3)


class Mlp(nn.Module):
    """256-512-512-10 with ReLU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class Cnn(nn.Module):
    """3x32x32 input: two conv-bn-relu-maxpool stages, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        return self.fc(x)


class EncoderBlock(nn.Module):
    """One post-norm transformer encoder block written out by hand."""

    def __init__(self, d_model=64, heads=4, ffn=128):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, ffn)
        self.ff2 = nn.Linear(ffn, d_model)
        self.ln2 = nn.LayerNorm(d_model)

    def split_heads(self, t):
        b, s, _ = t.shape
        return t.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, s, d = x.shape
        q = self.split_heads(self.q(x))
        k = self.split_heads(self.k(x))
        v = self.split_heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.matmul(F.softmax(scores, dim=-1), v)
        attn = attn.transpose(1, 2).reshape(b, s, d)
        x = self.ln1(x + self.o(attn))
        x = self.ln2(x + self.ff2(F.gelu(self.ff1(x))))
        return x


def randomize_batch_norms(model):
    """Gives BatchNorm layers non-trivial running statistics."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            with torch.no_grad():
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)


def export(name, model, input_shape, out_dir):
    """Exports `model` and writes inputs/expected outputs per batch size."""
    model_dir = os.path.join(out_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    model.eval()
    example = torch.randn((2,) + input_shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (example,), os.path.join(model_dir, "model.onnx"),
            opset_version=OPSET, do_constant_folding=True,
            input_names=["input"], output_names=["output"],
            dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
            verbose=False)
    for batch in BATCH_SIZES:
        inputs = torch.randn((batch,) + input_shape)
        with torch.no_grad():
            expected = model(inputs)
        np.save(os.path.join(model_dir, "input_%d.npy" % batch),
                inputs.numpy().astype(np.float32))
        np.save(os.path.join(model_dir, "expected_%d.npy" % batch),
                expected.numpy().astype(np.float32))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: export_models.py OUT_DIR\n")
        return 2
    out_dir = argv[1]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    export("mlp", Mlp(), (256,), out_dir)
    cnn = Cnn()
    randomize_batch_norms(cnn)
    export("cnn", cnn, (3, 32, 32), out_dir)
    export("transformer", EncoderBlock(), (16, 64), out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
