//===- ParameterArchive.h - Named parameters in .irpa / .safetensors files ===//
//
// Weights kept outside an artifact live in parameter files, indexed by name.
// Two formats are read, memory-mapped (nothing is copied until asked):
//  - IREE parameter archives (.irpa): the public layout of IREE's
//    iree/schemas/parameter_archive.h (header v0, 16-byte aligned entry
//    table, metadata and storage segments; SPLAT and DATA entries; linked
//    headers are followed). Turbine stores each entry's tensor type in its
//    metadata blob as JSON {"dtype":"f32","shape":[2,3]}; archives written by
//    other tools may carry no type, and then only their byte size is known.
//  - safetensors: 8-byte little-endian header length, JSON header with
//    dtype / shape / data_offsets per tensor, then the data.
// Both can be written (ParameterArchiveWriter). Every offset and length read
// from a file is validated against the file's size: a truncated or corrupt
// file gives an error naming the file and the entry, never a crash.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_PARAMETERARCHIVE_H
#define TURBINE_RUNTIME_PARAMETERARCHIVE_H

#include "turbine/runtime/Tensor.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace turbine::runtime {

/// The on-disk formats of parameter files.
enum class ParameterFileFormat { irpa, safetensors };

/// "irpa" / "safetensors".
const char *parameterFileFormatName(ParameterFileFormat format);

/// One named parameter of an opened file.
struct ParameterEntry {
  enum class Kind {
    data,  ///< bytes stored in the file
    splat, ///< a repeated 1/2/4/8/16-byte pattern
  };
  std::string name;
  Kind kind = Kind::data;
  /// Logical size in bytes.
  uint64_t length = 0;
  /// data: the `length` stored bytes (inside the file's mapping).
  const uint8_t *bytes = nullptr;
  /// data: absolute offset of the bytes in the file.
  uint64_t fileOffset = 0;
  /// splat: the little-endian pattern.
  std::array<uint8_t, 16> pattern{};
  uint8_t patternLength = 0;
  /// Tensor type, when the file records one (always for safetensors; for
  /// IRPA when the metadata holds Turbine's JSON).
  std::optional<DType> dtype;
  std::vector<int64_t> shape;
  /// The raw metadata blob (IRPA) or "" (safetensors).
  std::string metadata;

  bool hasTensorType() const { return dtype.has_value(); }
  /// "2x3xf32", or "<N bytes>" when untyped.
  std::string typeString() const;
};

/// An opened parameter file: a read-only mapping plus its entries in file
/// order. Cheap to copy (the mapping is shared).
class ParameterIndex {
public:
  /// Opens `path`, detects its format from the content (IRPA magic, else
  /// safetensors) and validates every entry.
  static Result<ParameterIndex> open(const std::string &path);
  /// Parses `size` bytes at `base` (kept alive by `keepAlive`); `origin`
  /// names the data in messages.
  static Result<ParameterIndex> parse(const uint8_t *base, uint64_t size,
                                      std::shared_ptr<const void> keepAlive,
                                      const std::string &origin);

  ParameterFileFormat format() const { return format_; }
  const std::string &origin() const { return origin_; }
  const std::vector<ParameterEntry> &entries() const { return entries_; }
  /// The entry called `name`, or null.
  const ParameterEntry *find(const std::string &name) const;
  /// What keeps the entries' bytes mapped.
  const std::shared_ptr<const void> &storage() const { return keepAlive_; }

  /// The entry as a tensor of its recorded type (error when untyped). Data
  /// entries stored 64-byte aligned are zero-copy read-only views of the
  /// mapping; others, and splats, are materialized.
  Result<Tensor> tensor(const ParameterEntry &entry) const;
  /// The entry as a tensor of `dtype` and `shape`: its byte size must match,
  /// and its recorded type (if any) must be that type.
  Result<Tensor> tensor(const ParameterEntry &entry, DType dtype,
                        const std::vector<int64_t> &shape) const;

private:
  ParameterFileFormat format_ = ParameterFileFormat::irpa;
  std::string origin_;
  std::vector<ParameterEntry> entries_;
  std::shared_ptr<const void> keepAlive_;
};

/// Collects parameters and writes them as one file.
class ParameterArchiveWriter {
public:
  /// Adds a tensor's bytes (copied when the file is written, so `tensor`
  /// must stay valid until then; its storage is shared, not copied, here).
  Status addTensor(const std::string &name, const Tensor &tensor);
  /// Adds a splat: `length` bytes of the repeated `pattern` (1, 2, 4, 8 or
  /// 16 bytes). `dtype`/`shape` are recorded when given.
  Status addSplat(const std::string &name, const std::vector<uint8_t> &pattern,
                  uint64_t length, std::optional<DType> dtype = std::nullopt,
                  std::vector<int64_t> shape = {});
  /// Adds untyped bytes (IRPA only: an entry with no tensor type, as IREE's
  /// own tools write; `keepAlive` owns `bytes` until the file is written).
  Status addBlob(const std::string &name, const uint8_t *bytes, uint64_t length,
                 std::shared_ptr<const void> keepAlive);
  /// Adds an entry of an opened file (its type is kept; its data is copied
  /// from the file's mapping when written; the writer keeps it mapped).
  /// `rename`, when not empty, is the entry's name in the new file.
  Status addEntry(const ParameterIndex &source, const ParameterEntry &entry,
                  const std::string &rename = "");

  size_t size() const { return entries_.size(); }

  /// Writes the collected entries to `path` in `format`, atomically (a
  /// temporary file renamed into place). safetensors needs every entry to
  /// have a tensor type; splats are expanded there.
  Status write(const std::string &path, ParameterFileFormat format) const;

private:
  struct Pending {
    ParameterEntry entry;
    Tensor tensor; ///< data held alive for tensor entries
    std::shared_ptr<const void> keepAlive;
  };
  Status add(Pending pending);

  std::vector<Pending> entries_;
};

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_PARAMETERARCHIVE_H
