//===- CudaTargetTest.cpp - The cuda target's options and emission --------===//
//
// What can be checked without a GPU: --cuda-arch parsing, and a module with
// a row reduction and an elementwise consumer (two kernels) compiled for
// cuda — the artifact names its target, holds one PTX image with an .entry
// per kernel and one ELF cubin per requested architecture (ptxas accepted
// them), and the launch parameters of each kernel. The emission part is
// skipped, with the reason, where the CUDA toolkit is absent. RunsOnTheGpu
// runs the artifact on the runtime's cuda device against the CPU result; it
// is skipped, with the reason, where there is no toolkit, driver or GPU (so
// it has never run on the machines this was written on).
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/compiler/Options.h"

#include <cmath>

using namespace turbine;
using namespace turbine::compiler;

namespace {

TEST(CudaTarget, ParsesArchitectureLists) {
  Result<std::vector<std::string>> archs = parseCudaArchs("sm_90,sm_80,sm_120");
  ASSERT_TRUE(archs.ok()) << archs.message();
  EXPECT_EQ(*archs, (std::vector<std::string>{"sm_80", "sm_90", "sm_120"}));
  EXPECT_FALSE(parseCudaArchs("sm_70").ok());
  EXPECT_FALSE(parseCudaArchs("sm_8a").ok());
  EXPECT_FALSE(parseCudaArchs("").ok());
  EXPECT_FALSE(parseCudaArchs("sm_80,,sm_90").ok());
  EXPECT_NE(parseCudaArchs("sm_80,sm_80").message().find("given twice"), std::string::npos);

  CompileOptions options;
  ASSERT_TRUE(setCompileOption(options, "cuda_arch", "sm_90").ok());
  EXPECT_EQ(options.cudaArchs, (std::vector<std::string>{"sm_90"}));
  Status bad = setCompileOption(options, "cuda-arch", "sm_60");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("bad CUDA architecture 'sm_60'"), std::string::npos)
      << bad.message();
}

constexpr const char *kRowNormalize = R"mlir(
func.func @main(%x: tensor<?x100xf32>) -> tensor<?x100xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x100xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x100xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %e = math.exp %a : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%n) : tensor<?x100xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<?x100xf32>, tensor<?xf32>) outs(%e2 : tensor<?x100xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %e = math.exp %a : f32
    %d = arith.divf %e, %s : f32
    linalg.yield %d : f32
  } -> tensor<?x100xf32>
  return %y : tensor<?x100xf32>
}
)mlir";

TEST(CudaTarget, CodegenNeedsNoToolkit) {
  CompileOptions options;
  options.target = "cuda";
  std::string ir, error;
  ASSERT_TRUE(turbine::testing::compileSource(kRowNormalize, Phase::Codegen, ir, nullptr, error,
                                              options))
      << error;
  EXPECT_NE(ir.find("gpu.module @turbine_cuda_kernels"), std::string::npos) << ir;
  EXPECT_NE(ir.find("nvvm.kernel"), std::string::npos) << ir;
  EXPECT_NE(ir.find("llvm.call @__nv_expf"), std::string::npos) << ir;
}

TEST(CudaTarget, EmitsPtxAndACubinPerArchitecture) {
  CompileOptions options;
  options.target = "cuda";
  options.cudaArchs = {"sm_80", "sm_90"};
  std::string ir, error;
  artifact::Module artifact;
  if (!turbine::testing::compileSource(kRowNormalize, std::nullopt, ir, &artifact, error,
                                       options)) {
    if (error.find("CUDA toolkit") != std::string::npos)
      GTEST_SKIP() << "no CUDA toolkit here: " << error;
    FAIL() << error;
  }
  EXPECT_EQ(artifact.target, "cuda");
  ASSERT_EQ(artifact.kernels.size(), 2u);
  ASSERT_EQ(artifact.kernelLaunch.size(), 2u);
  ASSERT_EQ(artifact.images.size(), 3u);
  const artifact::CodeImage &ptx = artifact.images[0];
  EXPECT_EQ(ptx.format, "ptx");
  EXPECT_EQ(ptx.arch, "sm_80");
  ASSERT_LE(ptx.offset + ptx.size, artifact.library.size());
  std::string text = artifact.library.substr(ptx.offset, ptx.size);
  EXPECT_EQ(text.back(), '\0'); // as cuModuleLoadData wants PTX
  EXPECT_NE(text.find(".target sm_80"), std::string::npos);
  for (const std::string &kernel : artifact.kernels)
    EXPECT_NE(text.find(".visible .entry " + kernel + "("), std::string::npos) << kernel;
  const char *archs[] = {"sm_80", "sm_90"};
  for (int i = 0; i < 2; ++i) {
    const artifact::CodeImage &cubin = artifact.images[1 + i];
    EXPECT_EQ(cubin.format, "cubin");
    EXPECT_EQ(cubin.arch, archs[i]);
    EXPECT_EQ(cubin.offset % 64, 0u);
    ASSERT_LE(cubin.offset + cubin.size, artifact.library.size());
    EXPECT_EQ(artifact.library.substr(cubin.offset, 4), "\x7f" "ELF");
  }
  // The reduction reads x and writes the sums; the consumer reads x and the
  // sums and writes y. Each reads the batch size as a push constant.
  for (size_t k = 0; k < artifact.kernels.size(); ++k) {
    bool reduction = artifact.kernels[k].rfind("reduce", 0) == 0;
    EXPECT_EQ(artifact.kernelLaunch[k].bindings, reduction ? 2 : 3) << artifact.kernels[k];
    EXPECT_GE(artifact.kernelLaunch[k].constants, 1) << artifact.kernels[k];
  }
  // The artifact round-trips through the format with its images.
  Result<artifact::Module> back = artifact::deserialize(artifact::serialize(artifact));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->images.size(), 3u);
}

// The same function compiled for cpu and for cuda (cubin for the GPU's
// architecture and PTX) gives the same values on local-sync and on the GPU:
// exp and division in f32, compared with a relative tolerance of 1e-5
// (libdevice's expf and the CPU's differ by a few ulp). Batch sizes 1, 3 and
// 700 (several blocks per grid), twice per size on one device so module and
// parameter caching and the device-memory cache are used.
TEST(CudaTarget, RunsOnTheGpu) {
  auto gpu = runtime::Device::create("cuda");
  if (!gpu.ok())
    GTEST_SKIP() << gpu.message();
  CompileOptions cudaOptions;
  cudaOptions.target = "cuda";
  std::string ir, error;
  artifact::Module cudaArtifact, cpuArtifact;
  if (!turbine::testing::compileSource(kRowNormalize, std::nullopt, ir, &cudaArtifact, error,
                                       cudaOptions)) {
    if (error.find("CUDA toolkit") != std::string::npos)
      GTEST_SKIP() << "no CUDA toolkit here: " << error;
    FAIL() << error;
  }
  ASSERT_TRUE(turbine::testing::compileSource(kRowNormalize, std::nullopt, ir, &cpuArtifact,
                                              error))
      << error;
  auto cudaModule = runtime::Module::loadFromBytes(artifact::serialize(cudaArtifact), "cuda");
  ASSERT_TRUE(cudaModule.ok()) << cudaModule.message();
  auto cpuModule = runtime::Module::loadFromBytes(artifact::serialize(cpuArtifact), "cpu");
  ASSERT_TRUE(cpuModule.ok()) << cpuModule.message();
  auto cpu = runtime::Device::create("local-sync");
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  for (int64_t n : {1, 3, 700, 700}) {
    runtime::Tensor x = turbine::testing::filledTensor(
        {n, 100}, [](int64_t i) { return std::sin(0.37f * static_cast<float>(i)); });
    auto expected = (*cpuModule)->lookupFunction("main")->invoke(**cpu, {x});
    ASSERT_TRUE(expected.ok()) << expected.message();
    auto actual = (*cudaModule)->lookupFunction("main")->invoke(**gpu, {x});
    ASSERT_TRUE(actual.ok()) << actual.message();
    ASSERT_EQ((*actual)[0].shape(), (*expected)[0].shape());
    const float *a = (*actual)[0].dataAs<float>(), *e = (*expected)[0].dataAs<float>();
    int bad = 0;
    for (int64_t i = 0; i < n * 100 && bad < 5; ++i)
      if (!(std::fabs(a[i] - e[i]) <= 1e-5f * std::fabs(e[i]) + 1e-7f)) {
        ADD_FAILURE() << "n=" << n << " element " << i << ": gpu " << a[i] << ", cpu " << e[i];
        ++bad;
      }
  }
  // The CPU device refuses the cuda artifact, and the GPU the cpu one.
  runtime::Tensor x = turbine::testing::filledTensor({2, 100}, [](int64_t) { return 0.f; });
  auto wrongGpu = (*cpuModule)->lookupFunction("main")->invoke(**gpu, {x});
  ASSERT_FALSE(wrongGpu.ok());
  EXPECT_NE(wrongGpu.message().find("compiled for target 'cpu', which device 'cuda' does not "
                                    "run"),
            std::string::npos)
      << wrongGpu.message();
}

} // namespace
