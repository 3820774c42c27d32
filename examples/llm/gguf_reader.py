# ===- gguf_reader.py - A GGUF v3 file reader -----------------------------=== #
#
# Reads what gguf_writer.py writes (and what llama.cpp's tools write, for the
# value and tensor types in ggml_quants): metadata as Python values, tensors
# as their ggml dims, type and raw bytes (a view of a memory map). It is what
# turns a GGUF file back into f32 weights for torch (llama_gguf.py's
# dequantized reference). Every count, length and offset is checked against
# the file size; a malformed file raises GGUFReadError naming what is wrong
# and where — never an IndexError or a huge allocation.
# ===---------------------------------------------------------------------=== #
import struct
from typing import Dict

import numpy as np

import ggml_quants
from gguf_writer import (ARRAY, BOOL, DEFAULT_ALIGNMENT, FLOAT32, FLOAT64, GGUF_MAGIC, INT8,
                         INT16, INT32, INT64, STRING, UINT8, UINT16, UINT32, UINT64)

_SCALARS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
            FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}


class GGUFReadError(ValueError):
    """A file that is not a well-formed GGUF v2/v3 file."""


class GGUFTensor:
    """One tensor: name, ggml dims (innermost first), ggml type id, raw bytes (uint8 view)."""

    def __init__(self, name, dims, ggml_type, offset, data):
        self.name = name
        self.dims = dims
        self.ggml_type = ggml_type
        self.offset = offset  # from the start of the file
        self.data = data

    @property
    def shape(self):
        """The torch / NumPy shape (outermost first)."""
        return tuple(reversed(self.dims))

    def to_f32(self) -> np.ndarray:
        """The values as f32 in the torch shape (dequantized for Q8_0/Q4_0)."""
        count = int(np.prod(self.dims))
        return ggml_quants.decode(self.data, self.ggml_type, count).reshape(self.shape)


class GGUFFile:
    """A parsed GGUF file: .version, .metadata (key -> value), .tensors (name -> GGUFTensor)."""

    def __init__(self, path: str):
        self.path = path
        self._buf = np.memmap(path, dtype=np.uint8, mode="r")
        self._pos = 0
        if self._bytes(4) != GGUF_MAGIC:
            raise GGUFReadError("%s: not a GGUF file (bad magic)" % path)
        self.version = self._scalar(UINT32)
        if self.version not in (2, 3):
            raise GGUFReadError("%s: unsupported GGUF version %d" % (path, self.version))
        n_tensors = self._scalar(UINT64)
        n_kv = self._scalar(UINT64)
        self._check_count(n_tensors, 8, "tensor count")
        self._check_count(n_kv, 8, "metadata count")
        self.metadata: Dict[str, object] = {}
        for _ in range(n_kv):
            key = self._string()
            if key in self.metadata:
                raise GGUFReadError("%s: duplicate metadata key %r" % (path, key))
            self.metadata[key] = self._value(self._scalar(UINT32), key)
        self.alignment = int(self.metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        if self.alignment <= 0 or self.alignment % 8 != 0:
            raise GGUFReadError("%s: bad general.alignment %d" % (path, self.alignment))
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            n_dims = self._scalar(UINT32)
            if not 1 <= n_dims <= 4:
                raise GGUFReadError("%s: tensor %r has %d dims" % (path, name, n_dims))
            dims = [self._scalar(UINT64) for _ in range(n_dims)]
            infos.append((name, dims, self._scalar(UINT32), self._scalar(UINT64)))
        self.data_start = self._pos + (self.alignment - self._pos % self.alignment) % self.alignment
        self.tensors: Dict[str, GGUFTensor] = {}
        for name, dims, t, offset in infos:
            if t not in ggml_quants.TYPE_NAMES:
                raise GGUFReadError("%s: tensor %r has unsupported ggml type %d" % (path, name, t))
            if offset % self.alignment != 0:
                raise GGUFReadError("%s: tensor %r offset %d is not a multiple of %d" % (
                    path, name, offset, self.alignment))
            try:
                size = ggml_quants.nbytes(t, int(np.prod(dims, dtype=np.uint64)), dims[0])
            except ggml_quants.QuantError as e:
                raise GGUFReadError("%s: tensor %r: %s" % (path, name, e))
            start = self.data_start + offset
            if start + size > self._buf.size:
                raise GGUFReadError("%s: tensor %r (%d bytes at %d) runs past the end of the "
                                    "file (%d bytes)" % (path, name, size, start, self._buf.size))
            if name in self.tensors:
                raise GGUFReadError("%s: duplicate tensor %r" % (path, name))
            self.tensors[name] = GGUFTensor(name, dims, t, start, self._buf[start:start + size])

    def _check_count(self, n, min_bytes, what):
        if n * min_bytes > self._buf.size:
            raise GGUFReadError("%s: %s %d is impossible for a %d-byte file" % (
                self.path, what, n, self._buf.size))

    def _bytes(self, n):
        if self._pos + n > self._buf.size:
            raise GGUFReadError("%s: truncated at byte %d (need %d more)" % (self.path, self._pos, n))
        out = self._buf[self._pos:self._pos + n].tobytes()
        self._pos += n
        return out

    def _scalar(self, value_type):
        fmt = _SCALARS[value_type]
        return struct.unpack(fmt, self._bytes(struct.calcsize(fmt)))[0]

    def _string(self):
        n = self._scalar(UINT64)
        self._check_count(n, 1, "string length")
        try:
            return self._bytes(n).decode("utf-8")
        except UnicodeDecodeError:
            raise GGUFReadError("%s: string at byte %d is not UTF-8" % (self.path, self._pos - n))

    def _value(self, value_type, key):
        if value_type in _SCALARS:
            return self._scalar(value_type)
        if value_type == STRING:
            return self._string()
        if value_type == ARRAY:
            element_type = self._scalar(UINT32)
            n = self._scalar(UINT64)
            self._check_count(n, 1, "array length of %r" % key)
            if element_type == ARRAY:
                raise GGUFReadError("%s: %r: nested arrays are not supported" % (self.path, key))
            return [self._value(element_type, key) for _ in range(n)]
        raise GGUFReadError("%s: %r has unknown value type %d" % (self.path, key, value_type))
