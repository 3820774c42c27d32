//===- ParameterArchive.cpp - Opening and writing parameter files ---------===//
//
// Format-independent half of ParameterArchive.h: format detection, lookup by
// name, entries as tensors, the writer, and Turbine's tensor-type metadata.
//===----------------------------------------------------------------------===//
#include "ParameterFormats.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <limits>
#include <set>

namespace turbine::runtime {

const char *parameterFileFormatName(ParameterFileFormat format) {
  return format == ParameterFileFormat::irpa ? "irpa" : "safetensors";
}

std::string ParameterEntry::typeString() const {
  return dtype ? formatTensorType(*dtype, shape) : "<" + std::to_string(length) + " bytes>";
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
  auto entries = hasIrpaMagic(base, size) ? parseIrpa(base, size, origin)
                                          : parseSafetensors(base, size, origin);
  if (!entries) {
    if (hasIrpaMagic(base, size))
      return entries.status();
    return Status::error(entries.message() +
                         " (the file is neither an IRPA archive nor a safetensors file)");
  }
  index.format_ =
      hasIrpaMagic(base, size) ? ParameterFileFormat::irpa : ParameterFileFormat::safetensors;
  index.entries_ = std::move(*entries);
  return index;
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
  if (entry.hasTensorType() && (*entry.dtype != dtype || entry.shape != shape))
    return Status::error("parameter '" + entry.name + "' in '" + origin_ + "' is " +
                         entry.typeString() + ", expected " + wanted);
  auto bytes = tensorByteSize(dtype, shape);
  if (!bytes)
    return bytes.status();
  if (*bytes != entry.length)
    return Status::error("parameter '" + entry.name + "' in '" + origin_ + "' holds " +
                         std::to_string(entry.length) + " bytes, expected " + wanted + " (" +
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
  auto *out = static_cast<uint8_t *>(result->data());
  for (uint64_t i = 0; i < entry.length; ++i)
    out[i] = entry.pattern[i % entry.patternLength];
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
