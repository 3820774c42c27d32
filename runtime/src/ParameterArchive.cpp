//===- ParameterArchive.cpp - Opening and writing parameter files ---------===//
//
// Format-independent half of ParameterArchive.h: format detection, lookup by
// name, entries as tensors, renaming (ParameterNameMap), the writer, and
// Turbine's tensor-type metadata.
//===----------------------------------------------------------------------===//
#include "ParameterFormats.h"

#include "turbine/runtime/Ggml.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

namespace turbine::runtime {

const char *parameterFileFormatName(ParameterFileFormat format) {
  switch (format) {
  case ParameterFileFormat::irpa: return "irpa";
  case ParameterFileFormat::safetensors: return "safetensors";
  case ParameterFileFormat::gguf: return "gguf";
  }
  return "?";
}

std::string ParameterEntry::typeString() const {
  if (dtype)
    return formatTensorType(*dtype, shape);
  if (ggmlType) {
    std::string text;
    for (int64_t dim : shape)
      text += std::to_string(dim) + "x";
    return text + ggmlTypeName(*ggmlType);
  }
  return "<" + std::to_string(length) + " bytes>";
}

Result<uint64_t> tensorByteSize(DType dtype, const std::vector<int64_t> &shape) {
  auto count = elementCountOf(shape);
  if (!count)
    return count.status();
  uint64_t elementSize = dtypeSize(dtype);
  if (static_cast<uint64_t>(*count) > std::numeric_limits<uint64_t>::max() / elementSize)
    return Status::error("tensor " + formatTensorType(dtype, shape) + " is too large");
  return static_cast<uint64_t>(*count) * elementSize;
}

std::string encodeTensorTypeMetadata(DType dtype, const std::vector<int64_t> &shape) {
  nlohmann::ordered_json meta = {{"dtype", std::string(dtypeName(dtype))}, {"shape", shape}};
  return meta.dump();
}

Result<bool> decodeTensorTypeMetadata(ParameterEntry &entry) {
  if (entry.metadata.empty() || entry.metadata.front() != '{')
    return false;
  nlohmann::json meta = nlohmann::json::parse(entry.metadata, nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || !meta.contains("dtype") ||
      !meta.contains("shape"))
    return false;
  std::string where = "entry '" + entry.name + "': ";
  if (!meta["dtype"].is_string() || !meta["shape"].is_array())
    return Status::error(where + "metadata has a malformed \"dtype\" or \"shape\"");
  auto dtype = parseDType(meta["dtype"].get<std::string>());
  if (!dtype)
    return Status::error(where + "metadata names unknown dtype '" +
                         meta["dtype"].get<std::string>() + "'");
  if (dtypeIsString(*dtype))
    return Status::error(where + "string tensors cannot be parameters");
  std::vector<int64_t> shape;
  for (const nlohmann::json &dim : meta["shape"]) {
    if (!dim.is_number_unsigned())
      return Status::error(where + "metadata shape holds a non-integer or negative dim");
    shape.push_back(dim.get<int64_t>());
  }
  auto bytes = tensorByteSize(*dtype, shape);
  if (!bytes)
    return Status::error(where + bytes.message());
  if (*bytes != entry.length)
    return Status::error(where + "metadata says " + formatTensorType(*dtype, shape) + " (" +
                         std::to_string(*bytes) + " bytes) but the entry holds " +
                         std::to_string(entry.length) + " bytes");
  entry.dtype = dtype;
  entry.shape = std::move(shape);
  return true;
}

//===----------------------------------------------------------------------===//
// ParameterIndex
//===----------------------------------------------------------------------===//

Result<ParameterIndex> ParameterIndex::open(const std::string &path) {
  auto file = MappedFile::open(path);
  if (!file)
    return file.status();
  const MappedFile &mapped = **file;
  return parse(mapped.data(), mapped.size(), *file, path);
}

Result<ParameterIndex> ParameterIndex::parse(const uint8_t *base, uint64_t size,
                                             std::shared_ptr<const void> keepAlive,
                                             const std::string &origin) {
  ParameterIndex index;
  index.origin_ = origin;
  index.keepAlive_ = std::move(keepAlive);
  if (hasGgufMagic(base, size)) {
    auto gguf = parseGguf(base, size, origin);
    if (!gguf)
      return gguf.status();
    index.format_ = ParameterFileFormat::gguf;
    index.version_ = gguf->version;
    index.entries_ = std::move(gguf->entries);
    index.metadata_ = std::move(gguf->metadata);
    return index;
  }
  auto entries = hasIrpaMagic(base, size) ? parseIrpa(base, size, origin)
                                          : parseSafetensors(base, size, origin);
  if (!entries) {
    if (hasIrpaMagic(base, size))
      return entries.status();
    return Status::error(entries.message() +
                         " (the file is neither an IRPA archive, a GGUF file nor a "
                         "safetensors file)");
  }
  index.format_ =
      hasIrpaMagic(base, size) ? ParameterFileFormat::irpa : ParameterFileFormat::safetensors;
  index.entries_ = std::move(*entries);
  return index;
}

Result<ParameterIndex> ParameterIndex::renamed(const ParameterNameMap &names) const {
  ParameterIndex copy = *this;
  std::set<std::string> seen;
  for (ParameterEntry &entry : copy.entries_) {
    std::string original = entry.name;
    if (auto mapped = names.map(entry.name); mapped && *mapped != entry.name) {
      if (entry.fileName.empty())
        entry.fileName = entry.name;
      entry.name = std::move(*mapped);
    }
    if (!seen.insert(entry.name).second)
      return Status::error("parameter name map: '" + original + "' in '" + origin_ +
                           "' becomes '" + entry.name + "', a name another parameter of "
                           "the file already has");
  }
  return copy;
}

Result<GgmlBlocksView> ParameterIndex::ggmlBlocks(const ParameterEntry &entry) const {
  if (!entry.isBlockQuantized())
    return Status::error("parameter '" + entry.name + "' in '" + origin_ + "' is " +
                         entry.typeString() + ", not a block-quantized GGUF tensor");
  auto info = ggmlTypeInfo(*entry.ggmlType);
  if (!info) // the reader refuses unknown types; kept as an error, not a crash
    return Status::error("parameter '" + entry.name + "' has unknown ggml type");
  GgmlBlocksView view;
  view.ggmlType = *entry.ggmlType;
  view.shape = entry.shape;
  view.blockElements = info->blockElements;
  view.blockBytes = info->blockBytes;
  view.blockCount = entry.length / info->blockBytes;
  view.blocks = entry.bytes;
  view.keepAlive = keepAlive_;
  return view;
}

const ParameterEntry *ParameterIndex::find(const std::string &name) const {
  for (const ParameterEntry &entry : entries_)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

Result<Tensor> ParameterIndex::tensor(const ParameterEntry &entry) const {
  if (!entry.hasTensorType())
    return Status::error("parameter '" + entry.name + "' in '" + origin_ +
                         "' records no tensor type (" + entry.typeString() + ")");
  return tensor(entry, *entry.dtype, entry.shape);
}

Result<Tensor> ParameterIndex::tensor(const ParameterEntry &entry, DType dtype,
                                      const std::vector<int64_t> &shape) const {
  std::string wanted = formatTensorType(dtype, shape);
  // "'w' in 'f.gguf'", or "'w' (named 'blk.w' in the file) in 'f.gguf'".
  const std::string where =
      "'" + entry.name + "'" +
      (entry.fileName.empty() ? "" : " (named '" + entry.fileName + "' in the file)") +
      " in '" + origin_ + "'";
  if (entry.isBlockQuantized()) {
    std::string type = ggmlTypeName(*entry.ggmlType);
    bool known = *entry.ggmlType == kGgmlQ8_0 || *entry.ggmlType == kGgmlQ4_0;
    return Status::error(
        "parameter " + where + " is " + entry.typeString() +
        (known ? ", a block-quantized ggml type, which binds only to a weight compiled with "
                 "`turbine compile --weights-from` (this parameter is " + wanted +
                     "): recompile with --weights-from=this file, or use an F32, F16 or BF16 "
                     "GGUF file"
               : ": unsupported tensor type " + type +
                     " (Turbine reads F32, F16, BF16, Q8_0 and Q4_0 GGUF tensors)"));
  }
  if (entry.hasTensorType() && (*entry.dtype != dtype || entry.shape != shape))
    return Status::error("parameter " + where + " is " + entry.typeString() + ", expected " +
                         wanted);
  auto bytes = tensorByteSize(dtype, shape);
  if (!bytes)
    return bytes.status();
  if (*bytes != entry.length)
    return Status::error("parameter " + where + " holds " + std::to_string(entry.length) + " bytes, expected " + wanted + " (" +
                         std::to_string(*bytes) + " bytes)");
  if (entry.kind == ParameterEntry::Kind::data) {
    if (reinterpret_cast<uintptr_t>(entry.bytes) % kTensorAlignment == 0)
      return Tensor::wrap(dtype, shape, const_cast<uint8_t *>(entry.bytes), keepAlive_,
                          /*readOnly=*/true);
    return Tensor::fromBytes(dtype, shape, entry.bytes, entry.length);
  }
  auto result = Tensor::allocate(dtype, shape);
  if (!result)
    return result;
  // The pattern once, then the filled prefix copied onto what follows it,
  // doubling each time (memory speed; a byte loop took seconds per GB).
  auto *out = static_cast<uint8_t *>(result->data());
  uint64_t filled = std::min<uint64_t>(entry.patternLength, entry.length);
  std::memcpy(out, entry.pattern.data(), filled);
  while (filled < entry.length) {
    uint64_t n = std::min(filled, entry.length - filled);
    std::memcpy(out + filled, out, n);
    filled += n;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// ParameterArchiveWriter
//===----------------------------------------------------------------------===//

Status ParameterArchiveWriter::add(Pending pending) {
  if (pending.entry.name.empty())
    return Status::error("a parameter needs a non-empty name");
  for (const Pending &existing : entries_)
    if (existing.entry.name == pending.entry.name)
      return Status::error("parameter '" + pending.entry.name + "' is added twice");
  entries_.push_back(std::move(pending));
  return Status::success();
}

Status ParameterArchiveWriter::addTensor(const std::string &name, const Tensor &tensor) {
  if (dtypeIsString(tensor.dtype()))
    return Status::error("parameter '" + name + "': string tensors cannot be parameters");
  Pending pending;
  pending.entry.name = name;
  pending.entry.kind = ParameterEntry::Kind::data;
  pending.entry.length = tensor.byteSize();
  pending.entry.bytes = static_cast<const uint8_t *>(tensor.data());
  pending.entry.dtype = tensor.dtype();
  pending.entry.shape = tensor.shape();
  pending.tensor = tensor;
  return add(std::move(pending));
}

Status ParameterArchiveWriter::addSplat(const std::string &name,
                                        const std::vector<uint8_t> &pattern, uint64_t length,
                                        std::optional<DType> dtype,
                                        std::vector<int64_t> shape) {
  if (dtype && dtypeIsString(*dtype))
    return Status::error("splat '" + name + "': string tensors cannot be parameters");
  size_t n = pattern.size();
  if (n == 0 || n > 16 || (n & (n - 1)) != 0)
    return Status::error("splat '" + name + "': pattern of " + std::to_string(n) +
                         " bytes (must be 1, 2, 4, 8 or 16)");
  if (length % n != 0)
    return Status::error("splat '" + name + "': length " + std::to_string(length) +
                         " is not a multiple of the pattern length");
  Pending pending;
  pending.entry.name = name;
  pending.entry.kind = ParameterEntry::Kind::splat;
  pending.entry.length = length;
  std::memcpy(pending.entry.pattern.data(), pattern.data(), n);
  pending.entry.patternLength = static_cast<uint8_t>(n);
  if (dtype) {
    auto bytes = tensorByteSize(*dtype, shape);
    if (!bytes)
      return bytes.status();
    if (*bytes != length)
      return Status::error("splat '" + name + "': " + formatTensorType(*dtype, shape) +
                           " is not " + std::to_string(length) + " bytes");
    pending.entry.dtype = dtype;
    pending.entry.shape = std::move(shape);
  }
  return add(std::move(pending));
}

Status ParameterArchiveWriter::addBlob(const std::string &name, const uint8_t *bytes,
                                       uint64_t length, std::shared_ptr<const void> keepAlive) {
  Pending pending;
  pending.entry.name = name;
  pending.entry.kind = ParameterEntry::Kind::data;
  pending.entry.length = length;
  pending.entry.bytes = bytes;
  pending.keepAlive = std::move(keepAlive);
  return add(std::move(pending));
}

Status ParameterArchiveWriter::addEntry(const ParameterIndex &source,
                                        const ParameterEntry &entry, const std::string &rename) {
  if (entry.isBlockQuantized())
    return Status::error("parameter '" + entry.name + "' is " + entry.typeString() +
                         ", a block-quantized GGUF tensor; irpa and safetensors files cannot "
                         "record its type");
  Pending pending;
  pending.entry = entry;
  if (!rename.empty())
    pending.entry.name = rename;
  pending.keepAlive = source.storage();
  return add(std::move(pending));
}

Status ParameterArchiveWriter::write(const std::string &path, ParameterFileFormat format) const {
  std::vector<ParameterEntry> entries;
  entries.reserve(entries_.size());
  for (const Pending &pending : entries_)
    entries.push_back(pending.entry);
  if (format == ParameterFileFormat::gguf)
    return Status::error("cannot write '" + path + "': Turbine reads GGUF files but writes "
                         "only irpa and safetensors");
  auto out = AtomicFileWriter::create(path);
  if (!out)
    return out.status();
  Status written = format == ParameterFileFormat::irpa ? writeIrpa(**out, entries)
                                                       : writeSafetensors(**out, entries);
  if (!written)
    return written;
  return (*out)->commit();
}

} // namespace turbine::runtime

//===----------------------------------------------------------------------===//
// ParameterNameMap
//===----------------------------------------------------------------------===//

namespace turbine::runtime {

namespace {

std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos)
    return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

} // namespace

Result<ParameterNameMap> ParameterNameMap::parse(const std::string &text,
                                                 const std::string &origin) {
  ParameterNameMap map;
  size_t lineNumber = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++lineNumber;
    if (size_t hash = line.find('#'); hash != std::string::npos)
      line.resize(hash);
    line = trim(line);
    if (line.empty())
      continue;
    std::string where = "parameter name map '" + origin + "' line " +
                        std::to_string(lineNumber) + ": ";
    size_t eq = line.find('=');
    if (eq == std::string::npos || line.find('=', eq + 1) != std::string::npos)
      return Status::error(where + "expected FILE_NAME = MODULE_NAME, got '" + line + "'");
    std::string from = trim(line.substr(0, eq)), to = trim(line.substr(eq + 1));
    if (from.empty() || to.empty())
      return Status::error(where + "a name is empty in '" + line + "'");
    size_t fromStar = from.find('*'), toStar = to.find('*');
    size_t fromStars = std::count(from.begin(), from.end(), '*');
    size_t toStars = std::count(to.begin(), to.end(), '*');
    if (fromStars > 1 || toStars > 1 || fromStars != toStars)
      return Status::error(where + "'" + line +
                           "' needs one '*' on each side, or none on either");
    Rule rule;
    rule.wildcard = fromStars == 1;
    if (rule.wildcard) {
      rule.filePrefix = from.substr(0, fromStar);
      rule.fileSuffix = from.substr(fromStar + 1);
      rule.modulePrefix = to.substr(0, toStar);
      rule.moduleSuffix = to.substr(toStar + 1);
    } else {
      rule.filePrefix = from;
      rule.modulePrefix = to;
    }
    map.rules_.push_back(std::move(rule));
  }
  return map;
}

Result<ParameterNameMap> ParameterNameMap::load(const std::string &path) {
  auto file = MappedFile::open(path);
  if (!file)
    return Status::error("parameter name map: " + file.message());
  const MappedFile &mapped = **file;
  return parse(std::string(reinterpret_cast<const char *>(mapped.data()), mapped.size()), path);
}

std::optional<std::string> ParameterNameMap::map(const std::string &name) const {
  for (const Rule &rule : rules_) {
    if (!rule.wildcard) {
      if (name == rule.filePrefix)
        return rule.modulePrefix;
      continue;
    }
    size_t fixed = rule.filePrefix.size() + rule.fileSuffix.size();
    if (name.size() <= fixed || name.compare(0, rule.filePrefix.size(), rule.filePrefix) != 0 ||
        name.compare(name.size() - rule.fileSuffix.size(), rule.fileSuffix.size(),
                     rule.fileSuffix) != 0)
      continue;
    std::string middle = name.substr(rule.filePrefix.size(), name.size() - fixed);
    return rule.modulePrefix + middle + rule.moduleSuffix;
  }
  return std::nullopt;
}

} // namespace turbine::runtime
