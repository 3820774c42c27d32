# ===- test_stateful_runtime.py - stateful artifacts from Python -------=== #
#
# A scripted module with prefill/decode methods sharing a KV-cache buffer
# (slice assignment), compiled by `turbine compile --function-shapes`, loaded
# with turbine_torch.load: calls on the CompiledModule use its default
# instance, create_instance() gives independent ones (checked against torch
# eager, atol 1e-4; two instances interleaved and from two threads give the
# same results as one at a time), globals() lists the cache as a mutable
# global, reset() zeroes it, and a position past the cache raises.
# Environment (set by ctest): TURBINE_BIN, TURBINE_TORCH_LIBRARY, PYTHONPATH.
# ===---------------------------------------------------------------------=== #
import copy
import os
import subprocess
import threading

import pytest
import torch
from torch import nn

import turbine_torch

TURBINE = os.environ["TURBINE_BIN"]


class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("k_cache", torch.zeros(1, 6, 4))

    @torch.jit.export
    def prefill(self, x: torch.Tensor) -> torch.Tensor:
        t = x.size(1)
        self.k_cache[:, 0:t] = self.proj(x)
        return self.k_cache[:, :t].sum(1)

    @torch.jit.export
    def decode(self, x: torch.Tensor, pos: int) -> torch.Tensor:
        self.k_cache[:, pos:pos + 1] = self.proj(x)
        return self.k_cache[:, :pos + 1].sum(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.prefill(x)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    torch.manual_seed(0)
    model = Cache().eval()
    work = tmp_path_factory.mktemp("stateful")
    torch.jit.script(model).save(str(work / "cache.pt"))
    subprocess.run([TURBINE, "compile", str(work / "cache.pt"), "-o", str(work / "cache.tmod"),
                    "--function-shapes=prefill:1x2x4xf32", "--function-shapes=decode:1x1x4xf32,i64"],
                   check=True)
    return model, work / "cache.tmod"


def sequence(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(1, 2, 4, generator=g), [torch.randn(1, 1, 4, generator=g) for _ in range(4)]


def run_eager(model, seed):
    m = copy.deepcopy(model)
    prompt, steps = sequence(seed)
    with torch.no_grad():
        out = [m.prefill(prompt)]
        out += [m.decode(x, 2 + i) for i, x in enumerate(steps)]
    return out


def run_turbine(target, seed):
    prompt, steps = sequence(seed)
    out = [target.prefill(prompt)]
    out += [target.decode(x, torch.tensor(2 + i)) for i, x in enumerate(steps)]
    return out


def test_default_instance_matches_eager(compiled):
    model, path = compiled
    m = turbine_torch.load(path, device="local-sync")
    for got, want in zip(run_turbine(m, 0), run_eager(model, 0)):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    info = {g.name: g for g in m.globals()}
    assert info["k_cache"].mutable and info["k_cache"].type == "1x6x4xf32"
    assert info["k_cache"].initial == "zero"
    assert m.read_global("k_cache").abs().sum() > 0
    m.reset()
    assert m.read_global("k_cache").abs().sum() == 0


def test_instances_are_independent(compiled):
    model, path = compiled
    m = turbine_torch.load(path, device="local-sync")
    a, b = m.create_instance(), m.create_instance()
    # Interleaved: each sequence sees only its own cache.
    pa, sa = sequence(1)
    pb, sb = sequence(2)
    got_a, got_b = [a.prefill(pa)], [b.prefill(pb)]
    for i in range(4):
        got_a.append(a.decode(sa[i], torch.tensor(2 + i)))
        got_b.append(b.decode(sb[i], torch.tensor(2 + i)))
    for got, want in zip(got_a, run_eager(model, 1)):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    for got, want in zip(got_b, run_eager(model, 2)):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    # From two threads at once.
    results = {}
    threads = [threading.Thread(target=lambda s=s, inst=inst: results.__setitem__(s, run_turbine(inst, s)))
               for s, inst in ((3, m.create_instance()), (4, m.create_instance()))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in (3, 4):
        for got, want in zip(results[s], run_eager(model, s)):
            torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


def test_position_past_the_cache_raises(compiled):
    _, path = compiled
    m = turbine_torch.load(path, device="local-sync")
    inst = m.create_instance()
    with pytest.raises(RuntimeError, match="out of bounds"):
        inst.decode(torch.zeros(1, 1, 4), torch.tensor(6))
    with pytest.raises(RuntimeError, match="i32"):
        inst.decode(torch.zeros(1, 1, 4, dtype=torch.int32), torch.tensor(0))
