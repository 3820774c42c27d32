//===- TmodTarget.h - shared body of the .tmod and kernel-cache targets ---===//
//
// An artifact's bytes through everything the runtime does with them:
//  1. the checksum (XXH64 at offset 64) is recomputed first, so mutations
//     reach the metadata instead of all stopping at "checksum mismatch";
//  2. artifact::deserialize; what it accepts must serialize and read back
//     the same (functions, kernels, parameters);
//  3. runtime::Module::loadFromBytes, but only when the kernel library is
//     byte-identical to one of the seed corpus's (collected at start-up
//     from the corpus directories on the command line): dlopen runs a
//     library's code, so a mutated one is an arbitrary program, not a
//     malformed input. Other inputs stop after step 2. (The committed
//     corpus counts as seeds too, so a finding replayed alone loads.)
//  4. every function (or only `main`, for the kernel cache) is invoked on
//     small inputs (FuzzSupport.h) on a device that runs no kernel, with a
//     host-step limit, so a host program that loops forever ends with an
//     error instead of hanging the target.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FUZZ_TARGETS_TMODTARGET_H
#define TURBINE_FUZZ_TARGETS_TMODTARGET_H

#include "../FuzzSupport.h"

#include "turbine/artifact/Module.h"

#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

namespace turbine::fuzz {

/// XXH64 of the kernel libraries of the seed artifacts.
inline std::set<uint64_t> &trustedLibraries() {
  static std::set<uint64_t> hashes;
  return hashes;
}

inline uint64_t libraryHash(const std::string &library) {
  return XXH64(library.data(), library.size(), 0);
}

/// Records the libraries of every artifact in the directories among `argv`
/// and in the committed corpus (TURBINE_FUZZ_CORPUS_DIR, set by
/// CMakeLists.txt), so that one input replayed alone loads as it did.
inline void collectTrustedLibraries(int argc, char **argv) {
  std::vector<std::string> dirs;
#ifdef TURBINE_FUZZ_CORPUS_DIR
  dirs.push_back(TURBINE_FUZZ_CORPUS_DIR);
#endif
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-')
      dirs.push_back(argv[i]);
  for (const std::string &dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      continue;
    for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Result<artifact::Module> module = artifact::deserialize(bytes);
      if (module && !module->library.empty())
        trustedLibraries().insert(libraryHash(module->library));
    }
  }
}

/// Runs before the first invocation (the runtime reads the step limit once).
inline void initializeTmodTarget(int *argc, char ***argv) {
  runtime::setMemoryLimit(kFuzzMemoryLimit);
  ::setenv("TURBINE_MAX_HOST_STEPS", "100000", /*overwrite=*/1);
  collectTrustedLibraries(*argc, *argv);
}

inline bool sameTensorTypes(const std::vector<artifact::TensorType> &a,
                            const std::vector<artifact::TensorType> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].dtype != b[i].dtype || a[i].shape != b[i].shape ||
        a[i].dimNames != b[i].dimNames)
      return false;
  return true;
}

/// `onlyFunction`: invoke just that function ("" = all of them).
inline int fuzzArtifact(const uint8_t *data, size_t size, const std::string &onlyFunction) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (bytes.size() >= 72 && std::memcmp(bytes.data(), artifact::kMagic, 8) == 0) {
    uint64_t hash = XXH64(bytes.data() + 72, bytes.size() - 72, 0);
    std::memcpy(&bytes[64], &hash, 8); // little-endian host
  }
  Result<artifact::Module> read = artifact::deserialize(bytes);
  if (!read) {
    check(!read.message().empty(), "an error without a message");
    return 0;
  }
  artifact::Module &module = *read;
  // What the reader accepts, the writer writes back the same.
  Result<artifact::Module> readAgain = artifact::deserialize(artifact::serialize(module));
  check(readAgain.ok(), "a serialized artifact does not read back");
  artifact::Module &again = *readAgain;
  check(again.functions.size() == module.functions.size() &&
            again.kernels == module.kernels && again.parameters.size() == module.parameters.size() &&
            again.library == module.library && again.paramData == module.paramData,
        "the artifact changed in a write/read round trip");
  for (size_t i = 0; i < module.functions.size(); ++i)
    check(again.functions[i].name == module.functions[i].name &&
              again.functions[i].code.size() == module.functions[i].code.size() &&
              sameTensorTypes(again.functions[i].inputs, module.functions[i].inputs) &&
              sameTensorTypes(again.functions[i].outputs, module.functions[i].outputs),
          "a function changed in a write/read round trip");

  if (!module.library.empty() && !trustedLibraries().count(libraryHash(module.library)))
    return 0; // see the file comment, step 3
  auto loaded = runtime::Module::loadFromBytes(bytes, "fuzz.tmod");
  if (!loaded) {
    check(!loaded.message().empty(), "an error without a message");
    return 0;
  }
  NoKernelDevice device;
  for (const runtime::Function &fn : (*loaded)->functions()) {
    if (!onlyFunction.empty() && fn.name() != onlyFunction)
      continue;
    auto inputs = smallInputs(fn, data, size);
    if (!inputs)
      continue;
    auto results = fn.invoke(device, *inputs);
    if (!results) {
      check(!results.message().empty(), "an error without a message");
      continue;
    }
    check(results->size() == fn.outputs().size(), "wrong number of results");
    for (const runtime::Tensor &r : *results)
      touchAll(r);
  }
  return 0;
}

} // namespace turbine::fuzz

#endif // TURBINE_FUZZ_TARGETS_TMODTARGET_H
