# ===- test_install.py - turbine_torch as an installed Python package -----=== #
#
# `cmake --install build --prefix P --component python` into a virtual
# environment at P (made with /usr/bin/python3 --system-site-packages, so
# Debian's torch is visible); then P's python3 (/usr/bin/python3 itself)
# imports turbine_torch from an unrelated directory with no PYTHONPATH and
# no TURBINE_TORCH_LIBRARY: the package, its native library and the
# TorchScript loader all come from P (checked in /proc/self/maps), and a
# kernel and an exported model run.
# ===---------------------------------------------------------------------=== #
import os
import subprocess

SCRIPT = r"""
import os, sys, torch
import turbine_torch, turbine_torch.kernel as tk
prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(turbine_torch.__file__).startswith(prefix), turbine_torch.__file__
assert os.path.realpath(turbine_torch.library_path()).startswith(prefix)
N, BLOCK = tk.symbols("N BLOCK")
@tk.kernel(tk.ceildiv(N, BLOCK))
def add_one(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
    n = tk.program_id(0) * BLOCK
    tk.store(y, (n,), tk.load(x, (n,), (BLOCK,), tk.masked()) + 1.0, tk.masked())
x = torch.arange(10.0); y = torch.empty(10)
add_one(x, y, BLOCK=4)
assert torch.equal(y, x + 1)
m = torch.nn.Linear(4, 3).eval()
xi = torch.randn(2, 4)
out = turbine_torch.export(m, xi).compile()(xi)
torch.testing.assert_close(out, m(xi).detach(), atol=1e-5, rtol=1e-5)
maps = open("/proc/self/maps").read()
ours = [l.split()[-1] for l in maps.splitlines() if "libturbine_" in l]
assert ours and all(os.path.realpath(p).startswith(prefix) for p in ours), ours
assert any("libturbine_torchscript_loader.so" in p for p in ours), ours
print("installed-ok")
"""


def test_import_from_an_install_prefix(tmp_path):
    build = os.environ["TURBINE_BUILD_DIR"]
    cmake = os.environ.get("CMAKE_COMMAND", "cmake")
    prefix = tmp_path / "prefix"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", "--without-pip",
                    str(prefix)], check=True, timeout=120)
    subprocess.run([cmake, "--install", build, "--prefix", str(prefix), "--component", "python"],
                   check=True, timeout=300, stdout=subprocess.DEVNULL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TURBINE_TORCH_LIBRARY", "TURBINE_TORCHSCRIPT_LOADER")}
    env["TURBINE_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([str(prefix / "bin" / "python3"), "-c", SCRIPT, str(prefix)],
                       cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "installed-ok" in r.stdout
