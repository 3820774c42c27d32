//===- TraceTest.cpp - Tracing, printing and trace/specialization errors ---===//
#include "turbine/kernels/KernelLibrary.h"
#include "turbine/kernels/Specialization.h"

#include <gtest/gtest.h>

using namespace turbine::kernels;
using turbine::kernels::library::gemmKernel;
using turbine::kernels::library::softmaxKernel;

namespace {

/// Asserts `r` failed with a message containing every piece of `parts`.
template <typename T>
void expectError(const Result<T> &r, std::vector<std::string> parts) {
  ASSERT_FALSE(r.ok()) << "expected an error containing '" << parts[0] << "'";
  for (const std::string &p : parts)
    EXPECT_NE(r.message().find(p), std::string::npos)
        << "message: " << r.message() << "\nmissing: " << p;
}

Symbol M("M"), N("N");

} // namespace

TEST(Trace, PrintsTheSoftmaxGraph) {
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  std::string text = k->print();
  EXPECT_NE(text.find("kernel softmax grid[M]"), std::string::npos) << text;
  EXPECT_NE(text.find("input: input f32[M, N]"), std::string::npos) << text;
  EXPECT_NE(text.find("%0 = load input[pid0, 0] masked(pad=-inf) : f32[1, BLOCK_N]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("reduce_max %0 axis=1 : f32[1, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("store output[pid0, 0], %7 masked"), std::string::npos) << text;
}

TEST(Trace, PrintsForLoopWithCarriedValues) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  std::string text = k->print();
  EXPECT_NE(text.find("for_loop k0 in range(0, ceildiv(K, BLOCK_K), 1) iter_args(%1 = %0)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("load a[pid0 * BLOCK_M, k0 * BLOCK_K] masked(pad=0) : f32[BLOCK_M, BLOCK_K]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("dot %2, %3, %1 : f32[BLOCK_M, BLOCK_N]"), std::string::npos) << text;
  EXPECT_NE(text.find("yield %4"), std::string::npos) << text;
}

TEST(TraceErrors, ShapeMismatchNamesKernelAndOp) {
  auto k = trace("bad_add", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    Tile t = load(x, {0, 0}, {2, 4});
    Tile u = load(x, {0, 0}, {2, 8});
    (void)(t + u);
  });
  expectError(k, {"kernel 'bad_add'", "op #2 'add'", "shape mismatch", "4 vs 8"});
}

TEST(TraceErrors, DTypeClashNamesKernelAndOp) {
  auto k = trace("bad_dtype", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M}, f32);
    Buffer y = b.input("y", {M}, f16);
    (void)(load(x, {0}, {M}) * load(y, {0}, {M}));
  });
  expectError(k, {"kernel 'bad_dtype'", "'mul'", "dtype mismatch: f32 vs f16"});
}

TEST(TraceErrors, StoreDTypeMustMatchBuffer) {
  auto k = trace("bad_store", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M}, f32);
    Buffer y = b.output("y", {M}, f16);
    store(y, {0}, load(x, {0}, {M}));
  });
  expectError(k, {"kernel 'bad_store'", "'store' on buffer 'y'", "dtype mismatch"});
}

TEST(TraceErrors, StoreIntoInputAndLoadFromOutput) {
  auto k1 = trace("k1", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M}, f32);
    store(x, {0}, load(x, {0}, {M}));
  });
  expectError(k1, {"'store' on buffer 'x'", "cannot store into input buffer"});
  auto k2 = trace("k2", {M}, [&](KernelBuilder &b) {
    Buffer y = b.output("y", {M}, f32);
    (void)load(y, {0}, {M});
  });
  expectError(k2, {"'load' on buffer 'y'", "cannot load from output buffer"});
}

TEST(TraceErrors, RankAndShapeMisuse) {
  auto offsets = trace("k", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    (void)load(x, {0}, {1, N});
  });
  expectError(offsets, {"'load'", "1 offsets for rank-2 buffer"});
  auto runtimeShape = trace("k", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    (void)load(x, {0, 0}, {1, program_id(0)});
  });
  expectError(runtimeShape, {"depends on program_id"});
  auto axis = trace("k", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    (void)program_id(1);
    (void)x;
  });
  expectError(axis, {"program_id(1): the grid has 1 axes"});
  auto dotShapes = trace("k", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    Tile a = load(x, {0, 0}, {4, 8});
    (void)dot(a, a, constant(0.0, {4, 8}, f32));
  });
  expectError(dotShapes, {"'dot'", "K of a vs K of b: 8 vs 4"});
  auto selectCond = trace("k", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    Tile a = load(x, {0, 0}, {4, 8});
    (void)select(a, a, a);
  });
  expectError(selectCond, {"'select'", "condition must be an i1 tile"});
}

TEST(TraceErrors, LoopCarriedTypeAndScope) {
  auto changes = trace("loop", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    auto [acc] = for_loop(0, 4, {constant(0.0, {1, 4}, f32)}, [&](Expr k, Tile &acc) {
      acc = load(x, {0, k}, {1, 8});
    });
    (void)acc;
  });
  expectError(changes, {"kernel 'loop'", "'for_loop'", "carried value 0"});
  auto escapes = trace("scope", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    Tile inner;
    auto [acc] = for_loop(0, 4, {constant(0.0, {1, 4}, f32)}, [&](Expr k, Tile &acc) {
      inner = load(x, {0, k}, {1, 4});
      acc = acc + inner;
    });
    (void)(acc + inner);
  });
  expectError(escapes, {"kernel 'scope'", "defined inside a for_loop body"});
}

TEST(SpecializationErrors, UnboundSymbolNamesKernelAndOp) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok());
  Result<Specialization> s = specialize(
      *k, {{{64, 32}, f32}, {{32, 48}, f32}, {{64, 48}, f32}},
      {{"BLOCK_M", 16}, {"BLOCK_N", 16}});
  expectError(s, {"kernel 'gemm'", "unbound symbol 'BLOCK_K'"});
}

TEST(SpecializationErrors, BufferShapesAndDTypes) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok());
  Bindings tiles = {{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 16}};
  // K of a (32) disagrees with K of b (31).
  expectError(specialize(*k, {{{64, 32}, f32}, {{31, 48}, f32}, {{64, 48}, f32}}, tiles),
              {"kernel 'gemm'", "symbol 'K' is 31 from buffer 'b' dim 0 but 32 from buffer 'a' dim 1"});
  expectError(specialize(*k, {{{64, 32}, f16}, {{32, 48}, f32}, {{64, 48}, f32}}, tiles),
              {"buffer 'a' is f16, the kernel declares f32"});
  expectError(specialize(*k, {{{64, 32}, f32}, {{32, 48}, f32}}, tiles),
              {"expected 3 buffers, got 2"});
  expectError(specialize(*k, {{{64}, f32}, {{32, 48}, f32}, {{64, 48}, f32}}, tiles),
              {"buffer 'a' has rank 1"});
}

TEST(SpecializationErrors, DeferredSymbolicShapeMismatch) {
  Symbol A("A"), B("B");
  auto k = trace("deferred", {M}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {M, N}, f32);
    Buffer y = b.output("y", {M, N}, f32);
    Tile t = load(x, {0, 0}, {1, A}) + load(x, {0, 0}, {1, B});
    store(y, {0, 0}, t, masked());
  });
  ASSERT_TRUE(k.ok()) << k.message(); // cannot be decided while tracing
  EXPECT_TRUE(specialize(*k, {{{4, 8}, f32}, {{4, 8}, f32}}, {{"A", 4}, {"B", 4}}).ok());
  expectError(specialize(*k, {{{4, 8}, f32}, {{4, 8}, f32}}, {{"A", 4}, {"B", 2}}),
              {"kernel 'deferred'", "'add'", "shape mismatch", "A = 4 vs B = 2"});
}
