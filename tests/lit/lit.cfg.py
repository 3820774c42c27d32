# lit.cfg.py - the Turbine lit suite: what the tests are and which tools
# their RUN lines may use.
#
# Substitutions:
#   %turbine     the `turbine` binary of this build
#   turbine-opt  the `turbine-opt` binary of this build (single passes)
#   FileCheck    LLVM 22's FileCheck
#   not          LLVM 22's `not` (inverts an exit code; `not --crash` wants a
#                crash, which no Turbine test should ever see)
#   %python      an interpreter for small helper scripts
# Tests run from the build tree: %t is a per-test scratch path there.
import os
import shutil

import lit.formats
import lit.util

config.name = "Turbine"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "README.md", "Inputs"]

# When run through lit.site.cfg.py these are set; running lit directly on the
# source tree is not supported (there would be no `turbine` to test).
if not hasattr(config, "turbine_binary"):
    lit_config.fatal("run lit on the build tree: lit -sv <build>/tests/lit")

config.test_source_root = config.turbine_source_dir
config.test_exec_root = config.turbine_binary_dir

if not os.path.exists(config.turbine_binary):
    lit_config.fatal("turbine binary not found at %s (build the `turbine` target)"
                     % config.turbine_binary)


def llvm_tool(name):
    """Path of an LLVM 22 test tool; its absence is a configuration error."""
    path = os.path.join(config.llvm_tools_dir, name)
    if not os.path.exists(path):
        lit_config.fatal("%s not found in %s" % (name, config.llvm_tools_dir))
    return path


config.substitutions.append(("%turbine", config.turbine_binary))
if not os.path.exists(config.turbine_opt_binary):
    lit_config.fatal("turbine-opt not found at %s (build the `turbine-opt` target)"
                     % config.turbine_opt_binary)
config.substitutions.append(
    (r"(?<![-./\w])turbine-opt(?![-./\w])", config.turbine_opt_binary))
config.substitutions.append(("%python", config.python_executable))
# Tool names as whole command words (not inside paths, flags or other
# words), the way LLVM's own lit configs substitute them.
for tool in ["FileCheck", "not", "mlir-translate"]:
    config.substitutions.append(
        (r"(?<![-./\w])" + tool + r"(?![-./\w])", llvm_tool(tool)))
# Anything else a RUN line needs (ls, grep, cat) comes from the system PATH.

# Compiles can be slow and a bad schedule can run away: bound every test.
# (Needs psutil, which Debian's python3 has; without it lit would refuse.)
try:
    import psutil  # noqa: F401
    lit_config.maxIndividualTestTime = 300
except ImportError:
    lit_config.note("psutil missing: no per-test time limit")

# A minimal, predictable environment for the tools under test.
config.environment["LC_ALL"] = "C"
# The sanitizer builds' options and suppressions (tests/sanitizers) too.
for var in ["HOME", "TMPDIR", "CUDA_HOME", "CUDA_PATH", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS",
            "TSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Feature `cuda-toolkit`: the CUDA toolkit the cuda target's link needs
# (ptxas, libdevice) is where the compiler looks for it (EmitCuda.h):
# $CUDA_HOME / $CUDA_PATH, the directory above ptxas on PATH, /usr/local/cuda.
# Tests that assemble cubins say `REQUIRES: cuda-toolkit`; without it they
# are reported UNSUPPORTED, not passed.
def _cuda_toolkit():
    def is_toolkit(root):
        return (os.access(os.path.join(root, "bin", "ptxas"), os.X_OK) and
                os.path.exists(os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")))
    for var in ["CUDA_HOME", "CUDA_PATH"]:
        if os.environ.get(var):
            return is_toolkit(os.environ[var])
    ptxas = shutil.which("ptxas")
    if ptxas and is_toolkit(os.path.dirname(os.path.dirname(ptxas))):
        return True
    return is_toolkit("/usr/local/cuda")


if _cuda_toolkit():
    config.available_features.add("cuda-toolkit")
