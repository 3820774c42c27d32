//===- EmitTest.cpp - The MLIR emitted for a specialized kernel ------------===//
//
// Checks the op mapping of Compile.h on the GEMM and softmax examples: the
// host dispatch over the specialized grid, bindings, masked transfers with an
// unmasked fast path for full tiles, vector.contract in an scf.for with
// iter_args, reductions.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/KernelLibrary.h"
#include "turbine/kernels/Compile.h"

#include <gtest/gtest.h>

using namespace turbine::kernels::library;

namespace {
void expectContains(const std::string &text, const std::vector<std::string> &parts) {
  for (const std::string &p : parts)
    EXPECT_NE(text.find(p), std::string::npos) << "missing: " << p << "\nin:\n" << text;
}
} // namespace

TEST(EmitKernelModule, Gemm) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok());
  Result<Specialization> spec = specialize(
      *k, {{{50, 35}, f32}, {{35, 40}, f32}, {{50, 40}, f32}},
      {{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 8}});
  ASSERT_TRUE(spec.ok()) << spec.message();
  Result<std::string> text = emitKernelModule(*spec);
  ASSERT_TRUE(text.ok()) << text.message();
  expectContains(*text, {
      "func.func @main(%arg0: tensor<50x35xf32>, %arg1: tensor<35x40xf32>) -> (tensor<50x40xf32>)",
      "%grid0 = arith.constant 4 : index",   // ceildiv(50, 16)
      "%grid1 = arith.constant 3 : index",   // ceildiv(40, 16)
      "turbine.dispatch @gemm[%grid0, %grid1, %grid2] (%arg0, %arg1)",
      "func.func @gemm(%state: !llvm.ptr, %wg0: index, %wg1: index, %wg2: index) attributes {turbine.kernel}",
      "%buf2 = turbine.binding %state[2] : memref<50x40xf32>",
      "iter_args(%v1 = %v0) -> (vector<16x16xf32>)",
      "in_bounds = [true, true]} : memref<50x35xf32>, vector<16x8xf32>",
      "in_bounds = [false, false]} : memref<50x35xf32>, vector<16x8xf32>",
      "vector.contract",
      "scf.yield %v4 : vector<16x16xf32>",
      "vector.transfer_write %v5, %buf2",
  });
}

TEST(EmitKernelModule, SoftmaxReductionsAndProvablyInBoundsAccess) {
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok());
  // N == BLOCK_N and offset 0: the masked load is provably in bounds.
  Result<Specialization> spec =
      specialize(*k, {{{4, 64}, f32}, {{4, 64}, f32}}, {{"BLOCK_N", 64}});
  ASSERT_TRUE(spec.ok()) << spec.message();
  Result<std::string> text = emitKernelModule(*spec);
  ASSERT_TRUE(text.ok()) << text.message();
  expectContains(*text, {"vector.multi_reduction <maximumf>",
                         "vector.multi_reduction <add>", "math.exp",
                         "in_bounds = [true, true]"});
  EXPECT_EQ(text->find("in_bounds = [false"), std::string::npos) << *text;
}

TEST(EmitKernelModule, GemmOnTileMultiplesHasNoMaskedAccess) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok());
  // Offsets range over the grid and the K loop: all tiles are full.
  Result<Specialization> spec = specialize(
      *k, {{{64, 32}, f32}, {{32, 48}, f32}, {{64, 48}, f32}},
      {{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 8}});
  ASSERT_TRUE(spec.ok()) << spec.message();
  Result<std::string> text = emitKernelModule(*spec);
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_EQ(text->find("in_bounds = [false"), std::string::npos) << *text;
  EXPECT_EQ(text->find("scf.if"), std::string::npos) << *text;
}
