//===- ParameterFormats.h - The parameter file codecs ---------------------===//
//
// Private to the runtime: parse a mapped parameter file into entries, or
// write entries (whose `bytes` point at live data) to a file. IrpaFormat.cpp,
// SafetensorsFormat.cpp and GgufFormat.cpp (read only) implement them;
// ParameterArchive.cpp ties them to the public API.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_PARAMETERFORMATS_H
#define TURBINE_RUNTIME_SRC_PARAMETERFORMATS_H

#include "FileIO.h"
#include "turbine/runtime/ParameterArchive.h"

#include <vector>

namespace turbine::runtime {

/// True when `size` bytes at `base` start with the IRPA magic.
bool hasIrpaMagic(const uint8_t *base, uint64_t size);

Result<std::vector<ParameterEntry>> parseIrpa(const uint8_t *base, uint64_t size,
                                              const std::string &origin);
Status writeIrpa(AtomicFileWriter &out, const std::vector<ParameterEntry> &entries);

Result<std::vector<ParameterEntry>> parseSafetensors(const uint8_t *base, uint64_t size,
                                                     const std::string &origin);
Status writeSafetensors(AtomicFileWriter &out, const std::vector<ParameterEntry> &entries);

/// True when `size` bytes at `base` start with "GGUF".
bool hasGgufMagic(const uint8_t *base, uint64_t size);

/// A parsed GGUF file: entries in file order (their `bytes` inside the
/// mapping), metadata key/values (views into the mapping).
struct GgufContents {
  uint32_t version = 0;
  std::vector<ParameterEntry> entries;
  std::vector<std::pair<std::string, GgufValue>> metadata;
};
Result<GgufContents> parseGguf(const uint8_t *base, uint64_t size, const std::string &origin);

/// Turbine's IRPA metadata blob for a typed entry: {"dtype":..,"shape":[..]}.
std::string encodeTensorTypeMetadata(DType dtype, const std::vector<int64_t> &shape);
/// Reads the type back from a metadata blob; false (entry untouched) when the
/// blob is not Turbine's JSON. Errors when it is but disagrees with `length`.
Result<bool> decodeTensorTypeMetadata(ParameterEntry &entry);

/// Byte size of a tensor of `dtype` and `shape`, or an error on overflow or
/// negative dims.
Result<uint64_t> tensorByteSize(DType dtype, const std::vector<int64_t> &shape);

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_SRC_PARAMETERFORMATS_H
