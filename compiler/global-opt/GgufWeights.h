//===- GgufWeights.h - Matmuls by GGUF block-quantized weights ------------===//
//
// Internal to the compiler library. turbine-bind-gguf-weights
// (GgufWeights.cpp) makes a matmul whose weight a GGUF file holds as Q8_0 or
// Q4_0 read that tensor's blocks in place: the weight becomes an external
// parameter (an immutable `#ml_program.extern` global named as the GGUF
// tensor, bound from the file when the artifact loads) typed as its raw
// bytes, and the matmul one linalg.generic that decodes the blocks in its
// body. The CPU target recognizes that generic with matchGgufMatmul and
// gives it its own strategy (targets/cpu/GgufMatmulCodegen.cpp).
//
// For A [M, K] f32 and a GGUF weight of logical shape [N, K] (torch's
// [out, in]; ggml's ne0 = K innermost, rows of K / 32 blocks), G = K / 32:
//
//   W  [N, G, B] i8, the file's bytes: block (n, g) is W[n, g, 0:B]
//      Q8_0  B = 34: f16 d (bytes 0..1, little-endian), int8 q[32]
//      Q4_0  B = 18: f16 d, 16 bytes of nibbles: element i < 16 is the low
//            nibble of byte 2 + i, element 16 + i its high nibble;
//            value (nibble - 8) * d
//   Q8_0  loops (m, n, g, i), i < 32        (k = 32 g + i)
//         A' [M, G, 32]      (m, g, i)
//   Q4_0  loops (m, n, g, h, i), h < 2, i < 16 (k = 32 g + 16 h + i)
//         A' [M, G, 2, 16]   (m, g, h, i)
//   both  W  three times:    (n, g, 0)  (n, g, 1)  (n, g, i + 2)
//         C  [M, N] f32      (m, n)
//   body  C += A' * (sitofp(q) * extf(bitcast<f16>(byte0 | byte1 << 8)))
//         with q = the int8 (Q8_0) or the nibble minus 8 (Q4_0, h selects
//         the low or high nibble)
//
// so the result is exactly the matmul by the dequantized weight (llama.cpp's
// dequantize_row_q8_0 / q4_0 values) up to f32 summation order; activations
// are never quantized.
//
// A weight the file holds as F16 / BF16 / F32 with K a multiple of 32 (a
// "plain" type) takes the same family's plain form, its rows read in place
// as 32-element blocks without a scale:
//
//   W  [N, G, 32] f16 / bf16 / f32, the file's [N, K] rows
//   loops (m, n, g, i), i < 32:  A' [M, G, 32] (m, g, i)
//                                W (n, g, i)     C [M, N] (m, n)
//   body  C += A' * extf(W)
//
// Only upstream ops (linalg, arith, tensor).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_GGUFWEIGHTS_H
#define TURBINE_COMPILER_GGUFWEIGHTS_H

#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>

namespace turbine::compiler {

/// ggml's ids of the types the generic reads.
inline constexpr int kGgufF32 = 0;
inline constexpr int kGgufF16 = 1;
inline constexpr int kGgufQ4_0 = 2;
inline constexpr int kGgufQ8_0 = 8;
inline constexpr int kGgufBF16 = 30;

/// ggml's name of a type above ("Q4_0", "F16", ...).
const char *ggmlTypeName(int ggmlType);

/// What matchGgufMatmul recognized.
struct GgufMatmul {
  int ggmlType = kGgufQ8_0; ///< kGgufQ8_0, kGgufQ4_0, or a plain type
  int64_t blockBytes = 34;  ///< 34 (Q8_0), 18 (Q4_0), 32 elements (plain)
  /// F16 / BF16 / F32: the plain form (no scale, W's elements as they are).
  bool plain() const { return ggmlType != kGgufQ8_0 && ggmlType != kGgufQ4_0; }
};

/// The block-decoding matmul generic of turbine-bind-gguf-weights (layout
/// above, either form), or nullopt for anything else.
std::optional<GgufMatmul> matchGgufMatmul(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_GGUFWEIGHTS_H
