//===- KernelCacheTest.cpp - The kernel disk cache's files, no compiler ---===//
//
// kernels/KernelCache.h on its own: directory rules, a written entry read
// back and run, and what is not an entry (missing, a directory, garbage, a
// truncated file) reported as such. The fuzz target kernel_cache_fuzzer.cpp
// drives the same reader with mutated entries.
//===----------------------------------------------------------------------===//
#include "turbine/artifact/Module.h"
#include "turbine/kernels/KernelCache.h"
#include "turbine/runtime/Device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace turbine;

namespace {

/// An entry whose `main` returns its f32 input (no kernels).
std::string identityEntry() {
  artifact::Module m;
  artifact::Function f;
  f.name = "main";
  f.inputs = {artifact::TensorType{"x", DType::f32, {3}, {""}}};
  f.outputs = {artifact::TensorType{"y", DType::f32, {3}, {""}}};
  f.numBufferRegisters = 1;
  artifact::Instruction ret;
  ret.op = artifact::Opcode::Return;
  ret.operands = {0};
  f.code = {ret};
  m.functions.push_back(f);
  return artifact::serialize(m);
}

class KernelCacheFiles : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "turbine-kernel-cache-files-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

} // namespace

TEST_F(KernelCacheFiles, DirectoryRules) {
  setenv("TURBINE_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(kernels::kernelCacheDirectory(), "/some/where");
  setenv("TURBINE_CACHE_DIR", "", 1);
  EXPECT_EQ(kernels::kernelCacheDirectory(), ""); // set but empty: off
  unsetenv("TURBINE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(kernels::kernelCacheDirectory(), "/xdg/turbine");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(kernels::kernelCacheEntryPath("", "key"), "");
}

TEST_F(KernelCacheFiles, WrittenEntryReadsBackAndRuns) {
  std::string path = kernels::kernelCacheEntryPath(dir_, "some key");
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path.substr(path.size() - 5), ".tmod");
  auto missing = kernels::readKernelCacheEntry(path);
  ASSERT_TRUE(missing.ok()) << missing.message();
  EXPECT_FALSE(missing->has_value());
  ASSERT_TRUE(kernels::writeKernelCacheEntry(path, identityEntry()).ok());
  auto entry = kernels::readKernelCacheEntry(path);
  ASSERT_TRUE(entry.ok()) << entry.message();
  ASSERT_TRUE(entry->has_value());
  float values[3] = {1, 2, 3};
  auto x = runtime::Tensor::wrap(DType::f32, {3}, values);
  auto device = runtime::Device::create("local-sync");
  auto y = (*entry)->function.invoke(**device, {*x});
  ASSERT_TRUE(y.ok()) << y.message();
  EXPECT_EQ((*y)[0].dataAs<float>()[2], 3.0f);
  // Only the entry is left: no temporary file.
  size_t files = 0;
  for (const auto &f : std::filesystem::directory_iterator(dir_ + "/kernels")) {
    EXPECT_EQ(f.path().extension(), ".tmod");
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST_F(KernelCacheFiles, WhatIsNotAnEntryIsAnError) {
  std::string path = kernels::kernelCacheEntryPath(dir_, "k");
  ASSERT_FALSE(path.empty());
  std::filesystem::create_directory(path); // a directory where the file goes
  auto directory = kernels::readKernelCacheEntry(path);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.message().find("is not a regular file"), std::string::npos)
      << directory.message();
  std::filesystem::remove(path);
  std::ofstream(path) << "not an artifact";
  auto garbage = kernels::readKernelCacheEntry(path);
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.message().find("artifact '" + path + "'"), std::string::npos)
      << garbage.message();
  std::string bytes = identityEntry();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  auto truncated = kernels::readKernelCacheEntry(path);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.message().find("truncated"), std::string::npos) << truncated.message();
}
