//===- ResourceLimitTest.cpp - Huge sizes are errors, not allocations ----===//
//
// Inputs that claim (or compute) more memory than there is, dims whose
// product overflows, and files whose headers promise far more bytes than
// they hold: each must come back as an error Status with a clear message,
// without allocating what was claimed (memoryInUse() stays put) — never a
// std::bad_alloc, an abort or work for the OOM killer. The runtime's memory
// limit (Memory.h) is set low here so that nothing these tests do could
// touch much memory even if a check were missing.
//===----------------------------------------------------------------------===//
#include "RuntimeTestSupport.h"
#include "TestArtifacts.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace turbine;
using namespace turbine::runtime;
using namespace turbine::testing;

namespace {

const std::string &kernelLibrary() {
  static const std::string bytes = readKernelLibrary(TURBINE_TEST_KERNELS_PATH);
  return bytes;
}

/// Every test runs with a 64 MiB limit and checks that it gave back what it took.
class ResourceLimit : public ::testing::Test {
protected:
  void SetUp() override {
    setMemoryLimit(64 << 20);
    inUse_ = memoryInUse();
  }
  void TearDown() override {
    EXPECT_EQ(memoryInUse(), inUse_);
    setMemoryLimit(0);
  }
  static void expectContains(const std::string &text, const std::string &part) {
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
  }
  uint64_t inUse_ = 0;
};

/// A .npy header for `descr` and `shape` followed by `dataBytes` zero bytes.
std::string npyBytes(const std::string &descr, const std::string &shape, size_t dataBytes) {
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64)
    dict += ' ';
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict + std::string(dataBytes, '\0');
}

} // namespace

TEST_F(ResourceLimit, AllocationOverTheLimitIsAnError) {
  Result<Tensor> big = Tensor::allocate(DType::f32, {1 << 20, 32}); // 128 MiB
  ASSERT_FALSE(big.ok());
  expectContains(big.message(), "cannot allocate 128.0 MiB for a 1048576x32xf32 tensor");
  expectContains(big.message(), "memory limit of 64.0 MiB");
  // Strings are counted too (the std::string objects).
  EXPECT_FALSE(Tensor::allocate(DType::string, {int64_t(64) << 20}).ok());
  // What fits still works, and the limit covers the total.
  Result<Tensor> half = Tensor::zeros(DType::f32, {8 << 20}); // 32 MiB
  ASSERT_TRUE(half.ok()) << half.message();
  Result<Tensor> another = Tensor::zeros(DType::f32, {10 << 20}); // 40 MiB more
  ASSERT_FALSE(another.ok());
  expectContains(another.message(), "with the 32.0 MiB of tensors already allocated");
}

TEST_F(ResourceLimit, DimsWhoseProductOverflows) {
  EXPECT_FALSE(Tensor::allocate(DType::f32, {int64_t(1) << 32, int64_t(1) << 32}).ok());
  Result<Tensor> spec = parseTensorSpec("4294967296x4294967296xf32");
  ASSERT_FALSE(spec.ok());
  expectContains(spec.message(), "overflows");
  Result<Tensor> npy = decodeNpy(npyBytes("<f4", "(4294967296, 4294967296)", 0), "o.npy");
  ASSERT_FALSE(npy.ok());
  expectContains(npy.message(), "invalid .npy file 'o.npy'");
}

TEST_F(ResourceLimit, TenGigabyteNpyHeaderInATinyFile) {
  // 10 GB promised, 0 bytes present: refused by the size check, before any
  // allocation (with a limit of 64 MiB the allocation could not even be
  // tried, so the message must be the size mismatch).
  Result<Tensor> t = decodeNpy(npyBytes("<f4", "(50000, 50000)", 16), "big.npy");
  ASSERT_FALSE(t.ok());
  expectContains(t.message(), "invalid .npy file 'big.npy': expected 10000000000 data bytes "
                              "for 50000x50000xf32, file has 16");
}

TEST_F(ResourceLimit, HugeTextValueIsAnError) {
  Result<Tensor> zeros = parseTensorSpec("100000x100000xf32");
  ASSERT_FALSE(zeros.ok());
  expectContains(zeros.message(), "cannot allocate 37.3 GiB for a 100000x100000xf32 tensor");
}

TEST_F(ResourceLimit, RawFileMustHoldExactlyTheTensor) {
  std::string dir = ::testing::TempDir() + "turbine-limit-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string raw = dir + "/x.bin";
  std::ofstream(raw, std::ios::binary) << std::string(16, '\0');
  Result<Tensor> t = parseTensorSpec("50000x50000xf32=@" + raw);
  ASSERT_FALSE(t.ok());
  expectContains(t.message(), "'" + raw + "' has 16 bytes but 50000x50000xf32 needs 10000000000");
  // A device that never ends is read no further than the tensor needs.
  Result<Tensor> endless = parseTensorSpec("4xf32=@/dev/zero");
  ASSERT_TRUE(endless.ok()) << endless.message();
  EXPECT_EQ(endless->byteSize(), 16u);
  Result<Tensor> endlessNpy = parseTensorSpec("@/dev/zero");
  ASSERT_FALSE(endlessNpy.ok());
  expectContains(endlessNpy.message(), "missing \\x93NUMPY magic");
  std::filesystem::remove_all(dir);
}

TEST_F(ResourceLimit, TenGigabyteParameterEntries) {
  // safetensors: the header claims a 10 GB tensor in a tiny file.
  std::string header =
      R"({"w":{"dtype":"F32","shape":[50000,50000],"data_offsets":[0,10000000000]}})";
  std::string file(8, '\0');
  uint64_t n = header.size();
  std::memcpy(&file[0], &n, 8);
  file += header + std::string(64, '\0');
  Result<ParameterIndex> st = ParameterIndex::parse(
      reinterpret_cast<const uint8_t *>(file.data()), file.size(), nullptr, "big.safetensors");
  ASSERT_FALSE(st.ok());
  expectContains(st.message(), "outside the data (64 bytes)");

  // IRPA: a 10 GB splat is valid (a repeated pattern takes no room in the
  // file); reading it as a tensor is what runs into the memory limit.
  std::string dir = ::testing::TempDir() + "turbine-limit-irpa-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  ParameterArchiveWriter writer;
  ASSERT_TRUE(writer.addSplat("zeros", {0, 0, 0, 0}, 10000000000ull, DType::f32, {50000, 50000}));
  ASSERT_TRUE(writer.write(dir + "/s.irpa", ParameterFileFormat::irpa));
  EXPECT_LT(std::filesystem::file_size(dir + "/s.irpa"), 8192u);
  Result<ParameterIndex> irpa = ParameterIndex::open(dir + "/s.irpa");
  ASSERT_TRUE(irpa.ok()) << irpa.message();
  ASSERT_EQ(irpa->entries().size(), 1u);
  Result<Tensor> t = irpa->tensor(irpa->entries()[0]);
  ASSERT_FALSE(t.ok());
  expectContains(t.message(), "cannot allocate 9.3 GiB for a 50000x50000xf32 tensor");
  std::filesystem::remove_all(dir);
}

TEST_F(ResourceLimit, TenGigabyteArtifactSectionInATinyFile) {
  std::string bytes = artifact::serialize(makeAddModule(kernelLibrary()));
  uint64_t huge = 10000000000ull;
  std::memcpy(&bytes[40], &huge, 8); // library size
  Result<std::shared_ptr<Module>> m = Module::loadFromBytes(bytes, "big.tmod");
  ASSERT_FALSE(m.ok());
  expectContains(m.message(), "artifact 'big.tmod' is truncated: expected");
}

TEST_F(ResourceLimit, HostProgramAllocationOverTheLimitIsAnError) {
  // add(x, y) with n = 2^25 elements needs a 128 MiB result.
  auto module = Module::loadFromBytes(artifact::serialize(makeAddModule(kernelLibrary())), "a");
  ASSERT_TRUE(module.ok()) << module.message();
  // Inputs that wrap caller memory are not counted; the result would be.
  std::vector<float> a(size_t(1) << 25, 1.0f);
  Result<Tensor> x = Tensor::wrap(DType::f32, {int64_t(a.size())}, a.data());
  ASSERT_TRUE(x.ok());
  Result<std::vector<Tensor>> r = (*module)->functions()[0].invoke(*device("local-sync"), {*x, *x});
  ASSERT_FALSE(r.ok());
  expectContains(r.message(), "function 'add', instruction 3 (alloc): cannot allocate 128.0 MiB "
                              "for a 33554432xf32 tensor");
}

TEST_F(ResourceLimit, DeeplyNestedHostLoopsAreALoadError) {
  // `depth` loops nested in one another (never entered at run time: only
  // loaded), then a return.
  auto nested = [](int depth) {
    artifact::Module m = makeAddModule(kernelLibrary());
    artifact::Function f;
    f.name = "deep";
    f.numIndexRegisters = 1;
    f.numBufferRegisters = 1;
    for (int i = 0; i < depth; ++i)
      f.code.push_back(makeJump(Opcode::Loop, 2 * depth - 1 - i));
    for (int i = depth - 1; i >= 0; --i)
      f.code.push_back(makeJump(Opcode::EndLoop, i));
    f.code.push_back(makeReturn({}));
    m.functions.push_back(f);
    return Module::loadFromBytes(artifact::serialize(m), "deep.tmod");
  };
  Result<std::shared_ptr<Module>> ok = nested(256);
  ASSERT_TRUE(ok.ok()) << ok.message();
  Result<std::shared_ptr<Module>> deep = nested(257);
  ASSERT_FALSE(deep.ok());
  expectContains(deep.message(), "artifact 'deep.tmod' is corrupt: metadata.functions[1] ('deep')"
                                 ".code[256] (loop): loops nested more than 256 deep");
}

TEST_F(ResourceLimit, LongStringSplatIsCheckedAgainstTheLimit) {
  // 1,000,000 string objects fit the 64 MiB limit (32 MB), but a 100-byte
  // value copied into each would be 101 MB more on the heap (found by the
  // input_spec fuzzer as a 3.6 s input: a million heap copies under ASan).
  std::string value(100, 'a');
  Result<Tensor> big = parseTensorSpec("1000000xstring=\"" + value + "\"");
  ASSERT_FALSE(big.ok());
  expectContains(big.message(), "cannot allocate 96.3 MiB for the characters of a 1000000xstring "
                                "splat of a 100-byte value");
  // Short values live inside the string objects; long ones within the limit
  // are fine.
  Result<Tensor> shortValues = parseTensorSpec("1000000xstring=abc");
  ASSERT_TRUE(shortValues.ok()) << shortValues.message();
  EXPECT_EQ(shortValues->dataAs<std::string>()[999999], "abc");
  Result<Tensor> fits = parseTensorSpec("1000xstring=\"" + value + "\"");
  ASSERT_TRUE(fits.ok()) << fits.message();
  EXPECT_EQ(fits->dataAs<std::string>()[999], value);
}
