# ===- run_gemv_benchmark.py - Quantized GEMV vs memory bandwidth ---------=== #
#
# The decode shape of an LLM: y = x W with x [1, 4096] and constant W
# [4096, 4096], four of them in a chain (torch Linears without bias,
# scripted: 4 GEMVs per call, so the int8 weights, 75 MB, do not fit in a
# last-level cache and come from memory as an LLM's do), compiled by Turbine
# with f32, bf16 and f16 weights (the model in that dtype: bf16 / f16
# activations too, f32 accumulation), with --quantize-weights=int8 / int4
# (group size 32, the fused dequantize-and-multiply kernel), and with the
# same weights as GGUF Q8_0 / Q4_0 blocks or F16 / BF16 rows read in place
# (`--weights-from=F.gguf`, run with `--parameters=F.gguf`; examples/llm's
# ggml_quants / gguf_writer), timed with `turbine bench` at
# 1 and 2 threads in interleaved rounds, next to the machine's read
# bandwidth (memory_bandwidth, a 1 GiB buffer). Reports the median time per
# call, the GB/s of weights read (weight bytes + scale bytes / median
# time) and that as a fraction of the median read bandwidth at the same
# thread count. Rows "+a8": compiled with --quantized-matmul-activations=int8
# (activations rounded to int8 per block of 32 and vpdpbusd, where the CPU
# has AVX512-VNNI, as llama.cpp does); the others never round activations.
# A benchmark, not a test: it asserts nothing about speed.
#
#   /usr/bin/python3 benchmarks/run_gemv_benchmark.py BUILD_DIR [ROUNDS [BASELINE_BUILD_DIR]]
# ===---------------------------------------------------------------------=== #
import copy
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch

K = N = 4096
LAYERS = 4
GROUP = 32
# (name, --quantize-weights or "gguf", weight bytes read per call, model dtype)
KINDS = [("f32", "none", LAYERS * K * N * 4, "f32"),
         ("bf16", "none", LAYERS * K * N * 2, "bf16"),
         ("f16", "none", LAYERS * K * N * 2, "f16"),
         ("int8", "int8", LAYERS * (K * N + (K // GROUP) * N * 4), "f32"),
         ("int4", "int4", LAYERS * (K * N // 2 + (K // GROUP) * N * 4), "f32"),
         ("int4+a8", "int4", LAYERS * (K * N // 2 + (K // GROUP) * N * 4), "f32"),
         ("q8_0", "gguf", LAYERS * N * (K // 32) * 34, "f32"),
         ("q8_0+a8", "gguf", LAYERS * N * (K // 32) * 34, "f32"),
         ("q4_0", "gguf", LAYERS * N * (K // 32) * 18, "f32"),
         ("q4_0+a8", "gguf", LAYERS * N * (K // 32) * 18, "f32"),
         ("gguf-f16", "gguf", LAYERS * K * N * 2, "f32"),
         ("gguf-bf16", "gguf", LAYERS * K * N * 2, "f32")]
# The GGUF kinds' ggml types (the f32 model, its weights read from the file).
GGUF_TYPES = {"q8_0": "Q8_0", "q4_0": "Q4_0", "gguf-f16": "F16", "gguf-bf16": "BF16"}
# TURBINE_GEMV_KINDS=f16,gguf-f16 runs only those rows.
if os.environ.get("TURBINE_GEMV_KINDS"):
    KINDS = [k for k in KINDS if k[0] in os.environ["TURBINE_GEMV_KINDS"].split(",")]
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "llm"))


def write_gguf(linear, path, kind):
    """The Linears' weights as one GGUF file of `kind` (GGUF_TYPES), named as their state_dict."""
    import ggml_quants
    from gguf_writer import GGUFWriter
    writer = GGUFWriter()
    for name, w in linear.state_dict().items():
        ggml_type = GGUF_TYPES[kind.split("+")[0].split("@")[0]]
        data = ggml_quants.encode(w.detach().numpy(), ggml_type)
        writer.add_tensor(name, [w.shape[1], w.shape[0]], ggml_type, data)
    writer.write(path)


def median_ms(turbine, tmod, threads, dtype, extra=()):
    out = subprocess.run([turbine, "bench", tmod, "--input=1x%dx%s=0.5" % (K, dtype)] + list(extra) + [
                          "--task_workers=%d" % threads, "--repetitions=200", "--warmup=10"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ms/call:\s*([0-9.]+)", out).group(1))


def bandwidth(build, threads):
    out = subprocess.run([os.path.join(build, "bin", "memory_bandwidth"),
                          "--threads=%d" % threads, "--passes=10"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) GB/s", out).group(1))


def main(build, rounds, baseline=None):
    turbine = os.path.join(build, "bin", "turbine")
    # With a baseline build (another checkout's build dir, e.g. main's), its
    # turbine compiles and runs the quantized kinds too, in the same rounds
    # (rows "int8@base", "q8_0@base", ...): before / after in one run.
    kinds = list(KINDS)
    compilers = {name: turbine for name, _, _, _ in KINDS}
    if baseline:
        for name, flag, nbytes, dtype in KINDS:
            if name in ("int8", "int4", "q8_0", "q4_0"):
                kinds.append((name + "@base", flag, nbytes, dtype))
                compilers[name + "@base"] = os.path.join(baseline, "bin", "turbine")
    work = tempfile.mkdtemp(prefix="gemv-")
    torch.manual_seed(0)
    linear = torch.nn.Sequential(*[torch.nn.Linear(K, N, bias=False)
                                   for _ in range(LAYERS)]).eval()
    for dtype in sorted({k[3] for k in kinds}):
        # Scripted, not traced: torch has no f16 matmul on the CPU to trace with.
        torch.jit.script(copy.deepcopy(linear).to(DTYPES[dtype])).save(os.path.join(work, dtype + ".pt"))
    run_flags = {name: [] for name, _, _, _ in kinds}
    for name, flag, _, dtype in kinds:
        if flag == "gguf":
            gguf = os.path.join(work, name + ".gguf")
            write_gguf(linear, gguf, name)
            flags = ["--weights-from=" + gguf]
            run_flags[name] = ["--parameters=" + gguf]
        else:
            flags = ["--quantize-weights=" + flag, "--group-size=%d" % GROUP]
        if name.endswith("+a8"):
            flags.append("--quantized-matmul-activations=int8")
        subprocess.run([compilers[name], "compile", os.path.join(work, dtype + ".pt"),
                        "--input-shape=1x%dx%s" % (K, dtype),
                        "-o", os.path.join(work, name + ".tmod")] + flags, check=True)
    times = {(name, t): [] for name, _, _, _ in kinds for t in (1, 2)}
    bw = {1: [], 2: []}
    for _ in range(rounds):
        for t in (1, 2):
            bw[t].append(bandwidth(build, t))
            for name, _, _, dtype in kinds:
                times[(name, t)].append(
                    median_ms(compilers[name], os.path.join(work, name + ".tmod"), t, dtype,
                              run_flags[name]))
    load = os.getloadavg()[0]
    print("%d GEMVs 1x%d by %dx%d per call, group size %d, %d rounds (load average %.1f)" % (
        LAYERS, K, K, N, GROUP, rounds, load))
    print("threads  weights    bytes read   median ms   GB/s   of read bandwidth")
    for t in (1, 2):
        b = statistics.median(bw[t])
        print("%7d  %-9s  %s  %8.1f GB/s (memory_bandwidth median)" % (t, "-", " " * 9, b))
        for name, _, nbytes, _ in kinds:
            ms = statistics.median(times[(name, t)])
            gbs = nbytes / ms / 1e6
            print("%7d  %-9s  %9d  %9.3f  %6.1f   %5.2f" % (t, name, nbytes, ms, gbs, gbs / b))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: run_gemv_benchmark.py BUILD_DIR [ROUNDS [BASELINE_BUILD_DIR]]")
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5,
                  sys.argv[3] if len(sys.argv) > 3 else None))
