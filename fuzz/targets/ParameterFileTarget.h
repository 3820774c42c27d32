//===- ParameterFileTarget.h - shared body of the parameter-file targets --===//
//
// irpa_fuzzer.cpp, safetensors_fuzzer.cpp and gguf_fuzzer.cpp differ only in
// their corpus and dictionary: all hand the bytes to ParameterIndex::parse
// (which detects the format from the content, as `turbine run
// --parameters=` does) from a 64-byte aligned copy of exactly the input's
// size (so zero-copy views are taken and an overread is caught), then read
// every entry: its tensor when it records a type, a block-quantized GGUF
// tensor's blocks (decoded when Q8_0 / Q4_0), else its bytes as u8.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FUZZ_TARGETS_PARAMETERFILETARGET_H
#define TURBINE_FUZZ_TARGETS_PARAMETERFILETARGET_H

#include "../FuzzSupport.h"
#include "turbine/runtime/Ggml.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace turbine::fuzz {

inline int fuzzParameterFile(const uint8_t *data, size_t size) {
  using namespace turbine::runtime;
  void *copy = nullptr;
  if (::posix_memalign(&copy, 64, size ? size : 1) != 0)
    return 0;
  if (size)
    std::memcpy(copy, data, size);
  std::shared_ptr<const void> keepAlive(copy, [](const void *p) { std::free(const_cast<void *>(p)); });
  Result<ParameterIndex> index =
      ParameterIndex::parse(static_cast<const uint8_t *>(copy), size, keepAlive, "fuzz.params");
  if (!index) {
    check(!index.message().empty(), "an error without a message");
    return 0;
  }
  for (const ParameterEntry &entry : index->entries()) {
    check(entry.kind != ParameterEntry::Kind::data ||
              (entry.bytes >= static_cast<const uint8_t *>(copy) &&
               entry.fileOffset <= size && entry.length <= size - entry.fileOffset),
          "a data entry points outside the file");
    check(index->find(entry.name) != nullptr, "an entry cannot be found by its name");
    if (entry.isBlockQuantized()) {
      Result<GgmlBlocksView> blocks = index->ggmlBlocks(entry);
      if (!blocks) {
        check(!blocks.message().empty(), "an error without a message");
        continue;
      }
      check(blocks->blocks >= static_cast<const uint8_t *>(copy) &&
                blocks->blockCount * blocks->blockBytes <= size,
            "a tensor's blocks point outside the file");
      std::vector<float> decoded(blocks->blockCount * blocks->blockElements);
      Status s = decodeGgmlBlocks(blocks->ggmlType, blocks->blocks, blocks->blockCount,
                                  decoded.data());
      check(s.ok() || !s.message().empty(), "an error without a message");
      continue;
    }
    Result<Tensor> tensor =
        entry.hasTensorType()
            ? index->tensor(entry)
            : index->tensor(entry, DType::u8, {static_cast<int64_t>(entry.length)});
    if (!tensor) {
      check(!tensor.message().empty(), "an error without a message");
      continue;
    }
    check(tensor->byteSize() == entry.length, "an entry's tensor has the wrong size");
    touchAll(*tensor);
  }
  return 0;
}

} // namespace turbine::fuzz

#endif // TURBINE_FUZZ_TARGETS_PARAMETERFILETARGET_H
