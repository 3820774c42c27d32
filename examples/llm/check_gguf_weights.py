# ===- check_gguf_weights.py - the tiny llama run from a GGUF file's tensors -=== #
#
# Usage: check_gguf_weights.py TURBINE LLM_GENERATE WORKDIR
# The tiny llama (LlamaConfig.tiny(): 2 layers, dim 64, FFN 96, vocab 320) is
# written as Q8_0, Q4_0, F16, BF16 and F32 GGUF files (llama_gguf.py, the
# files llama.cpp reads); torch eager runs it on the weights decoded from
# each file (the values llama.cpp multiplies by). Turbine compiles the
# scripted model with `--weights-from=FILE --parameter-name-map=llama.names`
# (every matmul weight, the token embedding and the norms then external
# parameters bound by their GGUF names and read in the file's own types) and
# llm_generate runs it with `--parameters=FILE`: its greedy ids must equal
# torch eager's on the decoded weights. The token embedding comes from the
# file: the artifact is smaller, by at least the f32 table, than one
# compiled with a name map that leaves token_embd.weight out (which keeps
# the scripted model's copy). Bad input: the artifact run without the file,
# or with the other type's file, a GGUF (Q8_0, F16) whose shapes do not
# match the model, a token embedding of another vocabulary size, a tensor of
# a type Turbine does not bind (I16) as a matmul weight, a file that is not
# GGUF, and --parameter-name-map without --weights-from are clear errors
# (exit 1).
# ===---------------------------------------------------------------------=== #
import copy
import os
import struct
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from llama_gguf import model_from_gguf, write_gguf  # noqa: E402
from llama_model import LlamaConfig, build_model, prompt_tokens  # noqa: E402

NEW_TOKENS = 12
NAMES = os.path.join(HERE, "llama.names")
SHAPES = ["--function-shapes=prefill:1x5xi64", "--function-shapes=decode:1x1xi64,i64",
          "--dynamic-dim=prefill:0:1"]


def eager_greedy(model, prompt, n_new):
    m = copy.deepcopy(model)
    ids = []
    with torch.no_grad():
        logits = m.prefill(prompt)
        for step in range(n_new):
            ids.append(int(logits.argmax(-1)))
            if step + 1 < n_new:
                logits = m.decode(torch.tensor([[ids[-1]]]), prompt.shape[1] + step)
    return ids


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def expect_error(result, fragment, what):
    if result.returncode != 1 or fragment not in result.stderr:
        sys.exit("%s: expected exit 1 and an error containing %r, got %d:\n%s%s" %
                 (what, fragment, result.returncode, result.stdout, result.stderr))
    print("%s: rejected (%s)" % (what, result.stderr.strip().splitlines()[-1][:160]))


def generated_ids(result):
    if result.returncode != 0:
        sys.exit("llm_generate failed:\n" + result.stdout + result.stderr)
    for line in result.stdout.splitlines():
        if line.startswith("generated:"):
            return [int(x) for x in line.split()[1:]]
    sys.exit("no 'generated:' line in:\n" + result.stdout)


def main(turbine, llm_generate, work):
    os.makedirs(work, exist_ok=True)
    config = LlamaConfig.tiny()
    original = build_model(config, seed=0)
    tmods = {}
    for weight_type in ("q8_0", "q4_0", "f16", "bf16", "f32"):
        gguf = os.path.join(work, "tiny-%s.gguf" % weight_type)
        write_gguf(original.state_dict(), config, gguf, weight_type)
        # torch eager on the file's decoded weights: the reference; its
        # scripted form is what Turbine compiles (so weights the file's
        # blocks do not replace, the token embedding, hold the same values).
        model = model_from_gguf(gguf)
        pt = os.path.join(work, "tiny-%s.pt" % weight_type)
        tmod = os.path.join(work, "tiny-%s.tmod" % weight_type)
        torch.jit.script(copy.deepcopy(model)).save(pt)
        result = run([turbine, "compile", pt, "-o", tmod, "--weights-from=" + gguf,
                      "--parameter-name-map=" + NAMES] + SHAPES)
        if result.returncode != 0:
            sys.exit("turbine compile --weights-from=%s failed:\n%s%s" %
                     (gguf, result.stdout, result.stderr))
        tmods[weight_type] = (tmod, gguf)
        for length in (5, 7):
            prompt = prompt_tokens(length, config.vocab_size)
            want = eager_greedy(model, prompt, NEW_TOKENS)
            ids = ",".join(str(int(t)) for t in prompt.reshape(-1))
            got = generated_ids(run([llm_generate, tmod, "--parameters=" + gguf,
                                     "--prompt=" + ids, "--new-tokens=%d" % NEW_TOKENS]))
            if got != want:
                sys.exit("%s, prompt of %d: turbine %s, torch eager (dequantized) %s" %
                         (weight_type, length, got, want))
            print("%s, prompt of %d: %d greedy ids equal torch eager's on the dequantized "
                  "weights" % (weight_type, length, NEW_TOKENS))

    # The token embedding is read from the file: without it in the name map
    # the artifact carries the scripted model's f32 table.
    table = config.vocab_size * config.dim * 4
    no_embd = os.path.join(work, "no-token-embd.names")
    with open(NAMES) as f:
        rules = [line for line in f if not line.startswith("token_embd.weight")]
    with open(no_embd, "w") as f:
        f.writelines(rules)
    for weight_type in ("q8_0", "f16"):
        tmod, gguf = tmods[weight_type]
        pt = os.path.join(work, "tiny-%s.pt" % weight_type)
        with_copy = os.path.join(work, "tiny-%s-embd-copy.tmod" % weight_type)
        result = run([turbine, "compile", pt, "-o", with_copy, "--weights-from=" + gguf,
                      "--parameter-name-map=" + no_embd] + SHAPES)
        if result.returncode != 0:
            sys.exit("compile without token_embd in the map failed:\n" + result.stderr)
        size, size_copy = os.path.getsize(tmod), os.path.getsize(with_copy)
        if size_copy - size < table * 0.9:
            sys.exit("%s: artifact %d bytes, with the model's embedding copy %d: the f32 "
                     "table (%d bytes) is not gone" % (weight_type, size, size_copy, table))
        print("%s: token embedding read from the file: artifact %d bytes, %d with the "
              "model's f32 copy" % (weight_type, size, size_copy))

    q8, q8_gguf = tmods["q8_0"]
    q4, q4_gguf = tmods["q4_0"]
    expect_error(run([llm_generate, q8, "--new-tokens=2"]), "needs a parameter file",
                 "Q8_0 artifact without its GGUF file")
    expect_error(run([llm_generate, q8, "--parameters=" + q4_gguf, "--new-tokens=2"]),
                 "but the artifact was compiled against", "Q8_0 artifact with the Q4_0 file")

    # A GGUF whose shapes differ from the model's: a wider FFN.
    wide_config = LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=128,
                              vocab_size=320, max_seq_len=128)
    wide = os.path.join(work, "tiny-wide-q8_0.gguf")
    write_gguf(build_model(wide_config, seed=1).state_dict(), wide_config, wide, "q8_0")
    pt = os.path.join(work, "tiny-q8_0.pt")
    expect_error(run([turbine, "compile", pt, "-o", os.path.join(work, "bad.tmod"),
                      "--weights-from=" + wide, "--parameter-name-map=" + NAMES] + SHAPES),
                 "does not match the model's weight", "GGUF with other shapes")
    wide_f16 = os.path.join(work, "tiny-wide-f16.gguf")
    write_gguf(build_model(wide_config, seed=1).state_dict(), wide_config, wide_f16, "f16")
    pt16 = os.path.join(work, "tiny-f16.pt")
    expect_error(run([turbine, "compile", pt16, "-o", os.path.join(work, "bad.tmod"),
                      "--weights-from=" + wide_f16, "--parameter-name-map=" + NAMES] + SHAPES),
                 "does not match the model's weight", "F16 GGUF with other shapes")

    # A token embedding of another vocabulary size (the rest as the model).
    state = copy.deepcopy(original.state_dict())
    state["tok_embeddings.weight"] = torch.randn(config.vocab_size + 64, config.dim)
    big_vocab = os.path.join(work, "tiny-vocab-f16.gguf")
    write_gguf(state, config, big_vocab, "f16")
    expect_error(run([turbine, "compile", pt16, "-o", os.path.join(work, "bad.tmod"),
                      "--weights-from=" + big_vocab, "--parameter-name-map=" + NAMES] + SHAPES),
                 "GGUF tensor 'token_embd.weight' (384x64xF16) does not match the model's "
                 "weight 'tok_embeddings.weight' (320x64xf32)", "token embedding of 384 rows")

    # An F16 file whose blk.0.attn_q.weight is retyped I16 (same bytes): a
    # ggml type Turbine does not bind as a matmul weight.
    i16 = os.path.join(work, "tiny-i16.gguf")
    with open(tmods["f16"][1], "rb") as f:
        data = bytearray(f.read())
    name = b"blk.0.attn_q.weight"
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
    n_dims = struct.unpack_from("<I", data, at)[0]
    type_at = at + 4 + 8 * n_dims
    assert struct.unpack_from("<I", data, type_at)[0] == 1  # F16
    struct.pack_into("<I", data, type_at, 25)  # GGML_TYPE_I16
    with open(i16, "wb") as f:
        f.write(data)
    expect_error(run([turbine, "compile", pt16, "-o", os.path.join(work, "bad.tmod"),
                      "--weights-from=" + i16, "--parameter-name-map=" + NAMES] + SHAPES),
                 "'blk.0.attn_q.weight' (64x64xI16)", "an I16 tensor as a matmul weight")
    expect_error(run([turbine, "compile", pt, "-o", os.path.join(work, "bad.tmod"),
                      "--weights-from=" + NAMES] + SHAPES),
                 "--weights-from", "a file that is not GGUF")
    expect_error(run([turbine, "compile", pt, "-o", os.path.join(work, "bad.tmod"),
                      "--parameter-name-map=" + NAMES] + SHAPES),
                 "--weights-from", "--parameter-name-map without --weights-from")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: check_gguf_weights.py TURBINE LLM_GENERATE WORKDIR")
    main(*sys.argv[1:])
