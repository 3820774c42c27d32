//===- input_spec_fuzzer.cpp - the CLI's --input= value syntax ------------===//
//
// Parses the bytes as an IREE-style value ("2x2xf32=1 2 3 4", "@x.npy",
// '3xstring="a" b', "2xf32=@x.bin"), then prints the tensor. File
// references are confined to a scratch directory the target creates
// (x.npy, x.bin): a value naming any other path (absolute, "..") is skipped,
// since what matters is how the parser treats the file, not which files the
// fuzzer can name. A parsed tensor printed in full (at most 64 elements,
// and at most 64 empty sub-tensors) must parse back to the same type.
//===----------------------------------------------------------------------===//
#include "../FuzzSupport.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace turbine;
using namespace turbine::runtime;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setMemoryLimit(fuzz::kFuzzMemoryLimit);
  // A scratch directory with one .npy and one raw file to refer to.
  std::string dir = std::filesystem::temp_directory_path().string() + "/turbine-fuzz-input-" +
                    std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  if (::chdir(dir.c_str()) != 0)
    std::abort();
  auto t = Tensor::zeros(DType::f32, {2, 3});
  if (!t || !writeNpyFile(*t, "x.npy"))
    std::abort();
  std::ofstream("x.bin", std::ios::binary) << std::string(24, '\1');
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  // Only relative names of the scratch directory (see the file comment).
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at + 1))
    if (text.find('/', at) != std::string::npos)
      return 0;
  Result<Tensor> tensor = parseTensorSpec(text);
  if (!tensor) {
    fuzz::check(!tensor.message().empty(), "an error without a message");
    return 0;
  }
  std::string printed = formatTensor(*tensor, 64);
  fuzz::check(printed.find('=') != std::string::npos, "printed tensor has no '='");
  // Elided output ends in "..." and closing brackets (a string element ends
  // in its quote). An empty tensor may be elided too: its empty sub-tensors
  // ("[]") count against the limit, and 1x7000000x0 has 7 million of them.
  size_t end = printed.find_last_not_of(']');
  bool elided = end != std::string::npos && end >= 2 && printed.compare(end - 2, 3, "...") == 0;
  if (tensor->elementCount() > 0 && tensor->elementCount() <= 64)
    fuzz::check(!elided, "a tensor of at most 64 elements printed elided");
  if (!elided) {
    Result<Tensor> again = parseTensorSpec(printed);
    fuzz::check(again.ok(), "a printed tensor does not parse");
    fuzz::check(again->dtype() == tensor->dtype() && again->shape() == tensor->shape(),
                "printing and parsing changed the tensor type");
  }
  return 0;
}
