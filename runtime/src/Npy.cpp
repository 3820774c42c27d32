//===- Npy.cpp - NumPy .npy files <-> tensors -----------------------------===//
//
// Reads .npy versions 1.0, 2.0 and 3.0 (little-endian or byte-order-free
// dtypes, C order) and writes version 1.0 (2.0 when the header is too long).
// Supported descrs: f2 f4 f8, i1 i2 i4 i8, u1 u2 u4 u8, b1.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/TensorFormat.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

} // namespace

Result<Tensor> decodeNpy(const std::string &bytes, const std::string &label) {
  auto bad = [&](const std::string &why) {
    return Status::error("invalid .npy file '" + label + "': " + why);
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kNpyMagic, kNpyMagicSize) != 0)
    return bad("missing \\x93NUMPY magic");
  int major = static_cast<uint8_t>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<uint8_t>(bytes[8]) |
                   (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return bad("unsupported version " + std::to_string(major));
  }
  if (headerLength > bytes.size() - headerStart)
    return bad("truncated header");
  std::string header = bytes.substr(headerStart, headerLength);

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
  std::vector<int64_t> shape;
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
    shape.push_back(std::stoll(digits));
  }
  int64_t nonTrivialDims = 0;
  for (int64_t d : shape)
    nonTrivialDims += d > 1;
  if (fortran && nonTrivialDims > 1)
    return bad("Fortran-order arrays are not supported");

  Result<Tensor> tensor = Tensor::allocate(*dtype, shape);
  if (!tensor)
    return bad(tensor.message());
  size_t dataStart = headerStart + headerLength;
  size_t available = bytes.size() - dataStart;
  if (available != tensor->byteSize())
    return bad("expected " + std::to_string(tensor->byteSize()) +
               " data bytes for " + tensor->typeString() + ", file has " +
               std::to_string(available));
  if (available)
    std::memcpy(tensor->data(), bytes.data() + dataStart, available);
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
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return decodeNpy(buffer.str(), path);
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
