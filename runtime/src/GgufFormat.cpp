//===- GgufFormat.cpp - GGUF files (llama.cpp's model format) -------------===//
//
// Reads GGUF versions 2 and 3 (ggml/docs/gguf.md), little-endian:
//
//   "GGUF"  u32 version  u64 n_tensors  u64 n_kv
//   n_kv      x { string key, u32 value_type, value }
//   n_tensors x { string name, u32 n_dims, u64 ne[n_dims] (innermost first),
//                 u32 ggml_type, u64 offset }
//   padding to `alignment`, then the data; each tensor's offset is relative to
//   the start of the data and a multiple of `alignment` (the u32
//   `general.alignment` key, default 32).
//   string = u64 length + bytes; array = u32 element type + u64 count + items.
//
// Nothing is trusted: every count, length, offset and size is checked against
// the bytes that are left before anything is allocated for it, so a
// truncated or corrupt file is an error naming what is wrong and where, never
// a crash, a hang or a huge allocation. Version 1 (u32 counts) and
// big-endian files are refused with a message saying so.
//===----------------------------------------------------------------------===//
#include "ParameterFormats.h"

#include "turbine/runtime/Ggml.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

namespace turbine::runtime {

namespace {

constexpr uint32_t kGgufDefaultAlignment = 32;
constexpr uint32_t kGgmlMaxDims = 4;
/// Arrays nested deeper than this are refused (GGUF writers nest at most 1).
constexpr int kMaxArrayDepth = 4;

using Type = GgufValue::Type;

/// Bytes of a scalar of `type`, or 0 for string / array / unknown.
uint64_t scalarSize(Type type) {
  switch (type) {
  case Type::u8: case Type::i8: case Type::boolean: return 1;
  case Type::u16: case Type::i16: return 2;
  case Type::u32: case Type::i32: case Type::f32: return 4;
  case Type::u64: case Type::i64: case Type::f64: return 8;
  default: return 0;
  }
}

bool knownType(uint32_t type) { return type <= static_cast<uint32_t>(Type::f64); }

/// A bounds-checked reader over the mapped file.
class Cursor {
public:
  Cursor(const uint8_t *base, uint64_t size, std::string origin)
      : base_(base), size_(size), origin_(std::move(origin)) {}

  uint64_t offset() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  Status error(const std::string &what) const {
    return Status::error("corrupt GGUF file '" + origin_ + "': " + what);
  }
  Status truncated(const std::string &what, uint64_t need) const {
    return error(what + " at offset " + std::to_string(pos_) + " needs " +
                 std::to_string(need) + " bytes, but the file (" + std::to_string(size_) +
                 " bytes) ends first");
  }

  template <typename T> Status read(T &value, const std::string &what) {
    if (left() < sizeof(T))
      return truncated(what, sizeof(T));
    std::memcpy(&value, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::success();
  }
  Status readString(std::string_view &out, const std::string &what) {
    uint64_t length = 0;
    if (Status s = read(length, what + " length"); !s)
      return s;
    if (length > left())
      return error(what + " at offset " + std::to_string(pos_ - 8) + " has length " +
                   std::to_string(length) + ", past the end of the file (" +
                   std::to_string(left()) + " bytes left)");
    out = std::string_view(reinterpret_cast<const char *>(base_ + pos_), length);
    pos_ += length;
    return Status::success();
  }
  const uint8_t *skip(uint64_t n) {
    const uint8_t *at = base_ + pos_;
    pos_ += n;
    return at;
  }

private:
  const uint8_t *base_;
  uint64_t size_;
  uint64_t pos_ = 0;
  std::string origin_;
};

Status readValue(Cursor &in, Type type, GgufValue &out, const std::string &where, int depth);

Status readArray(Cursor &in, GgufValue &out, const std::string &where, int depth) {
  if (depth >= kMaxArrayDepth)
    return in.error(where + ": arrays nested more than " + std::to_string(kMaxArrayDepth) +
                    " deep");
  uint32_t elementType = 0;
  if (Status s = in.read(elementType, where + " array element type"); !s)
    return s;
  if (!knownType(elementType))
    return in.error(where + ": array of unknown value type " + std::to_string(elementType));
  out.elementType = static_cast<Type>(elementType);
  if (Status s = in.read(out.count, where + " array length"); !s)
    return s;
  // Bound the count by the bytes left before reserving anything.
  if (uint64_t size = scalarSize(out.elementType)) {
    if (out.count > in.left() / size)
      return in.error(where + ": array of " + std::to_string(out.count) + " x " +
                      std::to_string(size) + "-byte values is longer than the " +
                      std::to_string(in.left()) + " bytes left in the file");
    out.raw = in.skip(out.count * size);
    return Status::success();
  }
  const uint64_t minimum = out.elementType == Type::string ? 8 : 12;
  if (out.count > in.left() / minimum)
    return in.error(where + ": array of " + std::to_string(out.count) +
                    " elements cannot fit in the " + std::to_string(in.left()) +
                    " bytes left in the file");
  if (out.elementType == Type::string) {
    out.strings.reserve(out.count);
    for (uint64_t i = 0; i < out.count; ++i) {
      std::string_view element;
      if (Status s = in.readString(element, where + " element " + std::to_string(i)); !s)
        return s;
      out.strings.push_back(element);
    }
    return Status::success();
  }
  out.arrays.reserve(out.count);
  for (uint64_t i = 0; i < out.count; ++i) {
    GgufValue element;
    element.type = Type::array;
    if (Status s = readArray(in, element, where + " element " + std::to_string(i), depth + 1);
        !s)
      return s;
    out.arrays.push_back(std::move(element));
  }
  return Status::success();
}

Status readValue(Cursor &in, Type type, GgufValue &out, const std::string &where, int depth) {
  out.type = type;
  switch (type) {
  case Type::string:
    return in.readString(out.string, where);
  case Type::array:
    return readArray(in, out, where, depth);
  default:
    break;
  }
  uint64_t size = scalarSize(type);
  uint8_t bytes[8] = {};
  if (in.left() < size)
    return in.truncated(where + " value", size);
  std::memcpy(bytes, in.skip(size), size);
  auto as = [&](auto v) {
    std::memcpy(&v, bytes, sizeof(v));
    return v;
  };
  switch (type) {
  case Type::u8: out.u = as(uint8_t()); out.i = static_cast<int64_t>(out.u); break;
  case Type::u16: out.u = as(uint16_t()); out.i = static_cast<int64_t>(out.u); break;
  case Type::u32: out.u = as(uint32_t()); out.i = static_cast<int64_t>(out.u); break;
  case Type::u64:
    out.u = as(uint64_t());
    out.i = out.u > uint64_t(std::numeric_limits<int64_t>::max()) ? 0 : int64_t(out.u);
    break;
  case Type::boolean: out.u = bytes[0] != 0; out.i = static_cast<int64_t>(out.u); break;
  case Type::i8: out.i = as(int8_t()); break;
  case Type::i16: out.i = as(int16_t()); break;
  case Type::i32: out.i = as(int32_t()); break;
  case Type::i64: out.i = as(int64_t()); break;
  case Type::f32: out.f = as(float()); break;
  case Type::f64: out.f = as(double()); break;
  default: break;
  }
  if (type == Type::i8 || type == Type::i16 || type == Type::i32 || type == Type::i64)
    out.u = out.i < 0 ? 0 : static_cast<uint64_t>(out.i);
  return Status::success();
}

} // namespace

bool hasGgufMagic(const uint8_t *base, uint64_t size) {
  return size >= 4 && std::memcmp(base, "GGUF", 4) == 0;
}

Result<GgufContents> parseGguf(const uint8_t *base, uint64_t size, const std::string &origin) {
  Cursor in(base, size, origin);
  GgufContents contents;
  uint32_t magic = 0;
  if (Status s = in.read(magic, "magic"); !s)
    return s;
  if (!hasGgufMagic(base, size))
    return in.error("bad magic (not \"GGUF\")");
  if (Status s = in.read(contents.version, "header (version)"); !s)
    return s;
  if (contents.version != 2 && contents.version != 3) {
    std::string hint;
    if (contents.version == 1)
      hint = " (version 1 files, with 32-bit counts, predate August 2023; convert the "
             "model again with a current llama.cpp)";
    else if ((contents.version & 0xFFFF) == 0 && contents.version != 0)
      hint = " (a big-endian GGUF file?)";
    return Status::error("GGUF file '" + origin + "' has version " +
                         std::to_string(contents.version) +
                         "; this build reads GGUF versions 2 and 3" + hint);
  }
  uint64_t tensorCount = 0, kvCount = 0;
  if (Status s = in.read(tensorCount, "header (tensor count)"); !s)
    return s;
  if (Status s = in.read(kvCount, "header (metadata count)"); !s)
    return s;
  // A key/value takes at least 13 bytes (8 length + 4 type + 1 value), a
  // tensor info at least 24 (8 length + 4 n_dims + 4 type + 8 offset).
  if (kvCount > in.left() / 13)
    return in.error("header declares " + std::to_string(kvCount) +
                    " metadata keys, more than the file's " + std::to_string(size) +
                    " bytes can hold");
  if (tensorCount > in.left() / 24)
    return in.error("header declares " + std::to_string(tensorCount) +
                    " tensors, more than the file's " + std::to_string(size) +
                    " bytes can hold");

  uint32_t alignment = kGgufDefaultAlignment;
  std::set<std::string_view> keys;
  contents.metadata.reserve(kvCount);
  for (uint64_t k = 0; k < kvCount; ++k) {
    std::string where = "metadata key " + std::to_string(k);
    std::string_view key;
    if (Status s = in.readString(key, where); !s)
      return s;
    where += " '" + std::string(key) + "'";
    if (!keys.insert(key).second)
      return in.error(where + " appears twice");
    uint32_t type = 0;
    if (Status s = in.read(type, where + " value type"); !s)
      return s;
    if (!knownType(type))
      return in.error(where + " has unknown value type " + std::to_string(type));
    GgufValue value;
    if (Status s = readValue(in, static_cast<Type>(type), value, where, 0); !s)
      return s;
    if (key == "general.alignment") {
      if (value.type != Type::u32)
        return in.error("general.alignment is a " + value.typeName() + ", not a u32");
      if (value.u == 0 || (value.u & (value.u - 1)) != 0)
        return in.error("general.alignment " + std::to_string(value.u) +
                        " is not a power of two");
      alignment = static_cast<uint32_t>(value.u);
    }
    contents.metadata.emplace_back(std::string(key), std::move(value));
  }

  struct Info {
    uint64_t offset;
    uint64_t bytes;
  };
  std::vector<Info> infos;
  std::set<std::string> names;
  contents.entries.reserve(tensorCount);
  infos.reserve(tensorCount);
  for (uint64_t t = 0; t < tensorCount; ++t) {
    std::string where = "tensor " + std::to_string(t);
    std::string_view name;
    if (Status s = in.readString(name, where + " name"); !s)
      return s;
    where += " '" + std::string(name) + "'";
    if (!names.insert(std::string(name)).second)
      return in.error("tensor '" + std::string(name) + "' appears twice");
    uint32_t nDims = 0;
    if (Status s = in.read(nDims, where + " n_dims"); !s)
      return s;
    if (nDims > kGgmlMaxDims)
      return in.error(where + " has " + std::to_string(nDims) + " dims (ggml allows at most " +
                      std::to_string(kGgmlMaxDims) + ")");
    uint64_t ne[kGgmlMaxDims] = {1, 1, 1, 1};
    for (uint32_t d = 0; d < nDims; ++d)
      if (Status s = in.read(ne[d], where + " dim " + std::to_string(d)); !s)
        return s;
    uint32_t type = 0;
    if (Status s = in.read(type, where + " type"); !s)
      return s;
    uint64_t offset = 0;
    if (Status s = in.read(offset, where + " offset"); !s)
      return s;

    auto info = ggmlTypeInfo(type);
    if (!info)
      return in.error(where + " has unknown ggml type " + std::to_string(type));
    // Element count without overflow (every product stays below 2^63).
    uint64_t elements = 1;
    std::string dims;
    for (uint32_t d = 0; d < nDims; ++d) {
      dims += (d ? ", " : "") + std::to_string(ne[d]);
      if (ne[d] > uint64_t(std::numeric_limits<int64_t>::max()) ||
          (ne[d] != 0 && elements > uint64_t(std::numeric_limits<int64_t>::max()) / ne[d]))
        return in.error(where + " has dims [" + dims + (d + 1 < nDims ? ", ..." : "") +
                        "] whose element count overflows");
      elements *= ne[d];
    }
    if (ne[0] % info->blockElements != 0)
      return in.error(where + " is " + info->name + " with rows of " + std::to_string(ne[0]) +
                      " elements, not a multiple of its block of " +
                      std::to_string(info->blockElements));
    uint64_t blocks = elements / info->blockElements;
    if (blocks > std::numeric_limits<uint64_t>::max() / info->blockBytes)
      return in.error(where + " is too large");
    uint64_t bytes = blocks * info->blockBytes;
    if (offset % alignment != 0)
      return in.error(where + " has data offset " + std::to_string(offset) +
                      ", not a multiple of the alignment " + std::to_string(alignment));

    ParameterEntry entry;
    entry.name = std::string(name);
    entry.kind = ParameterEntry::Kind::data;
    entry.length = bytes;
    entry.ggmlType = type;
    entry.dtype = ggmlPlainDType(type);
    for (uint32_t d = nDims; d-- > 0;)
      entry.shape.push_back(static_cast<int64_t>(ne[d]));
    contents.entries.push_back(std::move(entry));
    infos.push_back({offset, bytes});
  }

  // The data section starts at the next multiple of the alignment.
  uint64_t dataStart = (in.offset() + alignment - 1) / alignment * alignment;
  if (!infos.empty() && dataStart > size)
    return in.error("the tensor data would start at offset " + std::to_string(dataStart) +
                    " (aligned to " + std::to_string(alignment) + "), past the end of the file (" +
                    std::to_string(size) + " bytes)");
  uint64_t dataSize = dataStart <= size ? size - dataStart : 0;
  for (size_t t = 0; t < contents.entries.size(); ++t) {
    ParameterEntry &entry = contents.entries[t];
    const Info &info = infos[t];
    if (info.offset > dataSize || info.bytes > dataSize - info.offset)
      return in.error("tensor '" + entry.name + "' (" + entry.typeString() + ", " +
                      std::to_string(info.bytes) + " bytes at data offset " +
                      std::to_string(info.offset) + ") extends past the end of the file (" +
                      std::to_string(dataSize) + " data bytes from offset " +
                      std::to_string(dataStart) + ")");
    entry.fileOffset = dataStart + info.offset;
    entry.bytes = base + entry.fileOffset;
  }
  return contents;
}

//===----------------------------------------------------------------------===//
// GgufValue
//===----------------------------------------------------------------------===//

namespace {

const char *typeText(Type type) {
  static const char *const names[] = {"u8",  "i8",   "u16",    "i16",   "u32", "i32", "f32",
                                      "bool", "string", "array", "u64", "i64", "f64"};
  uint32_t id = static_cast<uint32_t>(type);
  return id < sizeof(names) / sizeof(names[0]) ? names[id] : "?";
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02X", static_cast<unsigned char>(c));
      out += buffer;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string scalarText(const GgufValue &v) {
  switch (v.type) {
  case Type::boolean: return v.u ? "true" : "false";
  case Type::u8: case Type::u16: case Type::u32: case Type::u64: return std::to_string(v.u);
  case Type::i8: case Type::i16: case Type::i32: case Type::i64: return std::to_string(v.i);
  case Type::f32: case Type::f64: {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.9g", v.f);
    return buffer;
  }
  case Type::string: return quoted(v.string);
  default: return "?";
  }
}

} // namespace

std::string GgufValue::typeName() const {
  if (type != Type::array)
    return typeText(type);
  return std::string("array[") + typeText(elementType) + "]";
}

std::string GgufValue::format(size_t maxElements) const {
  if (type != Type::array)
    return scalarText(*this);
  std::string out = "[";
  uint64_t shown = std::min<uint64_t>(count, maxElements);
  for (uint64_t k = 0; k < shown; ++k) {
    if (k)
      out += ", ";
    if (elementType == Type::string) {
      out += quoted(strings[k]);
    } else if (elementType == Type::array) {
      out += arrays[k].format(maxElements);
    } else {
      GgufValue element;
      element.type = elementType;
      uint64_t size = scalarSize(elementType);
      Cursor cursor(raw + k * size, size, "");
      (void)readValue(cursor, elementType, element, "", 0);
      out += scalarText(element);
    }
  }
  if (shown < count)
    out += ", ... (" + std::to_string(count) + " elements)";
  return out + "]";
}

} // namespace turbine::runtime
