#!/usr/bin/env python3
# ===- linear_softmax.py - iree-turbine's walkthrough, with Turbine ------=== #
#
# Build an nn.Module (a linear layer followed by a softmax), export it, print
# the imported IR, compile it, run it and compare with eager PyTorch — at two
# batch sizes through one artifact with a dynamic batch dim.
#
#   PYTHONPATH=python /usr/bin/python3 examples/pytorch/linear_softmax.py [OUT_DIR]
# (needs `make build`: the package finds build/lib/libturbine_torch.so, or
# set TURBINE_TORCH_LIBRARY.)
# ===---------------------------------------------------------------------=== #
import os
import sys
import tempfile

import torch

import turbine_torch


class LinearSoftmax(torch.nn.Module):
    def __init__(self, in_features=16, out_features=8):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(self.linear(x), dim=-1)


def main(argv):
    out_dir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="turbine-pytorch-")
    torch.manual_seed(0)
    model = LinearSoftmax()
    example = torch.randn(4, 16)

    exported = turbine_torch.export(model, example, dynamic_dims={0: 0})
    print("== imported IR")
    exported.print_readable()

    artifact = os.path.join(out_dir, "linear_softmax.tmod")
    compiled = exported.compile(save_to=artifact)
    print("== compiled to %s: %s" % (artifact, compiled.signature()))

    worst = 0.0
    for batch in (4, 7):
        x = torch.randn(batch, 16)
        got = compiled(x)
        with torch.no_grad():
            expected = model(x)
        err = float((got - expected).abs().max())
        worst = max(worst, err)
        print("batch %d: max |turbine - eager| = %.3g" % (batch, err))
    ok = worst <= 1e-5
    print("== %s (tolerance 1e-5)" % ("match" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
