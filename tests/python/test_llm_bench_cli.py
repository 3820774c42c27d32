# ===- test_llm_bench_cli.py - Bad input to the LLM benchmark's programs --=== #
#
# Every program of benchmarks/llm (and benchmarks/memory_bandwidth) refuses
# bad arguments with a message and a non-zero exit, before doing any work —
# no npm, no llama.cpp and no large model needed. The llama.cpp driver's cases
# run only where `node` is installed (it is not needed by `make test`); the
# memory_bandwidth cases need MEMORY_BANDWIDTH_BIN (set by ctest). The Python
# drivers are called in process (one torch import), the others as processes.
#
#   MEMORY_BANDWIDTH_BIN=build/bin/memory_bandwidth \
#       /usr/bin/python3 -m pytest -q tests/python/test_llm_bench_cli.py
# ===---------------------------------------------------------------------=== #
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BENCH = os.path.join(ROOT, "benchmarks", "llm")
LLM = os.path.join(ROOT, "examples", "llm")


def run(cmd, env=None):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, **(env or {})), timeout=120)


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("gguf") / "tiny.gguf")
    result = run([sys.executable, os.path.join(LLM, "llama_gguf.py"), path, "--tiny"])
    assert result.returncode == 0, result.stderr
    return path


@pytest.mark.parametrize("args, message", [
    (["--prompt=1,x"], "not a token id"),
    (["--prompt="], "not a token id"),
    (["--prompt=1,2", "--threads=0"], "must be >= 1"),
    (["--prompt=1,2", "--new-tokens=-3"], "non-negative integer"),
    (["--prompt=1,2", "--colour=red"], "unknown option --colour"),
    ([], "--prompt=ID,ID,... is required"),
])
def test_llama_cpp_driver_rejects(args, message, tmp_path):
    if not shutil.which("node"):
        pytest.skip("node is not installed")
    result = run(["node", os.path.join(BENCH, "llama_cpp_bench.js"), "model.gguf"] + args)
    assert result.returncode == 1
    assert message in result.stderr


def test_llama_cpp_driver_needs_its_modules():
    if not shutil.which("node"):
        pytest.skip("node is not installed")
    env = dict(os.environ)
    env.pop("LLAMA_NODE_MODULES", None)
    result = subprocess.run(["node", os.path.join(BENCH, "llama_cpp_bench.js"), "m.gguf",
                             "--prompt=1,2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, timeout=60)
    assert result.returncode == 1 and "LLAMA_NODE_MODULES is not set" in result.stderr


# The Python drivers run in process (importing torch once keeps the test quick).
sys.path.insert(0, BENCH)
import run_llm_benchmark  # noqa: E402
import torch_llm_bench  # noqa: E402


@pytest.mark.parametrize("args, message", [
    (["--prompt=1,a"], "comma-separated token ids"),
    (["--prompt=1,2", "--threads=0"], "must be >= 1"),
    (["--prompt=5,400"], "outside the vocabulary of 320"),
    (["--prompt=1,2", "--new-tokens=200"], "exceed the context of 128"),
])
def test_torch_driver_rejects(args, message, tiny_gguf, capsys):
    with pytest.raises(SystemExit) as exit_info:
        torch_llm_bench.main(["torch_llm_bench.py", tiny_gguf] + args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_torch_driver_runs_the_tiny_model(tiny_gguf):
    result = run([sys.executable, os.path.join(BENCH, "torch_llm_bench.py"), tiny_gguf,
                  "--prompt=5,6,7", "--new-tokens=4"])
    assert result.returncode == 0, result.stderr
    assert '"tokens": [' in result.stdout


def test_torch_driver_reports_a_corrupt_file(tmp_path, capsys):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert torch_llm_bench.main(["torch_llm_bench.py", str(bad), "--prompt=1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("torch_llm_bench.py: error: ") and "truncated" in err


@pytest.mark.parametrize("env, message", [
    ({"LLM_TYPES": "f32 q5_k"}, "unknown weight type 'q5_k'"),
    ({"LLM_TINY": "1", "LLM_PROMPT_LEN": "100"}, "must be within the context of 128"),
    ({"LLM_TINY": "1", "LLM_NEW_TOKENS": "1"}, "LLM_NEW_TOKENS 1 (>= 2)"),
    ({"LLM_TINY": "1", "LLM_ROUNDS": "0"}, "must be >= 1"),
    ({"LLM_THREADS": "1 two"}, "take integers"),
    ({"LLM_KV_TYPE": "f8"}, "LLM_KV_TYPE must be"),
])
def test_benchmark_rejects(env, message, tmp_path, monkeypatch, capsys):
    for name in list(os.environ):
        if name.startswith("LLM_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert run_llm_benchmark.main(["run_llm_benchmark.py", str(tmp_path)]) == 2
    assert message in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--threads=0"], "--threads needs a positive integer"),
    (["--mib=12x"], "--mib needs a positive integer"),
    (["--passes"], "unknown argument '--passes'"),
    (["--threads=100000"], "--threads must be <= 256"),
])
def test_memory_bandwidth_rejects(args, message):
    binary = os.environ.get("MEMORY_BANDWIDTH_BIN")
    if not binary:
        pytest.skip("MEMORY_BANDWIDTH_BIN is not set")
    result = run([binary] + args)
    assert result.returncode == 2
    assert message in result.stderr


def test_memory_bandwidth_measures():
    binary = os.environ.get("MEMORY_BANDWIDTH_BIN")
    if not binary:
        pytest.skip("MEMORY_BANDWIDTH_BIN is not set")
    result = run([binary, "--threads=2", "--mib=8", "--passes=2"])
    assert result.returncode == 0, result.stderr
    assert "threads 2  buffer 8 MiB  passes 2  best" in result.stdout
