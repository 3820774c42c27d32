# ===- check_llm_generate.py - the C++ generation loop against torch eager -=== #
#
# Usage: check_llm_generate.py TURBINE LLM_GENERATE WORKDIR
# A tiny llama (examples/llm's model: 2 layers, dim 64, 4 heads, 2 KV heads,
# context 32) is scripted, compiled with `turbine compile --function-shapes`
# (prefill's prompt length dynamic), and driven by llm_generate (the C++
# loop over prefill / decode in one Instance): its greedy ids must equal
# torch eager's for a 5- and a 7-token prompt (one compiled module serves
# both); sampling with a seed is reproducible; a prompt past the context and
# a bad flag are clear errors (exit 1).
# ===---------------------------------------------------------------------=== #
import copy
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from llama_model import LlamaConfig, build_model, prompt_tokens  # noqa: E402

CONFIG = LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96, vocab_size=320,
                     max_seq_len=32)
NEW_TOKENS = 10


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


def generate(llm_generate, tmod, args):
    return subprocess.run([llm_generate, tmod] + args, capture_output=True, text=True)


def generated_ids(result):
    if result.returncode != 0:
        sys.exit("llm_generate failed:\n" + result.stdout + result.stderr)
    for line in result.stdout.splitlines():
        if line.startswith("generated:"):
            return [int(x) for x in line.split()[1:]]
    sys.exit("no 'generated:' line in:\n" + result.stdout)


def main(turbine, llm_generate, work):
    os.makedirs(work, exist_ok=True)
    model = build_model(CONFIG, seed=0)
    pt, tmod = os.path.join(work, "tiny_llama.pt"), os.path.join(work, "tiny_llama.tmod")
    torch.jit.script(copy.deepcopy(model)).save(pt)
    subprocess.run([turbine, "compile", pt, "-o", tmod, "--function-shapes=prefill:1x5xi64",
                    "--function-shapes=decode:1x1xi64,i64", "--dynamic-dim=prefill:0:1"],
                   check=True)

    for length in (5, 7):
        prompt = prompt_tokens(length, CONFIG.vocab_size)
        want = eager_greedy(model, prompt, NEW_TOKENS)
        ids = ",".join(str(int(t)) for t in prompt.reshape(-1))
        got = generated_ids(generate(llm_generate, tmod, ["--prompt=" + ids,
                                                          "--new-tokens=%d" % NEW_TOKENS]))
        if got != want:
            sys.exit("prompt of %d: llm_generate %s, torch eager %s" % (length, got, want))
        print("prompt of %d: %d greedy ids equal torch eager's" % (length, NEW_TOKENS))

    sampled = [generated_ids(generate(llm_generate, tmod, ["--temperature=0.8", "--top-k=20",
                                                            "--seed=7", "--device=local-sync"]))
               for _ in range(2)]
    if sampled[0] != sampled[1] or len(sampled[0]) != 16:
        sys.exit("seeded sampling is not reproducible: %s vs %s" % tuple(sampled))

    too_long = ",".join(["5"] * (CONFIG.max_seq_len + 1))
    result = generate(llm_generate, tmod, ["--prompt=" + too_long])
    if result.returncode != 1 or "error" not in result.stderr:
        sys.exit("a prompt past the context: expected an error, got %d:\n%s%s" %
                 (result.returncode, result.stdout, result.stderr))
    result = generate(llm_generate, tmod, ["--new-tokens=0"])
    if result.returncode != 1 or "--new-tokens" not in result.stderr:
        sys.exit("--new-tokens=0: expected an error naming the flag, got:\n" + result.stderr)
    print("sampling reproducible; bad prompt and flag rejected")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__ if __doc__ else "usage: check_llm_generate.py TURBINE LLM_GENERATE WORKDIR")
    main(*sys.argv[1:])
