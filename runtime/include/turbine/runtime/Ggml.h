//===- Ggml.h - ggml tensor types and their block layouts -----------------===//
//
// The tensor types of ggml (llama.cpp's tensor library), as GGUF files record
// them: the numeric ids of ggml.h's `ggml_type`, their names, and how many
// elements one block holds in how many bytes. Turbine reads F32, F16, BF16
// (and the plain integer / f64 types) as ordinary tensors and keeps Q8_0 and
// Q4_0 in their own block layout (a view of the file, no dequantized copy);
// the decoders below turn blocks of those two into floats, for tests, tools
// and reference computations (kernels read the blocks themselves).
//
// Block layouts (ggml/src/ggml-common.h), little-endian, rows along ggml's
// innermost dim (ne0), every row a whole number of blocks:
//   Q8_0: 34 bytes per 32 elements: f16 d, int8 qs[32];   x[i] = d * qs[i]
//   Q4_0: 18 bytes per 32 elements: f16 d, uint8 qs[16];
//         x[i]      = d * ((qs[i] & 0x0F) - 8)   for i in 0..15
//         x[i + 16] = d * ((qs[i] >> 4)   - 8)
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_GGML_H
#define TURBINE_RUNTIME_GGML_H

#include "turbine/runtime/Tensor.h"

#include <cstdint>
#include <optional>

namespace turbine::runtime {

/// ggml.h's ggml_type ids of the types Turbine names specially.
enum GgmlTypeId : uint32_t {
  kGgmlF32 = 0,
  kGgmlF16 = 1,
  kGgmlQ4_0 = 2,
  kGgmlQ8_0 = 8,
  kGgmlBF16 = 30,
};

/// Block geometry of a ggml type.
struct GgmlTypeInfo {
  const char *name;       ///< "F32", "Q8_0", "Q4_K", ...
  uint32_t blockElements; ///< elements per block (1 for plain types)
  uint32_t blockBytes;    ///< bytes per block
};

/// The layout of ggml type `type`, or nullopt for an id this build does not
/// know (ids removed from ggml, or newer than this table).
std::optional<GgmlTypeInfo> ggmlTypeInfo(uint32_t type);

/// The Turbine dtype that holds ggml type `type` element for element (F32,
/// F16, BF16, F64, I8, I16, I32, I64), or nullopt for block-quantized types.
std::optional<DType> ggmlPlainDType(uint32_t type);

/// "Q8_0" etc., or "type N" for an unknown id.
std::string ggmlTypeName(uint32_t type);

/// Decodes `blockCount` blocks of Q8_0 or Q4_0 at `blocks` into
/// `blockCount * 32` floats at `out`. Errors for any other type.
Status decodeGgmlBlocks(uint32_t type, const uint8_t *blocks, uint64_t blockCount, float *out);

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_GGML_H
