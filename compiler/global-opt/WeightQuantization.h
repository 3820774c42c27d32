//===- WeightQuantization.h - Recognizing group-quantized matmuls ---------===//
//
// Internal to the compiler library. turbine-quantize-weights
// (WeightQuantization.cpp) rewrites a matmul by a constant f32 weight into
// one linalg.generic that multiplies by the group-quantized weight,
// dequantizing it element by element in its body (no f32 copy of B). The
// CPU target's workgroup tiling and kernel codegen recognize that generic
// with matchQuantizedMatmul and give it a strategy of its own
// (targets/cpu/QuantizedMatmulCodegen.cpp).
//
// The generic, for A [batch..., M, K], B [batch..., K, N], group size G,
// groups = ceil(K / G) (A zero-padded to groups * G along K), and column
// blocks of P = min(N, column-block) (the target's GEMV tile width,
// Target::quantizedWeightColumns: 128 with AVX-512, 64 with 16 vector
// registers; N padded with zero columns to whole blocks in q only):
//
//   int8  loops (batch..., m, n, g, i)       i < G
//         A' [batch..., M, groups, G]         (batch..., m, g, i)
//         q  [batch..., N/P, groups, G, P] i8 (batch..., n floordiv P, g, i, n mod P)
//   int4  loops (batch..., m, n, g, i, h)    i < G/2, h < 2 (k = g*G + 2i + h)
//         A' [batch..., M, groups, G/2, 2]    (batch..., m, g, i, h)
//         q  [batch..., N/P, groups, G/2, P] i8: two weights per byte, k = 2i
//            in the low nibble, k = 2i + 1 in the high one, each a signed
//            4-bit value (-8..7)
//   both  s  [batch..., groups, N] f32        (batch..., g, n)
//         C  [batch..., M, N] f32             (batch..., m, n)
//   body  C += A' * (sitofp(weight) * s)
//
// so the result is exactly the matmul by the dequantized weight
// w' = q * s, up to f32 summation order. The column blocks make the weights
// of P columns one contiguous stream over all of K (a GEMV reading one
// 128-byte row piece per 4 KiB page ran at a third of the bandwidth). The
// q map is not a projected permutation: it tiles correctly only with
// column tiles that stay inside one block (P a multiple of the tile, tiles
// starting on multiples of it), which the CPU target's workgroup tiles (P
// columns, CpuWorkgroupTiling.cpp) and register tiles (P or 32) do.
#ifndef TURBINE_COMPILER_WEIGHTQUANTIZATION_H
#define TURBINE_COMPILER_WEIGHTQUANTIZATION_H

#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>

namespace turbine::compiler {

/// What matchQuantizedMatmul recognized.
struct QuantizedMatmul {
  int bits = 8;           ///< 8 or 4
  unsigned batchDims = 0; ///< leading batch loops (batch_matmul: 1)
};

/// The group-quantized matmul generic that turbine-quantize-weights makes
/// (layout above), or nullopt for anything else.
std::optional<QuantizedMatmul> matchQuantizedMatmul(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_WEIGHTQUANTIZATION_H
