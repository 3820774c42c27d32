//===- MakeTestArtifacts.cpp - Writes .tmod files for `turbine run` tests -===//
//
// Builds artifacts without the compiler (kernels from tests/unit/
// test_kernels.c) so the CLI's error paths can be tested on their own:
//   add.tmod            add(x: ?xf32, y: ?xf32) -> ?xf32
//   two.tmod            functions "add" and "add_again"
//   truncated.tmod      add.tmod minus its last 16 bytes
//   corrupt.tmod        add.tmod with one body byte flipped
//   strings.tmod        words(x: ?xstring) -> (StringNormalizer(x, UPPER,
//                       stopwords {"monday"}), Cast<f32>(x)): host string ops
//   bad_string_case.tmod  strings.tmod whose string_normalize has a
//                       case_change no reader knows (valid checksum)
// Usage: turbine_make_test_artifacts KERNEL_LIBRARY OUTPUT_DIR
//===----------------------------------------------------------------------===//
#include "TestArtifacts.h"

#include <fstream>
#include <iostream>

using namespace turbine;

namespace {
/// See strings.tmod above; `caseChange` lets a test write a bad one.
artifact::Module makeStringModule(artifact::StringCase caseChange) {
  artifact::Module m;
  artifact::Function f;
  f.name = "words";
  f.inputs = {{"x", DType::string, {-1}, {"n"}}};
  f.outputs = {{"normalized", DType::string, {-1}, {""}}, {"numbers", DType::f32, {-1}, {"n"}}};
  f.numBufferRegisters = 3;
  artifact::Instruction normalize;
  normalize.op = artifact::Opcode::StringNormalize;
  normalize.dst = 1;
  normalize.a = 0;
  normalize.caseChange = caseChange;
  normalize.strings = {"monday"};
  artifact::Instruction parse;
  parse.op = artifact::Opcode::FromString;
  parse.dst = 2;
  parse.a = 0;
  parse.dtype = DType::f32;
  f.code = {normalize, parse, testing::makeReturn({1, 2})};
  m.functions.push_back(f);
  return m;
}

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
            writeBytes(dir + "/corrupt.tmod", corrupt) &&
            writeBytes(dir + "/strings.tmod",
                       artifact::serialize(makeStringModule(artifact::StringCase::Upper))) &&
            writeBytes(dir + "/bad_string_case.tmod",
                       artifact::serialize(makeStringModule(static_cast<artifact::StringCase>(9))));
  if (!ok) {
    std::cerr << "cannot write artifacts to '" << dir << "'\n";
    return 1;
  }
  return 0;
}
