//===- StatefulModuleTest.cpp - ml_program state compiled and run vs C++ --===//
//
// A module in the contract's input form (upstream ml_program): an immutable
// parameter with a value (@scale), an external parameter bound by name from
// a parameter file (@offset, "layers.offset"), a zero-initialized mutable KV
// cache (@cache, 1x2x8x4) and an uninitialized mutable global (@last), and
// three entry points:
//
//   prefill(k[1,2,T,4])        cache[:, :, 0:T] = k * scale + offset
//                              returns sum over positions of the cache
//   decode(k[1,2,1,4], pos)    cache[:, :, pos] = k * scale + offset
//                              last = sum over positions of the cache; returns it
//   read_last()                returns @last (an error before any decode)
//
// Checks: the dispatch phase writes the cache in place (the update kernel's
// output binding is the global's load, marked update_only, and the artifact's
// dispatch binds the GlobalLoad register: no cache-sized allocation); the
// results and the cache after every call equal a plain C++ reference
// (inputs are small multiples of 1/4, so f32 sums are exact: equality);
// four instances driven from four threads end where four sequential runs
// end; bad input gets clear errors: a position past the context (the
// host-side bounds assert, leaving the cache unchanged), a prefill longer
// than the context, read_last() before decode (uninitialized global, naming it
// and the function), a decode without an instance, a wrong token dtype or
// shape, and a load without the parameter file holding "layers.offset".
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Instance.h"
#include "turbine/runtime/ParameterArchive.h"
#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace turbine;
using namespace turbine::testing;
using runtime::DType;
using runtime::Tensor;

constexpr int64_t kHeads = 2, kContext = 8, kDim = 4;

/// k * scale + offset for keys `k` of type `type` (T positions: `dims`).
std::string project(const std::string &result, const std::string &k, const std::string &type,
                    const std::string &dims) {
  return R"(
  %scale_)" + result + R"( = ml_program.global_load_const @scale : tensor<4xf32>
  %offset_)" + result + R"( = ml_program.global_load_const @offset : tensor<4xf32>
  %e_)" + result + " = tensor.empty(" + dims + ") : " + type + R"(
  %)" + result + R"( = linalg.generic {indexing_maps = [affine_map<(a, b, s, d) -> (a, b, s, d)>, affine_map<(a, b, s, d) -> (d)>,
                                        affine_map<(a, b, s, d) -> (d)>, affine_map<(a, b, s, d) -> (a, b, s, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins()" + k + ", %scale_" + result + ", %offset_" + result + " : " + type +
         R"(, tensor<4xf32>, tensor<4xf32>) outs(%e_)" + result + " : " + type + R"() {
  ^bb0(%x: f32, %s: f32, %o: f32, %out: f32):
    %m = arith.mulf %x, %s : f32
    %a = arith.addf %m, %o : f32
    linalg.yield %a : f32
  } -> )" + type + "\n";
}

/// %sum = the cache summed over positions (a reduction reading the global).
const char *kSumCache = R"(
  %cache = ml_program.global_load @cache : tensor<1x2x8x4xf32>
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(a, b, d, s) -> (a, b, s, d)>, affine_map<(a, b, d, s) -> (a, b, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%cache : tensor<1x2x8x4xf32>) outs(%f : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4xf32>
)";

const std::string kSource = std::string(R"mlir(
ml_program.global private @scale(dense<[1.0, 2.0, -1.0, 0.5]> : tensor<4xf32>) : tensor<4xf32>
ml_program.global private @offset(#ml_program.extern<tensor<4xf32>>) : tensor<4xf32> {turbine.param_name = "layers.offset"}
ml_program.global private mutable @cache(dense<0.0> : tensor<1x2x8x4xf32>) : tensor<1x2x8x4xf32>
ml_program.global private mutable @last(#ml_program.extern<tensor<1x2x4xf32>>) : tensor<1x2x4xf32>

func.func @prefill(%k: tensor<1x2x?x4xf32>) -> tensor<1x2x4xf32> {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %k, %c2 : tensor<1x2x?x4xf32>
)mlir") + project("p", "%k", "tensor<1x2x?x4xf32>", "%t") + R"mlir(
  %c = ml_program.global_load @cache : tensor<1x2x8x4xf32>
  %u = tensor.insert_slice %p into %c[0, 0, 0, 0] [1, 2, %t, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x8x4xf32>
  ml_program.global_store @cache = %u : tensor<1x2x8x4xf32>
)mlir" + kSumCache + R"mlir(
  return %sum : tensor<1x2x4xf32>
}

func.func @decode(%k: tensor<1x2x1x4xf32>, %position: tensor<i64>) -> tensor<1x2x4xf32> {
  %p64 = tensor.extract %position[] : tensor<i64>
  %pos = arith.index_cast %p64 : i64 to index
)mlir" + project("p", "%k", "tensor<1x2x1x4xf32>", "") + R"mlir(
  %c = ml_program.global_load @cache : tensor<1x2x8x4xf32>
  %u = tensor.insert_slice %p into %c[0, 0, %pos, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x8x4xf32>
  ml_program.global_store @cache = %u : tensor<1x2x8x4xf32>
)mlir" + kSumCache + R"mlir(
  ml_program.global_store @last = %sum : tensor<1x2x4xf32>
  return %sum : tensor<1x2x4xf32>
}

func.func @read_last() -> tensor<1x2x4xf32> {
  %l = ml_program.global_load @last : tensor<1x2x4xf32>
  return %l : tensor<1x2x4xf32>
}
)mlir";

const float kScale[kDim] = {1.0f, 2.0f, -1.0f, 0.5f};
const float kOffset[kDim] = {0.25f, -0.5f, 1.0f, 0.0f};

/// Token keys of sequence `seq` at position `pos`: small multiples of 1/4.
float keyValue(int seq, int64_t pos, int64_t head, int64_t d) {
  return static_cast<float>(((seq * 7 + pos * 5 + head * 3 + d) % 11) - 5) / 4.0f;
}

Tensor keys(int seq, int64_t first, int64_t count) {
  return filledTensor({1, kHeads, count, kDim}, [&](int64_t i) {
    int64_t d = i % kDim, s = (i / kDim) % count, h = i / (kDim * count);
    return keyValue(seq, first + s, h, d);
  });
}

Tensor position(int64_t pos) {
  Tensor t = Tensor::allocate(DType::i64, {}).value();
  t.dataAs<int64_t>()[0] = pos;
  return t;
}

/// The reference: the cache as the functions leave it.
struct Reference {
  std::vector<float> cache = std::vector<float>(kHeads * kContext * kDim, 0.0f);
  void write(int seq, int64_t first, int64_t count) {
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t s = first; s < first + count; ++s)
        for (int64_t d = 0; d < kDim; ++d)
          cache[(h * kContext + s) * kDim + d] = keyValue(seq, s, h, d) * kScale[d] + kOffset[d];
  }
  std::vector<float> sum() const {
    std::vector<float> out(kHeads * kDim, 0.0f);
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t s = 0; s < kContext; ++s)
        for (int64_t d = 0; d < kDim; ++d)
          out[h * kDim + d] += cache[(h * kContext + s) * kDim + d];
    return out;
  }
};

std::vector<float> values(const Tensor &t) {
  return std::vector<float>(t.dataAs<float>(), t.dataAs<float>() + t.elementCount());
}

class StatefulModuleTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(compileSource(kSource, compiler::Phase::Dispatch, dispatchIR, nullptr, error))
        << error;
    std::string ir;
    ASSERT_TRUE(compileSource(kSource, std::nullopt, ir, &artifact, error)) << error;
    char dir[] = "/tmp/turbine-stateful-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    paramPath = std::string(dir) + "/offset.irpa";
    runtime::ParameterArchiveWriter writer;
    Tensor offset = filledTensor({kDim}, [](int64_t i) { return kOffset[i]; });
    ASSERT_TRUE(writer.addTensor("layers.offset", offset).ok());
    ASSERT_TRUE(writer.write(paramPath, runtime::ParameterFileFormat::irpa).ok());
    auto index = runtime::ParameterIndex::open(paramPath);
    ASSERT_TRUE(index.ok()) << index.message();
    auto loaded = runtime::Module::loadFromBytes(artifact::serialize(artifact), "stateful",
                                                 {index.value()});
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    module = loaded.value();
    auto created = runtime::Device::create("local-sync", {});
    ASSERT_TRUE(created.ok()) << created.message();
    device = std::move(created.value());
  }
  void TearDown() override {
    if (!paramPath.empty()) {
      std::remove(paramPath.c_str());
      rmdir(paramPath.substr(0, paramPath.rfind('/')).c_str());
    }
  }

  /// prefill(3 positions) then decode at 3..7 on `instance`, checking each
  /// result against the reference; returns the results in order.
  std::vector<std::vector<float>> runSequence(runtime::Instance &instance,
                                              runtime::Device &dev, int seq) {
    std::vector<std::vector<float>> results;
    Reference ref;
    auto out = instance.invoke("prefill", dev, {keys(seq, 0, 3)});
    EXPECT_TRUE(out.ok()) << out.message();
    if (!out.ok())
      return results;
    ref.write(seq, 0, 3);
    EXPECT_EQ(values((*out)[0]), ref.sum());
    results.push_back(values((*out)[0]));
    for (int64_t pos = 3; pos < kContext; ++pos) {
      out = instance.invoke("decode", dev, {keys(seq, pos, 1), position(pos)});
      EXPECT_TRUE(out.ok()) << out.message();
      if (!out.ok())
        return results;
      ref.write(seq, pos, 1);
      EXPECT_EQ(values((*out)[0]), ref.sum()) << "sequence " << seq << " position " << pos;
      results.push_back(values((*out)[0]));
    }
    auto cache = instance.readGlobal("cache");
    EXPECT_TRUE(cache.ok()) << cache.message();
    if (cache.ok())
      EXPECT_EQ(values(*cache), ref.cache);
    return results;
  }

  std::string dispatchIR, paramPath;
  artifact::Module artifact;
  std::shared_ptr<runtime::Module> module;
  std::unique_ptr<runtime::Device> device;
};

TEST_F(StatefulModuleTest, CacheUpdateIsOneKernelWritingTheGlobalInPlace) {
  // Dispatch IR: the update's destination is the load itself.
  EXPECT_NE(dispatchIR.find("ml_program.global_load @cache : tensor<1x2x8x4xf32> {turbine.update_only}"),
            std::string::npos)
      << dispatchIR;
  EXPECT_NE(dispatchIR.find("in_place("), std::string::npos) << dispatchIR;
  // Artifact: in decode, the update kernel's output binding is the register
  // the cache's GlobalLoad wrote (no allocation for it), then GlobalStore of
  // that same register.
  // @scale (immutable, with a value) became a constant: a parameter named
  // "scale", packed like any weight, not a global.
  ASSERT_EQ(artifact.globals.size(), 3u);
  EXPECT_TRUE(std::any_of(artifact.parameters.begin(), artifact.parameters.end(),
                          [](const artifact::Parameter &p) { return p.name == "scale"; }));
  int64_t cacheIndex = -1;
  for (size_t i = 0; i < artifact.globals.size(); ++i)
    if (artifact.globals[i].name == "cache")
      cacheIndex = static_cast<int64_t>(i);
  ASSERT_GE(cacheIndex, 0);
  EXPECT_EQ(artifact.globals[cacheIndex].init, artifact::GlobalInit::Zero);
  const artifact::Function *decode = nullptr;
  for (const artifact::Function &f : artifact.functions)
    if (f.name == "decode")
      decode = &f;
  ASSERT_NE(decode, nullptr);
  int32_t loadReg = -1;
  bool boundInPlace = false, storedSame = false, asserted = false;
  for (const artifact::Instruction &inst : decode->code) {
    if (inst.op == artifact::Opcode::Assert && loadReg < 0)
      asserted = true;
    if (inst.op == artifact::Opcode::GlobalLoad && inst.imm == cacheIndex &&
        !inst.requiresInitialized)
      loadReg = inst.dst;
    if (inst.op == artifact::Opcode::Alloc && inst.dst == loadReg)
      ADD_FAILURE() << "the cache register is allocated";
    if (inst.op == artifact::Opcode::Dispatch && loadReg >= 0 && !inst.bindings.empty() &&
        inst.bindings.back() == loadReg)
      boundInPlace = true;
    if (inst.op == artifact::Opcode::GlobalStore && inst.imm == cacheIndex)
      storedSame = inst.a == loadReg;
  }
  EXPECT_GE(loadReg, 0);
  EXPECT_TRUE(boundInPlace);
  EXPECT_TRUE(storedSame);
  (void)asserted;
}

TEST_F(StatefulModuleTest, ReflectionListsGlobals) {
  const auto &globals = module->globals();
  ASSERT_EQ(globals.size(), 3u); // @scale is a constant (see above)
  std::map<std::string, std::pair<bool, std::string>> byName;
  for (const auto &g : globals)
    byName[g.name] = {g.isMutable, g.initialValue};
  EXPECT_EQ(byName["cache"], std::make_pair(true, std::string("zero")));
  EXPECT_EQ(byName["last"], std::make_pair(true, std::string("uninitialized")));
  EXPECT_EQ(byName["offset"], std::make_pair(false, std::string("parameter")));
}

TEST_F(StatefulModuleTest, PrefillThenDecodeMatchesReference) {
  auto instance = module->createInstance();
  ASSERT_TRUE(instance.ok()) << instance.message();
  runSequence(**instance, *device, 1);
  // reset(): the cache is zero again, @last uninitialized again.
  ASSERT_TRUE((*instance)->reset().ok());
  auto cache = (*instance)->readGlobal("cache");
  ASSERT_TRUE(cache.ok()) << cache.message();
  EXPECT_EQ(values(*cache), Reference().cache);
  EXPECT_FALSE((*instance)->isInitialized("last"));
}

TEST_F(StatefulModuleTest, FourInstancesFromFourThreadsMatchSequentialRuns) {
  std::vector<std::vector<std::vector<float>>> sequential(4), concurrent(4);
  for (int seq = 0; seq < 4; ++seq) {
    auto instance = module->createInstance();
    ASSERT_TRUE(instance.ok()) << instance.message();
    sequential[seq] = runSequence(**instance, *device, seq);
  }
  std::vector<std::unique_ptr<runtime::Instance>> instances;
  std::vector<std::unique_ptr<runtime::Device>> devices;
  for (int seq = 0; seq < 4; ++seq) {
    auto instance = module->createInstance();
    ASSERT_TRUE(instance.ok()) << instance.message();
    instances.push_back(std::move(instance.value()));
    runtime::DeviceOptions options;
    options.taskWorkers = 2;
    auto dev = runtime::Device::create(seq % 2 ? "local-task" : "local-sync", options);
    ASSERT_TRUE(dev.ok()) << dev.message();
    devices.push_back(std::move(dev.value()));
  }
  std::vector<std::thread> threads;
  for (int seq = 0; seq < 4; ++seq)
    threads.emplace_back(
        [&, seq] { concurrent[seq] = runSequence(*instances[seq], *devices[seq], seq); });
  for (std::thread &t : threads)
    t.join();
  for (int seq = 0; seq < 4; ++seq) {
    EXPECT_EQ(sequential[seq].size(), 6u);
    EXPECT_EQ(concurrent[seq], sequential[seq]) << "sequence " << seq;
  }
}

TEST_F(StatefulModuleTest, PositionPastTheContextIsAnErrorAndChangesNothing) {
  auto instance = module->createInstance();
  ASSERT_TRUE(instance.ok()) << instance.message();
  runSequence(**instance, *device, 2);
  auto before = (*instance)->readGlobal("cache");
  ASSERT_TRUE(before.ok());
  for (int64_t pos : {kContext, int64_t(-1), int64_t(1) << 40}) {
    auto out = (*instance)->invoke("decode", *device, {keys(2, 0, 1), position(pos)});
    ASSERT_FALSE(out.ok()) << "position " << pos;
    EXPECT_NE(out.message().find("slice update of global 'cache' out of bounds"),
              std::string::npos)
        << out.message();
  }
  auto after = (*instance)->readGlobal("cache");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(values(*after), values(*before));
  // A prefill longer than the context.
  auto out = (*instance)->invoke("prefill", *device, {keys(2, 0, kContext + 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("out of bounds"), std::string::npos) << out.message();
}

TEST_F(StatefulModuleTest, ReadingUninitializedStateNamesGlobalAndFunction) {
  auto instance = module->createInstance();
  ASSERT_TRUE(instance.ok()) << instance.message();
  auto out = (*instance)->invoke("read_last", *device, {});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("'last'"), std::string::npos) << out.message();
  EXPECT_NE(out.message().find("before any function stored it"), std::string::npos)
      << out.message();
  // After a decode it reads what decode returned.
  auto decoded = (*instance)->invoke("decode", *device, {keys(0, 0, 1), position(0)});
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  out = (*instance)->invoke("read_last", *device, {});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(values((*out)[0]), values((*decoded)[0]));
}

TEST_F(StatefulModuleTest, BadCallsAreClearErrors) {
  // Without an instance.
  auto decode = module->lookupFunction("decode");
  ASSERT_TRUE(decode.ok());
  auto out = decode->invoke(*device, {keys(0, 0, 1), position(0)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("Instance"), std::string::npos) << out.message();
  auto instance = module->createInstance();
  ASSERT_TRUE(instance.ok());
  // Wrong token dtype, wrong shape, wrong position dtype.
  Tensor intKeys = Tensor::allocate(DType::i32, {1, kHeads, 1, kDim}).value();
  out = (*instance)->invoke("decode", *device, {intKeys, position(0)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("i32"), std::string::npos) << out.message();
  out = (*instance)->invoke("decode", *device, {keys(0, 0, 2), position(0)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("1x2x2x4"), std::string::npos) << out.message();
  Tensor floatPos = Tensor::allocate(DType::f32, {}).value();
  out = (*instance)->invoke("decode", *device, {keys(0, 0, 1), floatPos});
  ASSERT_FALSE(out.ok());
  // A parameter file missing the external parameter.
  auto loaded = runtime::Module::loadFromBytes(artifact::serialize(artifact), "stateful");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.message().find("external parameter 'layers.offset'"), std::string::npos)
      << loaded.message();
}

} // namespace
