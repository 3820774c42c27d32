//===- tmod_fuzzer.cpp - .tmod bytes -> read -> load -> invoke ------------===//
//
// See TmodTarget.h. Seeds: artifacts compiled from the test models and the
// lit tests' small programs (fuzz/make_seeds.sh).
//===----------------------------------------------------------------------===//
#include "TmodTarget.h"

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  turbine::fuzz::initializeTmodTarget(argc, argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return turbine::fuzz::fuzzArtifact(data, size, "");
}
