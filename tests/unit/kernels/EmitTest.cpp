//===- EmitTest.cpp - The MLIR emitted for a specialized kernel ------------===//
//
// Checks the op mapping of Compile.h on the GEMM and softmax examples: the
// host dispatch over the specialized grid, bindings, masked transfers with an
// unmasked fast path for full tiles, vector.contract in an scf.for with
// iter_args, reductions.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/KernelLibrary.h"
#include "turbine/kernels/Compile.h"
#include "turbine/kernels/EmitKernel.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace turbine::kernels::library;

namespace {
void expectContains(const std::string &text, const std::vector<std::string> &parts) {
  for (const std::string &p : parts)
    EXPECT_NE(text.find(p), std::string::npos) << "missing: " << p << "\nin:\n" << text;
}
/// True if every vector transfer in `text` is declared in bounds (MLIR
/// prints no in_bounds flags for a transfer that may leave its buffer).
bool allTransfersInBounds(const std::string &text) {
  size_t pos = 0;
  while ((pos = text.find("vector.transfer_", pos)) != std::string::npos) {
    size_t end = text.find('\n', pos);
    if (text.substr(pos, end - pos).find("in_bounds = [true") == std::string::npos)
      return false;
    pos = end;
  }
  return true;
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
  // The module is built with OpBuilder and printed by MLIR (its own SSA
  // names): the grid constants are ceildiv(50, 16) = 4 and ceildiv(40, 16) = 3.
  expectContains(*text, {
      "func.func @main(%arg0: tensor<50x35xf32>, %arg1: tensor<35x40xf32>) -> tensor<50x40xf32>",
      "%c4 = arith.constant 4 : index",
      "%c3 = arith.constant 3 : index",
      "turbine.dispatch @gemm[%c4, %c3, %c1] (%arg0, %arg1)",
      "func.func @gemm(%arg0: !llvm.ptr, %arg1: index, %arg2: index, %arg3: index) attributes {turbine.kernel}",
      "%2 = turbine.binding %arg0[2] : memref<50x40xf32>",
      "iter_args(%arg5 = %cst) -> (vector<16x16xf32>)",
      "in_bounds = [true, true]} : memref<50x35xf32>, vector<16x8xf32>",
      // The masked slow path: transfers with no in_bounds flags.
      ", %cst_4 : memref<50x35xf32>, vector<16x8xf32>",
      "vector.contract",
      "scf.yield %27 : vector<16x16xf32>",
      "vector.transfer_write %3, %2",
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
  EXPECT_TRUE(allTransfersInBounds(*text)) << *text;
  EXPECT_EQ(text->find("scf.if"), std::string::npos) << *text;
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
  EXPECT_TRUE(allTransfersInBounds(*text)) << *text;
  EXPECT_EQ(text->find("scf.if"), std::string::npos) << *text;
}

TEST(EmitKernelModule, OpsAreBuiltWithLocationsNamingTheTracedOp) {
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok());
  Result<Specialization> spec =
      specialize(*k, {{{4, 100}, f32}, {{4, 100}, f32}}, {{"BLOCK_N", 128}});
  ASSERT_TRUE(spec.ok()) << spec.message();
  mlir::MLIRContext context;
  Result<mlir::OwningOpRef<mlir::ModuleOp>> module = buildKernelModule(context, *spec);
  ASSERT_TRUE(module.ok()) << module.message();
  ASSERT_TRUE(mlir::succeeded(mlir::verify(**module)));
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  EXPECT_NE(text.find("\"softmax: op #0 'load'\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"softmax: op #1 'reduce_max'\""), std::string::npos) << text;
}
