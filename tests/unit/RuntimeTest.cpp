//===- RuntimeTest.cpp - Module loading, devices and the host program ----===//
//
// Runs hand-built artifacts whose kernels come from test_kernels.c (a real
// shared object, path in TURBINE_TEST_KERNELS_PATH) through the runtime:
// loading, reflection, input validation, every host-program opcode, aliasing
// rules for results, and local-sync vs local-task agreement.
//===----------------------------------------------------------------------===//
#include "RuntimeTestSupport.h"
#include "TestArtifacts.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

using namespace turbine;
using namespace turbine::runtime;
using namespace turbine::testing;

namespace {

const std::string &kernelLibrary() {
  static const std::string bytes = readKernelLibrary(TURBINE_TEST_KERNELS_PATH);
  return bytes;
}

std::shared_ptr<Module> load(const artifact::Module &m) {
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(m), "test.tmod");
  EXPECT_TRUE(module.ok()) << module.message();
  return module.ok() ? *module : nullptr;
}

std::string loadError(const artifact::Module &m) {
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(m), "test.tmod");
  EXPECT_FALSE(module.ok());
  return module.message();
}

/// A one-function module: `inputs` -> `outputs` running `code`.
artifact::Module singleFunction(std::vector<artifact::TensorType> inputs,
                                std::vector<artifact::TensorType> outputs,
                                int32_t indexRegisters, int32_t bufferRegisters,
                                std::vector<artifact::Instruction> code) {
  artifact::Module m = makeAddModule(kernelLibrary());
  artifact::Function &f = m.functions[0];
  f.name = "f";
  f.inputs = std::move(inputs);
  f.outputs = std::move(outputs);
  f.numIndexRegisters = indexRegisters;
  f.numBufferRegisters = bufferRegisters;
  f.code = std::move(code);
  return m;
}

artifact::TensorType type(DType dtype, std::vector<int64_t> shape,
                          const std::string &name = "") {
  return artifact::TensorType{name, dtype, shape,
                              std::vector<std::string>(shape.size())};
}

} // namespace

TEST(Runtime, KernelLibraryWasBuilt) {
  ASSERT_FALSE(kernelLibrary().empty()) << TURBINE_TEST_KERNELS_PATH;
}

TEST(Runtime, Reflection) {
  auto module = load(makeAddModule(kernelLibrary()));
  ASSERT_TRUE(module);
  ASSERT_EQ(module->functions().size(), 1u);
  const Function &f = module->functions()[0];
  EXPECT_EQ(f.name(), "add");
  ASSERT_EQ(f.inputs().size(), 2u);
  EXPECT_EQ(f.inputs()[0].name, "x");
  EXPECT_EQ(f.inputs()[0].shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(f.inputs()[0].dimNames[0], "n");
  EXPECT_EQ(f.signatureString(), "(x: ?xf32, y: ?xf32) -> (sum: ?xf32)");
  Result<Function> missing = module->lookupFunction("mul");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(),
            "function 'mul' not found in 'test.tmod' (available: 'add')");
}

TEST(Runtime, AddOnBothDevicesAgrees) {
  auto module = load(makeAddModule(kernelLibrary(), /*workgroups=*/7));
  ASSERT_TRUE(module);
  std::vector<float> a(1000), b(1000);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 5000.0f);
  Tensor x = vector(a), y = vector(b);
  auto sync = device("local-sync");
  auto task = device("local-task", 3);
  EXPECT_EQ(task->workerCount(), 3);
  Result<std::vector<Tensor>> r1 = module->functions()[0].invoke(*sync, {x, y});
  Result<std::vector<Tensor>> r2 = module->functions()[0].invoke(*task, {x, y});
  ASSERT_TRUE(r1.ok()) << r1.message();
  ASSERT_TRUE(r2.ok()) << r2.message();
  ASSERT_EQ(r1->size(), 1u);
  EXPECT_EQ((*r1)[0].typeString(), "1000xf32");
  EXPECT_EQ(values((*r1)[0]), values((*r2)[0]));
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(values((*r1)[0])[i], a[i] + b[i]);
  EXPECT_FALSE((*r1)[0].sharesStorageWith(x));
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*r1)[0].data()) % kTensorAlignment, 0u);
}

TEST(Runtime, EveryWorkgroupRunsExactlyOnce) {
  // count(counts: 30xi32) -> 30xi32: one dispatch over 5x3x2 workgroups.
  auto module = load(singleFunction(
      {type(DType::i32, {30}, "counts")}, {type(DType::i32, {30})}, 3, 1,
      {makeConst(0, 5), makeConst(1, 3), makeConst(2, 2),
       makeDispatch(2, 0, 1, 2, {0}, {}), makeReturn({0})}));
  ASSERT_TRUE(module);
  for (int workers : {1, 2, 4}) {
    auto task = device("local-task", workers);
    for (int repeat = 0; repeat < 200; ++repeat) {
      Result<Tensor> counts = Tensor::zeros(DType::i32, {30});
      Result<std::vector<Tensor>> r = module->functions()[0].invoke(*task, {*counts});
      ASSERT_TRUE(r.ok()) << r.message();
      for (int i = 0; i < 30; ++i)
        ASSERT_EQ((*r)[0].dataAs<int32_t>()[i], 1)
            << "workgroup " << i << ", workers " << workers;
    }
  }
}

TEST(Runtime, NonPositiveWorkgroupCountSkipsDispatch) {
  auto module = load(singleFunction(
      {type(DType::i32, {4})}, {type(DType::i32, {4})}, 2, 1,
      {makeConst(0, 0), makeConst(1, 1), makeDispatch(2, 0, 1, 1, {0}, {}),
       makeConst(0, -3), makeDispatch(2, 1, 0, 1, {0}, {}), makeReturn({0})}));
  ASSERT_TRUE(module);
  Result<Tensor> counts = Tensor::zeros(DType::i32, {4});
  for (const char *name : {"local-sync", "local-task"}) {
    Result<std::vector<Tensor>> r = module->functions()[0].invoke(*device(name), {*counts});
    ASSERT_TRUE(r.ok()) << r.message();
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ((*r)[0].dataAs<int32_t>()[i], 0);
  }
}

TEST(Runtime, InputValidation) {
  auto module = load(singleFunction(
      {type(DType::f32, {4, -1, 256}, "x")}, {type(DType::f32, {4, -1, 256})}, 0, 1,
      {makeReturn({0})}));
  ASSERT_TRUE(module);
  const Function &f = module->functions()[0];
  auto sync = device("local-sync");
  auto errorFor = [&](std::vector<Tensor> inputs) {
    Result<std::vector<Tensor>> r = f.invoke(*sync, inputs);
    EXPECT_FALSE(r.ok());
    return r.message();
  };
  EXPECT_EQ(errorFor({*Tensor::zeros(DType::f32, {4, 3, 255})}),
            "input 0 ('x'): expected 4x?x256xf32 (dim 2 is 256), got 4x3x255xf32");
  EXPECT_EQ(errorFor({*Tensor::zeros(DType::i32, {4, 3, 256})}),
            "input 0 ('x'): expected 4x?x256xf32 (dtype f32), got 4x3x256xi32");
  EXPECT_EQ(errorFor({*Tensor::zeros(DType::f32, {4, 256})}),
            "input 0 ('x'): expected 4x?x256xf32 (rank 3), got 4x256xf32");
  EXPECT_EQ(errorFor({}), "function 'f' expects 1 input, got 0");
  Result<std::vector<Tensor>> ok = f.invoke(*sync, {*Tensor::zeros(DType::f32, {4, 9, 256})});
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ((*ok)[0].typeString(), "4x9x256xf32");
}

TEST(Runtime, SymbolicDimsMustAgree) {
  auto module = load(makeAddModule(kernelLibrary()));
  ASSERT_TRUE(module);
  Result<std::vector<Tensor>> r = module->functions()[0].invoke(
      *device("local-sync"), {vector({1, 2, 3}), vector({1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "input 1 ('y'): dim 0 ('n') is 2 but input 0 ('x') dim 0 is 3");
}

TEST(Runtime, ReturnedInputIsCopied) {
  auto module = load(singleFunction({type(DType::f32, {3})},
                                    {type(DType::f32, {3}), type(DType::f32, {3})}, 0, 1,
                                    {makeReturn({0, 0})}));
  ASSERT_TRUE(module);
  Tensor x = vector({1, 2, 3});
  Result<std::vector<Tensor>> r = module->functions()[0].invoke(*device("local-sync"), {x});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FALSE((*r)[0].sharesStorageWith(x));
  EXPECT_FALSE((*r)[1].sharesStorageWith(x));
  EXPECT_FALSE((*r)[0].sharesStorageWith((*r)[1]));
  EXPECT_EQ(values((*r)[1]), (std::vector<float>{1, 2, 3}));
}

TEST(Runtime, Reshape) {
  artifact::Instruction reshape;
  reshape.op = artifact::Opcode::Reshape;
  reshape.dst = 1;
  reshape.a = 0;
  reshape.operands = {0, 1};
  auto module = load(singleFunction({type(DType::f32, {-1})}, {type(DType::f32, {2, -1})},
                                    2, 2,
                                    {makeConst(0, 2), makeDim(1, 0, 0),
                                     makeBinary(artifact::BinaryKind::DivS, 1, 1, 0),
                                     reshape, makeReturn({1})}));
  ASSERT_TRUE(module);
  auto sync = device("local-sync");
  Result<std::vector<Tensor>> r =
      module->functions()[0].invoke(*sync, {vector({1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ((*r)[0].typeString(), "2x3xf32");
  EXPECT_EQ(values((*r)[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Result<std::vector<Tensor>> bad = module->functions()[0].invoke(*sync, {vector({1, 2, 3})});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "function 'f', instruction 3 (reshape): cannot reshape 3xf32 "
                           "(3 elements) to 2x1xf32 (2 elements)");
}

/// One element of `bytes` (a rank-1 `dtype` tensor of `count` elements) at
/// `index`, read by a Load and returned as the size of a 1-D result (so the
/// value must be >= 0; `negate` flips it first, `offset` is subtracted).
Result<std::vector<Tensor>> loadAsSize(DType dtype, const void *bytes, int64_t count,
                                       int64_t index, bool negate = false, int64_t offset = 0) {
  std::vector<artifact::Instruction> code{makeConst(0, index),
                                          makeLoad(1, 0, dtype, {0})};
  if (negate) {
    code.push_back(makeConst(2, 0));
    code.push_back(makeBinary(artifact::BinaryKind::Sub, 1, 2, 1));
  }
  if (offset) {
    code.push_back(makeConst(2, offset));
    code.push_back(makeBinary(artifact::BinaryKind::Sub, 1, 1, 2));
  }
  code.push_back(makeAlloc(1, DType::f32, {1}));
  code.push_back(makeReturn({1}));
  auto module = load(singleFunction({type(dtype, {count})}, {type(DType::f32, {-1})}, 3, 2,
                                    std::move(code)));
  if (!module)
    return Status::error("module did not load");
  Result<Tensor> t = Tensor::fromBytes(dtype, {count}, bytes, count * dtypeSize(dtype));
  EXPECT_TRUE(t.ok()) << t.message();
  auto sync = device("local-sync");
  return module->functions()[0].invoke(*sync, {*t});
}

int64_t loadedSize(DType dtype, const void *bytes, int64_t count, int64_t index,
                   bool negate = false, int64_t offset = 0) {
  Result<std::vector<Tensor>> r = loadAsSize(dtype, bytes, count, index, negate, offset);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? (*r)[0].shape()[0] : -1;
}

TEST(Runtime, LoadReadsIntegerElements) {
  int64_t i64[3] = {7, (1ll << 40) + 3, -9};
  EXPECT_EQ(loadedSize(DType::i64, i64, 3, 0), 7);
  EXPECT_EQ(loadedSize(DType::i64, i64, 3, 1, false, 1ll << 40), 3) << "all 64 bits";
  uint32_t u32[1] = {0xffffffffu};
  EXPECT_EQ(loadedSize(DType::u32, u32, 1, 0, false, 0xfffffff0ll), 15) << "zero-extended";
  EXPECT_EQ(loadedSize(DType::i64, i64, 3, 2, /*negate=*/true), 9);
  int32_t i32[2] = {-5, 12};
  EXPECT_EQ(loadedSize(DType::i32, i32, 2, 0, /*negate=*/true), 5) << "sign-extended";
  EXPECT_EQ(loadedSize(DType::i32, i32, 2, 1), 12);
  uint8_t u8[2] = {255, 3};
  EXPECT_EQ(loadedSize(DType::u8, u8, 2, 0), 255) << "zero-extended";
  int8_t i8[1] = {-1};
  EXPECT_EQ(loadedSize(DType::i8, i8, 1, 0, /*negate=*/true), 1);
  uint16_t u16[1] = {65535};
  EXPECT_EQ(loadedSize(DType::u16, u16, 1, 0), 65535);
  uint8_t i1[2] = {0, 7};
  EXPECT_EQ(loadedSize(DType::i1, i1, 2, 0), 0);
  EXPECT_EQ(loadedSize(DType::i1, i1, 2, 1), 1) << "any non-zero byte is true";
}

TEST(Runtime, LoadIsBoundsAndTypeChecked) {
  int64_t i64[4] = {1, 2, 3, 4};
  Result<std::vector<Tensor>> r = loadAsSize(DType::i64, i64, 4, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "function 'f', instruction 1 (load): element [4] of a 4xi64 buffer "
                         "is out of bounds (dim 0 has size 4)");
  r = loadAsSize(DType::i64, i64, 4, -1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "function 'f', instruction 1 (load): element [-1] of a 4xi64 buffer "
                         "is out of bounds (dim 0 has size 4)");

  // The buffer's dtype and rank are checked at run time too.
  auto sync = device("local-sync");
  auto errorOf = [&](DType inputType, artifact::Instruction loadInst) {
    auto module = load(singleFunction({type(inputType, {4})}, {}, 3, 1,
                                      {makeConst(0, 0), loadInst, makeReturn({})}));
    EXPECT_TRUE(module);
    Result<Tensor> t = Tensor::zeros(inputType, {4});
    Result<std::vector<Tensor>> out = module->functions()[0].invoke(*sync, {*t});
    EXPECT_FALSE(out.ok());
    return out.message();
  };
  EXPECT_EQ(errorOf(DType::f32, makeLoad(1, 0, DType::i32, {0})),
            "function 'f', instruction 1 (load): cannot load a i32 element from a 4xf32 buffer");
  EXPECT_EQ(errorOf(DType::i16, makeLoad(1, 0, DType::i32, {0})),
            "function 'f', instruction 1 (load): cannot load a i32 element from a 4xi16 buffer");
  EXPECT_EQ(errorOf(DType::i32, makeLoad(1, 0, DType::i32, {0, 0})),
            "function 'f', instruction 1 (load): 2 indices for a rank-1 buffer (4xi32)");
}

TEST(Runtime, LoadReadsACompletedDispatchResult) {
  // f(counts: 64xi32 zeros, x: ?xf32) -> ?xf32: count workgroups (64 of
  // them, every one adds 1 to its own element), then read the last count
  // and allocate a result of that size: 1 only if the dispatch finished
  // before the read, whatever the number of workers.
  auto module = load(singleFunction(
      {type(DType::i32, {64}, "counts")}, {type(DType::f32, {-1})}, 4, 2,
      {makeConst(0, 64), makeConst(1, 1), makeDispatch(2, 0, 1, 1, {0}, {}),
       makeConst(2, 63), makeLoad(3, 0, DType::i32, {2}), makeAlloc(1, DType::f32, {3}),
       makeReturn({1})}));
  ASSERT_TRUE(module);
  for (int workers : {1, 2, 4}) {
    auto task = device("local-task", workers);
    for (int repeat = 0; repeat < 50; ++repeat) {
      Result<Tensor> counts = Tensor::zeros(DType::i32, {64});
      Result<std::vector<Tensor>> r = module->functions()[0].invoke(*task, {*counts});
      ASSERT_TRUE(r.ok()) << r.message();
      ASSERT_EQ((*r)[0].typeString(), "1xf32") << "workers " << workers;
    }
  }
}

TEST(Runtime, ParametersAreReadOnlyViewsAndResultsAreCopies) {
  artifact::Module m = singleFunction(
      {}, {type(DType::f32, {2, 3}), type(DType::f32, {2, 3})}, 0, 1, {});
  std::vector<float> weight{1, 2, 3, 4, 5, 6};
  m.paramData = std::string(64, '\0') +
                std::string(reinterpret_cast<const char *>(weight.data()), 24);
  m.parameters = {artifact::Parameter{"weight", DType::f32, {2, 3}, 64, 24}};
  artifact::Instruction param;
  param.op = artifact::Opcode::Param;
  param.dst = 0;
  param.imm = 0;
  m.functions[0].code = {param, makeReturn({0, 0})};
  auto module = load(m);
  ASSERT_TRUE(module);
  Result<std::vector<Tensor>> r = module->functions()[0].invoke(*device("local-sync"), {});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(values((*r)[0]), weight);
  EXPECT_EQ(values((*r)[1]), weight);
  EXPECT_FALSE((*r)[0].isReadOnly());
  EXPECT_FALSE((*r)[0].sharesStorageWith((*r)[1]));
  // Results outlive the module.
  module.reset();
  EXPECT_EQ(values((*r)[0]), weight);
}

TEST(Runtime, ScaleKernelReadsParameter) {
  artifact::Module m = singleFunction({}, {type(DType::f32, {6})}, 3, 2, {});
  std::vector<float> weight{1, 2, 3, 4, 5, 6};
  m.paramData = std::string(reinterpret_cast<const char *>(weight.data()), 24);
  m.parameters = {artifact::Parameter{"w", DType::f32, {6}, 0, 24}};
  artifact::Instruction param;
  param.op = artifact::Opcode::Param;
  param.dst = 0;
  param.imm = 0;
  m.functions[0].code = {param,
                         makeConst(0, 6),
                         makeConst(1, 3),
                         makeConst(2, 2),
                         makeAlloc(1, DType::f32, {0}),
                         makeDispatch(1, 2, 2, 2, {0, 1}, {0, 1}),
                         makeReturn({1})};
  auto module = load(m);
  ASSERT_TRUE(module);
  for (const char *name : {"local-sync", "local-task"}) {
    Result<std::vector<Tensor>> r = module->functions()[0].invoke(*device(name, 2), {});
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(values((*r)[0]), (std::vector<float>{3, 6, 9, 12, 15, 18})) << name;
  }
}

TEST(Runtime, BinaryKinds) {
  using K = artifact::BinaryKind;
  struct Case {
    K kind;
    int64_t a, b, expected;
  };
  const Case cases[] = {
      {K::Add, 3, 4, 7},        {K::Sub, 10, 4, 6},       {K::Mul, 6, 7, 42},
      {K::DivS, -7, -2, 3},     {K::DivU, 7, 2, 3},       {K::CeilDivS, 7, 2, 4},
      {K::CeilDivS, -7, -2, 4}, {K::FloorDivS, -7, -2, 3}, {K::FloorDivS, 7, 2, 3},
      {K::RemS, 7, 3, 1},       {K::RemU, 7, 4, 3},       {K::MinS, 3, 9, 3},
      {K::MaxS, -3, 9, 9},      {K::MinU, 3, -1, 3},      {K::MaxU, 3, 9, 9},
      {K::And, 6, 3, 2},        {K::Or, 6, 3, 7},         {K::Xor, 6, 3, 5},
      {K::Shl, 3, 2, 12},       {K::ShrS, 12, 2, 3},      {K::ShrU, 12, 3, 1},
      {K::Eq, 3, 3, 1},         {K::Ne, 3, 3, 0},         {K::Slt, -1, 3, 1},
      {K::Sle, 3, 3, 1},        {K::Sgt, 3, -1, 1},       {K::Sge, 2, 3, 0},
      {K::Ult, -1, 3, 0},       {K::Ule, 3, 3, 1},        {K::Ugt, -1, 3, 1},
      {K::Uge, 2, 3, 0},
  };
  auto sync = device("local-sync");
  for (const Case &c : cases) {
    // The result becomes the dim of an allocated buffer, visible in its shape.
    auto module = load(singleFunction(
        {}, {type(DType::u8, {-1})}, 3, 1,
        {makeConst(0, c.a), makeConst(1, c.b), makeBinary(c.kind, 2, 0, 1),
         makeAlloc(0, DType::u8, {2}), makeReturn({0})}));
    ASSERT_TRUE(module);
    Result<std::vector<Tensor>> r = module->functions()[0].invoke(*sync, {});
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ((*r)[0].shape()[0], c.expected)
        << artifact::binaryKindName(c.kind) << "(" << c.a << ", " << c.b << ")";
  }
}

TEST(Runtime, HostProgramErrors) {
  auto sync = device("local-sync");
  auto errorOf = [&](std::vector<artifact::Instruction> code) {
    auto module = load(singleFunction({}, {}, 3, 1, std::move(code)));
    Result<std::vector<Tensor>> r = module->functions()[0].invoke(*sync, {});
    EXPECT_FALSE(r.ok());
    return r.message();
  };
  EXPECT_EQ(errorOf({makeConst(0, 5), makeConst(1, 0),
                     makeBinary(artifact::BinaryKind::DivS, 2, 0, 1), makeReturn({})}),
            "function 'f', instruction 2 (binary): division by zero (5 divs 0)");
  artifact::Instruction check;
  check.op = artifact::Opcode::Assert;
  check.a = 0;
  check.message = "batch must be even";
  EXPECT_EQ(errorOf({makeConst(0, 0), check, makeReturn({})}),
            "function 'f', instruction 1 (assert): assertion failed: batch must be even");
  EXPECT_EQ(errorOf({makeConst(0, -4), makeAlloc(0, DType::f32, {0}), makeReturn({})}),
            "function 'f', instruction 1 (alloc): invalid shape [-4]: dim 0 is negative");
  EXPECT_EQ(errorOf({makeDim(0, 0, 0), makeReturn({})}),
            "function 'f', instruction 0 (dim): buffer register 0 is used before it is set");
  EXPECT_EQ(errorOf({makeConst(0, 1)}), "function 'f': host program ended without a return");
}

TEST(Runtime, LoadErrors) {
  artifact::Module m = makeAddModule(kernelLibrary());
  m.kernels.push_back("no_such_kernel");
  EXPECT_EQ(loadError(m), "kernel 'no_such_kernel' missing from artifact 'test.tmod' library");
  m = makeAddModule("this is not an ELF file");
  EXPECT_NE(loadError(m).find("artifact 'test.tmod': cannot load kernel library"),
            std::string::npos);
  std::string bytes = artifact::serialize(makeAddModule(kernelLibrary()));
  bytes[100] ^= 1;
  Result<std::shared_ptr<Module>> corrupt = Module::loadFromBytes(bytes, "x.tmod");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.message(), "artifact 'x.tmod' is corrupt: checksum mismatch");
  Result<std::shared_ptr<Module>> missing = Module::load("/nonexistent/x.tmod");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("cannot open artifact '/nonexistent/x.tmod'"),
            std::string::npos);
}

TEST(Runtime, KernelsForAnotherCpuAreALoadError) {
  // No x86 CPU has both AMD's XOP and Intel's AMX: whichever this one is,
  // it lacks one of them.
  artifact::Module m = makeAddModule(kernelLibrary());
  m.targetCpu = "imaginary";
  m.cpuFeatures = {"avx", "xop", "amx-tile"};
  std::string error = loadError(m);
  EXPECT_NE(error.find("artifact 'test.tmod' was compiled for CPU 'imaginary' and may use "),
            std::string::npos)
      << error;
  EXPECT_TRUE(error.find("xop") != std::string::npos || error.find("amx-tile") != std::string::npos)
      << error;
  EXPECT_NE(error.find("which this CPU does not have"), std::string::npos) << error;
  EXPECT_EQ(error.find("avx,"), std::string::npos) << "lists an extension every x86-64 CPU here has";
  // A name this runtime does not know (a newer compiler's) is refused too.
  m.cpuFeatures = {"avx1024"};
  EXPECT_EQ(loadError(m), "artifact 'test.tmod' was compiled for CPU 'imaginary' and may use "
                          "avx1024, which this runtime cannot check for: load it with the "
                          "runtime of the compiler that wrote it");
  // What this CPU has loads and runs, as an artifact that records nothing.
  m.cpuFeatures = {"sse4.1"};
  EXPECT_TRUE(load(m));
  m.cpuFeatures.clear();
  m.targetCpu.clear();
  EXPECT_TRUE(load(m));
}

TEST(Runtime, TwoModulesLoadIndependently) {
  auto a = load(makeAddModule(kernelLibrary()));
  auto b = load(makeAddModule(kernelLibrary(), 2));
  ASSERT_TRUE(a && b);
  a.reset();
  auto c = load(makeAddModule(kernelLibrary(), 3));
  Result<std::vector<Tensor>> r =
      b->functions()[0].invoke(*device("local-sync"), {vector({1}), vector({2})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(values((*r)[0]), std::vector<float>{3});
}

TEST(Runtime, DeviceCreation) {
  Result<std::unique_ptr<Device>> bad = Device::create("vulkan");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "unknown device 'vulkan' (valid devices: local-sync, local-task, cuda)");
  DeviceOptions options;
  options.taskWorkers = -2;
  EXPECT_FALSE(Device::create("local-task", options).ok());
  EXPECT_GE(device("local-task")->workerCount(), 1);
  EXPECT_EQ(device("local-sync")->workerCount(), 1);
}

TEST(Runtime, TensorBasics) {
  float external[4] = {1, 2, 3, 4};
  Result<Tensor> wrapped = Tensor::wrap(DType::f32, {2, 2}, external);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(wrapped->data(), external);
  EXPECT_EQ(wrapped->byteSize(), 16u);
  Result<Tensor> view = wrapped->reshape({4});
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->sharesStorageWith(*wrapped));
  EXPECT_FALSE(wrapped->reshape({3}).ok());
  Result<Tensor> copy = wrapped->clone();
  ASSERT_TRUE(copy.ok());
  EXPECT_FALSE(copy->sharesStorageWith(*wrapped));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy->data()) % 64, 0u);
  EXPECT_FALSE(Tensor::allocate(DType::f32, {-1}).ok());
  EXPECT_FALSE(Tensor::allocate(DType::f64, {int64_t(1) << 62, 8}).ok());
  Result<Tensor> empty = Tensor::allocate(DType::f32, {0, 5});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->elementCount(), 0);
}

TEST(Runtime, HostLoopReadsABufferDefinedBeforeIt) {
  // repeat_add(x, m) = x * (m + 1): acc = x, then m iterations of acc += x.
  // Every iteration reads x (defined before the loop), so a buffer released
  // after its last use in program order, ignoring the back edge, fails.
  auto module = load(makeLoopModule(kernelLibrary()));
  ASSERT_TRUE(module);
  for (const char *name : {"local-sync", "local-task"}) {
    auto dev = device(name, 2);
    for (int64_t m : {0, 1, 5}) {
      Result<Tensor> count = Tensor::fromBytes(DType::i64, {}, &m, sizeof(m));
      ASSERT_TRUE(count.ok());
      Result<std::vector<Tensor>> r =
          module->functions()[1].invoke(*dev, {vector({1, -2, 0.5f}), *count});
      ASSERT_TRUE(r.ok()) << r.message();
      float k = float(m + 1);
      EXPECT_EQ(values((*r)[0]), (std::vector<float>{k, -2 * k, 0.5f * k})) << name << " m=" << m;
    }
  }
}

TEST(Runtime, HostLoopWithACorruptTargetIsALoadError) {
  artifact::Module m = makeLoopModule(kernelLibrary());
  m.functions[1].code[14].imm = 2; // end_loop -> a const
  std::string error = loadError(m);
  EXPECT_NE(error.find("metadata.functions[1] ('repeat_add').code[6] (loop): target 14 is not "
                       "the end_loop that closes this loop"),
            std::string::npos)
      << error;
}

TEST(Runtime, DispatchObserverSeesEveryDispatch) {
  // repeat_add(x, m = 3): three dispatches of test_add_f32 in a host loop,
  // each reading (acc, x) and writing a fresh sum.
  auto module = load(makeLoopModule(kernelLibrary()));
  ASSERT_TRUE(module);
  Result<Function> fn = module->lookupFunction("repeat_add");
  ASSERT_TRUE(fn.ok()) << fn.message();
  Tensor x = vector({1, 2, 3});
  Result<Tensor> m = Tensor::allocate(DType::i64, {});
  ASSERT_TRUE(m.ok());
  m->dataAs<int64_t>()[0] = 3;
  std::vector<DispatchEvent> events;
  std::vector<std::vector<float>> outputs;
  auto sync = device("local-sync");
  Result<std::vector<Tensor>> r = fn->invoke(*sync, {x, *m}, [&](DispatchEvent &e) {
    events.push_back(e);
    outputs.push_back(values(e.outputs.at(0)));
    return Status::success();
  });
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(events.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(events[i].index, i);
    EXPECT_EQ(events[i].instruction, 11u);
    EXPECT_EQ(events[i].kernel, "test_add_f32");
    ASSERT_EQ(events[i].inputs.size(), 2u);
    ASSERT_EQ(events[i].outputs.size(), 1u);
    float k = static_cast<float>(i + 2);
    EXPECT_EQ(outputs[i], (std::vector<float>{k, 2 * k, 3 * k})) << "dispatch " << i;
  }
  EXPECT_EQ(values((*r)[0]), (std::vector<float>{4, 8, 12}));
  // Without an observer the same call gives the same result.
  Result<std::vector<Tensor>> plain = fn->invoke(*sync, {x, *m});
  ASSERT_TRUE(plain.ok()) << plain.message();
  EXPECT_EQ(values((*plain)[0]), values((*r)[0]));
}

TEST(Runtime, DispatchObserverMayOverwriteOutputs) {
  // The overwritten sum is what the next dispatch reads: with the first
  // dispatch's output set to 100, repeat_add(x = 1, m = 2) gives 101.
  auto module = load(makeLoopModule(kernelLibrary()));
  ASSERT_TRUE(module);
  Result<Function> fn = module->lookupFunction("repeat_add");
  ASSERT_TRUE(fn.ok()) << fn.message();
  Tensor x = vector({1});
  Result<Tensor> m = Tensor::allocate(DType::i64, {});
  ASSERT_TRUE(m.ok());
  m->dataAs<int64_t>()[0] = 2;
  auto task = device("local-task", 2);
  Result<std::vector<Tensor>> r = fn->invoke(*task, {x, *m}, [](DispatchEvent &e) {
    if (e.index == 0)
      e.outputs[0].dataAs<float>()[0] = 100;
    return Status::success();
  });
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(values((*r)[0]), (std::vector<float>{101}));
}

TEST(Runtime, DispatchObserverErrorsStopTheCall) {
  auto module = load(makeAddModule(kernelLibrary()));
  ASSERT_TRUE(module);
  Tensor x = vector({1, 2}), y = vector({3, 4});
  auto sync = device("local-sync");
  Result<std::vector<Tensor>> r = module->functions()[0].invoke(
      *sync, {x, y}, [](DispatchEvent &) { return Status::error("seen enough"); });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("dispatch observer: seen enough"), std::string::npos)
      << r.message();
  // Replacing an output tensor (instead of writing its elements) is refused.
  r = module->functions()[0].invoke(*sync, {x, y}, [](DispatchEvent &e) {
    e.outputs[0] = vector({0, 0});
    return Status::success();
  });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("replaced output 0 (it may only overwrite its elements)"),
            std::string::npos)
      << r.message();
}

// The cuda device and cuda artifacts on CPU devices: CudaDeviceTest.cpp.
