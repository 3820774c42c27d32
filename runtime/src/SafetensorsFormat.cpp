//===- SafetensorsFormat.cpp - safetensors files --------------------------===//
//
// The safetensors layout: an 8-byte little-endian header length N, N bytes of
// JSON ({"name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
// optional "__metadata__": {string: string}}), then the data; offsets are
// relative to the end of the header. Written with the header padded with
// spaces to a multiple of 8 bytes and tensors stored back to back in the
// order given.
//===----------------------------------------------------------------------===//
#include "ParameterFormats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace turbine::runtime {

namespace {

/// Largest header accepted (the reference implementation's limit).
constexpr uint64_t kMaxHeaderSize = 100u << 20;

struct SafetensorsDType {
  const char *name;
  DType dtype;
};
constexpr SafetensorsDType kDTypes[] = {
    {"BOOL", DType::i1}, {"U8", DType::u8},   {"I8", DType::i8},   {"I16", DType::i16},
    {"U16", DType::u16}, {"F16", DType::f16}, {"BF16", DType::bf16}, {"I32", DType::i32},
    {"U32", DType::u32}, {"F32", DType::f32}, {"F64", DType::f64}, {"I64", DType::i64},
    {"U64", DType::u64},
};

std::optional<DType> parseSafetensorsDType(const std::string &name) {
  for (const SafetensorsDType &d : kDTypes)
    if (name == d.name)
      return d.dtype;
  return std::nullopt;
}

const char *safetensorsDTypeName(DType dtype) {
  for (const SafetensorsDType &d : kDTypes)
    if (d.dtype == dtype)
      return d.name;
  return nullptr;
}

} // namespace

Result<std::vector<ParameterEntry>> parseSafetensors(const uint8_t *base, uint64_t size,
                                                     const std::string &origin) {
  auto bad = [&](const std::string &what) {
    return Status::error("corrupt safetensors file '" + origin + "': " + what);
  };
  if (size < 8)
    return bad("shorter than its 8-byte header length");
  uint64_t headerSize;
  std::memcpy(&headerSize, base, 8);
  if (headerSize > kMaxHeaderSize || headerSize > size - 8)
    return bad("header length " + std::to_string(headerSize) + " exceeds the file (" +
               std::to_string(size) + " bytes)");
  const char *text = reinterpret_cast<const char *>(base + 8);
  nlohmann::json header = nlohmann::json::parse(text, text + headerSize, nullptr, false);
  if (header.is_discarded() || !header.is_object())
    return bad("header is not a JSON object");
  const uint64_t dataSize = size - 8 - headerSize;
  const uint8_t *data = base + 8 + headerSize;

  std::vector<ParameterEntry> entries;
  for (auto &[name, info] : header.items()) {
    if (name == "__metadata__")
      continue;
    std::string where = "tensor '" + name + "'";
    if (!info.is_object() || !info.contains("dtype") || !info["dtype"].is_string() ||
        !info.contains("shape") || !info["shape"].is_array() ||
        !info.contains("data_offsets") || !info["data_offsets"].is_array() ||
        info["data_offsets"].size() != 2)
      return bad(where + " needs \"dtype\", \"shape\" and two \"data_offsets\"");
    ParameterEntry entry;
    entry.name = name;
    std::string dtypeName = info["dtype"].get<std::string>();
    entry.dtype = parseSafetensorsDType(dtypeName);
    if (!entry.dtype)
      return Status::error("safetensors file '" + origin + "': " + where + " has dtype " +
                           dtypeName + ", which Turbine does not support");
    for (const nlohmann::json &dim : info["shape"]) {
      if (!dim.is_number_unsigned())
        return bad(where + " has a shape entry that is not a non-negative integer");
      entry.shape.push_back(dim.get<int64_t>());
    }
    const nlohmann::json &offsets = info["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      return bad(where + " has data_offsets that are not non-negative integers");
    uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > dataSize)
      return bad(where + " has data_offsets [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] outside the data (" + std::to_string(dataSize) +
                 " bytes)");
    auto expected = tensorByteSize(*entry.dtype, entry.shape);
    if (!expected)
      return bad(where + ": " + expected.message());
    if (*expected != end - begin)
      return bad(where + " is " + entry.typeString() + " (" + std::to_string(*expected) +
                 " bytes) but holds " + std::to_string(end - begin) + " bytes");
    entry.kind = ParameterEntry::Kind::data;
    entry.length = end - begin;
    entry.fileOffset = 8 + headerSize + begin;
    entry.bytes = data + begin;
    entries.push_back(std::move(entry));
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const ParameterEntry &a, const ParameterEntry &b) {
                     return a.fileOffset < b.fileOffset;
                   });
  return entries;
}

Status writeSafetensors(AtomicFileWriter &out, const std::vector<ParameterEntry> &entries) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  uint64_t offset = 0;
  for (const ParameterEntry &entry : entries) {
    if (!entry.hasTensorType())
      return Status::error("parameter '" + entry.name +
                           "' has no tensor type; safetensors needs a dtype and shape "
                           "for every tensor");
    const char *dtype = safetensorsDTypeName(*entry.dtype);
    if (!dtype)
      return Status::error("parameter '" + entry.name + "' has dtype " +
                           std::string(dtypeName(*entry.dtype)) +
                           ", which safetensors cannot hold");
    header[entry.name] = {{"dtype", dtype},
                          {"shape", entry.shape},
                          {"data_offsets", {offset, offset + entry.length}}};
    offset += entry.length;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t headerSize = text.size();
  if (Status s = out.write(&headerSize, 8); !s)
    return s;
  if (Status s = out.write(text.data(), text.size()); !s)
    return s;
  for (const ParameterEntry &entry : entries) {
    if (entry.kind == ParameterEntry::Kind::data) {
      if (Status s = out.write(entry.bytes, entry.length); !s)
        return s;
      continue;
    }
    // Expand the splat pattern in chunks.
    std::vector<uint8_t> chunk(std::min<uint64_t>(entry.length, 1u << 16));
    for (size_t i = 0; i < chunk.size(); ++i)
      chunk[i] = entry.pattern[i % entry.patternLength];
    for (uint64_t left = entry.length; left > 0;) {
      uint64_t n = std::min<uint64_t>(left, chunk.size());
      if (Status s = out.write(chunk.data(), n); !s)
        return s;
      left -= n;
    }
  }
  return Status::success();
}

} // namespace turbine::runtime
