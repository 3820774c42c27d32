#!/usr/bin/env python3
# ===- generate.py - Token generation over prefill/decode -----------------=== #
#
# The generation loop of the LLM yardstick: prefill the prompt, then decode
# one token at a time, choosing each next token greedily (argmax) or by
# temperature / top-k sampling from a seeded torch.Generator. It drives any
# object with llama_model.Llama's two entry points — the eager module, its
# torch.jit.script export, or (later) a compiled Turbine module — so the same
# loop produces every engine's tokens.
#
# n_new tokens are produced: the first from prefill's logits, the remaining
# n_new - 1 by decode steps at positions T, T+1, ... (the last token chosen is
# not fed back).
#
#   /usr/bin/python3 examples/llm/generate.py [--tiny] [--scripted] [--prompt-len 32]
#       [--new-tokens 64] [--temperature 0] [--top-k 0] [--seed 0] [--threads 1]
# prints the prompt ids, the generated ids and prefill / decode tokens per second.
# ===---------------------------------------------------------------------=== #
import argparse
import os
import sys
import time
from typing import List, Optional

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_model import LlamaConfig, build_model, prompt_tokens  # noqa: E402


def choose_token(logits: torch.Tensor, temperature: float = 0.0, top_k: int = 0,
                 generator: Optional[torch.Generator] = None) -> int:
    """The next id from logits [1, vocab]: argmax if temperature == 0, else a sample
    from softmax(logits / temperature) restricted to the top_k largest (0: all)."""
    if temperature < 0:
        raise ValueError("temperature must be >= 0, got %r" % temperature)
    if top_k < 0:
        raise ValueError("top_k must be >= 0, got %r" % top_k)
    row = logits.reshape(-1).float()
    if temperature == 0.0:
        return int(torch.argmax(row))
    if top_k > 0 and top_k < row.numel():
        values, indices = torch.topk(row, top_k)
    else:
        values, indices = row, torch.arange(row.numel())
    probs = torch.softmax(values / temperature, dim=0)
    return int(indices[torch.multinomial(probs, 1, generator=generator)])


class Generation:
    """Ids and timings of one generate() call."""

    def __init__(self):
        self.tokens: List[int] = []
        self.prefill_seconds = 0.0
        self.decode_seconds = 0.0
        self.prompt_len = 0

    @property
    def prefill_tok_per_s(self) -> float:
        return self.prompt_len / self.prefill_seconds

    @property
    def decode_tok_per_s(self) -> float:
        steps = len(self.tokens) - 1
        return steps / self.decode_seconds if steps > 0 else float("nan")


def generate(model, prompt: torch.Tensor, n_new: int, temperature: float = 0.0,
             top_k: int = 0, seed: int = 0, logits_out: Optional[list] = None) -> Generation:
    """Runs prefill(prompt) then n_new - 1 decode steps; see the file banner.

    `model` has prefill(tokens[1, T]) and decode(token[1, 1], pos). If
    logits_out is a list, each step's logits [vocab] are appended to it.
    """
    if n_new < 1:
        raise ValueError("n_new must be >= 1, got %d" % n_new)
    generator = torch.Generator().manual_seed(seed)
    result = Generation()
    result.prompt_len = prompt.shape[1]
    with torch.no_grad():
        start = time.perf_counter()
        logits = model.prefill(prompt)
        token = choose_token(logits, temperature, top_k, generator)
        result.prefill_seconds = time.perf_counter() - start
        result.tokens.append(token)
        if logits_out is not None:
            logits_out.append(logits.reshape(-1).clone())
        pos = prompt.shape[1]
        start = time.perf_counter()
        for _ in range(n_new - 1):
            logits = model.decode(torch.tensor([[token]], dtype=torch.int64), pos)
            token = choose_token(logits, temperature, top_k, generator)
            result.tokens.append(token)
            if logits_out is not None:
                logits_out.append(logits.reshape(-1).clone())
            pos += 1
        result.decode_seconds = time.perf_counter() - start
    return result


def main(argv):
    parser = argparse.ArgumentParser(description="Generate tokens with the llama-style model (eager or scripted).")
    parser.add_argument("--tiny", action="store_true", help="the test-sized config")
    parser.add_argument("--scripted", action="store_true", help="run the torch.jit.script export")
    parser.add_argument("--prompt-len", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--top-k", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    parser.add_argument("--weight-seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv[1:])
    config = LlamaConfig.tiny() if args.tiny else LlamaConfig.default()
    if args.prompt_len + args.new_tokens - 1 > config.max_seq_len:
        parser.error("prompt + new tokens exceed the context of %d" % config.max_seq_len)
    torch.set_num_threads(args.threads)
    model = build_model(config, args.weight_seed)
    if args.scripted:
        model = torch.jit.script(model)
    prompt = prompt_tokens(args.prompt_len, config.vocab_size)
    result = generate(model, prompt, args.new_tokens, args.temperature, args.top_k, args.seed)
    print("prompt:", " ".join(str(t) for t in prompt[0].tolist()))
    print("tokens:", " ".join(str(t) for t in result.tokens))
    print("prefill: %.1f tok/s   decode: %.1f tok/s   (%d thread%s, %s)" % (
        result.prefill_tok_per_s, result.decode_tok_per_s, args.threads,
        "" if args.threads == 1 else "s", "scripted" if args.scripted else "eager"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
