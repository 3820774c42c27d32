//===- InstanceTest.cpp - Module state: globals kept in Instances ---------===//
//
// Runs the hand-built stateful module of TestArtifacts.h (makeStateModule)
// through the runtime, without the compiler: reflection of globals, the
// refusal of stateful functions without an instance, in-place updates,
// independent instances, reset, uninitialized reads, run-time position
// checks, the store/copy rules, concurrent instances from several threads,
// and the reader's checks of the globals table.
//===----------------------------------------------------------------------===//
#include "RuntimeTestSupport.h"
#include "TestArtifacts.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using namespace turbine;
using namespace turbine::runtime;
using namespace turbine::testing;

namespace {

const std::string &kernelLibrary() {
  static const std::string bytes = readKernelLibrary(TURBINE_TEST_KERNELS_PATH);
  return bytes;
}

std::shared_ptr<Module> loadStateModule() {
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(makeStateModule(kernelLibrary())), "state.tmod");
  EXPECT_TRUE(module.ok()) << module.message();
  return module.ok() ? *module : nullptr;
}

std::unique_ptr<Instance> newInstance(const Module &module) {
  Result<std::unique_ptr<Instance>> instance = module.createInstance();
  EXPECT_TRUE(instance.ok()) << instance.message();
  return instance.ok() ? std::move(*instance) : nullptr;
}

Tensor scalarI64(int64_t v) {
  Result<Tensor> t = Tensor::fromBytes(DType::i64, {}, &v, sizeof(v));
  EXPECT_TRUE(t.ok());
  return *t;
}

std::vector<float> call(Instance &instance, Device &device, const std::string &fn,
                        const std::vector<Tensor> &inputs) {
  Result<std::vector<Tensor>> results = instance.invoke(fn, device, inputs);
  EXPECT_TRUE(results.ok()) << results.message();
  if (!results.ok() || results->empty())
    return {};
  return values((*results)[0]);
}

TEST(Instance, ReflectsGlobals) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  const std::vector<GlobalSignature> &globals = module->globals();
  ASSERT_EQ(globals.size(), 4u);
  EXPECT_EQ(globals[0].name, "acc");
  EXPECT_EQ(globals[0].typeString(), "4xf32");
  EXPECT_TRUE(globals[0].isMutable);
  EXPECT_EQ(globals[0].initialValue, "zero");
  EXPECT_EQ(globals[1].initialValue, "uninitialized");
  EXPECT_EQ(globals[2].initialValue, "parameter");
  EXPECT_FALSE(globals[3].isMutable);
  EXPECT_TRUE(module->lookupFunction("accumulate")->usesState());
  EXPECT_FALSE(module->lookupFunction("add")->usesState());
}

TEST(Instance, StatefulFunctionsNeedAnInstance) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  auto dev = device("local-sync");
  Result<std::vector<Tensor>> r =
      module->lookupFunction("accumulate")->invoke(*dev, {vector({1, 2, 3, 4})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("uses module state (globals 'acc')"), std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find("Instance"), std::string::npos) << r.message();
  // Stateless functions run either way.
  r = module->lookupFunction("add")->invoke(*dev, {vector({1, 2}), vector({3, 4})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(values((*r)[0]), (std::vector<float>{4, 6}));
  auto instance = newInstance(*module);
  EXPECT_EQ(call(*instance, *dev, "add", {vector({1, 2}), vector({3, 4})}),
            (std::vector<float>{4, 6}));
}

TEST(Instance, StateIsPerInstanceAndResets) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  auto dev = device("local-sync");
  auto a = newInstance(*module), b = newInstance(*module);
  EXPECT_EQ(call(*a, *dev, "accumulate", {vector({1, 2, 3, 4})}),
            (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(call(*a, *dev, "accumulate", {vector({1, 2, 3, 4})}),
            (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(call(*b, *dev, "accumulate", {vector({10, 10, 10, 10})}),
            (std::vector<float>{10, 10, 10, 10}));
  // The result is a copy: the next call does not change it.
  Result<std::vector<Tensor>> held = a->invoke("accumulate", *dev, {vector({0, 0, 0, 1})});
  ASSERT_TRUE(held.ok()) << held.message();
  call(*a, *dev, "accumulate", {vector({5, 5, 5, 5})});
  EXPECT_EQ(values((*held)[0]), (std::vector<float>{2, 4, 6, 9}));
  ASSERT_TRUE(a->reset().ok());
  EXPECT_EQ(call(*a, *dev, "accumulate", {vector({1, 1, 1, 1})}),
            (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(call(*b, *dev, "accumulate", {vector({1, 1, 1, 1})}),
            (std::vector<float>{11, 11, 11, 11}));
}

TEST(Instance, UninitializedGlobalIsAnErrorUntilStored) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  auto dev = device("local-sync");
  auto instance = newInstance(*module);
  EXPECT_FALSE(instance->isInitialized("cache"));
  Result<std::vector<Tensor>> r = instance->invoke("read_cache", *dev, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("function 'read_cache'"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("global 'cache' is read before any function stored it"),
            std::string::npos)
      << r.message();
  // A position past the end is refused before anything is written.
  r = instance->invoke("write", *dev, {vector({7, 8}), scalarI64(7)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("assertion failed: write: position out of range"),
            std::string::npos)
      << r.message();
  EXPECT_FALSE(instance->isInitialized("cache"));
  r = instance->invoke("write", *dev, {vector({7, 8}), scalarI64(-1)});
  ASSERT_FALSE(r.ok());
  // The in-place update initializes it (its own load does not need a value).
  r = instance->invoke("write", *dev, {vector({7, 8}), scalarI64(3)});
  ASSERT_TRUE(r.ok()) << r.message();
  r = instance->invoke("write", *dev, {vector({1, 2}), scalarI64(6)});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(call(*instance, *dev, "read_cache", {}),
            (std::vector<float>{0, 0, 0, 7, 8, 0, 1, 2}));
  ASSERT_TRUE(instance->reset().ok());
  EXPECT_FALSE(instance->isInitialized("cache"));
  EXPECT_FALSE(instance->invoke("read_cache", *dev, {}).ok());
}

TEST(Instance, ParameterInitialValueAndStoresOfInputsAreCopies) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  auto dev = device("local-sync");
  auto instance = newInstance(*module);
  EXPECT_EQ(call(*instance, *dev, "add_bias", {vector({1, 1, 1, 1})}),
            (std::vector<float>{2, 3, 4, 5}));
  Tensor x = vector({10, 20, 30, 40});
  ASSERT_TRUE(instance->invoke("set_bias", *dev, {x}).ok());
  x.dataAs<float>()[0] = -1; // the caller's tensor, not the state
  EXPECT_EQ(call(*instance, *dev, "add_bias", {vector({1, 1, 1, 1})}),
            (std::vector<float>{11, 21, 31, 41}));
  Result<Tensor> bias = instance->readGlobal("bias");
  ASSERT_TRUE(bias.ok()) << bias.message();
  EXPECT_EQ(values(*bias), (std::vector<float>{10, 20, 30, 40}));
  ASSERT_TRUE(instance->reset().ok());
  EXPECT_EQ(call(*instance, *dev, "add_bias", {vector({0, 0, 0, 0})}),
            (std::vector<float>{1, 2, 3, 4}));
  // The parameter itself was never written.
  auto other = newInstance(*module);
  EXPECT_EQ(call(*other, *dev, "add_bias", {vector({0, 0, 0, 0})}),
            (std::vector<float>{1, 2, 3, 4}));
}

TEST(Instance, ReadAndWriteGlobals) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  auto dev = device("local-sync");
  auto instance = newInstance(*module);
  ASSERT_TRUE(instance->writeGlobal("acc", vector({1, 1, 1, 1})).ok());
  EXPECT_EQ(call(*instance, *dev, "accumulate", {vector({1, 2, 3, 4})}),
            (std::vector<float>{2, 3, 4, 5}));
  Status s = instance->writeGlobal("acc", vector({1, 2}));
  EXPECT_NE(s.message().find("expected 4xf32, got 2xf32"), std::string::npos) << s.message();
  s = instance->writeGlobal("scale", vector({1, 2, 3, 4}));
  EXPECT_NE(s.message().find("immutable"), std::string::npos) << s.message();
  Result<Tensor> missing = instance->readGlobal("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("mutable globals: 'acc', 'cache', 'bias'"), std::string::npos)
      << missing.message();
  Result<Tensor> cache = instance->readGlobal("cache");
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.message().find("uninitialized"), std::string::npos) << cache.message();
}

/// Four instances driven from four threads at once end where four
/// sequential runs end; each thread uses its own device.
TEST(Instance, ConcurrentInstancesMatchSequentialRuns) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  constexpr int kThreads = 4, kSteps = 200;
  auto run = [&](Instance &instance, Device &dev, int id) {
    std::vector<float> last;
    for (int step = 0; step < kSteps; ++step) {
      float v = float(id + 1) * float(step % 7);
      Result<std::vector<Tensor>> r = instance.invoke(
          "write", dev, {vector({v, -v}), scalarI64(step % 7)});
      if (!r.ok())
        return std::vector<float>{};
      r = instance.invoke("accumulate", dev, {vector({v, 1, float(id), 0.5f})});
      if (!r.ok())
        return std::vector<float>{};
      last = values((*r)[0]);
    }
    Result<std::vector<Tensor>> cache = instance.invoke("read_cache", dev, {});
    if (!cache.ok())
      return std::vector<float>{};
    std::vector<float> c = values((*cache)[0]);
    last.insert(last.end(), c.begin(), c.end());
    return last;
  };
  std::vector<std::vector<float>> sequential(kThreads), concurrent(kThreads);
  for (int id = 0; id < kThreads; ++id) {
    auto instance = newInstance(*module);
    auto dev = device("local-task", 2);
    sequential[id] = run(*instance, *dev, id);
    ASSERT_EQ(sequential[id].size(), 12u);
  }
  std::vector<std::unique_ptr<Instance>> instances;
  std::vector<std::unique_ptr<Device>> devices;
  for (int id = 0; id < kThreads; ++id) {
    instances.push_back(newInstance(*module));
    devices.push_back(device("local-task", 2));
  }
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id)
    threads.emplace_back([&, id] { concurrent[id] = run(*instances[id], *devices[id], id); });
  for (std::thread &t : threads)
    t.join();
  for (int id = 0; id < kThreads; ++id)
    EXPECT_EQ(concurrent[id], sequential[id]) << "instance " << id;
}

/// One instance used from two threads: each call either runs or is refused
/// as busy; the state counts exactly the calls that ran.
TEST(Instance, OneCallAtATimePerInstance) {
  std::shared_ptr<Module> module = loadStateModule();
  ASSERT_TRUE(module);
  auto instance = newInstance(*module);
  std::atomic<int> ran{0}, refused{0}, otherErrors{0};
  auto hammer = [&] {
    auto dev = device("local-sync");
    for (int i = 0; i < 500; ++i) {
      Result<std::vector<Tensor>> r = instance->invoke("accumulate", *dev, {vector({1, 1, 1, 1})});
      if (r.ok())
        ++ran;
      else if (r.message().find("is running another call") != std::string::npos)
        ++refused;
      else
        ++otherErrors;
    }
  };
  std::thread t1(hammer), t2(hammer);
  t1.join();
  t2.join();
  EXPECT_EQ(otherErrors.load(), 0);
  EXPECT_EQ(ran.load() + refused.load(), 1000);
  Result<Tensor> acc = instance->readGlobal("acc");
  ASSERT_TRUE(acc.ok()) << acc.message();
  EXPECT_EQ(values(*acc)[0], float(ran.load()));
}

std::string readError(const artifact::Module &m) {
  Result<artifact::Module> r = artifact::deserialize(artifact::serialize(m));
  EXPECT_FALSE(r.ok());
  return r.message();
}

TEST(Instance, GlobalsTableRoundTripsAndIsValidated) {
  artifact::Module m = makeStateModule(kernelLibrary());
  Result<artifact::Module> back = artifact::deserialize(artifact::serialize(m));
  ASSERT_TRUE(back.ok()) << back.message();
  ASSERT_EQ(back->globals.size(), 4u);
  EXPECT_EQ(back->globals[2].parameter, 0);
  EXPECT_EQ(back->globals[1].init, artifact::GlobalInit::Uninitialized);
  const artifact::Function &write = back->functions[2];
  EXPECT_FALSE(write.code[10].requiresInitialized);

  artifact::Module bad = m;
  bad.globals[2].parameter = 7;
  EXPECT_NE(readError(bad).find("globals[2] ('bias').parameter: value 7 out of range"),
            std::string::npos)
      << readError(bad);
  bad = m;
  bad.globals[2].shape = {5};
  EXPECT_NE(readError(bad).find("does not have the global's type"), std::string::npos);
  bad = m;
  bad.globals[1].name = "acc";
  EXPECT_NE(readError(bad).find("duplicate global name"), std::string::npos);
  bad = m;
  bad.functions[1].code[2].imm = 9; // global_load of a global that does not exist
  EXPECT_NE(readError(bad).find("value 9 out of range [0, 3]"), std::string::npos)
      << readError(bad);
  bad = m;
  bad.functions[1].code[4].imm = 3; // global_store into the immutable `scale`
  EXPECT_NE(readError(bad).find("global_store of immutable global 'scale'"), std::string::npos)
      << readError(bad);
  bad = m;
  bad.globals[0].isMutable = false; // immutable but not a parameter
  EXPECT_NE(readError(bad).find("an immutable global must be a parameter"), std::string::npos);
}

} // namespace
