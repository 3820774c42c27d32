//===- FuzzSupport.h - What the fuzz targets share -------------------------===//
//
// Header-only helpers for targets/*.cpp (built with libFuzzer in the fuzz
// build and with ReplayMain.cpp in the normal build):
//  - kFuzzMemoryLimit: the runtime memory limit every target runs under
//    (runtime/Memory.h), well below libFuzzer's -malloc_limit_mb, so a file
//    that asks for a huge tensor must be refused by the parser's own checks;
//  - NoKernelDevice: a device that runs no kernel. The targets exercise the
//    host side of an artifact (reader, loader, host-program interpreter);
//    kernels are native code written by the compiler, trusted like any
//    shared library, and a mutated host program could hand them buffers of
//    any size, so they are not run on fuzzed programs;
//  - smallInputs: inputs matching a function's signature, every dynamic dim
//    2, filled from the fuzz input's bytes;
//  - check(): an invariant of the code under test; a violation aborts (a
//    finding), unlike an error Status, which is the expected answer to bad
//    input.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FUZZ_FUZZSUPPORT_H
#define TURBINE_FUZZ_FUZZSUPPORT_H

#include "turbine/runtime/Runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace turbine::fuzz {

/// Tensor memory the runtime may hold during one fuzz input.
inline constexpr uint64_t kFuzzMemoryLimit = uint64_t(32) << 20;
/// Largest input tensor smallInputs builds.
inline constexpr int64_t kMaxInputElements = 4096;

/// Aborts with `what` when `condition` is false.
inline void check(bool condition, const char *what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
  }
}

/// Runs nothing: see the file comment.
class NoKernelDevice : public runtime::Device {
public:
  const std::string &name() const override { return name_; }
  int workerCount() const override { return 1; }
  void dispatch(turbine_kernel_fn_t, const turbine_dispatch_state_t &state) override {
    // The bindings the host program passes must at least be readable.
    (void)state;
    ++dispatches;
  }
  int64_t dispatches = 0;

private:
  std::string name_ = "fuzz-no-kernels";
};

/// One tensor per input of `fn` (dynamic dims 2), elements taken cyclically
/// from `fill`; nullopt when an input would exceed kMaxInputElements.
inline std::optional<std::vector<runtime::Tensor>>
smallInputs(const runtime::Function &fn, const uint8_t *fill, size_t fillSize) {
  std::vector<runtime::Tensor> inputs;
  size_t cursor = 0;
  auto nextByte = [&]() -> uint8_t {
    if (fillSize == 0)
      return 1;
    return fill[cursor++ % fillSize];
  };
  for (const runtime::TensorSignature &sig : fn.inputs()) {
    std::vector<int64_t> shape;
    int64_t count = 1;
    for (int64_t d : sig.shape) {
      int64_t size = d < 0 ? 2 : d;
      if (size != 0 && count > kMaxInputElements / size)
        return std::nullopt;
      count *= size;
      shape.push_back(size);
    }
    if (count > kMaxInputElements)
      return std::nullopt;
    if (dtypeIsString(sig.dtype)) {
      std::vector<std::string> values;
      for (int64_t i = 0; i < count; ++i)
        values.push_back(std::string(nextByte() % 4, static_cast<char>('a' + nextByte() % 26)));
      auto t = runtime::Tensor::fromStrings(shape, std::move(values));
      if (!t)
        return std::nullopt;
      inputs.push_back(std::move(*t));
      continue;
    }
    auto t = runtime::Tensor::zeros(sig.dtype, shape);
    if (!t)
      return std::nullopt;
    // Small non-negative integers: many host programs read inputs as shapes
    // or indices.
    auto *bytes = static_cast<uint8_t *>(t->data());
    size_t elementSize = dtypeSize(sig.dtype);
    for (int64_t i = 0; i < count; ++i) {
      uint8_t v = nextByte() % 4;
      if (sig.dtype == DType::f32) {
        float f = v;
        std::memcpy(bytes + i * elementSize, &f, sizeof f);
      } else if (sig.dtype == DType::f64) {
        double f = v;
        std::memcpy(bytes + i * elementSize, &f, sizeof f);
      } else if (!dtypeIsFloat(sig.dtype)) {
        bytes[i * elementSize] = v; // little-endian small integer
      }
    }
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

/// Every byte of `t` (a result, a parameter) read once: a view that points
/// outside its storage shows up under the sanitizers. Read in 8-byte words
/// (each checked whole by ASan): a byte at a time, a 32 MiB splat took
/// over 20 s under ASan (a timeout that was the target's, not the parser's).
inline uint64_t touchAll(const runtime::Tensor &t) {
  if (dtypeIsString(t.dtype())) {
    uint64_t sum = 0;
    const std::string *s = t.dataAs<std::string>();
    for (int64_t i = 0; i < t.elementCount(); ++i)
      sum += s[i].size();
    return sum;
  }
  const auto *p = static_cast<const uint8_t *>(t.data());
  const size_t n = t.byteSize();
  uint64_t sum = 0;
  size_t i = 0;
  for (uint64_t word; i + sizeof(word) <= n; i += sizeof(word)) {
    std::memcpy(&word, p + i, sizeof(word));
    sum += word;
  }
  for (; i < n; ++i)
    sum += p[i];
  return sum;
}

} // namespace turbine::fuzz

#endif // TURBINE_FUZZ_FUZZSUPPORT_H
