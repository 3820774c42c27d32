//===- Npy.cpp - NumPy .npy files <-> tensors -----------------------------===//
//
// Reads .npy versions 1.0, 2.0 and 3.0 (little-endian or byte-order-free
// dtypes, C order) and writes version 1.0 (2.0 when the header is too long).
// Supported descrs: f2 f4 f8, i1 i2 i4 i8, u1 u2 u4 u8, b1. Input is
// hostile: the header is bounded (1 MiB), and the data size it announces is
// checked against the bytes present before anything is allocated.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/TensorFormat.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include <sys/stat.h>

namespace turbine::runtime {

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;

struct NpyCode {
  const char *code;
  DType dtype;
};
constexpr NpyCode kNpyCodes[] = {
    {"f2", DType::f16}, {"f4", DType::f32}, {"f8", DType::f64},
    {"i1", DType::i8},  {"i2", DType::i16}, {"i4", DType::i32},
    {"i8", DType::i64}, {"u1", DType::u8},  {"u2", DType::u16},
    {"u4", DType::u32}, {"u8", DType::u64}, {"b1", DType::i1},
};

/// Finds `'key':` in a header dict and returns the text after the colon.
bool findKey(const std::string &header, const std::string &key, size_t &pos) {
  for (const char *quote : {"'", "\""}) {
    size_t at = header.find(quote + key + quote);
    if (at == std::string::npos)
      continue;
    size_t colon = header.find(':', at);
    if (colon == std::string::npos)
      return false;
    pos = colon + 1;
    while (pos < header.size() && header[pos] == ' ')
      ++pos;
    return true;
  }
  return false;
}

/// Largest header read: NumPy writes a few hundred bytes (and its own
/// reader refuses more than 10000 by default).
constexpr size_t kMaxHeaderLength = 1 << 20;

/// What the header says.
struct NpyHeader {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  size_t dataStart = 0;   ///< offset of the data in the file
  uint64_t dataBytes = 0; ///< bytes the data must have
};

/// Reads magic, version and header length from the first bytes of a file
/// (`prefix`: at least 12 bytes, or the whole file when shorter).
Status parsePrefix(const std::string &prefix, size_t &headerStart, size_t &headerLength,
                   const std::function<Status(const std::string &)> &bad) {
  if (prefix.size() < 10 || std::memcmp(prefix.data(), kNpyMagic, kNpyMagicSize) != 0)
    return bad("missing \\x93NUMPY magic");
  int major = static_cast<uint8_t>(prefix[6]);
  if (major == 1) {
    headerLength = static_cast<uint8_t>(prefix[8]) |
                   (static_cast<size_t>(static_cast<uint8_t>(prefix[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (prefix.size() < 12)
      return bad("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= static_cast<size_t>(static_cast<uint8_t>(prefix[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return bad("unsupported version " + std::to_string(major));
  }
  if (headerLength > kMaxHeaderLength)
    return bad("header of " + std::to_string(headerLength) + " bytes (at most " +
               std::to_string(kMaxHeaderLength) + " are read)");
  return Status::success();
}

/// Parses the header dict; the data's size follows from dtype and shape
/// (checked for overflow) and nothing is allocated here.
Result<NpyHeader> parseHeader(const std::string &header, size_t dataStart,
                              const std::function<Status(const std::string &)> &bad) {
  NpyHeader out;
  out.dataStart = dataStart;
  size_t pos;
  if (!findKey(header, "descr", pos) || pos >= header.size() ||
      (header[pos] != '\'' && header[pos] != '"'))
    return bad("header has no 'descr'");
  size_t close = header.find(header[pos], pos + 1);
  if (close == std::string::npos)
    return bad("unterminated 'descr'");
  std::string descr = header.substr(pos + 1, close - pos - 1);
  if (descr.size() >= 2 && (descr[1] == 'U' || descr[1] == 'S' || descr[1] == 'O'))
    return bad("NumPy string and object arrays ('" + descr + "') are not supported; "
               "give string tensors in the tensor text syntax, e.g. 2xstring=\"a\" \"b\"");
  if (descr.size() != 3)
    return bad("unsupported dtype '" + descr + "'");
  char order = descr[0];
  std::string code = descr.substr(1);
  std::optional<DType> dtype;
  for (const NpyCode &c : kNpyCodes)
    if (code == c.code)
      dtype = c.dtype;
  if (!dtype)
    return bad("unsupported dtype '" + descr +
               "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)");
  if (order == '>' && dtypeSize(*dtype) > 1)
    return bad("big-endian dtype '" + descr + "' is not supported");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return bad("unsupported dtype '" + descr + "'");
  out.dtype = *dtype;

  if (!findKey(header, "fortran_order", pos))
    return bad("header has no 'fortran_order'");
  bool fortran = header.compare(pos, 4, "True") == 0;
  if (!fortran && header.compare(pos, 5, "False") != 0)
    return bad("bad 'fortran_order' value");

  if (!findKey(header, "shape", pos) || pos >= header.size() || header[pos] != '(')
    return bad("header has no 'shape' tuple");
  size_t end = header.find(')', pos);
  if (end == std::string::npos)
    return bad("unterminated 'shape' tuple");
  std::string dims = header.substr(pos + 1, end - pos - 1);
  std::string token;
  std::istringstream dimStream(dims);
  while (std::getline(dimStream, token, ',')) {
    size_t b = token.find_first_not_of(" L");
    if (b == std::string::npos)
      continue; // trailing comma of a 1-tuple
    size_t e = token.find_last_not_of(" L");
    std::string digits = token.substr(b, e - b + 1);
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return bad("bad shape entry '" + digits + "'");
    out.shape.push_back(std::stoll(digits));
  }
  int64_t nonTrivialDims = 0;
  for (int64_t d : out.shape)
    nonTrivialDims += d > 1;
  if (fortran && nonTrivialDims > 1)
    return bad("Fortran-order arrays are not supported");
  Result<int64_t> count = elementCountOf(out.shape);
  if (!count)
    return bad(count.message());
  if (static_cast<uint64_t>(*count) > std::numeric_limits<uint64_t>::max() / dtypeSize(out.dtype))
    return bad("shape is too large (byte size overflows)");
  out.dataBytes = static_cast<uint64_t>(*count) * dtypeSize(out.dtype);
  return out;
}

std::string typeOf(const NpyHeader &h) { return formatTensorType(h.dtype, h.shape); }

} // namespace

Result<Tensor> decodeNpy(const std::string &bytes, const std::string &label) {
  auto bad = [&](const std::string &why) {
    return Status::error("invalid .npy file '" + label + "': " + why);
  };
  size_t headerStart = 0, headerLength = 0;
  if (Status s = parsePrefix(bytes.substr(0, 12), headerStart, headerLength, bad); !s)
    return s;
  if (headerLength > bytes.size() - headerStart)
    return bad("truncated header");
  Result<NpyHeader> header =
      parseHeader(bytes.substr(headerStart, headerLength), headerStart + headerLength, bad);
  if (!header)
    return header.status();
  // The size check comes before the allocation: a header may promise
  // gigabytes that the file does not hold.
  size_t available = bytes.size() - header->dataStart;
  if (available != header->dataBytes)
    return bad("expected " + std::to_string(header->dataBytes) + " data bytes for " +
               typeOf(*header) + ", file has " + std::to_string(available));
  Result<Tensor> tensor = Tensor::allocate(header->dtype, header->shape);
  if (!tensor)
    return bad(tensor.message());
  if (available)
    std::memcpy(tensor->data(), bytes.data() + header->dataStart, available);
  return tensor;
}

Result<std::string> encodeNpy(const Tensor &tensor) {
  if (dtypeIsString(tensor.dtype()))
    return Status::error("a string tensor (" + tensor.typeString() +
                         ") cannot be written as .npy; print it instead");
  const char *code = nullptr;
  for (const NpyCode &c : kNpyCodes)
    if (c.dtype == tensor.dtype())
      code = c.code;
  if (!code)
    return Status::error("dtype " + std::string(dtypeName(tensor.dtype())) +
                         " has no NumPy equivalent");
  std::string shape = "(";
  for (size_t i = 0; i < tensor.rank(); ++i)
    shape += std::to_string(tensor.shape()[i]) + (tensor.rank() == 1 ? "," : (i + 1 < tensor.rank() ? ", " : ""));
  shape += ")";
  std::string dict = std::string("{'descr': '") +
                     (dtypeSize(tensor.dtype()) == 1 ? "|" : "<") + code +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  bool version2 = dict.size() + 11 > 65535;
  size_t prefix = version2 ? 12 : 10;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(kNpyMagic, kNpyMagicSize);
  out += static_cast<char>(version2 ? 2 : 1);
  out += '\0';
  size_t length = dict.size();
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i)
    out += static_cast<char>((length >> (8 * i)) & 0xff);
  out += dict;
  out.append(static_cast<const char *>(tensor.data()), tensor.byteSize());
  return out;
}

Result<Tensor> readNpyFile(const std::string &path) {
  // Read piece by piece: the header first, then exactly the data it
  // announces, checked against the file's size before anything is
  // allocated (and never more than that from a pipe or a device).
  auto bad = [&](const std::string &why) {
    return Status::error("invalid .npy file '" + path + "': " + why);
  };
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return Status::error("cannot open '" + path + "': " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> closer(file, &std::fclose);
  auto readUpTo = [&](size_t n, std::string &out) {
    out.resize(n);
    size_t got = n ? std::fread(&out[0], 1, n, file) : 0;
    out.resize(got);
    return got;
  };
  std::string prefix;
  readUpTo(12, prefix);
  if (std::ferror(file))
    return Status::error("cannot read '" + path + "': " + std::strerror(errno));
  size_t headerStart = 0, headerLength = 0;
  if (Status s = parsePrefix(prefix, headerStart, headerLength, bad); !s)
    return s;
  std::string header = prefix.substr(headerStart), rest;
  if (header.size() < headerLength) {
    readUpTo(headerLength - header.size(), rest);
    header += rest;
  }
  if (header.size() < headerLength)
    return bad("truncated header");
  std::string leftover = header.substr(headerLength); // data read with the prefix
  header.resize(headerLength);
  Result<NpyHeader> parsed = parseHeader(header, headerStart + headerLength, bad);
  if (!parsed)
    return parsed.status();
  struct stat info {};
  if (::fstat(::fileno(file), &info) == 0 && S_ISREG(info.st_mode)) {
    uint64_t size = static_cast<uint64_t>(info.st_size);
    uint64_t available = size > parsed->dataStart ? size - parsed->dataStart : 0;
    if (available != parsed->dataBytes)
      return bad("expected " + std::to_string(parsed->dataBytes) + " data bytes for " +
                 typeOf(*parsed) + ", file has " + std::to_string(available));
  }
  Result<Tensor> tensor = Tensor::allocate(parsed->dtype, parsed->shape);
  if (!tensor)
    return bad(tensor.message());
  auto *out = static_cast<char *>(tensor->data());
  size_t have = std::min<size_t>(leftover.size(), tensor->byteSize());
  std::memcpy(out, leftover.data(), have);
  if (leftover.size() > have)
    return bad("more data than " + typeOf(*parsed) + " holds");
  if (have < tensor->byteSize())
    have += std::fread(out + have, 1, tensor->byteSize() - have, file);
  if (have < tensor->byteSize())
    return bad("expected " + std::to_string(parsed->dataBytes) + " data bytes for " +
               typeOf(*parsed) + ", file has " + std::to_string(have));
  if (std::fgetc(file) != EOF)
    return bad("more data than " + typeOf(*parsed) + " holds");
  return tensor;
}

Status writeNpyFile(const Tensor &tensor, const std::string &path) {
  Result<std::string> bytes = encodeNpy(tensor);
  if (!bytes)
    return bytes.status();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return Status::error("cannot write '" + path + "': " + std::strerror(errno));
  out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  if (!out)
    return Status::error("cannot write '" + path + "': " + std::strerror(errno));
  return Status::success();
}

} // namespace turbine::runtime
