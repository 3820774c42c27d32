# ===- params.py - Parameter archives (.irpa, safetensors) from Python ---=== #
#
# iree-turbine's parameter API over the runtime's readers and writers
# (runtime/ ParameterArchive.h: IREE's .irpa layout, and safetensors):
#
#   save_module_parameters("model.irpa", module)        # its state_dict
#   b = ParameterArchiveBuilder()
#   b.add_module(module, prefix="encoder.")
#   b.add_tensor("scale", torch.ones(4))
#   b.add_blob("tokenizer.json", data)                  # untyped bytes (.irpa)
#   b.add_archive(ParameterArchive("old.irpa"), rename={"w": "fc.weight"})
#   b.save("out.irpa")                                  # or out.safetensors
#
#   archive = ParameterArchive("out.irpa")
#   for name, entry in archive.items():
#       print(name, entry.type, entry.as_tensor().shape)
#   w = archive["fc.weight"].as_tensor()                 # zero copy
#
# Files are mapped copy-on-write: as_tensor() of a typed data entry is a
# tensor over the mapping (no copy; writing to it changes this process' copy
# only, never the file). Splats and blobs read as a type are materialized.
# The format follows the file's extension (".safetensors", else ".irpa")
# unless `format=` says otherwise; safetensors holds typed tensors only.
# ===---------------------------------------------------------------------=== #
import os

import torch

from .runtime import native


class ParameterEntry:
    """One named entry of a ParameterArchive."""

    def __init__(self, index, name):
        self._index = index
        self.name = name
        info = index.info(name)
        self.kind = info["kind"]          # "data" or "splat"
        self.length = info["length"]      # bytes
        self.dtype = info["dtype"]        # "f32", ... or None (untyped blob)
        self.shape = info["shape"]
        self.type = info["type"]          # "2x3xf32" or "<N bytes>"
        self.metadata = info["metadata"]  # the raw IRPA metadata blob

    def as_tensor(self, dtype=None, shape=None):
        """The entry as a torch tensor (its recorded type unless `dtype` /
        `shape` are given)."""
        if dtype is not None and not isinstance(dtype, str):
            from .kernel import dtype_of
            dtype = str(dtype_of(dtype))
        return self._index.tensor(self.name, dtype, None if shape is None else list(shape))

    def as_flat_tensor(self):
        """The bytes as a 1-D uint8 tensor."""
        return self._index.tensor(self.name, "u8", None)

    def as_bytes(self):
        return self._index.bytes(self.name)

    def __repr__(self):
        return "ParameterEntry(%s: %s, %s)" % (self.name, self.type, self.kind)


class ParameterArchive:
    """An opened .irpa or .safetensors file (format detected from content)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._index = native().ParameterIndex(self.path)
        self.format = self._index.format

    def names(self):
        return list(self._index.names())

    def items(self):
        return [(name, ParameterEntry(self._index, name)) for name in self._index.names()]

    def __getitem__(self, name):
        if not self._index.contains(name):
            raise KeyError("parameter file '%s' has no entry '%s'" % (self.path, name))
        return ParameterEntry(self._index, name)

    def __contains__(self, name):
        return self._index.contains(name)

    def __len__(self):
        return len(self._index.names())

    def __iter__(self):
        return iter(self.names())

    def to_dict(self):
        """{name: tensor} of the typed entries (zero copy where possible)."""
        return {n: e.as_tensor() for n, e in self.items() if e.dtype is not None}


class ParameterArchiveBuilder:
    """Collects named tensors, blobs and entries of other archives, then
    writes one file. Tensors are held, not copied, until save()."""

    def __init__(self):
        self._writer = native().ParameterWriter()
        self._keep = []

    def add_tensor(self, name, tensor):
        tensor = tensor.detach()
        if not tensor.is_contiguous():
            tensor = tensor.contiguous()
        self._keep.append(tensor)
        self._writer.add_tensor(name, tensor)
        return self

    def add_module(self, module, prefix=""):
        """Every entry of module.state_dict(), named prefix + key."""
        for name, tensor in module.state_dict().items():
            self.add_tensor(prefix + name, tensor)
        return self

    def add_blob(self, name, data):
        """Untyped bytes (an .irpa entry with no tensor type)."""
        self._writer.add_blob(name, bytes(data))
        return self

    def add_splat(self, name, value, shape, dtype=torch.float32):
        """A tensor of `shape` filled with `value`, stored as a splat (no
        data in the file)."""
        pattern = torch.tensor([value], dtype=dtype).numpy().tobytes()
        count = 1
        for d in shape:
            count *= d
        from .kernel import dtype_of
        self._writer.add_splat(name, pattern, count * len(pattern), str(dtype_of(dtype)),
                               list(shape))
        return self

    def add_archive(self, archive, rename=None, exclude=()):
        """The entries of another archive (their types, splats and blobs
        kept), renamed by `rename` {old: new}, except those in `exclude`."""
        rename = dict(rename or {})
        unknown = [n for n in list(rename) + list(exclude) if n not in archive]
        if unknown:
            raise KeyError("archive '%s' has no entries %s" % (archive.path, unknown))
        for name in archive.names():
            if name not in exclude:
                self._writer.add_entry(archive._index, name, rename.get(name, ""))
        return self

    def save(self, path, format=None):
        self._writer.save(os.fspath(path), format or "")
        return path

    def __len__(self):
        return len(self._writer)


def save_module_parameters(path, module, prefix="", format=None):
    """Writes module.state_dict() to an .irpa or .safetensors file."""
    return ParameterArchiveBuilder().add_module(module, prefix).save(path, format)
