//===- gguf_fuzzer.cpp - GGUF parameter files -> open -> read every entry -===//
//
// See ParameterFileTarget.h; this target's corpus and dictionary are GGUF's.
//===----------------------------------------------------------------------===//
#include "ParameterFileTarget.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  turbine::runtime::setMemoryLimit(turbine::fuzz::kFuzzMemoryLimit);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return turbine::fuzz::fuzzParameterFile(data, size);
}
