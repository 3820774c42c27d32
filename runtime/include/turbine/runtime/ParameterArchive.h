//===- ParameterArchive.h - Named parameters in .irpa / .safetensors / .gguf =//
//
// Weights kept outside an artifact live in parameter files, indexed by name.
// Three formats are read, memory-mapped (nothing is copied until asked):
//  - IREE parameter archives (.irpa): the public layout of IREE's
//    iree/schemas/parameter_archive.h (header v0, 16-byte aligned entry
//    table, metadata and storage segments; SPLAT and DATA entries; linked
//    headers are followed). Turbine stores each entry's tensor type in its
//    metadata blob as JSON {"dtype":"f32","shape":[2,3]}; archives written by
//    other tools may carry no type, and then only their byte size is known.
//  - safetensors: 8-byte little-endian header length, JSON header with
//    dtype / shape / data_offsets per tensor, then the data.
//  - GGUF (llama.cpp's format, versions 2 and 3; see GgufFormat.cpp): its
//    metadata key/values are parsed (metadata()), its tensors are entries
//    with their ggml type (Ggml.h). F32 / F16 / BF16 (and I8..I64, F64)
//    tensors are typed entries like any other; block-quantized ones (Q8_0,
//    Q4_0, ...) keep their block layout (ggmlBlocks(), a view): binding one
//    to a typed parameter is an error naming its type; an artifact compiled
//    with `--weights-from` binds Q8_0 / Q4_0 ones as their raw blocks (no
//    copy, Module.cpp), checking the ggml type and shape it recorded.
//    Shapes are outermost first (ggml's ne0..ne3 reversed), as torch has them.
// irpa and safetensors can be written (ParameterArchiveWriter). Every offset and length read
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
#include <string_view>
#include <utility>
#include <vector>

namespace turbine::runtime {

/// The on-disk formats of parameter files.
enum class ParameterFileFormat { irpa, safetensors, gguf };

/// "irpa" / "safetensors" / "gguf".
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
  /// The raw metadata blob (IRPA) or "" (safetensors, GGUF).
  std::string metadata;
  /// GGUF: the tensor's ggml type id (Ggml.h). `shape` is set for every
  /// GGUF tensor; `dtype` only for the plain types (F32, F16, BF16, ...).
  std::optional<uint32_t> ggmlType;
  /// The name in the file when ParameterIndex::renamed() changed it.
  std::string fileName;

  bool hasTensorType() const { return dtype.has_value(); }
  /// A GGUF tensor in a block-quantized ggml type (Q8_0, Q4_0, Q4_K, ...).
  bool isBlockQuantized() const { return ggmlType.has_value() && !dtype.has_value(); }
  /// "2x3xf32", "64x32xQ8_0" (block-quantized), or "<N bytes>" when untyped.
  std::string typeString() const;
};

/// One value of a GGUF file's metadata. Strings and numeric arrays are views
/// into the file's mapping (valid while the ParameterIndex, or a copy of it,
/// lives); nothing is copied per element except for arrays of strings and
/// arrays of arrays.
struct GgufValue {
  /// GGUF's gguf_type ids.
  enum class Type : uint32_t {
    u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
    string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
  };
  Type type = Type::u8;
  /// Scalars: the value widened (unsigned and bool in `u`, signed in `i`,
  /// floats in `f`); every integer scalar also sets `i`/`u` when it fits.
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  std::string_view string;
  /// Arrays: element type and count; numeric / bool elements stay packed
  /// little-endian at `raw` (count * element size bytes).
  Type elementType = Type::u8;
  uint64_t count = 0;
  const uint8_t *raw = nullptr;
  std::vector<std::string_view> strings; ///< array of strings
  std::vector<GgufValue> arrays;         ///< array of arrays

  /// "u32", "array[string]", ...
  std::string typeName() const;
  /// The value as text; arrays show at most `maxElements` elements then
  /// "... (N elements)".
  std::string format(size_t maxElements = 8) const;
};

/// Renames parameters between a file and a module: GGUF files from llama.cpp
/// name tensors `blk.0.attn_q.weight` where a torch module's state_dict says
/// `layers.0.attention.wq.weight`. Text form, one rule per line:
///
///     FILE_NAME = MODULE_NAME        # comment
///     blk.*.attn_q.weight = layers.*.attention.wq.weight
///
/// A `*` (at most one per side, on both sides or neither) matches a
/// non-empty run of characters, copied to the other side. Blank lines and
/// `#` comments are ignored. Rules are tried in order; the first match wins;
/// a name no rule matches keeps its name.
class ParameterNameMap {
public:
  /// Parses the text form; `origin` names it in messages.
  static Result<ParameterNameMap> parse(const std::string &text, const std::string &origin);
  /// Reads and parses `path`.
  static Result<ParameterNameMap> load(const std::string &path);

  /// The module-side name of file name `name`, or nullopt when no rule matches.
  std::optional<std::string> map(const std::string &name) const;
  size_t size() const { return rules_.size(); }

private:
  struct Rule {
    std::string filePrefix, fileSuffix, modulePrefix, moduleSuffix;
    bool wildcard = false;
  };
  std::vector<Rule> rules_;
};

/// A block-quantized GGUF tensor as stored: `shape` (outermost first; the
/// last dim is the row, a whole number of blocks) and its blocks, row after
/// row, inside the file's mapping.
struct GgmlBlocksView {
  uint32_t ggmlType = 0;
  std::vector<int64_t> shape;
  uint32_t blockElements = 0;
  uint32_t blockBytes = 0;
  uint64_t blockCount = 0;
  const uint8_t *blocks = nullptr;
  std::shared_ptr<const void> keepAlive; ///< keeps `blocks` mapped
};

/// An opened parameter file: a read-only mapping plus its entries in file
/// order. Cheap to copy (the mapping is shared).
class ParameterIndex {
public:
  /// Opens `path`, detects its format from the content (IRPA magic, GGUF
  /// magic, else safetensors) and validates every entry.
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
  /// GGUF: the metadata key/values in file order (empty for other formats).
  const std::vector<std::pair<std::string, GgufValue>> &metadata() const { return metadata_; }
  /// GGUF: the file's version (2 or 3); 0 for other formats.
  uint32_t version() const { return version_; }

  /// A copy whose entries carry the module-side names of `names` (entries no
  /// rule matches keep theirs). Error when two entries end up with one name.
  Result<ParameterIndex> renamed(const ParameterNameMap &names) const;

  /// A block-quantized entry's blocks (error for any other entry).
  Result<GgmlBlocksView> ggmlBlocks(const ParameterEntry &entry) const;

  /// The entry as a tensor of its recorded type (error when untyped). Data
  /// entries stored 64-byte aligned are zero-copy read-only views of the
  /// mapping; others, and splats, are materialized.
  Result<Tensor> tensor(const ParameterEntry &entry) const;
  /// The entry as a tensor of `dtype` and `shape`: its byte size must match,
  /// and its recorded type (if any) must be that type. A block-quantized
  /// GGUF entry is an error naming its ggml type.
  Result<Tensor> tensor(const ParameterEntry &entry, DType dtype,
                        const std::vector<int64_t> &shape) const;

private:
  ParameterFileFormat format_ = ParameterFileFormat::irpa;
  std::string origin_;
  std::vector<ParameterEntry> entries_;
  std::shared_ptr<const void> keepAlive_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  uint32_t version_ = 0;
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
  /// Block-quantized GGUF entries are refused (no irpa/safetensors type).
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
