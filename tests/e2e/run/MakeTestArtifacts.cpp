//===- MakeTestArtifacts.cpp - Writes .tmod files for `turbine run` tests -===//
//
// Builds artifacts without the compiler (kernels from tests/unit/
// test_kernels.c) so the CLI's error paths can be tested on their own:
//   add.tmod            add(x: ?xf32, y: ?xf32) -> ?xf32
//   two.tmod            functions "add" and "add_again"
//   truncated.tmod      add.tmod minus its last 16 bytes
//   corrupt.tmod        add.tmod with one body byte flipped
// Usage: turbine_make_test_artifacts KERNEL_LIBRARY OUTPUT_DIR
//===----------------------------------------------------------------------===//
#include "TestArtifacts.h"

#include <fstream>
#include <iostream>

using namespace turbine;

namespace {
bool writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " KERNEL_LIBRARY OUTPUT_DIR\n";
    return 2;
  }
  std::string library = testing::readKernelLibrary(argv[1]);
  if (library.empty()) {
    std::cerr << "cannot read kernel library '" << argv[1] << "'\n";
    return 1;
  }
  std::string dir = argv[2];
  artifact::Module add = testing::makeAddModule(library, 3);
  artifact::Module two = add;
  two.functions.push_back(add.functions[0]);
  two.functions[1].name = "add_again";

  std::string addBytes = artifact::serialize(add);
  std::string truncated = addBytes.substr(0, addBytes.size() - 16);
  std::string corrupt = addBytes;
  corrupt[corrupt.size() / 2] ^= 0x01;
  bool ok = writeBytes(dir + "/add.tmod", addBytes) &&
            writeBytes(dir + "/two.tmod", artifact::serialize(two)) &&
            writeBytes(dir + "/truncated.tmod", truncated) &&
            writeBytes(dir + "/corrupt.tmod", corrupt);
  if (!ok) {
    std::cerr << "cannot write artifacts to '" << dir << "'\n";
    return 1;
  }
  return 0;
}
