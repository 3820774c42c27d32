# ===- run_turbine.py - the llama model through Turbine's stateful path --=== #
#
# Compiles llama_model's scripted model (default ≈110M config, or --tiny)
# with `turbine compile --function-shapes=prefill:1xPxi64
# --function-shapes=decode:1x1xi64,i64` (KV caches as module state), then
# runs prefill(P tokens) and N greedy decode steps in one instance through
# turbine_torch.load, comparing each step's logits with torch eager and
# printing the wall time of prefill and the median decode step. A rough
# check of the path, not the LLM benchmark (benchmarks/llm is).
#   PYTHONPATH=python /usr/bin/python3 examples/llm/run_turbine.py \
#       --turbine build/bin/turbine --work /tmp/llm [--tiny] [--prompt 16] [--steps 16]
# ===---------------------------------------------------------------------=== #
import argparse
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_model import LlamaConfig, build_model, prompt_tokens  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turbine", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--device", default="local-task")
    args = parser.parse_args()
    import turbine_torch

    config = LlamaConfig.tiny() if args.tiny else LlamaConfig.default()
    model = build_model(config, seed=0)
    os.makedirs(args.work, exist_ok=True)
    pt, tmod = os.path.join(args.work, "llama.pt"), os.path.join(args.work, "llama.tmod")
    torch.jit.script(build_model(config, seed=0)).save(pt)
    t0 = time.perf_counter()
    subprocess.run([args.turbine, "compile", pt, "-o", tmod,
                    "--function-shapes=prefill:1x%dxi64" % args.prompt,
                    "--function-shapes=decode:1x1xi64,i64"], check=True)
    print("compile: %.1f s" % (time.perf_counter() - t0))
    m = turbine_torch.load(tmod, device=args.device)
    tokens = prompt_tokens(args.prompt, config.vocab_size)
    t0 = time.perf_counter()
    out = m.prefill(tokens)
    prefill_ms = (time.perf_counter() - t0) * 1e3
    worst = 0.0
    with torch.no_grad():
        worst = max(worst, float((out - model.prefill(tokens)).abs().max()))
        times = []
        for i in range(args.steps):
            token = out.argmax(-1, keepdim=True)
            t0 = time.perf_counter()
            out = m.decode(token, torch.tensor(args.prompt + i))
            times.append((time.perf_counter() - t0) * 1e3)
            worst = max(worst, float((out - model.decode(token, args.prompt + i)).abs().max()))
    print("prefill(%d): %.1f ms; decode: median %.1f ms over %d steps; max |logits - eager| %.2e"
          % (args.prompt, prefill_ms, statistics.median(times), args.steps, worst))


if __name__ == "__main__":
    main()
