//===- npy_fuzzer.cpp - .npy bytes -> decodeNpy (--input=@x.npy) ----------===//
//
// Decodes the bytes as a .npy file. A decoded tensor must survive
// encodeNpy -> decodeNpy unchanged (dtype, shape and bytes).
//===----------------------------------------------------------------------===//
#include "../FuzzSupport.h"

using namespace turbine;
using namespace turbine::runtime;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setMemoryLimit(fuzz::kFuzzMemoryLimit);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  Result<Tensor> tensor = decodeNpy(bytes, "fuzz.npy");
  if (!tensor) {
    fuzz::check(!tensor.message().empty(), "an error without a message");
    return 0;
  }
  Result<std::string> encoded = encodeNpy(*tensor);
  fuzz::check(encoded.ok(), "a decoded .npy tensor cannot be encoded");
  Result<Tensor> again = decodeNpy(*encoded, "round-trip.npy");
  fuzz::check(again.ok(), "an encoded tensor does not decode");
  fuzz::check(again->dtype() == tensor->dtype() && again->shape() == tensor->shape(),
              "round trip changed the tensor type");
  fuzz::check(again->byteSize() == tensor->byteSize() &&
                  std::memcmp(again->data(), tensor->data(), tensor->byteSize()) == 0,
              "round trip changed the tensor bytes");
  return 0;
}
