# ===- ggml_quants.py - ggml tensor encodings in NumPy --------------------=== #
#
# Encoders and decoders for the ggml tensor types the LLM yardstick writes into
# GGUF files: F32, F16, BF16, Q8_0 and Q4_0, bit-for-bit as llama.cpp's
# reference quantizers (ggml/src/ggml-quants.c, quantize_row_q8_0_ref and
# quantize_row_q4_0_ref; ggml's fp32 -> fp16 / bf16 conversions) produce them,
# so a file written here holds what llama.cpp's own tools would write.
#
# Every encoder takes an f32 array whose last dim (ggml's ne0, the innermost)
# is the row and returns the raw little-endian bytes as a uint8 array; every
# decoder takes those bytes and the element count and returns f32 — that is
# the "dequantized weights" reference of issue 14 (torch eager on the very
# weights llama.cpp reads).
#
#   Q8_0: blocks of 32 along the row: f16 d = amax / 127, then 32 int8
#         q = roundf(x / d) (half away from zero); 34 bytes, x ~ q * d.
#   Q4_0: blocks of 32: the element of largest magnitude m (the first one on
#         a tie), f16 d = m / -8, q = min(15, (int)(x / d + 8.5)) in 0..15;
#         16 bytes of nibbles, byte j = q[j] | q[j + 16] << 4; 18 bytes per
#         block, x ~ (q - 8) * d.
# The arithmetic is done in f32 where ggml does it in f32 (x * (1/d), + 8.5),
# since the rounding of those steps decides ties.
# ===---------------------------------------------------------------------=== #
import numpy as np

QK8_0 = 32
QK4_0 = 32

# ggml_type ids (ggml.h) of the types handled here.
GGML_TYPE_F32 = 0
GGML_TYPE_F16 = 1
GGML_TYPE_Q4_0 = 2
GGML_TYPE_Q8_0 = 8
GGML_TYPE_BF16 = 30

TYPE_NAMES = {GGML_TYPE_F32: "F32", GGML_TYPE_F16: "F16", GGML_TYPE_Q4_0: "Q4_0",
              GGML_TYPE_Q8_0: "Q8_0", GGML_TYPE_BF16: "BF16"}
TYPE_IDS = {name: type_id for type_id, name in TYPE_NAMES.items()}

# (elements per block, bytes per block)
BLOCK_LAYOUT = {GGML_TYPE_F32: (1, 4), GGML_TYPE_F16: (1, 2), GGML_TYPE_BF16: (1, 2),
                GGML_TYPE_Q8_0: (QK8_0, 2 + QK8_0), GGML_TYPE_Q4_0: (QK4_0, 2 + QK4_0 // 2)}


class QuantError(ValueError):
    """A tensor that cannot be encoded as asked (row not a multiple of the block, unknown type)."""


def type_id(name_or_id) -> int:
    """The ggml type id of "F32" / "f16" / "Q8_0" / ... or of an id, checked."""
    if isinstance(name_or_id, str):
        key = name_or_id.upper()
        if key not in TYPE_IDS:
            raise QuantError("unsupported ggml type %r (supported: %s)" %
                             (name_or_id, ", ".join(TYPE_IDS)))
        return TYPE_IDS[key]
    if name_or_id not in TYPE_NAMES:
        raise QuantError("unsupported ggml type id %r" % (name_or_id,))
    return name_or_id


def nbytes(ggml_type: int, n_elements: int, row_length: int) -> int:
    """Bytes of n_elements in rows of row_length (the innermost dim)."""
    block, size = BLOCK_LAYOUT[type_id(ggml_type)]
    if row_length % block != 0:
        raise QuantError("%s needs rows that are a multiple of %d elements, got %d" % (
            TYPE_NAMES[ggml_type], block, row_length))
    return n_elements // block * size


def _rows(x: np.ndarray, block: int, what: str) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 0 or x.shape[-1] % block != 0:
        raise QuantError("%s: the innermost dim must be a multiple of %d, got shape %s" % (
            what, block, tuple(x.shape)))
    return x.reshape(-1, block)


def fp32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """ggml_compute_fp32_to_bf16: round to nearest even; NaN kept quiet."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + (0x7FFF + ((u >> 16) & 1))) >> 16).astype(np.uint16)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((u >> 16) | 64).astype(np.uint16), rounded)


def encode(x: np.ndarray, ggml_type) -> np.ndarray:
    """The bytes of x (f32, rows along the last dim) in ggml_type, as uint8."""
    t = type_id(ggml_type)
    x = np.ascontiguousarray(x, dtype=np.float32)
    if t == GGML_TYPE_F32:
        return x.reshape(-1).view(np.uint8).copy()
    if t == GGML_TYPE_F16:
        with np.errstate(over="ignore"):  # beyond 65504 -> inf, as ggml converts
            return x.astype("<f2").reshape(-1).view(np.uint8).copy()
    if t == GGML_TYPE_BF16:
        return fp32_to_bf16_bits(x).astype("<u2").reshape(-1).view(np.uint8).copy()
    if t == GGML_TYPE_Q8_0:
        return quantize_q8_0(x)
    return quantize_q4_0(x)


def decode(data: np.ndarray, ggml_type, n_elements: int) -> np.ndarray:
    """f32 values of n_elements stored as ggml_type in `data` (uint8)."""
    t = type_id(ggml_type)
    data = np.ascontiguousarray(data, dtype=np.uint8)
    block, size = BLOCK_LAYOUT[t]
    if n_elements % block != 0 or data.size != n_elements // block * size:
        raise QuantError("%s: %d bytes do not hold %d elements" % (TYPE_NAMES[t], data.size,
                                                                   n_elements))
    if t == GGML_TYPE_F32:
        return data.view("<f4").astype(np.float32)
    if t == GGML_TYPE_F16:
        return data.view("<f2").astype(np.float32)
    if t == GGML_TYPE_BF16:
        return (data.view("<u2").astype(np.uint32) << 16).view(np.float32)
    if t == GGML_TYPE_Q8_0:
        return dequantize_q8_0(data, n_elements)
    return dequantize_q4_0(data, n_elements)


def quantize_q8_0(x: np.ndarray) -> np.ndarray:
    """quantize_row_q8_0_ref over every row of x; the blocks' bytes as uint8."""
    blocks = _rows(x, QK8_0, "Q8_0")
    amax = np.max(np.abs(blocks), axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    scaled = (blocks * inv[:, None]).astype(np.float32)
    # roundf: half away from zero. |scaled| + 0.5 is exact in f64.
    s64 = scaled.astype(np.float64)
    q = (np.sign(s64) * np.floor(np.abs(s64) + 0.5)).astype(np.int8)
    out = np.empty((blocks.shape[0], 2 + QK8_0), dtype=np.uint8)
    out[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.reshape(-1)


def dequantize_q8_0(data: np.ndarray, n_elements: int) -> np.ndarray:
    """dequantize_row_q8_0: q * d per block."""
    blocks = np.ascontiguousarray(data, dtype=np.uint8).reshape(n_elements // QK8_0, 2 + QK8_0)
    d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)
    q = blocks[:, 2:].copy().view(np.int8).astype(np.float32)
    return (q * d).reshape(-1)


def quantize_q4_0(x: np.ndarray) -> np.ndarray:
    """quantize_row_q4_0_ref over every row of x; the blocks' bytes as uint8."""
    blocks = _rows(x, QK4_0, "Q4_0")
    first_max = np.argmax(np.abs(blocks), axis=1)  # the first of equal magnitudes, as ggml's `<`
    m = blocks[np.arange(blocks.shape[0]), first_max]
    d = (m / np.float32(-8)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    shifted = (blocks * inv[:, None]).astype(np.float32) + np.float32(8.5)
    q = np.minimum(15, np.trunc(shifted.astype(np.float32))).astype(np.uint8)
    half = QK4_0 // 2
    out = np.empty((blocks.shape[0], 2 + half), dtype=np.uint8)
    out[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :half] | (q[:, half:] << 4)
    return out.reshape(-1)


def dequantize_q4_0(data: np.ndarray, n_elements: int) -> np.ndarray:
    """dequantize_row_q4_0: element j is (low nibble of byte j) - 8, j + 16 the high nibble."""
    half = QK4_0 // 2
    blocks = np.ascontiguousarray(data, dtype=np.uint8).reshape(n_elements // QK4_0, 2 + half)
    d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)
    qs = blocks[:, 2:]
    low = (qs & 0x0F).astype(np.float32) - 8
    high = (qs >> 4).astype(np.float32) - 8
    return (np.concatenate([low, high], axis=1) * d).reshape(-1)


def round_trip(x: np.ndarray, ggml_type) -> np.ndarray:
    """x as llama.cpp would see it after storing it as ggml_type (same shape, f32)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    return decode(encode(x, ggml_type), ggml_type, x.size).reshape(x.shape)
