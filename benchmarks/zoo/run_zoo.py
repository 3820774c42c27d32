#!/usr/bin/env python3
# ===- run_zoo.py - the model-zoo benchmark (make bench-zoo) ---------------=== #
#
# Usage: /usr/bin/python3 benchmarks/zoo/run_zoo.py [BUILD_DIR] [options]
#   --models=REGEX   only the models whose name matches (any tier)
#   --quick          one small model per family, 1 round of few calls
#   --all            add the large tier (bigger variants; hours on 2 cores)
#   --script         also check a torch.jit.script export per model
#   --no-time        compile and check only
#   --threads="1 2" --rounds=N --reps=N --warmup=N   timing knobs
#   --turbine=PATH   another turbine binary (e.g. a copy of bin/ and lib/)
#   --write-doc[=PATH]  replace the "Model zoo" section of docs/performance.md
#                    (between its zoo-table markers) with this run's table
#
# Per model (zoo_models.py defines and exports them into
# BUILD_DIR/benchmarks/zoo/<model>/, re-exported only when zoo_models.py
# changed):
#   1. `turbine compile` of the ONNX file and of the traced TorchScript file
#      (and the scripted one with --script), each with a dynamic batch; the
#      wall time of each command is the compile time;
#   2. each artifact run at batch 1 and 2 and compared with torch eager:
#      max |turbine - torch| / max |torch| must be <= 1e-4;
#   3. at 1 and 2 threads, Turbine (`turbine bench` of the ONNX artifact;
#      local-sync for 1 thread, local-task for more), ONNX Runtime
#      (../models/ort_benchmark.js, onnxruntime-node installed as
#      ../models/run_model_benchmark.py does) and torch eager
#      (zoo_models.py torch), at batch 1, in rotating rounds; each round is
#      the median of REPS calls after WARMUP; the table has the median of
#      the round medians and the ratios turbine / ORT and turbine / torch.
# Prints one table sorted by turbine / ORT at 1 thread (worst first), the
# geometric means, and every failure with its error; writes it to
# BUILD_DIR/benchmarks/zoo/zoo.md and all numbers to results.json.
# ===---------------------------------------------------------------------=== #
import argparse
import hashlib
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "models"))
from run_model_benchmark import ensure_ort  # noqa: E402

TOLERANCE = 1e-4
COMPILE_TIMEOUT_S = 900
RUN_TIMEOUT_S = 600
DOC_BEGIN = "<!-- zoo-table:begin (benchmarks/zoo/run_zoo.py --write-doc) -->"
DOC_END = "<!-- zoo-table:end -->"


class ToolError(Exception):
    pass


def run(cmd, env=None, timeout=RUN_TIMEOUT_S):
    try:
        done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError("timed out after %d s: %s" % (timeout, " ".join(cmd)))
    if done.returncode != 0:
        raise ToolError(first_error_line(done.stdout) or "exit %d" % done.returncode)
    return done.stdout


def first_error_line(text):
    """The line that says what went wrong, for the failure list."""
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    for line in lines:
        if "error" in line.lower():
            return line[:400]
    return lines[0][:400] if lines else ""


def parse(output, key):
    match = re.search(key + r"\s*:?\s*([0-9.eE+-]+|nan|inf)", output)
    if not match:
        raise ToolError("no '%s' in: %s" % (key, output.strip()[:200]))
    return float(match.group(1))


def zoo_hash():
    with open(os.path.join(HERE, "zoo_models.py"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def export(out_dir, names, script):
    """Exports the models whose export is missing or stale."""
    digest = zoo_hash()
    stale = []
    for name in names:
        meta = os.path.join(out_dir, name, "meta.json")
        stamp = os.path.join(out_dir, name, "zoo_hash")
        want = digest + (" script" if script else "")
        if os.path.exists(meta) and os.path.exists(stamp):
            with open(stamp) as f:
                have = f.read().strip()
            if have == want or (have == digest + " script" and not script):
                continue
        stale.append(name)
    if not stale:
        return
    print("exporting %d model(s) ..." % len(stale))
    sys.stdout.flush()
    cmd = [sys.executable, os.path.join(HERE, "zoo_models.py"), "export", out_dir,
           "--models=^(%s)$" % "|".join(re.escape(n) for n in stale)]
    if script:
        cmd.append("--script")
    subprocess.run(cmd, check=True)
    for name in stale:
        with open(os.path.join(out_dir, name, "zoo_hash"), "w") as f:
            f.write(digest + (" script" if script else ""))


def input_paths(model_dir, meta, batch):
    return [os.path.join(model_dir, "in%d_b%d.npy" % (i, batch)) for i in range(len(meta["inputs"]))]


def check_artifact(turbine, model_dir, meta, tmod, label):
    """Runs tmod at each batch and compares with torch eager: relative errors."""
    import numpy as np
    errors = {}
    for batch in meta["batches"]:
        out = os.path.join(model_dir, "%s_got_b%d.npy" % (label, batch))
        cmd = [turbine, "run", tmod, "--device=local-task", "--output=@" + out]
        cmd += ["--input=@" + p for p in input_paths(model_dir, meta, batch)]
        run(cmd)
        got = np.load(out)
        want = np.load(os.path.join(model_dir, "out_b%d.npy" % batch))
        if got.shape != want.shape:
            raise ToolError("batch %d: output shape %s, torch gives %s" %
                            (batch, got.shape, want.shape))
        scale = float(np.abs(want).max()) or 1.0
        errors[batch] = float(np.abs(got.astype(np.float64) - want).max()) / scale
    return errors


def compile_artifact(turbine, model_dir, meta, variant):
    """Compiles one export; returns (tmod path, wall seconds, CPU seconds)."""
    tmod = os.path.join(model_dir, variant + ".tmod")
    if variant == "onnx":
        cmd = [turbine, "compile", os.path.join(model_dir, "model.onnx"), "-o", tmod]
    else:
        cmd = [turbine, "compile", os.path.join(model_dir, variant + ".pt"), "-o", tmod]
        for i, spec in enumerate(meta["inputs"]):
            shape = "x".join(str(d) for d in [1] + spec["shape"])
            cmd += ["--input-shape=%sx%s" % (shape, spec["dtype"]), "--dynamic-dim=%d:0" % i]
    if os.path.exists(tmod):
        os.remove(tmod)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run(cmd, timeout=COMPILE_TIMEOUT_S)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return tmod, wall, cpu


def time_model(args, turbine, node_path, out_dir, model_dir, meta, tmod):
    """{threads: {tool: median ms}} in rotating rounds."""
    inputs = input_paths(model_dir, meta, 1)
    expected = os.path.join(model_dir, "out_b1.npy")
    base_env = dict(os.environ, OPENBLAS_CORETYPE="Cooperlake")
    # Calls per round: about args.round_seconds of Turbine time, within [3, reps].
    probe = parse(run([turbine, "bench", tmod, "--device=local-sync", "--repetitions=3",
                       "--warmup=1"] + ["--input=@" + p for p in inputs]), "median ms/call")
    reps = max(3, min(args.reps, int(args.round_seconds * 1e3 / max(probe, 1e-3))))
    warmup = min(args.warmup, reps)
    results = {}
    for threads in args.threads:
        env = dict(base_env, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
        device = (["--device=local-sync"] if threads == 1 else
                  ["--device=local-task", "--task_workers=%d" % threads])
        tools = {
            "turbine": lambda: parse(run(
                [turbine, "bench", tmod, "--repetitions=%d" % reps, "--warmup=%d" % warmup] +
                device + ["--input=@" + p for p in inputs], env), "median ms/call"),
            "torch": lambda: parse(run(
                [sys.executable, os.path.join(HERE, "zoo_models.py"), "torch", out_dir,
                 meta["name"], str(threads), str(reps), str(warmup)], env), "median_ms"),
        }
        if node_path and os.path.exists(os.path.join(model_dir, "model.onnx")):
            tools["ort"] = lambda: parse(run(
                ["node", os.path.join(ROOT, "benchmarks", "models", "ort_benchmark.js"),
                 os.path.join(model_dir, "model.onnx"), ",".join(inputs), expected,
                 str(threads), str(reps), str(warmup)], dict(env, NODE_PATH=node_path)),
                "median_ms")
        medians = {tool: [] for tool in tools}
        order = list(tools)
        for r in range(args.rounds):
            for tool in order[r % len(order):] + order[:r % len(order)]:
                try:
                    medians[tool].append(tools[tool]())
                except ToolError as e:
                    results.setdefault("errors", []).append("%s %dt: %s" % (tool, threads, e))
        results[threads] = {tool: statistics.median(v) for tool, v in medians.items() if v}
    results["reps"] = reps
    return results


def model_row(args, turbine, node_path, out_dir, name):
    model_dir = os.path.join(out_dir, name)
    with open(os.path.join(model_dir, "meta.json")) as f:
        meta = json.load(f)
    row = {"name": name, "family": meta["family"], "params": meta["params"],
           "compile_s": {}, "rel_err": {}, "failures": []}
    export_errors = {}
    error_file = os.path.join(model_dir, "export_error.txt")
    if os.path.exists(error_file):
        with open(error_file) as f:
            for line in f:
                variant, _, message = line.partition(": ")
                export_errors[variant] = message.strip()
    artifacts = {}
    variants = ["onnx", "traced"] + (["scripted"] if args.script else [])
    for variant in variants:
        if variant in export_errors:
            row["failures"].append("%s: torch cannot export it: %s" %
                                   (variant, export_errors[variant]))
            continue
        try:
            tmod, seconds, cpu = compile_artifact(turbine, model_dir, meta, variant)
            row["compile_s"][variant] = seconds
            row.setdefault("compile_cpu_s", {})[variant] = cpu
            artifacts[variant] = tmod
        except ToolError as e:
            row["failures"].append("%s: compile: %s" % (variant, e))
            continue
        try:
            row["rel_err"][variant] = check_artifact(turbine, model_dir, meta, tmod, variant)
            bad = {b: e for b, e in row["rel_err"][variant].items() if not e <= TOLERANCE}
            if bad:
                row["failures"].append("%s: numerics: relative error %s over %g" % (
                    variant, ", ".join("%.2g at batch %d" % (e, b) for b, e in bad.items()),
                    TOLERANCE))
        except ToolError as e:
            row["failures"].append("%s: run: %s" % (variant, e))
    if not args.no_time:
        tmod = artifacts.get("onnx") or artifacts.get("traced")
        if tmod:
            row["timed"] = os.path.basename(tmod)
            try:
                row["times"] = time_model(args, turbine, node_path, out_dir, model_dir, meta, tmod)
                for message in row["times"].pop("errors", []):
                    row["failures"].append("timing: " + message)
            except ToolError as e:
                row["failures"].append("timing: %s" % e)
    return row


def ratio(row, threads, anchor):
    times = row.get("times", {}).get(threads, {})
    if "turbine" in times and anchor in times:
        return times["turbine"] / times[anchor]
    return None


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(value, pattern="%.2f"):
    return pattern % value if value is not None else "—"


def table(rows, args, node_path):
    first = args.threads[0]
    key = lambda row: -(ratio(row, first, "ort") or ratio(row, first, "torch") or 0)
    lines = []
    head = ["model", "compile s (onnx / traced)", "compile CPU s (onnx)",
            "max rel err (onnx / traced)"]
    for t in args.threads:
        head += ["turbine ms %dt" % t, "ORT ms %dt" % t, "torch ms %dt" % t,
                 "t/ORT %dt" % t, "t/torch %dt" % t]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for row in sorted(rows, key=key):
        compile_cell = " / ".join(fmt(row["compile_s"].get(v), "%.1f") for v in ("onnx", "traced"))
        err_cell = " / ".join(
            fmt(max(row["rel_err"][v].values()), "%.1e") if v in row["rel_err"] else "—"
            for v in ("onnx", "traced"))
        cpu_cell = fmt(row.get("compile_cpu_s", {}).get("onnx"), "%.1f")
        cells = [row["name"], compile_cell, cpu_cell, err_cell]
        for t in args.threads:
            times = row.get("times", {}).get(t, {})
            cells += [fmt(times.get("turbine"), "%.3f"), fmt(times.get("ort"), "%.3f"),
                      fmt(times.get("torch"), "%.3f"), fmt(ratio(row, t, "ort")),
                      fmt(ratio(row, t, "torch"))]
        lines.append("| " + " | ".join(cells) + " |")
    means = ["**geometric mean**", fmt(geomean([r["compile_s"].get("onnx") for r in rows]), "%.1f")
             + " / " + fmt(geomean([r["compile_s"].get("traced") for r in rows]), "%.1f"),
             fmt(geomean([r.get("compile_cpu_s", {}).get("onnx") for r in rows]), "%.1f"), ""]
    for t in args.threads:
        means += ["", "", "", "**%s**" % fmt(geomean([ratio(r, t, "ort") for r in rows])),
                  "**%s**" % fmt(geomean([ratio(r, t, "torch") for r in rows]))]
    lines.append("| " + " | ".join(means) + " |")
    lines.append("")
    over = [r for r in rows if max(r["compile_s"].values() or [0]) > 10]
    lines.append("Compile times over 10 s: %s." % (
        ", ".join("%s %.1f s" % (r["name"], max(r["compile_s"].values())) for r in
                  sorted(over, key=lambda r: -max(r["compile_s"].values()))) or "none"))
    if args.script:
        lines.append("")
        lines.append("Scripted exports: %s." % ", ".join(
            "%s %s" % (r["name"], fmt(max(r["rel_err"]["scripted"].values()), "%.1e")
                       if "scripted" in r["rel_err"] else "failed") for r in rows))
    failures = [(r["name"], f) for r in rows for f in r["failures"]]
    lines.append("")
    if failures:
        lines.append("Failures (%d):" % len(failures))
        lines.append("")
        for name, failure in failures:
            lines.append("- `%s` %s" % (name, failure.replace("\n", " ")))
    else:
        lines.append("Failures: none.")
    if not node_path:
        lines.append("")
        lines.append("(onnxruntime-node could not be installed: no ORT column.)")
    return "\n".join(lines) + "\n"


def write_doc(path, text, header):
    with open(path) as f:
        doc = f.read()
    block = DOC_BEGIN + "\n" + header + "\n" + text + DOC_END
    if DOC_BEGIN in doc and DOC_END in doc:
        start = doc.index(DOC_BEGIN)
        end = doc.index(DOC_END) + len(DOC_END)
        doc = doc[:start] + block + doc[end:]
    else:
        doc = doc.rstrip("\n") + "\n\n## Model zoo\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def main(argv):
    parser = argparse.ArgumentParser(description="model-zoo benchmark (issue 16)")
    parser.add_argument("build_dir", nargs="?", default="build")
    parser.add_argument("--models", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--script", action="store_true")
    parser.add_argument("--no-time", action="store_true")
    parser.add_argument("--threads", default="1 2")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--round-seconds", type=float, default=None,
                        help="Turbine time per round that picks the calls per round")
    parser.add_argument("--turbine", default=None,
                        help="the turbine binary to use (default BUILD_DIR/bin/turbine; a copy "
                             "of bin/ and lib/ lets the build go on while the zoo runs)")
    parser.add_argument("--write-doc", nargs="?", const=os.path.join(ROOT, "docs",
                                                                      "performance.md"))
    args = parser.parse_args(argv[1:])
    args.threads = [int(t) for t in args.threads.split()]
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.reps = args.reps or (5 if args.quick else 20)
    args.warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    args.round_seconds = args.round_seconds or (0.5 if args.quick else 2.0)

    build_dir = os.path.abspath(args.build_dir)
    turbine = os.path.abspath(args.turbine) if args.turbine else \
        os.path.join(build_dir, "bin", "turbine")
    if args.turbine:  # its own runtime library, over the RUNPATH into the build tree
        os.environ["LD_LIBRARY_PATH"] = os.path.join(os.path.dirname(turbine), "..", "lib")
    if not os.path.exists(turbine):
        sys.stderr.write("run_zoo.py: error: no %s (build first)\n" % turbine)
        return 2
    out_dir = os.path.join(build_dir, "benchmarks", "zoo")
    os.makedirs(out_dir, exist_ok=True)
    listing = subprocess.run(
        [sys.executable, os.path.join(HERE, "zoo_models.py"), "list"] +
        (["--models=" + args.models] if args.models else []) +
        (["--quick"] if args.quick else []) + (["--all"] if args.all else []),
        check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines()
    names = [l.split()[0] for l in listing if "(excluded" not in l]
    excluded = [l for l in listing if "(excluded" in l]
    if not names:
        sys.stderr.write("run_zoo.py: error: no model matches\n")
        return 2
    export(out_dir, names, args.script)
    node_path = None if args.no_time else ensure_ort(build_dir)

    rows = []
    started = time.time()
    for name in names:
        start = time.perf_counter()
        row = model_row(args, turbine, node_path, out_dir, name)
        rows.append(row)
        t1 = row.get("times", {}).get(args.threads[0], {})
        print("%-22s compile %s  err %s  1t: turbine %s ORT %s torch %s  (%.0f s)%s" % (
            name, " / ".join("%.1f" % v for v in row["compile_s"].values()),
            " / ".join("%.1e" % max(e.values()) for e in row["rel_err"].values()),
            fmt(t1.get("turbine"), "%.3f"), fmt(t1.get("ort"), "%.3f"),
            fmt(t1.get("torch"), "%.3f"), time.perf_counter() - start,
            "".join("\n    FAIL " + f for f in row["failures"])))
        sys.stdout.flush()
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    text = table(rows, args, node_path)
    if excluded:
        text += "\nNot in the zoo: " + "; ".join(
            re.sub(r"\s+\(excluded: (.*)\)", r" (\1)", l) for l in excluded) + ".\n"
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    header = ("Run %s UTC, %d model(s), %s; %s; medians of %d rotating round(s), "
              "≤ %d calls each after %d warmup; batch 1; ratio = turbine / anchor (< 1: "
              "Turbine faster); max rel err = max |turbine - torch eager| / max |torch eager| "
              "over batch 1 and 2 (dynamic batch), limit %g; compile s = wall time of "
              "`turbine compile` (whole command).\n" % (
                  time.strftime("%Y-%m-%d %H:%M", time.gmtime(started)), len(rows),
                  "quick mode" if args.quick else "full" if args.all else "default zoo",
                  cpu or "unknown CPU", args.rounds, args.reps, args.warmup, TOLERANCE))
    with open(os.path.join(out_dir, "zoo.md"), "w") as f:
        f.write(header + "\n" + text)
    print()
    print(header)
    print(text)
    if args.write_doc:
        write_doc(args.write_doc, text, header)
        print("wrote the Model zoo section of %s" % args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
