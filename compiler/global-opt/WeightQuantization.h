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
// groups = ceil(K / G) (A zero-padded to groups * G along K):
//
//   int8  loops (batch..., m, n, g, i)       i < G
//         A' [batch..., M, groups, G]         (batch..., m, g, i)
//         q  [batch..., groups, G, N] i8      (batch..., g, i, n)
//   int4  loops (batch..., m, n, g, i, h)    i < G/2, h < 2 (k = g*G + 2i + h)
//         A' [batch..., M, groups, G/2, 2]    (batch..., m, g, i, h)
//         q  [batch..., groups, G/2, N] i8    (batch..., g, i, n): two weights
//            per byte, k = 2i in the low nibble, k = 2i + 1 in the high one,
//            each a signed 4-bit value (-8..7)
//   both  s  [batch..., groups, N] f32        (batch..., g, n)
//         C  [batch..., M, N] f32             (batch..., m, n)
//   body  C += A' * (sitofp(weight) * s)
//
// so the result is exactly the matmul by the dequantized weight
// w' = q * s, up to f32 summation order.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_WEIGHTQUANTIZATION_H
#define TURBINE_COMPILER_WEIGHTQUANTIZATION_H

#include "mlir/IR/Operation.h"

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
