# ===- test_ggml_quants.py - Q8_0 / Q4_0 / F16 / BF16 encoders vs ggml ----=== #
#
# examples/llm/ggml_quants.py (vectorized NumPy) against a straightforward
# element-by-element transcription, written here, of llama.cpp's reference
# code (ggml/src/ggml-quants.c: quantize_row_q8_0_ref, quantize_row_q4_0_ref,
# dequantize_row_q8_0 / _q4_0; ggml-impl.h: GGML_FP32_TO_FP16 (round to
# nearest even), ggml_compute_fp32_to_bf16). f32 arithmetic is done with
# np.float32 scalars as the C code does it in float; roundf is half away from
# zero; the f32 -> f16 conversion is Python's struct 'e' (IEEE binary16,
# round half to even), independent of NumPy's astype. Bytes must be identical,
# including crafted blocks where the rounding rule decides (x / d exactly at
# k + 0.5, magnitude ties between +m and -m, all-zero blocks).
#
#   /usr/bin/python3 -m pytest -q tests/python/test_ggml_quants.py
# ===---------------------------------------------------------------------=== #
import math
import os
import struct
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "llm"))
import ggml_quants  # noqa: E402

f32 = np.float32


def fp16_bytes(value):
    return struct.pack("<e", float(value))


def fp16_value(data):
    return f32(struct.unpack("<e", bytes(data))[0])


def roundf(v):
    return int(math.copysign(math.floor(abs(float(v)) + 0.5), float(v)))


def ref_quantize_q8_0(row):
    out = bytearray()
    for b in range(0, len(row), 32):
        x = [f32(v) for v in row[b:b + 32]]
        amax = f32(0)
        for v in x:
            amax = max(amax, f32(abs(v)))
        d = f32(amax / f32(127))
        inv = f32(f32(1) / d) if d != 0 else f32(0)
        out += fp16_bytes(d)
        for v in x:
            out += struct.pack("<b", roundf(f32(v * inv)))
    return bytes(out)


def ref_quantize_q4_0(row):
    out = bytearray()
    for b in range(0, len(row), 32):
        x = [f32(v) for v in row[b:b + 32]]
        amax, mx = f32(0), f32(0)
        for v in x:
            if amax < abs(v):
                amax, mx = f32(abs(v)), v
        d = f32(mx / f32(-8))
        inv = f32(f32(1) / d) if d != 0 else f32(0)
        out += fp16_bytes(d)
        for j in range(16):
            x0 = f32(x[j] * inv)
            x1 = f32(x[16 + j] * inv)
            q0 = min(15, int(f32(x0 + f32(8.5))))  # (int8_t) truncates toward zero
            q1 = min(15, int(f32(x1 + f32(8.5))))
            out += bytes([q0 | (q1 << 4)])
    return bytes(out)


def ref_dequantize_q8_0(data):
    values = []
    for b in range(0, len(data), 34):
        d = fp16_value(data[b:b + 2])
        values += [f32(q * d) for q in struct.unpack("<32b", bytes(data[b + 2:b + 34]))]
    return np.array(values, dtype=np.float32)


def ref_dequantize_q4_0(data):
    values = []
    for b in range(0, len(data), 18):
        d = fp16_value(data[b:b + 2])
        qs = data[b + 2:b + 18]
        low = [f32(((q & 0x0F) - 8) * d) for q in qs]
        high = [f32(((q >> 4) - 8) * d) for q in qs]
        values += low + high
    return np.array(values, dtype=np.float32)


def ref_bf16(value):
    u = struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return (u >> 16) | 64
    return (u + (0x7FFF + ((u >> 16) & 1))) >> 16


def case_rows():
    """Random rows plus crafted blocks; every block is a case."""
    rng = np.random.default_rng(7)
    rows = [rng.standard_normal(256).astype(np.float32),
            (rng.standard_normal(64) * 1e-3).astype(np.float32),
            np.zeros(32, np.float32)]
    # Q8_0: amax 127 -> d = 1 exactly, values at k + 0.5 (roundf: away from zero)
    tie8 = np.array([127, -127, 2.5, -2.5, 0.5, -0.5, 1.5, 3.5] + [0.25] * 24, np.float32)
    # Q4_0: +m and -m tie in magnitude (the first decides the sign of d); m = 8 -> d = -1
    tie4 = np.array([8, -8, 0.5, -0.5, 1.5, 7.5, -7.5, 3] + [-2.5] * 24, np.float32)
    tie4b = -tie4
    # one large outlier
    outlier = np.concatenate([[1000.0], rng.standard_normal(31)]).astype(np.float32)
    rows += [tie8, tie4, tie4b, outlier]
    return rows


@pytest.mark.parametrize("case", range(len(case_rows())))
def test_q8_0_matches_ggml_reference(case):
    row = case_rows()[case]
    got = ggml_quants.quantize_q8_0(row).tobytes()
    assert got == ref_quantize_q8_0(row)
    assert len(got) == row.size // 32 * 34
    np.testing.assert_array_equal(ggml_quants.dequantize_q8_0(np.frombuffer(got, np.uint8),
                                                              row.size),
                                  ref_dequantize_q8_0(got))


@pytest.mark.parametrize("case", range(len(case_rows())))
def test_q4_0_matches_ggml_reference(case):
    row = case_rows()[case]
    got = ggml_quants.quantize_q4_0(row).tobytes()
    assert got == ref_quantize_q4_0(row)
    assert len(got) == row.size // 32 * 18
    np.testing.assert_array_equal(ggml_quants.dequantize_q4_0(np.frombuffer(got, np.uint8),
                                                              row.size),
                                  ref_dequantize_q4_0(got))


def test_rounding_rules_are_ggmls():
    # Q8_0 with d = 1: 2.5 -> 3 and -2.5 -> -3 (roundf), not banker's 2 / -2
    q = ggml_quants.quantize_q8_0(case_rows()[3])[2:].view(np.int8)
    assert list(q[:8]) == [127, -127, 3, -3, 1, -1, 2, 4]
    # Q4_0 block [8, -8, ...]: the first of equal magnitudes gives d = 8 / -8 = -1
    block = ggml_quants.quantize_q4_0(case_rows()[4])
    assert fp16_value(block[:2]) == -1.0
    values = ggml_quants.dequantize_q4_0(block, 32)
    assert values[0] == 8.0 and values[1] == -7.0  # -8 clips to q = 15 -> (15 - 8) * -1


def test_q4_0_nibble_layout():
    # element j in the low nibble of byte j, element j + 16 in its high nibble
    row = np.zeros(32, np.float32)
    row[0] = -8.0   # d = 1: q = x + 8
    row[3] = 5.0
    row[16 + 3] = -3.0
    qs = ggml_quants.quantize_q4_0(row)[2:]
    assert qs[3] == (13 | (5 << 4))
    assert qs[0] == (0 | (8 << 4))


def test_matrix_rows_are_independent():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((5, 96)).astype(np.float32)
    for t in ("q8_0", "q4_0"):
        whole = ggml_quants.encode(m, t)
        rows = np.concatenate([ggml_quants.encode(m[i], t) for i in range(5)])
        np.testing.assert_array_equal(whole, rows)
        back = ggml_quants.round_trip(m, t)
        assert back.shape == m.shape
        scale = np.abs(m).max()
        assert np.abs(back - m).max() <= scale / (127 if t == "q8_0" else 8)


def test_f16_and_bf16_encoders():
    values = np.array([0.0, -0.0, 1.0, 1.0 / 3, 65504.0, 70000.0, 6e-8, 1e-10, -2.7182817,
                       3.0000002, float("inf"), float("nan")], np.float32)
    f16 = ggml_quants.encode(values, "f16").tobytes()
    for i, v in enumerate(values):
        expected = fp16_bytes(v) if abs(v) <= 65504 or math.isinf(v) or math.isnan(v) else \
            struct.pack("<H", 0x7C00 if v > 0 else 0xFC00)  # overflow -> inf
        if math.isnan(v):
            assert math.isnan(struct.unpack("<e", f16[2 * i:2 * i + 2])[0])
        else:
            assert f16[2 * i:2 * i + 2] == expected, "f16 of %r" % v
    bf16 = np.frombuffer(ggml_quants.encode(values, "bf16").tobytes(), "<u2")
    assert [int(b) for b in bf16] == [ref_bf16(v) for v in values]
    back = ggml_quants.decode(ggml_quants.encode(values, "bf16"), "bf16", values.size)
    assert back[2] == 1.0 and np.isnan(back[-1])


@pytest.mark.parametrize("t", ["q8_0", "q4_0"])
def test_row_not_a_multiple_of_the_block_is_an_error(t):
    with pytest.raises(ggml_quants.QuantError, match="multiple of 32"):
        ggml_quants.encode(np.zeros((4, 48), np.float32), t)


def test_unknown_type_is_an_error():
    with pytest.raises(ggml_quants.QuantError, match="Q5_K"):
        ggml_quants.encode(np.zeros(32, np.float32), "Q5_K")
    with pytest.raises(ggml_quants.QuantError, match="type id 12"):
        ggml_quants.type_id(12)


def test_decode_with_wrong_size_is_an_error():
    with pytest.raises(ggml_quants.QuantError, match="do not hold"):
        ggml_quants.decode(np.zeros(33, np.uint8), "q8_0", 32)
