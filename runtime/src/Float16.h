//===- Float16.h - f16 and bf16 <-> float conversion (internal) ----------===//
//
// Bit-exact IEEE half and bfloat16 conversions with round-to-nearest-even,
// for parsing, printing and comparing tensors on the host.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_FLOAT16_H
#define TURBINE_RUNTIME_SRC_FLOAT16_H

#include <cstdint>
#include <cstring>

namespace turbine::runtime::detail {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) // inf / nan
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0)
      return bitsToFloat(sign);
    // Subnormal: value = mantissa * 2^-24.
    float value = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t absBits = x & 0x7fffffff;
  if (absBits >= 0x7f800000) // inf or nan
    return sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0);
  if (absBits >= 0x477ff000) // rounds to >= 65520: overflow to inf
    return sign | 0x7c00;
  if (absBits < 0x38800000) { // subnormal or zero in half
    float value = bitsToFloat(absBits) * 16777216.0f; // scale by 2^24
    // Round to nearest even integer.
    uint32_t m = static_cast<uint32_t>(value);
    float rest = value - static_cast<float>(m);
    if (rest > 0.5f || (rest == 0.5f && (m & 1)))
      ++m;
    return sign | static_cast<uint16_t>(m);
  }
  uint32_t mantissaRound = absBits + 0xfff + ((absBits >> 13) & 1);
  return sign | static_cast<uint16_t>((mantissaRound - 0x38000000) >> 13);
}

inline float bf16ToFloat(uint16_t b) {
  return bitsToFloat(static_cast<uint32_t>(b) << 16);
}

inline uint16_t floatToBf16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffff) > 0x7f800000) // nan: keep it quiet
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_FLOAT16_H
