#!/usr/bin/env python3
# ===- torch_llm_bench.py - torch eager prefill/decode of the llama model -=== #
#
# /usr/bin/python3 benchmarks/llm/torch_llm_bench.py MODEL.gguf --prompt=ID,ID,...
#     [--threads=1] [--new-tokens=64] [--rounds=1] [--warmup=0]
#
# The torch side of the LLM yardstick, one process per measurement (so the
# thread count and OpenBLAS settings are the process's own): builds
# examples/llm/llama_model.Llama with the weights of MODEL.gguf as f32
# (dequantized if the file holds F16/BF16/Q8_0/Q4_0 — the very values llama.cpp
# multiplies by), sets torch.set_num_threads(threads), and runs the same
# generation as llama_cpp_bench.js with examples/llm/generate.py: prefill of
# the prompt (the first token greedily from its logits), then new-tokens - 1
# greedy decode steps, `warmup` untimed then `rounds` timed generations.
# Prints one JSON line like llama_cpp_bench.js: tokens, prefill_s, decode_s.
# Run it with OPENBLAS_CORETYPE=Cooperlake and OPENBLAS_NUM_THREADS /
# OMP_NUM_THREADS = threads (run_llm_benchmark.py does).
# ===---------------------------------------------------------------------=== #
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "llm"))
from generate import generate  # noqa: E402
from llama_gguf import model_from_gguf  # noqa: E402


def parse_prompt(text):
    try:
        ids = [int(s) for s in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("--prompt must be comma-separated token ids, got %r" % text)
    if not ids or min(ids) < 0:
        raise argparse.ArgumentTypeError("--prompt must hold non-negative token ids")
    return ids


def main(argv):
    parser = argparse.ArgumentParser(description="torch eager prefill/decode timing.")
    parser.add_argument("model")
    parser.add_argument("--prompt", type=parse_prompt, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0)
    args = parser.parse_args(argv[1:])
    if args.threads < 1 or args.new_tokens < 1 or args.rounds < 1 or args.warmup < 0:
        parser.error("--threads, --new-tokens and --rounds must be >= 1, --warmup >= 0")
    torch.set_num_threads(args.threads)
    try:
        model = model_from_gguf(args.model)
    except (OSError, ValueError, RuntimeError) as e:  # GGUFReadError is a ValueError
        print("torch_llm_bench.py: error: %s" % e, file=sys.stderr)
        return 1
    if max(args.prompt) >= model.vocab_size:
        parser.error("--prompt: token id %d is outside the vocabulary of %d" % (
            max(args.prompt), model.vocab_size))
    if len(args.prompt) + args.new_tokens - 1 > model.max_seq_len:
        parser.error("prompt + new tokens exceed the context of %d" % model.max_seq_len)
    prompt = torch.tensor([args.prompt], dtype=torch.int64)
    prefill, decode = [], []
    result = None
    for round_index in range(args.warmup + args.rounds):
        result = generate(model, prompt, args.new_tokens)
        if round_index >= args.warmup:
            prefill.append(result.prefill_seconds)
            decode.append(result.decode_seconds)
    print(json.dumps({"tokens": result.tokens, "prefill_s": prefill, "decode_s": decode,
                      "threads": args.threads, "prompt_len": len(args.prompt),
                      "new_tokens": args.new_tokens,
                      "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
