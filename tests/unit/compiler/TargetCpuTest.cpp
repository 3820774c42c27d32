//===- TargetCpuTest.cpp - The artifact records the CPU it was compiled for
//
// A CPU artifact names the LLVM CPU its kernels were compiled for and the
// extensions of artifact/CpuFeatures.h that CPU has (the kernels may use
// any of them); the runtime refuses to load it on a CPU without one, with a
// clear error instead of SIGILL in the first kernel. Checked here: what a
// compile for a named CPU and for the host records, and that a kernel
// library compiled for a CPU this machine is not is refused at load (run
// only where this machine lacks AVX-512, or else AMX).
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "llvm/TargetParser/Host.h"

#include <algorithm>

namespace {

using namespace turbine::testing;

const char *kSource = R"(
func.func @main(%a: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
)";

turbine::artifact::Module compiledFor(const std::string &cpu) {
  turbine::compiler::CompileOptions options;
  options.targetCpu = cpu;
  turbine::artifact::Module artifact;
  std::string ir, error;
  EXPECT_TRUE(compileSource(kSource, std::nullopt, ir, &artifact, error, options)) << error;
  return artifact;
}

bool lists(const turbine::artifact::Module &m, const std::string &feature) {
  return std::find(m.cpuFeatures.begin(), m.cpuFeatures.end(), feature) != m.cpuFeatures.end();
}

TEST(TargetCpu, NamedCpusRecordTheirExtensions) {
  turbine::artifact::Module v3 = compiledFor("x86-64-v3");
  EXPECT_EQ(v3.targetCpu, "x86-64-v3");
  EXPECT_TRUE(lists(v3, "avx2") && lists(v3, "fma") && lists(v3, "f16c"));
  EXPECT_FALSE(lists(v3, "avx512f"));
  turbine::artifact::Module skx = compiledFor("skylake-avx512");
  EXPECT_TRUE(lists(skx, "avx512f") && lists(skx, "avx512bw") && lists(skx, "avx512vl"));
  EXPECT_FALSE(lists(skx, "avx512bf16"));
  EXPECT_TRUE(lists(compiledFor("znver4"), "avx512bf16"));
  turbine::artifact::Module base = compiledFor("x86-64");
  EXPECT_TRUE(base.cpuFeatures.empty()) << base.cpuFeatures.front();
}

TEST(TargetCpu, HostIsRecordedByName) {
  turbine::artifact::Module host = compiledFor("host");
  EXPECT_EQ(host.targetCpu, llvm::sys::getHostCPUName().str());
  __builtin_cpu_init();
  EXPECT_EQ(lists(host, "avx2"), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(lists(host, "avx512f"), __builtin_cpu_supports("avx512f") != 0);
  // And it loads and runs here.
  EXPECT_TRUE(turbine::runtime::Module::loadFromBytes(turbine::artifact::serialize(host), "h")
                  .ok());
}

TEST(TargetCpu, AnotherCpusKernelsAreRefusedAtLoad) {
  __builtin_cpu_init();
  std::string cpu = !__builtin_cpu_supports("avx512f")    ? "skylake-avx512"
                    : !__builtin_cpu_supports("amx-tile") ? "sapphirerapids"
                                                          : "";
  if (cpu.empty())
    GTEST_SKIP() << "this CPU has AVX-512 and AMX: no CPU LLVM knows has more";
  turbine::Result<std::shared_ptr<turbine::runtime::Module>> loaded =
      turbine::runtime::Module::loadFromBytes(turbine::artifact::serialize(compiledFor(cpu)),
                                              "other.tmod");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.message().find("artifact 'other.tmod' was compiled for CPU '" + cpu +
                                  "' and may use "),
            std::string::npos)
      << loaded.message();
  EXPECT_NE(loaded.message().find("which this CPU does not have"), std::string::npos);
}

} // namespace
