# ===- instances.py - module state of a loaded artifact -----------------=== #
#
# A stateful artifact (mutable ml_program globals: a KV cache) keeps its
# state in instances of the loaded module (runtime::Instance), like an IREE
# VM context: `m = turbine_torch.load("llm.tmod")`, `seq = m.create_instance()`,
# `seq.prefill(tokens)`, `seq.decode(token, pos)`, `seq.reset()`. Calls on the
# CompiledModule itself use its default instance. Each instance runs one
# call at a time; different instances may be used from different threads.
# ===---------------------------------------------------------------------=== #
import collections

from .runtime import as_tensors

GlobalInfo = collections.namedtuple("GlobalInfo", "name type mutable initial")


def parse_globals(lines):
    """GlobalInfo per "name: TYPE mutable INIT" / "name: TYPE parameter" line."""
    out = []
    for line in lines:
        name, rest = line.rsplit(": ", 1)
        parts = rest.split(" ")
        mutable = parts[1] == "mutable"
        out.append(GlobalInfo(name, parts[0], mutable, parts[2] if mutable else "parameter"))
    return out


class Instance:
    """One set of the module's mutable globals; call functions in it."""

    def __init__(self, compiled, handle):
        self._compiled = compiled
        self._handle = handle

    def call(self, function, *inputs):
        results = self._compiled._module.call_in(self._handle, function, as_tensors(inputs))
        return results[0] if len(results) == 1 else tuple(results)

    def reset(self):
        """Every mutable global back to its initial value (a new sequence)."""
        self._compiled._module.reset(self._handle)

    def read_global(self, name):
        """A copy of mutable global `name` (an error before it has a value)."""
        return self._compiled._module.read_global(self._handle, name)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._compiled.functions():
            raise AttributeError("artifact has no function '%s' (functions: %s)"
                                 % (name, ", ".join(self._compiled.functions())))
        return lambda *inputs: self.call(name, *inputs)
