# ===- test_stateful_llama.py - tiny llama prefill + decode vs torch eager --=== #
#
# examples/llm's llama-style model (LlamaConfig: 2 layers, dim 64, 4 heads,
# 2 KV heads, context 32), scripted as is, compiled with
# `turbine compile --function-shapes=prefill:1x5xi64
# --function-shapes=decode:1x1xi64,i64`: the KV caches (registered buffers
# updated by slice assignment) become module state. Prefill of a 5-token
# prompt and 8 greedy decode steps through turbine_torch.load's default
# instance give the logits of torch eager on the same weights (atol 1e-4,
# rtol 1e-4) and the same greedy tokens; a second instance replays the same
# sequence independently; decode at a position past the context raises the
# model's own check (its `raise` becomes a run-time assert). Attention is
# fused (turbine-fuse-attention): the dispatch IR of both functions holds one
# attention dispatch per layer and no batch_matmul, so the logits above are
# those of the fused kernel (decode key lengths 6..13 cross its 8-key block).
# Environment (set by ctest): TURBINE_BIN, TURBINE_TORCH_LIBRARY, PYTHONPATH.
# ===---------------------------------------------------------------------=== #
import copy
import os
import subprocess
import sys

import pytest
import torch

import turbine_torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "llm"))
from llama_model import LlamaConfig, build_model, prompt_tokens  # noqa: E402

TURBINE = os.environ["TURBINE_BIN"]
CONFIG = LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96, vocab_size=320,
                     max_seq_len=32)
PROMPT = 5
STEPS = 8


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    model = build_model(CONFIG, seed=0)
    work = tmp_path_factory.mktemp("llama")
    torch.jit.script(copy.deepcopy(model)).save(str(work / "tiny.pt"))
    subprocess.run([TURBINE, "compile", str(work / "tiny.pt"), "-o", str(work / "tiny.tmod"),
                    "--function-shapes=prefill:1x%dxi64" % PROMPT,
                    "--function-shapes=decode:1x1xi64,i64"], check=True)
    return model, work / "tiny.tmod"


def eager_sequence(model):
    m = copy.deepcopy(model)
    tokens = prompt_tokens(PROMPT, CONFIG.vocab_size)
    logits, chosen = [], []
    with torch.no_grad():
        out = m.prefill(tokens)
        for i in range(STEPS + 1):
            logits.append(out)
            if i == STEPS:
                break
            token = out.argmax(-1, keepdim=True)
            chosen.append(int(token))
            out = m.decode(token, PROMPT + i)
    return logits, chosen


def turbine_sequence(target):
    tokens = prompt_tokens(PROMPT, CONFIG.vocab_size)
    logits, chosen = [], []
    out = target.prefill(tokens)
    for i in range(STEPS + 1):
        logits.append(out)
        if i == STEPS:
            break
        token = out.argmax(-1, keepdim=True)
        chosen.append(int(token))
        out = target.decode(token, torch.tensor(PROMPT + i))
    return logits, chosen


def test_prefill_and_decode_match_eager(compiled):
    model, path = compiled
    m = turbine_torch.load(path, device="local-sync")
    names = {g.name for g in m.globals() if g.mutable}
    assert {"layers.0.attention.k_cache", "layers.1.attention.v_cache"} <= names
    want_logits, want_tokens = eager_sequence(model)
    got_logits, got_tokens = turbine_sequence(m)
    assert got_tokens == want_tokens
    for step, (got, want) in enumerate(zip(got_logits, want_logits)):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4, msg="step %d" % step)
    # A second instance replays the sequence from a fresh cache.
    again_logits, again_tokens = turbine_sequence(m.create_instance())
    assert again_tokens == want_tokens
    for got, want in zip(again_logits, want_logits):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


def test_attention_is_fused(compiled):
    _, path = compiled
    ir = subprocess.run([TURBINE, "compile", str(path.parent / "tiny.pt"), "--compile-to=dispatch",
                         "--function-shapes=prefill:1x%dxi64" % PROMPT,
                         "--function-shapes=decode:1x1xi64,i64"],
                        capture_output=True, text=True, check=True).stdout
    for function in ("prefill", "decode"):
        body = ir.split("func.func @" + function + "(")[1].split("func.func @")[0]
        assert body.count("turbine.dispatch @attention_") == CONFIG.n_layers, function
    assert "batch_matmul" not in ir


def test_position_past_the_context_raises(compiled):
    _, path = compiled
    m = turbine_torch.load(path, device="local-sync")
    inst = m.create_instance()
    inst.prefill(prompt_tokens(PROMPT, CONFIG.vocab_size))
    with pytest.raises(RuntimeError, match="the model raised: raise ValueError"):
        inst.decode(torch.tensor([[7]]), torch.tensor(CONFIG.max_seq_len))
    with pytest.raises(RuntimeError, match="i32"):
        inst.decode(torch.tensor([[7]], dtype=torch.int32), torch.tensor(5))
