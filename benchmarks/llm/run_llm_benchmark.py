#!/usr/bin/env python3
# ===- run_llm_benchmark.py - LLM prefill/decode: llama.cpp, torch, Turbine -=== #
#
# Usage: /usr/bin/python3 benchmarks/llm/run_llm_benchmark.py [BUILD_DIR]   (make bench-llm)
#
# The LLM yardstick of issues 13 and 14, on the 124.7M-parameter llama-style
# model of examples/llm (random weights, seed 0; prompt of 32 ids, 64 greedy
# tokens: 1 from prefill + 63 decode steps):
#
# 1. Writes the model as GGUF files, one per weight type (LLM_TYPES: f32, f16,
#    q8_0, q4_0; bf16 on request), into BUILD_DIR/llm-bench/gguf (kept and
#    reused while the model and writer sources are unchanged).
# 2. Correctness first, at 1 thread: each engine's greedy tokens against
#    torch eager on the same file's weights (decoded to f32 for F16/BF16/
#    Q8_0/Q4_0): the steps that agree before the first difference; then, with
#    torch fed the engine's own tokens (teacher forcing, the same context at
#    every step), the largest difference of the engine's top-5 logits, the
#    steps where the engine's token is torch's argmax and, at the others,
#    torch's margin between the two. f32 must agree for all 64 steps,
#    otherwise the GGUF is wrong and the script stops with exit status 1; the
#    low-precision files may drift (llama.cpp quantizes activations to Q8_0
#    for Q8_0/Q4_0 weights and rounds them to f16/bf16 for F16/BF16 weights,
#    and keeps its KV cache in f16 by default: with random weights the top two
#    logits are often close, and a near-tie flips the greedy path).
# 3. Timing, for each thread count (LLM_THREADS "1 2"): every (engine, weight
#    type) pair and the memory read-bandwidth benchmark run in LLM_ROUNDS
#    rounds (3) whose order rotates; a round is one process doing LLM_WARMUP
#    (1) untimed and LLM_REPS (2) timed generations, its value the median of
#    them; the table shows the median over rounds. prefill tok/s = prompt
#    length / prefill time; decode tok/s = 63 / time of the 63 decode steps;
#    decode GB/s = decode tok/s x the bytes of weights one step reads (every
#    tensor of the file but the token embedding, of which one row); "of BW" =
#    that / the measured read bandwidth at the same thread count.
#
# Engines (class Engine below): llama.cpp (npm node-llama-cpp 3.22, CPU
# binaries, installed offline-capable into BUILD_DIR/llm-bench on first use:
# `npm install --omit=optional node-llama-cpp @node-llama-cpp/linux-x64`;
# without npm the column says n/a), torch eager (f32 compute; timed on the
# f32 file only, since the dequantized weights run at the same speed;
# OPENBLAS_CORETYPE=Cooperlake, torch.set_num_threads), and Turbine (the
# model compiled as a stateful program from the file's weights, run by
# examples/llm's llm_generate; the f32 file's weights compiled into the
# artifact, the F16 / BF16 / Q8_0 / Q4_0 files' read in place with
# --weights-from).
#
# Knobs (environment): LLM_TYPES, LLM_THREADS, LLM_ROUNDS, LLM_REPS,
# LLM_WARMUP, LLM_TURBINE_FLAGS (extra `turbine compile` flags), LLM_PROMPT_LEN (32), LLM_NEW_TOKENS (64), LLM_KV_TYPE (F16:
# llama.cpp's default KV cache type; F32 for an all-f32 llama.cpp),
# LLM_TINY=1 (the test-sized model, for a quick run), LLM_SEED (0).
# Writes BUILD_DIR/llm-bench/results.json with every number printed.
# ===---------------------------------------------------------------------=== #
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LLM_DIR = os.path.join(ROOT, "examples", "llm")
sys.path.insert(0, LLM_DIR)

import torch  # noqa: E402

from generate import generate  # noqa: E402
from gguf_reader import GGUFFile  # noqa: E402
from llama_gguf import model_from_gguf, write_gguf  # noqa: E402
from llama_model import LlamaConfig, build_model, prompt_tokens  # noqa: E402

ALL_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0")


def env_list(name, default):
    return os.environ.get(name, default).split()


# One timed process (warmup + reps generations) may take this long; a round
# past it (a machine loaded by other work) is dropped, not waited for.
ROUND_TIMEOUT_S = 900


def run(cmd, env=None, timeout=ROUND_TIMEOUT_S):
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s%s" % (" ".join(cmd), result.returncode,
                                                         result.stdout, result.stderr))
    return result.stdout


def last_json_line(output):
    for line in reversed(output.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("no JSON result in:\n" + output)


# --------------------------------------------------------------------------- engines
class Engine:
    """One way of running the model. Subclasses say which weight types they time."""

    name = "?"

    def unavailable(self):
        """None when the engine can run here, else the reason it cannot."""
        return None

    def timed_types(self, types):
        return list(types)

    def run(self, gguf, threads, prompt, new_tokens, rounds, warmup, top_logits=0):
        """Generation(s) on `gguf`: {"tokens": [...], "prefill_s": [...], "decode_s": [...],
        "top_logits": [per step: [[id, logit], ...]] (if asked and supported)}."""
        raise NotImplementedError


class LlamaCppEngine(Engine):
    name = "llama.cpp"

    def __init__(self, bench_dir, kv_type):
        self.prefix = bench_dir
        self.modules = os.path.join(bench_dir, "node_modules")
        self.kv_type = kv_type
        self._reason = self._install()

    def _install(self):
        if os.path.isdir(os.path.join(self.modules, "node-llama-cpp")) and \
                os.path.isdir(os.path.join(self.modules, "@node-llama-cpp", "linux-x64")):
            return None
        if not shutil.which("npm") or not shutil.which("node"):
            return "node/npm not found"
        os.makedirs(self.prefix, exist_ok=True)
        try:
            run(["npm", "install", "--prefix", self.prefix, "--no-save", "--omit=optional",
                 "node-llama-cpp", "@node-llama-cpp/linux-x64"], timeout=900)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            return "cannot install node-llama-cpp: %s" % e
        return None

    def unavailable(self):
        return self._reason

    def run(self, gguf, threads, prompt, new_tokens, rounds, warmup, top_logits=0):
        cmd = ["node", os.path.join(HERE, "llama_cpp_bench.js"), gguf,
               "--prompt=" + ",".join(map(str, prompt)), "--threads=%d" % threads,
               "--new-tokens=%d" % new_tokens, "--rounds=%d" % rounds, "--warmup=%d" % warmup,
               "--kv-type=" + self.kv_type, "--top-logits=%d" % top_logits]
        return last_json_line(run(cmd, dict(os.environ, LLAMA_NODE_MODULES=self.modules)))


class TorchEngine(Engine):
    """torch eager, f32 compute, in its own process per measurement."""

    name = "torch"

    # Types Turbine reads from the GGUF file itself (--weights-from): the
    # matmul weights stay the file's blocks, memory-mapped at run time.
    BLOCK_TYPES = ("q8_0", "q4_0")

    def timed_types(self, types):
        return [t for t in types if t == "f32" or t in self.BLOCK_TYPES]

    def run(self, gguf, threads, prompt, new_tokens, rounds, warmup, top_logits=0):
        cmd = [sys.executable, os.path.join(HERE, "torch_llm_bench.py"), gguf,
               "--prompt=" + ",".join(map(str, prompt)), "--threads=%d" % threads,
               "--new-tokens=%d" % new_tokens, "--rounds=%d" % rounds, "--warmup=%d" % warmup]
        env = dict(os.environ, OPENBLAS_CORETYPE="Cooperlake", OPENBLAS_NUM_THREADS=str(threads),
                   OMP_NUM_THREADS=str(threads))
        return last_json_line(run(cmd, env))


class TurbineEngine(Engine):
    """Turbine: the model compiled as a stateful program, run by examples/llm's llm_generate.

    The GGUF file's weights (decoded to f32) are loaded into examples/llm's
    torch model, scripted with both entry points and compiled with `turbine
    compile --function-shapes=prefill:1xTxi64 --function-shapes=decode:1x1xi64,i64`
    (the KV caches become mutable globals). For F16 / BF16 / Q8_0 / Q4_0
    files the compile adds `--weights-from=FILE
    --parameter-name-map=examples/llm/llama.names` and the run
    `--parameters=FILE`: every weight (matmul weights, the token embedding's
    table, the norms) is then the file's own tensor in its own type,
    memory-mapped; the artifact carries none of them. The artifact is kept in BUILD_DIR/llm-bench/turbine and reused
    while the GGUF file, the prompt length and the compiler binary are
    unchanged. llm_generate (C++, runtime library only) times prefill and the
    decode steps in one Instance with `threads` workers and prints the JSON of
    llama_cpp_bench.js.
    """

    name = "turbine"

    def __init__(self, build_dir, bench_dir):
        self.turbine = os.path.join(build_dir, "bin", "turbine")
        self.generate = os.path.join(build_dir, "bin", "llm_generate")
        self.work = os.path.join(bench_dir, "turbine")
        # LLM_TURBINE_FLAGS: extra `turbine compile` flags, e.g.
        # --quantized-matmul-activations=f32 (never round activations).
        self.flags = os.environ.get("LLM_TURBINE_FLAGS", "").split()

    def unavailable(self):
        for binary in (self.turbine, self.generate):
            if not os.path.exists(binary):
                return "%s not built" % binary
        return None

    # Types Turbine reads from the GGUF file itself (--weights-from): the
    # weights stay the file's tensors, memory-mapped at run time.
    BLOCK_TYPES = ("f16", "bf16", "q8_0", "q4_0")

    def timed_types(self, types):
        return [t for t in types if t == "f32" or t in self.BLOCK_TYPES]

    def artifact(self, gguf, prompt_len):
        os.makedirs(self.work, exist_ok=True)
        base = os.path.join(self.work, "%s-p%d" % (os.path.basename(gguf)[:-5], prompt_len))
        stat = os.stat(gguf)
        stamp = repr((stat.st_size, stat.st_mtime_ns, os.stat(self.turbine).st_mtime_ns, self.flags,
                      open(gguf + ".stamp").read() if os.path.exists(gguf + ".stamp") else ""))
        tmod = base + ".tmod"
        if os.path.exists(tmod) and os.path.exists(base + ".stamp") and \
                open(base + ".stamp").read() == stamp:
            return tmod
        model = model_from_gguf(gguf)
        torch.jit.script(model).save(base + ".pt")
        start = time.perf_counter()
        weights = []
        if self.block_type(gguf):
            weights = ["--weights-from=" + gguf,
                       "--parameter-name-map=" + os.path.join(LLM_DIR, "llama.names")]
        run([self.turbine, "compile", base + ".pt", "-o", tmod,
             "--function-shapes=prefill:1x%dxi64" % prompt_len,
             "--function-shapes=decode:1x1xi64,i64"] + weights + self.flags, timeout=3600)
        print("compiled %s (%.0f s)" % (tmod, time.perf_counter() - start))
        os.remove(base + ".pt")
        with open(base + ".stamp", "w") as f:
            f.write(stamp)
        return tmod

    def block_type(self, gguf):
        return any(gguf.endswith("-%s.gguf" % t) for t in self.BLOCK_TYPES)

    def run(self, gguf, threads, prompt, new_tokens, rounds, warmup, top_logits=0):
        tmod = self.artifact(gguf, len(prompt))
        parameters = ["--parameters=" + gguf] if self.block_type(gguf) else []
        cmd = [self.generate, tmod] + parameters + ["--prompt=" + ",".join(map(str, prompt)), "--json",
               "--threads=%d" % threads, "--device=" + ("local-sync" if threads == 1 else "local-task"),
               "--new-tokens=%d" % new_tokens, "--rounds=%d" % rounds, "--warmup=%d" % warmup,
               "--top-logits=%d" % top_logits]
        return last_json_line(run(cmd))


class BandwidthProbe:
    """benchmarks/memory_bandwidth: best-pass read GB/s at a thread count."""

    def __init__(self, build_dir):
        self.binary = os.path.join(build_dir, "bin", "memory_bandwidth")

    def unavailable(self):
        return None if os.path.exists(self.binary) else "%s not built" % self.binary

    def measure(self, threads):
        out = run([self.binary, "--threads=%d" % threads, "--mib=1024", "--passes=10"])
        return float(re.search(r"best ([0-9.]+) GB/s", out).group(1))


# --------------------------------------------------------------------------- set-up
def source_stamp(config, seed):
    digest = hashlib.sha256(repr((config.as_dict(), seed)).encode())
    for name in ("llama_model.py", "llama_gguf.py", "gguf_writer.py", "ggml_quants.py"):
        with open(os.path.join(LLM_DIR, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def ensure_ggufs(model, config, seed, types, gguf_dir):
    """{type: path}; rewrites a file only when the model or writer sources changed."""
    os.makedirs(gguf_dir, exist_ok=True)
    stamp = source_stamp(config, seed)
    paths = {}
    for t in types:
        path = os.path.join(gguf_dir, "llama-%s%s.gguf" % ("tiny-" if config.dim < 768 else "", t))
        stamp_path = path + ".stamp"
        if not (os.path.exists(path) and os.path.exists(stamp_path) and
                open(stamp_path).read() == stamp):
            start = time.perf_counter()
            write_gguf(model.state_dict(), config, path, t)
            with open(stamp_path, "w") as f:
                f.write(stamp)
            print("wrote %s (%.0f MB, %.1f s)" % (path, os.path.getsize(path) / 1e6,
                                                   time.perf_counter() - start))
        paths[t] = path
    return paths


def bytes_per_decode_step(gguf_path):
    """Bytes of weights one decode step reads: every tensor, but one row of token_embd."""
    gguf = GGUFFile(gguf_path)
    total = 0
    for name, tensor in gguf.tensors.items():
        if name == "token_embd.weight":
            total += tensor.data.size // tensor.dims[1]
        else:
            total += tensor.data.size
    return total


# --------------------------------------------------------------------------- correctness
def torch_model(gguf_path, original):
    """torch eager on the file's weights; for the f32 file, checked equal to the model's."""
    model = model_from_gguf(gguf_path)
    if original is not None:
        for key, value in original.state_dict().items():
            if not torch.equal(value, model.state_dict()[key]):
                raise RuntimeError("%s: %s differs from the model's weights" % (gguf_path, key))
    return model


def forced_logits(model, prompt, tokens):
    """Per-step logits [vocab] of `model` fed the given tokens (teacher forcing): step 0
    is prefill's, step i decodes tokens[i - 1] at position T + i - 1."""
    with torch.no_grad():
        logits = [model.prefill(prompt).reshape(-1).clone()]
        for i in range(1, len(tokens)):
            step = model.decode(torch.tensor([[tokens[i - 1]]], dtype=torch.int64),
                                prompt.shape[1] + i - 1)
            logits.append(step.reshape(-1).clone())
    return logits


def compare(reference_tokens, forced, result):
    """How an engine's generation compares with torch eager on the same weights.

    agree: steps before the first token that differs from torch's own greedy run.
    max_logit_diff: over all steps, with torch fed the engine's tokens (so both see the
        same context), the largest |engine logit - torch logit| of the engine's top 5.
    argmax_steps: steps where the engine's token is torch's argmax in that context;
    max_flip_margin: at the other steps, the largest torch logit margin between its
        argmax and the engine's token (small: a near-tie decided by rounding).
    """
    tokens = result["tokens"]
    agree = 0
    while agree < min(len(reference_tokens), len(tokens)) and \
            tokens[agree] == reference_tokens[agree]:
        agree += 1
    max_diff, argmax_steps, max_margin = 0.0, 0, 0.0
    for step, token in enumerate(tokens):
        row = forced[step]
        for top_token, value in result.get("top_logits", [[]] * len(tokens))[step]:
            max_diff = max(max_diff, abs(value - float(row[top_token])))
        best = int(torch.argmax(row))
        if best == token:
            argmax_steps += 1
        else:
            max_margin = max(max_margin, float(row[best] - row[token]))
    return {"tokens": tokens, "agree": agree, "max_logit_diff": max_diff,
            "argmax_steps": argmax_steps, "max_flip_margin": max_margin}


# --------------------------------------------------------------------------- main
def main(argv):
    build_dir = os.path.abspath(argv[1] if len(argv) > 1 else "build")
    types = env_list("LLM_TYPES", "f32 f16 q8_0 q4_0")
    for t in types:
        if t not in ALL_TYPES:
            print("error: LLM_TYPES: unknown weight type %r (known: %s)" % (t, " ".join(ALL_TYPES)))
            return 2
    try:
        threads_list = [int(t) for t in env_list("LLM_THREADS", "1 2")]
        rounds, reps, warmup, prompt_len, new_tokens, seed = (
            int(os.environ.get(name, default)) for name, default in (
                ("LLM_ROUNDS", "3"), ("LLM_REPS", "2"), ("LLM_WARMUP", "1"),
                ("LLM_PROMPT_LEN", "32"), ("LLM_NEW_TOKENS", "64"), ("LLM_SEED", "0")))
    except ValueError as e:
        print("error: LLM_THREADS, LLM_ROUNDS, LLM_REPS, LLM_WARMUP, LLM_PROMPT_LEN, "
              "LLM_NEW_TOKENS and LLM_SEED take integers: %s" % e)
        return 2
    kv_type = os.environ.get("LLM_KV_TYPE", "F16").upper()
    if kv_type not in ("F16", "F32", "BF16", "Q8_0", "Q4_0"):
        print("error: LLM_KV_TYPE must be F16, F32, BF16, Q8_0 or Q4_0, got %r" % kv_type)
        return 2
    config = LlamaConfig.tiny() if os.environ.get("LLM_TINY") == "1" else LlamaConfig.default()
    bench_dir = os.path.join(build_dir, "llm-bench")
    if prompt_len < 1 or new_tokens < 2 or prompt_len + new_tokens - 1 > config.max_seq_len:
        print("error: LLM_PROMPT_LEN %d (>= 1) + LLM_NEW_TOKENS %d (>= 2) - 1 must be within "
              "the context of %d" % (prompt_len, new_tokens, config.max_seq_len))
        return 2
    if rounds < 1 or reps < 1 or warmup < 0 or not threads_list or min(threads_list) < 1:
        print("error: LLM_ROUNDS, LLM_REPS and LLM_THREADS must be >= 1, LLM_WARMUP >= 0")
        return 2

    torch.set_num_threads(max(threads_list))
    model = build_model(config, seed)
    n_params = sum(p.numel() for p in model.parameters())
    prompt = prompt_tokens(prompt_len, config.vocab_size, seed)
    prompt_ids = prompt[0].tolist()
    print("model: %s, %.1fM parameters, weight seed %d" % (config, n_params / 1e6, seed))
    print("prompt (%d ids): %s" % (prompt_len, " ".join(map(str, prompt_ids))))
    ggufs = ensure_ggufs(model, config, seed, types, os.path.join(bench_dir, "gguf"))

    engines = [LlamaCppEngine(bench_dir, kv_type), TorchEngine(), TurbineEngine(build_dir, bench_dir)]
    for engine in engines:
        reason = engine.unavailable()
        if reason:
            print("note: %s skipped: %s" % (engine.name, reason))
    active = [e for e in engines if not e.unavailable()]
    bandwidth = BandwidthProbe(build_dir)
    if bandwidth.unavailable():
        print("note: memory bandwidth skipped: %s" % bandwidth.unavailable())
    results = {"model": config.as_dict(), "parameters": n_params, "seed": seed,
               "prompt": prompt_ids, "new_tokens": new_tokens, "kv_type": kv_type,
               "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
               "cpu": cpu_name(), "correctness": {}, "timing": {}, "bandwidth_gbs": {},
               "load_average": {"start": os.getloadavg()[0]}}

    # Correctness at 1 thread.
    print("\n== greedy tokens vs torch eager on the same weights (%d steps) ==" % new_tokens)
    sys.stdout.flush()
    failed = False
    for t in types:
        reference = torch_model(ggufs[t], model if t == "f32" else None)
        ref_tokens = generate(reference, prompt, new_tokens).tokens
        results["correctness"][t] = {"torch_tokens": ref_tokens}
        for engine in active:
            if engine.name == "torch" or t not in engine.timed_types(types):
                continue
            out = engine.run(ggufs[t], 1, prompt_ids, new_tokens, 1, 0, top_logits=5)
            c = compare(ref_tokens, forced_logits(reference, prompt, out["tokens"]), out)
            results["correctness"][t][engine.name] = c
            print("%-5s %-9s same tokens as torch for %2d / %d steps; fed %s's tokens, torch's "
                  "logits are within %.1e of its top 5 at every step, and its token is torch's "
                  "argmax at %d / %d steps%s" % (
                      t, engine.name, c["agree"], new_tokens, engine.name, c["max_logit_diff"],
                      c["argmax_steps"], new_tokens,
                      "" if c["argmax_steps"] == new_tokens else
                      " (the others within a torch margin of %.1e)" % c["max_flip_margin"]))
            if c["agree"] < new_tokens:
                print("      torch: %s\n      %-6s %s" % (
                    " ".join(map(str, ref_tokens)), engine.name + ":",
                    " ".join(map(str, out["tokens"]))))
                if t == "f32":
                    failed = True
    if failed:
        print("error: f32 tokens differ from torch eager: the GGUF or the model is wrong; "
              "timings would be meaningless")
        return 1

    # Timing: rotating rounds per thread count.
    step_bytes = {t: bytes_per_decode_step(ggufs[t]) for t in types}
    for threads in threads_list:
        jobs = [(e, t) for e in active for t in e.timed_types(types)]
        if not bandwidth.unavailable():
            jobs.append((bandwidth, None))
        samples = {(j[0].__class__.__name__, j[1]): [] for j in jobs}
        for r in range(rounds):
            order = jobs[r % len(jobs):] + jobs[:r % len(jobs)]
            for engine, t in order:
                if engine is bandwidth:
                    samples[(engine.__class__.__name__, t)].append(engine.measure(threads))
                    continue
                try:
                    out = engine.run(ggufs[t], threads, prompt_ids, new_tokens, reps, warmup)
                except subprocess.TimeoutExpired:
                    print("note: %s %s at %d thread(s) ran past %d s in round %d; round dropped"
                          % (engine.name, t, threads, ROUND_TIMEOUT_S, r + 1))
                    sys.stdout.flush()
                    continue
                samples[(engine.__class__.__name__, t)].append(
                    (statistics.median(out["prefill_s"]), statistics.median(out["decode_s"])))
        bw = statistics.median(samples[("BandwidthProbe", None)]) \
            if ("BandwidthProbe", None) in samples else None
        results["bandwidth_gbs"][threads] = bw
        for engine, t in jobs:
            if engine is bandwidth:
                continue
            values = samples[(engine.__class__.__name__, t)]
            if not values:
                continue
            prefill_s = statistics.median(v[0] for v in values)
            decode_s = statistics.median(v[1] for v in values)
            row = {"prefill_tok_s": prompt_len / prefill_s,
                   "decode_tok_s": (new_tokens - 1) / decode_s if new_tokens > 1 else None,
                   "rounds": values}
            if row["decode_tok_s"]:
                row["decode_gbs"] = row["decode_tok_s"] * step_bytes[t] / 1e9
            results["timing"].setdefault(t, {}).setdefault(str(threads), {})[engine.name] = row
        print_table(results, types, threads, engines, step_bytes)
    results["load_average"]["end"] = os.getloadavg()[0]
    with open(os.path.join(bench_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("\nmedians of %d rounds (each the median of %d generations after %d warmup); "
          "llama.cpp KV cache %s; 1-minute load average %.1f at the start, %.1f at the end "
          "(%d cores); results in %s" % (
              rounds, reps, warmup, kv_type, results["load_average"]["start"],
              results["load_average"]["end"], os.cpu_count(),
              os.path.join(bench_dir, "results.json")))
    return 0


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def print_table(results, types, threads, engines, step_bytes):
    bw = results["bandwidth_gbs"].get(threads)
    print("\n== %d thread%s; memory read bandwidth %s ==" % (
        threads, "" if threads == 1 else "s", "%.2f GB/s" % bw if bw else "n/a"))
    print("%-6s %-10s %14s %13s %11s %7s %14s  %s" % (
        "weights", "engine", "prefill tok/s", "decode tok/s", "decode GB/s", "of BW",
        "weights MB/tok", "decode tok/s per round"))
    for t in types:
        rows = results["timing"].get(t, {}).get(str(threads), {})
        for engine in engines:
            row = rows.get(engine.name)
            if row is None:
                if engine.name == "turbine" or t in engine.timed_types(types):
                    print("%-6s %-10s %14s %13s" % (t, engine.name, "n/a", "n/a"))
                continue
            gbs = row.get("decode_gbs")
            steps = results["new_tokens"] - 1
            print("%-6s %-10s %14.1f %13.2f %11.2f %7s %14.1f  %s" % (
                t, engine.name, row["prefill_tok_s"], row["decode_tok_s"], gbs,
                "%.0f%%" % (100 * gbs / bw) if bw else "n/a", step_bytes[t] / 1e6,
                " ".join("%.1f" % (steps / v[1]) for v in row["rounds"])))
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
