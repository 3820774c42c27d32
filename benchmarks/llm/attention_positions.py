# ===- attention_positions.py - decode time against cache length, fused vs not -=== #
#
# Usage: attention_positions.py BUILD_DIR FUSED.tmod UNFUSED.tmod [ROUNDS]
# The two artifacts: examples/llm's default model scripted and compiled with
# --function-shapes=prefill:1x32xi64 --function-shapes=decode:1x1xi64,i64
# --dynamic-dim=prefill:0:1 and --fuse-attention=on / off.
# One generation per artifact and round: a 32-id prompt and 449 new tokens
# (decode positions 32..479), 1 thread; the median decode step at positions
# 32-63 and at 448-479 of the same sequence (llm_generate --json's
# decode_step_s), so both see the same machine load; fused and unfused
# alternate. Then prefill tok/s with prompts of 32 and 448 ids. Prints
# per-round values and medians (docs/performance.md, "Decode time against
# cache length").
# ===---------------------------------------------------------------------=== #
import json, os, statistics, subprocess, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "llm"))
if len(sys.argv) not in (4, 5):
    sys.exit("usage: attention_positions.py BUILD_DIR FUSED.tmod UNFUSED.tmod [ROUNDS]")
from llama_model import prompt_tokens  # noqa: E402
GEN = os.path.join(sys.argv[1], "bin", "llm_generate")
ARTIFACTS = {"on": sys.argv[2], "off": sys.argv[3]}
ROUNDS = int(sys.argv[4]) if len(sys.argv) == 5 else 3
prompts = {p: ",".join(str(int(t)) for t in prompt_tokens(p, 32000)[0]) for p in (32, 448)}
def run(mode, p, new, extra):
    out = subprocess.run([GEN, ARTIFACTS[mode], "--prompt=" + prompts[p],
                          "--new-tokens=%d" % new, "--threads=1", "--json"] + extra,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])
steps, pre, toks = {}, {}, {}
for r in range(ROUNDS):
    for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
        j = run(mode, 32, 449, ["--warmup=0", "--rounds=1"])
        s = j["decode_step_s"]
        early, late = statistics.median(s[0:32]), statistics.median(s[416:448])
        steps.setdefault(mode, []).append((1 / early, 1 / late))
        toks.setdefault(mode, []).append(j["tokens"])
        print(r, mode, "decode tok/s at 32-63 %.2f, at 448-479 %.2f, late/early %.3f" %
              (1 / early, 1 / late, early / late), "load %.1f" % os.getloadavg()[0], flush=True)
        for p in (32, 448):
            j = run(mode, p, 1, ["--warmup=1", "--rounds=3"])
            v = statistics.median(p / x for x in j["prefill_s"])
            pre.setdefault((mode, p), []).append(v)
            print(r, mode, "prefill %d: %.1f tok/s" % (p, v), flush=True)
print("same 449 greedy tokens on/off:", toks["on"][0] == toks["off"][0])
for mode in ("off", "on"):
    e = statistics.median(x[0] for x in steps[mode]); l = statistics.median(x[1] for x in steps[mode])
    ratios = [x[1] / x[0] for x in steps[mode]]
    print(mode, "decode median tok/s 32-63 %.2f 448-479 %.2f; per-round late/early" % (e, l),
          " ".join("%.3f" % x for x in ratios), "median %.3f" % statistics.median(ratios))
    for p in (32, 448):
        print(mode, "prefill %d median %.1f tok/s, rounds" % (p, statistics.median(pre[(mode, p)])),
              " ".join("%.1f" % x for x in pre[(mode, p)]))
