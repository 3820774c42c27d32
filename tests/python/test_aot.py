# ===- test_aot.py - turbine_torch.aot: programs declared like iree-turbine's === #
#
# aot.CompiledModule declarations (export_parameters, export_global,
# procedures with abstract signatures) compiled in process and run:
#   * a two-procedure program over a mutable global and a Linear layer,
#     against the same arithmetic in torch eager (atol/rtol 1e-5); its weights
#     externalized to a .irpa by their "<attribute>.<state_dict key>" names;
#     instances independent; Python ints as index arguments;
#   * examples/llm's tiny llama wrapped as a program with a dynamic prompt
#     length: prefill (two prompt lengths from one artifact) and 6 greedy
#     decode steps against torch eager (atol/rtol 1e-4, same tokens);
#   * gpt-fast's cache update (`cache[:, :, input_pos] = k`, index_copy_): one
#     in-place row update per position, against torch eager (exact);
#   * declarations and state writes that cannot be compiled: clear errors.
# Environment (set by ctest): TURBINE_TORCH_LIBRARY, PYTHONPATH.
# ===---------------------------------------------------------------------=== #
import copy
import os
import sys

import pytest
import torch

import turbine_torch
from turbine_torch import aot

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "llm"))
from llama_model import LlamaConfig, build_model, prompt_tokens  # noqa: E402


class Projection(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


PROJECTION = Projection()


class History(aot.CompiledModule):
    """Writes a projection of each step's input at a run-time position."""
    proj = aot.export_parameters(PROJECTION, external=True)
    seen = aot.export_global(torch.zeros(3, 8, 4), mutable=True)
    offset = aot.export_global(torch.full((4,), 0.5))

    def step(self, x=aot.AbstractTensor(3, 1, 4), pos=aot.AbstractIndex):
        self.seen[:, pos:pos + 1] = self.proj(x)
        return self.seen.sum(1) + self.offset

    def total(self):
        return self.seen * 2.0


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    work = tmp_path_factory.mktemp("aot")
    exported = aot.export(History)
    assert "ml_program.global private mutable @seen" in exported.import_to("input")
    compiled = exported.compile(save_to=str(work / "history.tmod"),
                                externalize_params=str(work / "history.irpa"))
    return compiled, work


def test_program_procedures_and_globals(history):
    m, _ = history
    assert m.functions() == ["step", "total"]
    globals_ = {g.name: g for g in m.globals()}
    assert globals_["seen"].mutable and globals_["seen"].type == "3x8x4xf32"
    assert globals_["seen"].initial == "zero"


def test_program_matches_eager(history):
    m, _ = history
    torch.manual_seed(1)
    xs = [torch.randn(3, 1, 4) for _ in range(3)]
    seen = torch.zeros(3, 8, 4)
    inst = m.create_instance()
    with torch.no_grad():
        for pos, x in zip([5, 0, 5], xs):
            seen[:, pos:pos + 1] = PROJECTION(x)
            got = inst.step(x, pos)  # a Python int position
            torch.testing.assert_close(got, seen.sum(1) + 0.5, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(inst.total(), seen * 2.0, atol=1e-5, rtol=1e-5)
    # The default instance saw none of it; reset clears the other.
    torch.testing.assert_close(m.total(), torch.zeros(3, 8, 4))
    inst.reset()
    torch.testing.assert_close(inst.total(), torch.zeros(3, 8, 4))


def test_position_out_of_range_is_an_error(history):
    m, _ = history
    with pytest.raises(RuntimeError, match="out of bounds"):
        m.create_instance().step(torch.zeros(3, 1, 4), 8)


def test_exported_parameters_go_to_the_file(history):
    m, work = history
    names = set(turbine_torch.ParameterArchive(str(work / "history.irpa")).names())
    assert names and all(name.startswith("proj.fc.") for name in names), names
    # The artifact needs the file: loaded without it, a call is an error.
    with pytest.raises(RuntimeError, match="parameter"):
        turbine_torch.load(str(work / "history.tmod")).step(torch.zeros(3, 1, 4), 0)
    reloaded = turbine_torch.load(str(work / "history.tmod"),
                                  parameters=[str(work / "history.irpa")])
    x = torch.ones(3, 1, 4)
    with torch.no_grad():
        want = PROJECTION(x).squeeze(1) + 0.5
    torch.testing.assert_close(reloaded.step(x, 2), want, atol=1e-5, rtol=1e-5)


CONFIG = LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96, vocab_size=320,
                     max_seq_len=32)
LLAMA = build_model(CONFIG, seed=0)


class LlamaProgram(aot.CompiledModule):
    model = aot.export_parameters(copy.deepcopy(LLAMA))

    def prefill(self, tokens=aot.AbstractTensor(1, None, dtype=torch.int64)):
        return self.model.prefill(tokens)

    def decode(self, token=aot.AbstractTensor(1, 1, dtype=torch.int64), pos=aot.AbstractIndex):
        return self.model.decode(token, pos)


def test_llama_program_matches_eager():
    m = aot.export(LlamaProgram).compile(device="local-sync")
    mutable = {g.name for g in m.globals() if g.mutable}
    assert {"model.layers.0.attention.k_cache", "model.layers.1.attention.v_cache"} <= mutable
    for prompt in (5, 9):  # one artifact, a dynamic prompt length
        eager = copy.deepcopy(LLAMA)
        seq = m.create_instance()
        tokens = prompt_tokens(prompt, CONFIG.vocab_size)
        with torch.no_grad():
            want, got = eager.prefill(tokens), seq.prefill(tokens)
            for step in range(6):
                torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4,
                                           msg="prompt %d step %d" % (prompt, step))
                token = want.argmax(-1, keepdim=True)
                assert int(got.argmax(-1)) == int(token)
                want = eager.decode(token, prompt + step)
                got = seq.decode(token, prompt + step)


def test_bad_declarations_are_clear_errors():
    class NoDefault(aot.CompiledModule):
        def run(self, x):
            return x

    with pytest.raises(TypeError, match="x need an abstract default"):
        aot.export(NoDefault)

    class Empty(aot.CompiledModule):
        weights = aot.export_global(torch.ones(2))

    with pytest.raises(TypeError, match="declares no procedure"):
        aot.export(Empty)

    class WritesConstant(aot.CompiledModule):
        table = aot.export_global(torch.zeros(4), mutable=False)

        def put(self, x=aot.AbstractTensor(1)):
            self.table[0:1] = x
            return self.table

    with pytest.raises(ValueError, match="table are declared export_global\\(mutable=False\\)"):
        aot.export(WritesConstant).compile()

    with pytest.raises(TypeError, match="program declaration"):
        History()
    with pytest.raises(TypeError, match="subclass"):
        aot.export(Projection)
    with pytest.raises(ValueError, match="dims are ints"):
        aot.AbstractTensor(2, -1)
    with pytest.raises(TypeError, match="not supported"):
        aot.AbstractTensor(2, dtype=torch.complex64)
    with pytest.raises(TypeError, match="nn.Module"):
        aot.export_parameters(torch.zeros(2))


class IndexedCache(aot.CompiledModule):
    """gpt-fast's KV-cache update: `cache[:, :, input_pos] = k_val`, and
    index_copy_, at run-time positions."""
    k = aot.export_global(torch.zeros(1, 2, 8, 4), mutable=True)
    v = aot.export_global(torch.zeros(1, 2, 8, 4), mutable=True)

    def update(self, k_val=aot.AbstractTensor(1, 2, 3, 4), v_val=aot.AbstractTensor(1, 2, 3, 4),
               input_pos=aot.AbstractTensor(3, dtype=torch.int64)):
        self.k[:, :, input_pos] = k_val
        self.v.index_copy_(2, input_pos, v_val)
        return self.k.sum(2) + self.v.sum(2)

    def read(self):
        return self.k, self.v


def test_indexed_cache_updates_in_place():
    exported = aot.export(IndexedCache)
    # Each position (3 per cache) is its own in-place row update (the two
    # caches' updates share their kernels: turbine-deduplicate-kernels).
    dispatch_ir = exported.import_to("dispatch")
    assert dispatch_ir.count(" in_place(") == 6, dispatch_ir
    assert dispatch_ir.count("{turbine.slice_update}") == 3, dispatch_ir
    m = exported.compile()
    k, v = torch.zeros(1, 2, 8, 4), torch.zeros(1, 2, 8, 4)
    torch.manual_seed(2)
    for positions in ([0, 1, 2], [7, -2, 3]):
        kv, vv = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)
        pos = torch.tensor(positions)
        k[:, :, pos] = kv
        v.index_copy_(2, pos % 8, vv)
        torch.testing.assert_close(m.update(kv, vv, pos), k.sum(2) + v.sum(2))
    got_k, got_v = m.read()
    torch.testing.assert_close(got_k, k)
    torch.testing.assert_close(got_v, v)
    with pytest.raises(RuntimeError, match="out of bounds"):
        m.update(kv, vv, torch.tensor([0, 8, 1]))


def test_unsupported_state_writes_are_clear_errors():
    class Accumulates(aot.CompiledModule):
        k = aot.export_global(torch.zeros(8, 4), mutable=True)

        def add(self, rows=aot.AbstractTensor(2, 4), at=aot.AbstractTensor(2, dtype=torch.int64)):
            self.k.index_put_((at,), rows, accumulate=True)
            return self.k

    with pytest.raises(RuntimeError, match="accumulate=True on module state"):
        aot.export(Accumulates).compile()

    class DynamicCount(aot.CompiledModule):
        k = aot.export_global(torch.zeros(8, 4), mutable=True)

        def put(self, rows=aot.AbstractTensor(None, 4),
                at=aot.AbstractTensor(None, dtype=torch.int64)):
            self.k[at] = rows
            return self.k

    with pytest.raises(RuntimeError, match="static number of at most 256 positions"):
        aot.export(DynamicCount).compile()
