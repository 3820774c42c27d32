#!/usr/bin/env python3
# ===- linear_softmax.py - iree-turbine's walkthrough, with Turbine ------=== #
#
# Build an nn.Module (a linear layer followed by a softmax, the softmax a
# Turbine kernel: torch.ops.turbine.softmax, written in the kernel language,
# kernels/include/turbine/kernels/KernelLibrary.h), export it, print the
# imported IR (the softmax is a call of the custom op `turbine.softmax`),
# compile it (the softmax becomes the kernel's own dispatch), run it and
# compare with eager PyTorch: with the same module run eagerly (the kernel
# compiled on its own) and with torch.softmax. Tolerance: 1e-5 absolute.
# Then the weights go to a parameter file (.irpa, named fc.weight.T and
# fc.bias after the module's state_dict) and the artifact is loaded with it.
#
#   PYTHONPATH=python /usr/bin/python3 examples/pytorch/linear_softmax.py [OUT_DIR]
# (needs `make build`: the package finds build/lib/libturbine_torch.so, or
# set TURBINE_TORCH_LIBRARY.)
# ===---------------------------------------------------------------------=== #
import os
import sys
import tempfile
import time

import torch

import turbine_torch

TOLERANCE = 1e-5


class LinearSoftmax(torch.nn.Module):
    def __init__(self, in_features=64, out_features=100):
        super().__init__()
        self.fc = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.ops.turbine.softmax(self.fc(x))


def time_per_call(fn, x, calls=200):
    fn(x)
    start = time.perf_counter()
    for _ in range(calls):
        fn(x)
    return (time.perf_counter() - start) / calls * 1e6


def main(argv):
    out_dir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="turbine-pytorch-")
    os.makedirs(out_dir, exist_ok=True)
    turbine_torch.load_library()        # defines torch.ops.turbine.*
    torch.manual_seed(0)
    model = LinearSoftmax().eval()
    x = torch.randn(8, 64)

    # Turbine kernels are specialized to static shapes: no dynamic batch here.
    exported = turbine_torch.export(model, x)
    print("== imported IR")
    exported.print_readable()

    artifact = os.path.join(out_dir, "linear_softmax.tmod")
    compiled = exported.compile(save_to=artifact)
    print("== compiled to %s: %s" % (artifact, compiled.signature()))

    got = compiled(x)
    with torch.no_grad():
        eager = model(x)                                  # the kernel, eagerly
        reference = torch.softmax(model.fc(x), dim=-1)    # plain PyTorch
    errors = {"eager (turbine kernel)": float((got - eager).abs().max()),
              "torch.softmax": float((got - reference).abs().max())}
    for name, err in errors.items():
        print("max |compiled - %s| = %.3g" % (name, err))

    weights = os.path.join(out_dir, "linear_softmax.irpa")
    external = os.path.join(out_dir, "linear_softmax_external.tmod")
    exported.compile(save_to=external, externalize_params=weights, externalize_min_bytes=0)
    reloaded = turbine_torch.load(external, parameters=[weights])
    errors["reloaded with " + os.path.basename(weights)] = float(
        (reloaded(x) - reference).abs().max())
    print("== weights in %s; max |reloaded - torch.softmax| = %.3g"
          % (weights, errors["reloaded with " + os.path.basename(weights)]))

    with torch.no_grad():
        print("time per call: compiled %.1f us, eager %.1f us, plain PyTorch %.1f us"
              % (time_per_call(compiled, x), time_per_call(model, x),
                 time_per_call(lambda t: torch.softmax(model.fc(t), dim=-1), x)))
    ok = all(err <= TOLERANCE for err in errors.values())
    print("== %s (tolerance %g)" % ("match" if ok else "MISMATCH", TOLERANCE))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
