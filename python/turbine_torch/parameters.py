# ===- parameters.py - Parameter files from a state_dict ---------------------=== #
#
# Externalized parameters are named after the module's state_dict: the key
# itself where the stored tensor is the parameter as it is, or a torch
# expression over the key where the importer or the compiler rearranged it
# (`fc.weight.T`, `attn.in_proj_weight[0:64].T`,
# `fc.weight.T.reshape(64,2,32).permute(1,0,2)` for a packed matmul
# operand). `stored_tensor` evaluates such a name against a state_dict, so a
# parameter file for a compiled artifact can be written from any state_dict
# of the same architecture and swapped in without recompiling.
#
# Only the forms Turbine writes are accepted (parsed, never eval'd): `.T`,
# `.reshape(...)`, `.permute(...)`, `.transpose(a, b)`, `.flip(...)` and a
# row slice `[a:b]`.
# ===---------------------------------------------------------------------=== #
import re

_STEP = re.compile(r"\.T|\.(reshape|permute|flip|transpose)\(([-\d, ]*)\)|\[(\d+):(\d+)\]")


def stored_tensor(name, state_dict):
    """The tensor a parameter named `name` holds, computed from `state_dict`."""
    keys = [k for k in state_dict
            if name == k or (name.startswith(k) and name[len(k)] in ".[")]
    if not keys:
        raise KeyError(f"parameter '{name}' names no state_dict entry")
    key = max(keys, key=len)
    tensor, rest = state_dict[key].detach(), name[len(key):]
    while rest:
        m = _STEP.match(rest)
        if not m:
            raise ValueError(f"parameter '{name}': cannot read '{rest}'")
        if m.group(0) == ".T":
            tensor = tensor.T
        elif m.group(3) is not None:
            tensor = tensor[int(m.group(3)):int(m.group(4))]
        else:
            args = [int(a) for a in m.group(2).replace(" ", "").split(",") if a]
            tensor = getattr(tensor, m.group(1))(*args)
        rest = rest[m.end():]
    return tensor.contiguous()


def stored_tensors(names, state_dict):
    """{name: stored_tensor(name, state_dict)} for the names that have a
    state_dict counterpart (others, such as `constant_3`, are left out)."""
    out = {}
    for name in names:
        try:
            out[name] = stored_tensor(name, state_dict)
        except KeyError:
            pass
    return out
