# ===- gguf_writer.py - A GGUF v3 file writer -----------------------------=== #
#
# Writes GGUF version 3, the file format llama.cpp reads, with no package
# beyond NumPy (no `gguf` package is packaged for Debian 12). The layout
# (ggml/docs/gguf.md, gguf-py's GGUFWriter), all little-endian:
#
#   "GGUF" u32 version=3  u64 n_tensors  u64 n_kv
#   n_kv x   { string key, u32 value_type, value }
#   n_tensors x { string name, u32 n_dims, u64 dims[n_dims] (innermost first:
#                 ggml's ne0, ne1, ...), u32 ggml_type, u64 offset }
#   zero padding to `alignment`, then the tensor data; each tensor's offset is
#   relative to the start of the data and a multiple of `alignment`.
#   string = u64 byte length + UTF-8 bytes (no terminator);
#   array  = u32 element type + u64 count + elements.
#
# The alignment is 32 unless `general.alignment` (u32) says otherwise; this
# writer always records it. Tensor payloads are given already encoded
# (ggml_quants.encode), with their ggml dims; the writer checks that the byte
# count matches dims and type, that names are unique and at most 64 bytes
# (GGML_MAX_NAME), and that keys are unique, and raises GGUFError otherwise.
# ===---------------------------------------------------------------------=== #
import struct
from typing import Dict, List, Sequence

import numpy as np

import ggml_quants

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
DEFAULT_ALIGNMENT = 32
MAX_NAME_BYTES = 64

# gguf_type (value types of metadata).
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, \
    FLOAT64 = range(13)

_SCALAR_FORMATS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I",
                   INT32: "<i", FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q",
                   FLOAT64: "<d"}
_ARRAY_DTYPES = {UINT8: "<u1", INT8: "<i1", UINT16: "<u2", INT16: "<i2", UINT32: "<u4",
                 INT32: "<i4", FLOAT32: "<f4", UINT64: "<u8", INT64: "<i8", FLOAT64: "<f8"}


class GGUFError(ValueError):
    """Metadata or a tensor that cannot be written as given."""


def _string(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _pad(n: int, alignment: int) -> int:
    return (alignment - n % alignment) % alignment


class GGUFWriter:
    """Collects metadata and tensors, then write(path) lays them out in one pass."""

    def __init__(self, alignment: int = DEFAULT_ALIGNMENT):
        if alignment <= 0 or alignment % 8 != 0:
            raise GGUFError("alignment must be a positive multiple of 8, got %d" % alignment)
        self.alignment = alignment
        self._kv: Dict[str, bytes] = {}
        self._tensors: List[tuple] = []  # (name, dims, ggml_type, data)
        self.add_uint32("general.alignment", alignment)

    # -- metadata -----------------------------------------------------------
    def _add(self, key: str, value_type: int, payload: bytes):
        if key in self._kv:
            raise GGUFError("duplicate metadata key %r" % key)
        self._kv[key] = struct.pack("<I", value_type) + payload

    def add_scalar(self, key: str, value, value_type: int):
        if value_type not in _SCALAR_FORMATS:
            raise GGUFError("%r: value type %d is not a scalar type" % (key, value_type))
        try:
            payload = struct.pack(_SCALAR_FORMATS[value_type], value)
        except struct.error as e:
            raise GGUFError("%r: cannot store %r as value type %d: %s" % (key, value, value_type, e))
        self._add(key, value_type, payload)

    def add_uint32(self, key: str, value: int):
        self.add_scalar(key, value, UINT32)

    def add_float32(self, key: str, value: float):
        self.add_scalar(key, value, FLOAT32)

    def add_bool(self, key: str, value: bool):
        self.add_scalar(key, bool(value), BOOL)

    def add_string(self, key: str, value: str):
        self._add(key, STRING, _string(value))

    def add_array(self, key: str, values: Sequence, element_type: int):
        """An array of strings or of one numeric type (no nested arrays)."""
        header = struct.pack("<IQ", element_type, len(values))
        if element_type == STRING:
            payload = b"".join(_string(v) for v in values)
        elif element_type == BOOL:
            payload = bytes(1 if v else 0 for v in values)
        elif element_type in _ARRAY_DTYPES:
            payload = np.asarray(values, dtype=_ARRAY_DTYPES[element_type]).tobytes()
        else:
            raise GGUFError("%r: arrays of value type %d are not supported" % (key, element_type))
        self._add(key, ARRAY, header + payload)

    # -- tensors ------------------------------------------------------------
    def add_tensor(self, name: str, dims: Sequence[int], ggml_type, data: np.ndarray):
        """A tensor of ggml dims (innermost first) whose encoded bytes are `data` (uint8)."""
        t = ggml_quants.type_id(ggml_type)
        if len(name.encode("utf-8")) >= MAX_NAME_BYTES:
            raise GGUFError("tensor name %r is longer than %d bytes" % (name, MAX_NAME_BYTES - 1))
        if any(existing[0] == name for existing in self._tensors):
            raise GGUFError("duplicate tensor %r" % name)
        dims = [int(d) for d in dims]
        if not 1 <= len(dims) <= 4 or any(d <= 0 for d in dims):
            raise GGUFError("tensor %r: dims %s must be 1 to 4 positive sizes" % (name, dims))
        count = int(np.prod(dims))
        try:
            expected = ggml_quants.nbytes(t, count, dims[0])
        except ggml_quants.QuantError as e:
            raise GGUFError("tensor %r: %s" % (name, e))
        data = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        if data.size != expected:
            raise GGUFError("tensor %r: %d bytes given, %s dims %s need %d" % (
                name, data.size, ggml_quants.TYPE_NAMES[t], dims, expected))
        self._tensors.append((name, dims, t, data))

    # -- output -------------------------------------------------------------
    def write(self, path: str):
        """Writes the file; returns {tensor name: offset of its data from the file start}."""
        infos = []
        offset = 0
        for name, dims, t, data in self._tensors:
            infos.append(_string(name) + struct.pack("<I", len(dims)) +
                         struct.pack("<%dQ" % len(dims), *dims) + struct.pack("<IQ", t, offset))
            offset += data.size + _pad(data.size, self.alignment)
        header = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(self._tensors), len(self._kv))
        head = header + b"".join(_string(k) + v for k, v in self._kv.items()) + b"".join(infos)
        data_start = len(head) + _pad(len(head), self.alignment)
        offsets = {}
        with open(path, "wb") as f:
            f.write(head)
            f.write(b"\0" * (data_start - len(head)))
            for name, _, _, data in self._tensors:
                offsets[name] = f.tell()
                f.write(data.tobytes())
                f.write(b"\0" * _pad(data.size, self.alignment))
        return offsets
