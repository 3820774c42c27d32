#!/usr/bin/env bash
# ===- run_llm_demo.sh - `make llm-demo`: the llama-style LLM, end to end --=== #
#
# Usage: run_llm_demo.sh BUILD_DIR   (LLM_DEMO_TINY=1 for the 2-layer model)
# 1. Builds examples/llm's model (random weights, seed 0; ≈125M parameters,
#    or the tiny config) and scripts it with both entry points.
# 2. Compiles it as a stateful program: prefill(tokens[1, 32]) and
#    decode(token[1, 1], pos) over the KV caches (mutable globals).
# 3. Generates 64 greedy tokens with llm_generate (C++, runtime library only)
#    on 1 and on all cores, printing the ids and prefill / decode tokens/s,
#    and the same ids from torch eager for comparison.
# The artifact is kept in BUILD_DIR/llm-demo and reused while it is newer
# than the compiler and the model source.
# ===---------------------------------------------------------------------=== #
set -euo pipefail
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$BUILD/llm-demo
mkdir -p "$WORK"
TINY=${LLM_DEMO_TINY:-0}
PROMPT_LEN=32
NEW_TOKENS=64
TMOD=$WORK/llama$([ "$TINY" = 1 ] && echo -tiny).tmod

PROMPT=$(/usr/bin/python3 - "$HERE" "$TINY" "$PROMPT_LEN" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from llama_model import LlamaConfig, prompt_tokens
config = LlamaConfig.tiny() if sys.argv[2] == "1" else LlamaConfig.default()
print(",".join(str(int(t)) for t in prompt_tokens(int(sys.argv[3]), config.vocab_size)[0]))
PY
)

if [ ! -f "$TMOD" ] || [ "$BUILD/bin/turbine" -nt "$TMOD" ] || [ "$HERE/llama_model.py" -nt "$TMOD" ]; then
  echo "== scripting the model"
  /usr/bin/python3 - "$HERE" "$TINY" "$WORK/llama.pt" <<'PY'
import sys, torch
sys.path.insert(0, sys.argv[1])
from llama_model import LlamaConfig, build_model
config = LlamaConfig.tiny() if sys.argv[2] == "1" else LlamaConfig.default()
model = build_model(config, seed=0)
print("%s, %.1fM parameters" % (config, sum(p.numel() for p in model.parameters()) / 1e6))
torch.jit.script(model).save(sys.argv[3])
PY
  echo "== compiling (prefill 1x${PROMPT_LEN}xi64, decode 1x1xi64 at a position)"
  time "$BUILD/bin/turbine" compile "$WORK/llama.pt" -o "$TMOD" \
    --function-shapes=prefill:1x${PROMPT_LEN}xi64 --function-shapes=decode:1x1xi64,i64
  rm -f "$WORK/llama.pt"
fi

echo "== Turbine, 1 thread"
"$BUILD/bin/llm_generate" "$TMOD" --prompt="$PROMPT" --new-tokens=$NEW_TOKENS --threads=1 --warmup=1
echo "== Turbine, all cores"
"$BUILD/bin/llm_generate" "$TMOD" --prompt="$PROMPT" --new-tokens=$NEW_TOKENS --warmup=1
echo "== torch eager (the same weights), for comparison"
/usr/bin/python3 "$HERE/generate.py" $([ "$TINY" = 1 ] && echo --tiny) \
  --prompt-len $PROMPT_LEN --new-tokens $NEW_TOKENS
