//===- Ggml.cpp - ggml tensor types and Q8_0 / Q4_0 decoding --------------===//
//
// The table of ggml.h's ggml_type ids with their block geometry (from ggml's
// type_traits and the block structs of ggml-common.h), and the reference
// decoders of the two block-quantized types Turbine reads.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Ggml.h"

#include "Float16.h"

#include <cstring>

namespace turbine::runtime {

namespace {

struct GgmlTypeRow {
  uint32_t id;
  GgmlTypeInfo info;
};

// ids 4, 5 (Q4_2, Q4_3), 31-33 (Q4_0_4_4 ...) and 36-38 (IQ4_NL_4_4 ...) were
// removed from ggml and never appear in GGUF files written today.
constexpr GgmlTypeRow kTypes[] = {
    {0, {"F32", 1, 4}},          {1, {"F16", 1, 2}},
    {2, {"Q4_0", 32, 18}},       {3, {"Q4_1", 32, 20}},
    {6, {"Q5_0", 32, 22}},       {7, {"Q5_1", 32, 24}},
    {8, {"Q8_0", 32, 34}},       {9, {"Q8_1", 32, 36}},
    {10, {"Q2_K", 256, 84}},     {11, {"Q3_K", 256, 110}},
    {12, {"Q4_K", 256, 144}},    {13, {"Q5_K", 256, 176}},
    {14, {"Q6_K", 256, 210}},    {15, {"Q8_K", 256, 292}},
    {16, {"IQ2_XXS", 256, 66}},  {17, {"IQ2_XS", 256, 74}},
    {18, {"IQ3_XXS", 256, 98}},  {19, {"IQ1_S", 256, 50}},
    {20, {"IQ4_NL", 32, 18}},    {21, {"IQ3_S", 256, 110}},
    {22, {"IQ2_S", 256, 82}},    {23, {"IQ4_XS", 256, 136}},
    {24, {"I8", 1, 1}},          {25, {"I16", 1, 2}},
    {26, {"I32", 1, 4}},         {27, {"I64", 1, 8}},
    {28, {"F64", 1, 8}},         {29, {"IQ1_M", 256, 56}},
    {30, {"BF16", 1, 2}},        {34, {"TQ1_0", 256, 54}},
    {35, {"TQ2_0", 256, 66}},    {39, {"MXFP4", 32, 17}},
};

} // namespace

std::optional<GgmlTypeInfo> ggmlTypeInfo(uint32_t type) {
  for (const GgmlTypeRow &row : kTypes)
    if (row.id == type)
      return row.info;
  return std::nullopt;
}

std::optional<DType> ggmlPlainDType(uint32_t type) {
  switch (type) {
  case 0: return DType::f32;
  case 1: return DType::f16;
  case 24: return DType::i8;
  case 25: return DType::i16;
  case 26: return DType::i32;
  case 27: return DType::i64;
  case 28: return DType::f64;
  case 30: return DType::bf16;
  default: return std::nullopt;
  }
}

std::string ggmlTypeName(uint32_t type) {
  if (auto info = ggmlTypeInfo(type))
    return info->name;
  return "type " + std::to_string(type);
}

Status decodeGgmlBlocks(uint32_t type, const uint8_t *blocks, uint64_t blockCount, float *out) {
  if (type != kGgmlQ8_0 && type != kGgmlQ4_0)
    return Status::error("cannot decode ggml type " + ggmlTypeName(type) +
                         " (Q8_0 and Q4_0 only)");
  const uint64_t blockBytes = type == kGgmlQ8_0 ? 34 : 18;
  for (uint64_t b = 0; b < blockCount; ++b) {
    const uint8_t *block = blocks + b * blockBytes;
    uint16_t bits;
    std::memcpy(&bits, block, 2);
    const float d = detail::halfToFloat(bits);
    float *x = out + b * 32;
    if (type == kGgmlQ8_0) {
      for (int i = 0; i < 32; ++i)
        x[i] = d * static_cast<float>(static_cast<int8_t>(block[2 + i]));
    } else {
      for (int i = 0; i < 16; ++i) {
        x[i] = d * static_cast<float>((block[2 + i] & 0x0F) - 8);
        x[i + 16] = d * static_cast<float>((block[2 + i] >> 4) - 8);
      }
    }
  }
  return Status::success();
}

} // namespace turbine::runtime
