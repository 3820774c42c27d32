//===- BufferReuseTest.cpp - Buffer pool and release plan of host programs ===//
//
// The runtime drops each buffer register after its last use and recycles the
// storage through the module's BufferPool. These tests check that reuse never
// changes a result: intermediates still read after later allocations, results
// held by the caller across calls, views of dropped registers, dynamic shapes
// that change between calls, concurrent calls on local-task; plus the pool's
// own rules and the plan's last uses on hand-built programs.
//===----------------------------------------------------------------------===//
#include "BufferPool.h"
#include "BufferReleasePlan.h"
#include "RuntimeTestSupport.h"
#include "TestArtifacts.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

using namespace turbine;
using namespace turbine::runtime;
using namespace turbine::testing;
using turbine::runtime::detail::BufferPool;
using turbine::runtime::detail::BufferReleasePlan;
using turbine::runtime::detail::planBufferReleases;

namespace {

const std::string &kernelLibrary() {
  static const std::string bytes = readKernelLibrary(TURBINE_TEST_KERNELS_PATH);
  return bytes;
}

// Kernels of makeAddModule: 0 = add (a, b, out; n), 1 = scale (in, out; n, factor).
Instruction add(int32_t a, int32_t b, int32_t out) {
  return makeDispatch(0, 1, 2, 2, {a, b, out}, {0});
}
Instruction scale(int32_t in, int32_t out, int32_t factorRegister) {
  return makeDispatch(1, 1, 2, 2, {in, out}, {0, factorRegister});
}

/// chain(x: ?xf32, y: ?xf32) -> (w: ?xf32, a: ?xf32, v: 2x?xf32):
///   a = x + y; b = 2a; c = a + b; d = 3c; v = reshape(c); e = b + d; w = 2e
/// `a` is read after `b` is allocated, `b` after `c` and `d`, `v` is a view
/// of `c`, whose register is dropped at the reshape, and `w` is allocated
/// after `b` and `d` are dropped (so it gets one of their blocks): reusing
/// any storage that is still referenced changes w, a or v. Index registers:
/// 0 = n, 1 = workgroups, 2 = 1, 3 = 2, 4 = 3, 5 = n / 2 (n must be even).
artifact::Module chainModule() {
  artifact::Module m = makeAddModule(kernelLibrary());
  artifact::Function &f = m.functions[0];
  f.name = "chain";
  f.inputs = {vectorType("x", -1, "n"), vectorType("y", -1, "n")};
  f.outputs = {vectorType("w", -1, "n"), vectorType("a", -1, "n"),
               artifact::TensorType{"v", DType::f32, {2, -1}, {"", ""}}};
  f.numIndexRegisters = 6;
  f.numBufferRegisters = 9;
  Instruction reshape;
  reshape.op = Opcode::Reshape;
  reshape.dst = 7;
  reshape.a = 4;
  reshape.operands = {3, 5};
  f.code = {makeDim(0, 0, 0),          makeConst(1, 3),
            makeConst(2, 1),           makeConst(3, 2),
            makeConst(4, 3),           makeBinary(BinaryKind::DivS, 5, 0, 3),
            makeAlloc(2, DType::f32, {0}), add(0, 1, 2),        // a
            makeAlloc(3, DType::f32, {0}), scale(2, 3, 3),      // b = 2a
            makeAlloc(4, DType::f32, {0}), add(2, 3, 4),        // c = a + b
            makeAlloc(5, DType::f32, {0}), scale(4, 5, 4),      // d = 3c
            reshape,                                            // v = view of c
            makeAlloc(6, DType::f32, {0}), add(3, 5, 6),        // e = b + d
            makeAlloc(8, DType::f32, {0}), scale(6, 8, 3),      // w = 2e
            makeReturn({8, 2, 7})};
  m.functions[0] = f;
  return m;
}

std::shared_ptr<Module> load(const artifact::Module &m) {
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(m), "test.tmod");
  EXPECT_TRUE(module.ok()) << module.message();
  return module.ok() ? *module : nullptr;
}

struct Inputs {
  std::vector<float> x, y;
};
Inputs inputsOf(int64_t n, float seed) {
  Inputs in;
  for (int64_t i = 0; i < n; ++i) {
    in.x.push_back(seed + float(i % 97));
    in.y.push_back(seed * 0.5f - float(i % 13));
  }
  return in;
}

/// Checks chain's results against the plain C++ computation.
void expectChain(const std::vector<Tensor> &r, const Inputs &in) {
  ASSERT_EQ(r.size(), 3u);
  size_t n = in.x.size();
  std::vector<float> w = values(r[0]), a = values(r[1]), v = values(r[2]);
  ASSERT_EQ(w.size(), n);
  ASSERT_EQ(a.size(), n);
  ASSERT_EQ(v.size(), n);
  EXPECT_EQ(r[2].shape(), (std::vector<int64_t>{2, int64_t(n / 2)}));
  for (size_t i = 0; i < n; ++i) {
    float ai = in.x[i] + in.y[i], bi = ai * 2.0f, ci = ai + bi, di = ci * 3.0f;
    ASSERT_EQ(a[i], ai) << "a[" << i << "]";
    ASSERT_EQ(v[i], ci) << "v[" << i << "]";
    ASSERT_EQ(w[i], (bi + di) * 2.0f) << "w[" << i << "]";
  }
  EXPECT_FALSE(r[0].sharesStorageWith(r[1]));
  EXPECT_FALSE(r[0].sharesStorageWith(r[2]));
  EXPECT_FALSE(r[1].sharesStorageWith(r[2]));
}

} // namespace

TEST(BufferReuse, IntermediatesAreNotReusedWhileLive) {
  auto module = load(chainModule());
  ASSERT_TRUE(module);
  for (const char *name : {"local-sync", "local-task"}) {
    auto d = device(name, 2);
    for (int call = 0; call < 3; ++call) {
      Inputs in = inputsOf(1000, float(call));
      Result<std::vector<Tensor>> r =
          module->functions()[0].invoke(*d, {vector(in.x), vector(in.y)});
      ASSERT_TRUE(r.ok()) << r.message();
      expectChain(*r, in);
    }
  }
}

TEST(BufferReuse, ResultsHeldAcrossCallsAreNotOverwritten) {
  auto module = load(chainModule());
  ASSERT_TRUE(module);
  auto d = device("local-sync");
  std::vector<std::vector<Tensor>> held;
  std::vector<Inputs> inputs;
  for (int call = 0; call < 4; ++call) {
    inputs.push_back(inputsOf(512, float(10 * call)));
    Result<std::vector<Tensor>> r = module->functions()[0].invoke(
        *d, {vector(inputs.back().x), vector(inputs.back().y)});
    ASSERT_TRUE(r.ok()) << r.message();
    held.push_back(*r);
  }
  for (size_t call = 0; call < held.size(); ++call)
    expectChain(held[call], inputs[call]);
  for (size_t i = 0; i < held.size(); ++i)
    for (size_t j = i + 1; j < held.size(); ++j)
      for (size_t k = 0; k < 3; ++k)
        EXPECT_FALSE(held[i][k].sharesStorageWith(held[j][k]));
}

TEST(BufferReuse, DynamicShapesChangingBetweenCalls) {
  auto module = load(chainModule());
  ASSERT_TRUE(module);
  auto d = device("local-task", 2);
  for (int64_t n : {1000, 10, 5000, 2, 1000, 4096}) {
    Inputs in = inputsOf(n, float(n));
    Result<std::vector<Tensor>> r =
        module->functions()[0].invoke(*d, {vector(in.x), vector(in.y)});
    ASSERT_TRUE(r.ok()) << "n = " << n << ": " << r.message();
    expectChain(*r, in);
  }
}

TEST(BufferReuse, ConcurrentCallsOnOneDevice) {
  auto module = load(chainModule());
  ASSERT_TRUE(module);
  auto d = device("local-task", 2);
  const Function &f = module->functions()[0];
  auto caller = [&](float seed, bool *ok) {
    *ok = true;
    for (int call = 0; call < 40 && *ok; ++call) {
      Inputs in = inputsOf(2048 + 2 * (call % 3), seed + float(call));
      Result<std::vector<Tensor>> r = f.invoke(*d, {vector(in.x), vector(in.y)});
      *ok = r.ok();
      if (*ok)
        expectChain(*r, in);
      *ok = *ok && !::testing::Test::HasFailure();
    }
  };
  bool ok1 = false, ok2 = false;
  std::thread t1(caller, 1.0f, &ok1), t2(caller, 1000.0f, &ok2);
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

TEST(BufferPool, ReusesAReturnedBlockOfTheSameSize) {
  auto pool = BufferPool::create();
  const void *first;
  {
    Result<Tensor> t = pool->allocate(DType::f32, {1000});
    ASSERT_TRUE(t.ok()) << t.message();
    first = t->data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kTensorAlignment, 0u);
    EXPECT_EQ(pool->stats().cachedBlocks, 0u);
  }
  EXPECT_EQ(pool->stats().cachedBlocks, 1u);
  EXPECT_EQ(pool->stats().cachedBytes, 4032u); // 4000 rounded up to 64
  Result<Tensor> again = pool->allocate(DType::i32, {10, 100});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(pool->stats().hits, 1u);
  EXPECT_EQ(pool->stats().misses, 1u);
  EXPECT_EQ(pool->stats().cachedBlocks, 0u);
}

TEST(BufferPool, NeverHandsOutABlockThatIsStillReferenced) {
  auto pool = BufferPool::create();
  Result<Tensor> held = pool->allocate(DType::f32, {256});
  ASSERT_TRUE(held.ok());
  Result<Tensor> view = held->reshape({16, 16});
  ASSERT_TRUE(view.ok());
  *held = Tensor(); // the view still references the storage
  Result<Tensor> other = pool->allocate(DType::f32, {256});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->data(), view->data());
  EXPECT_EQ(pool->stats().hits, 0u);
}

TEST(BufferPool, StringTensorsAreNeverPooled) {
  // A string tensor owns std::string objects: handing it a recycled raw block
  // (or returning its array to the pool) would construct strings over bytes.
  auto pool = BufferPool::create();
  { ASSERT_TRUE(pool->allocate(DType::f32, {64}).ok()); }
  ASSERT_EQ(pool->stats().cachedBlocks, 1u);
  {
    Result<Tensor> s = pool->allocate(DType::string, {2, 4});
    ASSERT_TRUE(s.ok()) << s.message();
    std::string *strings = s->dataAs<std::string>();
    strings[7] = "a string longer than the small-string buffer of std::string";
    EXPECT_TRUE(strings[0].empty());
  }
  EXPECT_EQ(pool->stats().cachedBlocks, 1u);
  EXPECT_EQ(pool->stats().hits, 0u);
}

TEST(BufferPool, PrefersTheWarmestBlockAndLimitsWaste) {
  auto pool = BufferPool::create();
  const void *a, *b, *big;
  {
    Tensor ta = *pool->allocate(DType::u8, {4096});
    Tensor tb = *pool->allocate(DType::u8, {4096});
    Tensor tbig = *pool->allocate(DType::u8, {1 << 20});
    a = ta.data();
    b = tb.data();
    big = tbig.data();
    ta = Tensor(); // returned first
    tb = Tensor(); // returned last: reused first
  }
  Result<Tensor> warm = pool->allocate(DType::u8, {4096});
  EXPECT_EQ(warm->data(), b);
  // 64 bytes must not take the 1 MiB block (nor a 4 KiB one: > 1/4 waste).
  Result<Tensor> small = pool->allocate(DType::u8, {64});
  ASSERT_TRUE(small.ok());
  EXPECT_NE(small->data(), big);
  EXPECT_NE(small->data(), a);
  // 4000 bytes may take a 4096-byte block (96 bytes wasted).
  EXPECT_EQ(pool->allocate(DType::u8, {4000})->data(), a);
}

TEST(BufferPool, CacheLimitFreesWhatDoesNotFit) {
  auto pool = BufferPool::create(/*cacheLimit=*/8192);
  {
    Tensor t1 = *pool->allocate(DType::u8, {4096});
    Tensor t2 = *pool->allocate(DType::u8, {4096});
    Tensor t3 = *pool->allocate(DType::u8, {4096});
  }
  EXPECT_EQ(pool->stats().cachedBlocks, 2u);
  EXPECT_EQ(pool->stats().cachedBytes, 8192u);
  pool->trim();
  EXPECT_EQ(pool->stats().cachedBlocks, 0u);
}

TEST(BufferPool, TensorsOutliveThePoolHandle) {
  Tensor t;
  {
    auto pool = BufferPool::create();
    t = *pool->allocate(DType::f32, {8});
  }
  t.dataAs<float>()[7] = 1.5f; // storage (and the pool) still alive
  EXPECT_EQ(t.dataAs<float>()[7], 1.5f);
}

TEST(BufferPool, BadShapesAreErrors) {
  auto pool = BufferPool::create();
  Result<Tensor> negative = pool->allocate(DType::f32, {4, -1});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.message(), "invalid shape [4, -1]: dim 1 is negative");
  Result<Tensor> huge = pool->allocate(DType::f64, {int64_t(1) << 62});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.message(), "tensor is too large (byte size overflows)");
}

TEST(BufferReleasePlan, DropsEachRegisterAfterItsLastUse) {
  artifact::Function f = chainModule().functions[0];
  BufferReleasePlan plan = planBufferReleases(f);
  ASSERT_EQ(plan.begin.size(), f.code.size() + 1);
  auto droppedAfter = [&](size_t pc) {
    return std::vector<int32_t>(plan.registers.begin() + plan.begin[pc],
                                plan.registers.begin() + plan.begin[pc + 1]);
  };
  // Code: 0-5 index math, 6/7 a, 8/9 b, 10/11 c, 12/13 d, 14 reshape,
  // 15/16 e, 17/18 w, 19 return.
  EXPECT_EQ(droppedAfter(7), (std::vector<int32_t>{0, 1})); // inputs x, y
  EXPECT_EQ(droppedAfter(14), (std::vector<int32_t>{4}));   // c (v keeps it)
  EXPECT_EQ(droppedAfter(16), (std::vector<int32_t>{3, 5})); // b, d
  EXPECT_EQ(droppedAfter(18), (std::vector<int32_t>{6}));    // e
  // a (2), v (7) and w (8) are returned: never dropped.
  for (int32_t r : plan.registers)
    EXPECT_TRUE(r != 2 && r != 7 && r != 8) << r;
}

TEST(BufferReleasePlan, RegistersLiveAroundALoopAreDroppedWhenItExits) {
  // 0 alloc a; 1 loop; 2 break_unless; 3 b = reshape(a); 4 end_loop; 5 return.
  // a is read in every iteration: dropping it after its last use in program
  // order (3) would free it before the second iteration. b lives within one
  // iteration only.
  artifact::Function f;
  f.name = "loop";
  f.numIndexRegisters = 1;
  f.numBufferRegisters = 2;
  auto inst = [](Opcode op, int32_t dst, int32_t a, int64_t imm) {
    Instruction i;
    i.op = op;
    i.dst = dst;
    i.a = a;
    i.imm = imm;
    return i;
  };
  f.code = {inst(Opcode::Alloc, 0, -1, 0),      inst(Opcode::Loop, -1, -1, 4),
            inst(Opcode::BreakUnless, -1, 0, 4), inst(Opcode::Reshape, 1, 0, 0),
            inst(Opcode::EndLoop, -1, -1, 1),    inst(Opcode::Return, -1, -1, 0)};
  BufferReleasePlan plan = planBufferReleases(f);
  ASSERT_EQ(plan.begin.size(), f.code.size() + 1);
  auto droppedAfter = [&](size_t pc) {
    return std::vector<int32_t>(plan.registers.begin() + plan.begin[pc],
                                plan.registers.begin() + plan.begin[pc + 1]);
  };
  EXPECT_EQ(droppedAfter(3), (std::vector<int32_t>{1}));
  EXPECT_EQ(droppedAfter(4), (std::vector<int32_t>{0}));
  EXPECT_EQ(plan.registers.size(), 2u);
}

TEST(BufferReleasePlan, UnknownOpcodeKeepsEveryBufferToTheEnd) {
  artifact::Function f = chainModule().functions[0];
  Instruction unknown;
  unknown.op = static_cast<Opcode>(250);
  f.code.insert(f.code.begin() + 6, unknown);
  EXPECT_TRUE(planBufferReleases(f).empty());
}
