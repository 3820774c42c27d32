//===- ReplayMain.cpp - Run a fuzz target's inputs without libFuzzer ------===//
//
// The normal build links each fuzz target (targets/*.cpp) with this file
// instead of libFuzzer: `fuzz_replay_<target> FILE|DIR...` feeds every file
// (directories: every regular file in them, sorted) once to
// LLVMFuzzerTestOneInput, the way `<target>_fuzzer FILE...` would. ctest runs
// it on the committed corpus (seeds and every input that once crashed), so
// each finding stays a regression test of `make test`, built by the normal
// compiler and without sanitizers (the sanitizer builds run it too).
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

int main(int argc, char **argv) {
  // Paths are resolved first: a target's initialization may change the
  // working directory (input_spec_fuzzer.cpp does).
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-')
      continue; // libFuzzer flags (-runs=1, ...) are accepted and ignored
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> inDir;
      for (const auto &entry : std::filesystem::directory_iterator(arg, ec))
        if (entry.is_regular_file())
          inDir.push_back(std::filesystem::absolute(entry.path(), ec).string());
      std::sort(inDir.begin(), inDir.end());
      files.insert(files.end(), inDir.begin(), inDir.end());
    } else {
      files.push_back(std::filesystem::absolute(arg, ec).string());
    }
  }
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  for (const std::string &path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read '%s'\n", path.c_str());
      return 1;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", path.c_str(), bytes.size());
    // An exact-size heap copy, as libFuzzer passes it (an overread past the
    // end is then caught by the sanitizer builds).
    std::vector<uint8_t> exact(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
  }
  std::fprintf(stderr, "replayed %zu inputs without a crash\n", files.size());
  return 0;
}
