# ===- torch_kv_cache.py - a stateful TorchScript module through the CLI --=== #
#
# Usage: torch_kv_cache.py TURBINE WORKDIR
# A scripted module with two exported methods sharing KV-cache buffers that
# they update with slice assignment (`self.k_cache[:, :, pos:pos + t] = k`,
# the pattern of examples/llm's Attention), in a ModuleList of two layers:
#   prefill(x [1, 2, T, 4]) -> [1, 2, 1, 4]     writes positions 0..T-1
#   decode(x [1, 2, 1, 4], pos: int) -> [1, 2, 1, 4]   writes position pos
# each layer returning the sum over the cache's written positions (reading
# the buffer after the write). It is compiled once with
# `turbine compile --function-shapes=prefill:... --function-shapes=decode:...`
# (T dynamic), and `turbine run --call=prefill ... --call=decode ...` runs
# prefill then decode steps in one instance; every step's result is compared
# with torch eager on a fresh copy of the module (atol 1e-4, rtol 1e-4).
# Also checked: `--list` shows the buffers as mutable globals named by their
# attribute paths, a position past the cache is a clear error, decode with
# a wrong dtype is refused, an unknown method is a compile error.
# ===---------------------------------------------------------------------=== #
import copy
import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn

CONTEXT = 8


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4, bias=True)
        self.register_buffer("k_cache", torch.zeros(1, 2, CONTEXT, 4))
        self.register_buffer("scale", torch.tensor([1.0, 0.5, -1.0, 2.0]))

    def step(self, x: torch.Tensor, pos: int) -> torch.Tensor:
        t = x.size(2)
        k = self.proj(x) * self.scale
        self.k_cache[:, :, pos:pos + t] = k
        keys = self.k_cache[:, :, :pos + t]
        return keys.sum(2, keepdim=True)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(), Layer()])

    @torch.jit.export
    def prefill(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        for layer in self.layers:
            y = torch.tanh(layer.step(y, 0))
        return y

    @torch.jit.export
    def decode(self, x: torch.Tensor, pos: int) -> torch.Tensor:
        y = x
        for layer in self.layers:
            y = torch.tanh(layer.step(y, pos))
        return y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.prefill(x)


def run(args, expect_ok=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        sys.exit("FAILED: %s\n%s%s" % (" ".join(args), p.stdout, p.stderr))
    if not expect_ok and p.returncode == 0:
        sys.exit("expected a failure: %s\n%s" % (" ".join(args), p.stdout))
    return p


def main():
    turbine, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    model = Model().eval()
    reference = copy.deepcopy(model)
    path = os.path.join(work, "kv.pt")
    torch.jit.script(model).save(path)
    tmod = os.path.join(work, "kv.tmod")
    run([turbine, "compile", path, "-o", tmod, "--function-shapes=prefill:1x2x3x4xf32",
         "--function-shapes=decode:1x2x1x4xf32,i64", "--dynamic-dim=prefill:0:2"])

    listing = run([turbine, "run", tmod, "--list"]).stdout
    for needed in ("prefill(", "decode(", "layers.0.k_cache : 1x2x8x4xf32  mutable, initial value zero",
                   "layers.1.k_cache : 1x2x8x4xf32  mutable, initial value zero"):
        if needed not in listing:
            sys.exit("--list output lacks %r:\n%s" % (needed, listing))

    # Prefill 3 positions, then decode positions 3..7; torch eager alongside.
    gen = torch.Generator().manual_seed(1)
    calls, expected = [], []
    prompt = torch.randn(1, 2, 3, 4, generator=gen)
    with torch.no_grad():
        expected.append(reference.prefill(prompt).numpy())
    np.save(os.path.join(work, "prompt.npy"), prompt.numpy())
    calls += ["--call=prefill", "--input=@" + os.path.join(work, "prompt.npy")]
    for pos in range(3, CONTEXT):
        x = torch.randn(1, 2, 1, 4, generator=gen)
        with torch.no_grad():
            expected.append(reference.decode(x, pos).numpy())
        name = os.path.join(work, "x%d.npy" % pos)
        np.save(name, x.numpy())
        calls += ["--call=decode", "--input=@" + name, "--input=i64=%d" % pos]
    # Each step's result: the sequence up to that call, the last one's output.
    for step in range(len(expected)):
        count = 2 if step == 0 else 2 + 3 * step
        out = os.path.join(work, "out%d.npy" % step)
        run([turbine, "run", tmod, "--device=local-sync"] + calls[:count] + ["--output=@" + out])
        got = np.load(out)
        if got.shape != expected[step].shape or not np.allclose(got, expected[step], atol=1e-4, rtol=1e-4):
            sys.exit("step %d differs from torch eager: max |diff| %s\n%s\n%s" % (
                step, np.abs(got - expected[step]).max() if got.shape == expected[step].shape else "shape",
                got, expected[step]))
    print("prefill + %d decode steps match torch eager" % (len(expected) - 1))

    # Bad input.
    err = run([turbine, "run", tmod] + calls[:2] + ["--call=decode", "--input=@" + os.path.join(work, "x3.npy"),
                                                     "--input=i64=8"], expect_ok=False).stderr
    if "out of bounds" not in err or "layers.0.k_cache" not in err:
        sys.exit("position past the cache: unexpected error\n" + err)
    err = run([turbine, "run", tmod, "--call=decode", "--input=1x2x1x4xi32=0 0 0 0 0 0 0 0",
               "--input=i64=0"], expect_ok=False).stderr
    if "i32" not in err:
        sys.exit("wrong dtype: unexpected error\n" + err)
    err = run([turbine, "compile", path, "-o", tmod + ".bad", "--function-shapes=generate:1x2x1x4xf32"],
              expect_ok=False).stderr
    if "no method 'generate'" not in err:
        sys.exit("unknown method: unexpected error\n" + err)
    print("bad input: clear errors")


if __name__ == "__main__":
    main()
