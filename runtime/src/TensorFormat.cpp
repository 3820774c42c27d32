//===- TensorFormat.cpp - IREE-style tensor text: parse and print --------===//
//
// Parses `--input` values ("2x2xf32=1 2 3 4", "f32=5", "2x2xf32=@x.bin",
// "@x.npy") and prints tensors as iree-run-module does ("2x2xf32=[1 2][3 4]").
// Every parse error names the offending token. String tensors:
// '2xstring="monday" tuesday' (double-quoted values may hold separators and
// the escapes \" \\ \n \t \r \xHH; bare words are taken as they are),
// printed quoted: 2xstring=["monday" "tuesday"] (StringOps.h, quoteString).
//===----------------------------------------------------------------------===//
#include "turbine/runtime/TensorFormat.h"

#include "Elements.h"
#include "HostMemory.h"
#include "turbine/runtime/StringOps.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include <sys/stat.h>

namespace turbine::runtime {

namespace {

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

/// A `dtype` tensor of `shape` read from the raw little-endian bytes of
/// `path`. A regular file must hold exactly the tensor's bytes, checked
/// before anything is allocated; from a pipe or a device the first bytes
/// the tensor needs are read.
Result<Tensor> readRawTensor(const std::string &path, DType dtype,
                             const std::vector<int64_t> &shape) {
  Result<int64_t> count = elementCountOf(shape);
  if (!count)
    return count.status();
  if (static_cast<uint64_t>(*count) > std::numeric_limits<uint64_t>::max() / dtypeSize(dtype))
    return Status::error("tensor " + formatTensorType(dtype, shape) +
                         " is too large (byte size overflows)");
  uint64_t needed = static_cast<uint64_t>(*count) * dtypeSize(dtype);
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return Status::error("cannot open '" + path + "': " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> closer(file, &std::fclose);
  struct stat info {};
  if (::fstat(::fileno(file), &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<uint64_t>(info.st_size) != needed)
    return Status::error("'" + path + "' has " + std::to_string(info.st_size) + " bytes but " +
                         formatTensorType(dtype, shape) + " needs " + std::to_string(needed));
  Result<Tensor> tensor = Tensor::allocate(dtype, shape);
  if (!tensor)
    return tensor;
  size_t got = needed ? std::fread(tensor->data(), 1, needed, file) : 0;
  if (got != needed)
    return Status::error("'" + path + "' has " + std::to_string(got) + " bytes but " +
                         formatTensorType(dtype, shape) + " needs " + std::to_string(needed));
  return tensor;
}

/// Parses a decimal non-negative dimension.
bool parseDim(std::string_view text, int64_t &dim) {
  if (text.empty() || text.size() > 18)
    return false;
  dim = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    dim = dim * 10 + (c - '0');
  }
  return true;
}

/// Parses one value token into element `i` of `tensor`.
Status parseElement(const std::string &token, Tensor &tensor, int64_t i) {
  DType dtype = tensor.dtype();
  auto bad = [&](const std::string &why) {
    return Status::error("invalid " + std::string(dtypeName(dtype)) + " value '" +
                         token + "'" + (why.empty() ? "" : ": " + why));
  };
  const char *begin = token.c_str();
  char *end = nullptr;
  errno = 0;
  if (dtypeIsFloat(dtype)) {
    double v = std::strtod(begin, &end);
    if (end == begin || *end != '\0')
      return bad("");
    detail::storeFloatElement(tensor, i, v);
    return Status::success();
  }
  if (dtype == DType::i1) {
    if (token == "true" || token == "1")
      detail::storeIntElement(tensor, i, 1);
    else if (token == "false" || token == "0")
      detail::storeIntElement(tensor, i, 0);
    else
      return bad("expected 0, 1, true or false");
    return Status::success();
  }
  int bits = static_cast<int>(dtypeSize(dtype) * 8);
  if (dtypeIsSigned(dtype)) {
    long long v = std::strtoll(begin, &end, 0);
    if (end == begin || *end != '\0')
      return bad("");
    int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min()
                            : -(int64_t(1) << (bits - 1));
    int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max()
                            : (int64_t(1) << (bits - 1)) - 1;
    if (errno == ERANGE || v < lo || v > hi)
      return bad("out of range");
    detail::storeIntElement(tensor, i, v);
    return Status::success();
  }
  if (token[0] == '-')
    return bad("negative value for an unsigned type");
  unsigned long long v = std::strtoull(begin, &end, 0);
  if (end == begin || *end != '\0')
    return bad("");
  uint64_t hi = bits == 64 ? std::numeric_limits<uint64_t>::max()
                           : (uint64_t(1) << bits) - 1;
  if (errno == ERANGE || v > hi)
    return bad("out of range");
  detail::storeIntElement(tensor, i, static_cast<int64_t>(v));
  return Status::success();
}

/// Splits the values of a string tensor: double-quoted strings (with
/// escapes) or bare words, separated by whitespace, commas or brackets.
Result<std::vector<std::string>> splitStringValues(std::string_view values) {
  std::vector<std::string> tokens;
  size_t i = 0, n = values.size();
  auto separator = [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '[' || c == ']';
  };
  while (i < n) {
    if (separator(values[i])) {
      ++i;
      continue;
    }
    std::string token;
    if (values[i] != '"') {
      while (i < n && !separator(values[i]))
        token += values[i++];
      tokens.push_back(std::move(token));
      continue;
    }
    size_t start = i++;
    bool closed = false;
    while (i < n) {
      char c = values[i++];
      if (c == '"') {
        closed = true;
        break;
      }
      if (c != '\\') {
        token += c;
        continue;
      }
      if (i >= n)
        break;
      char e = values[i++];
      switch (e) {
      case 'n': token += '\n'; break;
      case 't': token += '\t'; break;
      case 'r': token += '\r'; break;
      case '"': token += '"'; break;
      case '\\': token += '\\'; break;
      case 'x': {
        auto hex = [](char h) {
          return std::isxdigit(static_cast<unsigned char>(h)) != 0;
        };
        if (i + 1 >= n || !hex(values[i]) || !hex(values[i + 1]))
          return Status::error("invalid string value starting at '" +
                               std::string(values.substr(start, 20)) +
                               "': \\x needs two hex digits");
        token += static_cast<char>(std::stoi(std::string(values.substr(i, 2)), nullptr, 16));
        i += 2;
        break;
      }
      default:
        return Status::error("invalid string value starting at '" +
                             std::string(values.substr(start, 20)) + "': unknown escape '\\" +
                             std::string(1, e) + "'");
      }
    }
    if (!closed)
      return Status::error("invalid string value starting at '" +
                           std::string(values.substr(start, 20)) + "': missing closing quote");
    if (i < n && !separator(values[i]))
      return Status::error("invalid string value starting at '" +
                           std::string(values.substr(start, 20)) +
                           "': a closing quote must be followed by a separator");
    tokens.push_back(std::move(token));
  }
  return tokens;
}

/// "Nxstring=..." values (see the file comment).
Result<Tensor> parseStringTensor(Tensor tensor, std::string_view values) {
  if (!values.empty() && values[0] == '@')
    return Status::error("a string tensor cannot be read from raw bytes ('" +
                         std::string(values) + "'); list its values, e.g. "
                         "2xstring=\"a\" \"b c\"");
  Result<std::vector<std::string>> tokens = splitStringValues(values);
  if (!tokens)
    return tokens.status();
  int64_t count = tensor.elementCount();
  std::string *out = tensor.dataAs<std::string>();
  if (tokens->size() == 1 && count > 1) { // splat
    // Tensor::allocate counted the string objects; a value too long for
    // the objects themselves is copied onto the heap once per element, so
    // a short spec ("1000000xstring=<64 KiB>") could ask for gigabytes:
    // those characters are checked against the memory limit first.
    const std::string &value = (*tokens)[0];
    if (value.size() > std::string().capacity()) {
      uint64_t perElement = value.size() + 1;
      if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / perElement)
        return Status::error("the characters of a " + tensor.typeString() +
                             " splat overflow the address space");
      size_t chars = static_cast<size_t>(count) * perElement;
      if (Status s = detail::reserveMemory(chars, "the characters of a " + tensor.typeString() +
                                                      " splat of a " +
                                                      std::to_string(value.size()) +
                                                      "-byte value");
          !s)
        return s;
      detail::releaseMemory(chars);
    }
    for (int64_t i = 0; i < count; ++i)
      out[i] = value;
    return tensor;
  }
  if (static_cast<int64_t>(tokens->size()) != count)
    return Status::error(tensor.typeString() + " needs " + std::to_string(count) +
                         " value" + (count == 1 ? "" : "s") + ", got " +
                         std::to_string(tokens->size()));
  for (int64_t i = 0; i < count; ++i)
    out[i] = std::move((*tokens)[i]);
  return tensor;
}

} // namespace

Status parseTensorType(std::string_view text, DType &dtype,
                       std::vector<int64_t> &shape) {
  text = trim(text);
  shape.clear();
  std::string_view rest = text;
  while (true) {
    size_t x = rest.find('x');
    if (x == std::string_view::npos)
      break;
    int64_t dim;
    std::string_view token = rest.substr(0, x);
    if (!parseDim(token, dim))
      return Status::error("invalid tensor type '" + std::string(text) + "': '" +
                           std::string(token) + "' is not a dimension");
    shape.push_back(dim);
    rest = rest.substr(x + 1);
  }
  std::optional<DType> parsed = parseDType(rest);
  if (!parsed)
    return Status::error("invalid tensor type '" + std::string(text) + "': '" +
                         std::string(rest) + "' is not a dtype (expected one of "
                         "f16 bf16 f32 f64 i1 i8 i16 i32 i64 u8 u16 u32 u64 string)");
  dtype = *parsed;
  return Status::success();
}

Result<Tensor> parseTensorSpec(std::string_view spec) {
  spec = trim(spec);
  if (spec.empty())
    return Status::error("empty tensor value (expected e.g. '2x2xf32=1 2 3 4' or "
                         "'@file.npy')");
  if (spec[0] == '@')
    return readNpyFile(std::string(spec.substr(1)));

  size_t eq = spec.find('=');
  DType dtype;
  std::vector<int64_t> shape;
  if (Status s = parseTensorType(spec.substr(0, eq), dtype, shape); !s)
    return s;
  std::string_view values =
      eq == std::string_view::npos ? std::string_view() : trim(spec.substr(eq + 1));
  if (dtype != DType::string && !values.empty() && values[0] == '@')
    return readRawTensor(std::string(values.substr(1)), dtype, shape);
  Result<Tensor> created = Tensor::zeros(dtype, shape);
  if (!created)
    return created;
  Tensor tensor = std::move(*created);
  if (eq == std::string_view::npos)
    return tensor; // "2x2xf32": zeros
  if (dtype == DType::string)
    return parseStringTensor(std::move(tensor), values);

  std::vector<std::string> tokens;
  std::string current;
  for (char c : values) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '[' ||
        c == ']') {
      if (!current.empty())
        tokens.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty())
    tokens.push_back(std::move(current));

  int64_t count = tensor.elementCount();
  if (tokens.size() == 1 && count > 1) { // splat
    if (Status s = parseElement(tokens[0], tensor, 0); !s)
      return s;
    for (int64_t i = 1; i < count; ++i)
      std::memcpy(tensor.dataAs<char>() + i * dtypeSize(dtype), tensor.data(),
                  dtypeSize(dtype));
    return tensor;
  }
  if (static_cast<int64_t>(tokens.size()) != count)
    return Status::error(tensor.typeString() + " needs " + std::to_string(count) +
                         " value" + (count == 1 ? "" : "s") + ", got " +
                         std::to_string(tokens.size()));
  for (int64_t i = 0; i < count; ++i)
    if (Status s = parseElement(tokens[i], tensor, i); !s)
      return s;
  return tensor;
}

namespace {

void appendElement(std::string &out, const Tensor &t, int64_t i) {
  char buffer[64];
  if (dtypeIsString(t.dtype())) {
    out += quoteString(t.dataAs<std::string>()[i]);
    return;
  }
  if (dtypeIsFloat(t.dtype())) {
    std::snprintf(buffer, sizeof(buffer), "%G", elementAsDouble(t, i));
  } else if (t.dtype() == DType::u64) {
    std::snprintf(buffer, sizeof(buffer), "%" PRIu64,
                  static_cast<uint64_t>(elementAsInt(t, i)));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%" PRId64, elementAsInt(t, i));
  }
  out += buffer;
}

/// Appends dims [dim, rank) starting at element `offset`; innermost dims are
/// space separated, outer dims bracketed. Returns false once elided.
bool appendDims(std::string &out, const Tensor &t, size_t dim, int64_t offset,
                int64_t stride, size_t &printed, size_t maxElements) {
  const auto &shape = t.shape();
  int64_t extent = shape[dim];
  int64_t innerStride = stride / (extent == 0 ? 1 : extent);
  for (int64_t i = 0; i < extent; ++i) {
    if (dim + 1 == shape.size()) {
      if (i > 0)
        out += ' ';
      if (printed >= maxElements) {
        out += "...";
        return false;
      }
      appendElement(out, t, offset + i);
      ++printed;
    } else {
      // An empty sub-tensor ("[]") counts as one printed item, so a shape
      // like 1x7000000x0 prints at most maxElements of them, not millions.
      if (innerStride == 0 && printed >= maxElements) {
        out += "...";
        return false;
      }
      out += '[';
      bool more = appendDims(out, t, dim + 1, offset + i * innerStride,
                             innerStride, printed, maxElements);
      out += ']';
      if (innerStride == 0)
        ++printed;
      if (!more)
        return false;
    }
  }
  return true;
}

} // namespace

std::string formatTensor(const Tensor &tensor, size_t maxElements) {
  std::string out = tensor.typeString() + "=";
  if (!tensor.isValid())
    return out + "<no storage>";
  if (tensor.rank() == 0) {
    appendElement(out, tensor, 0);
    return out;
  }
  size_t printed = 0;
  appendDims(out, tensor, 0, 0, tensor.elementCount(), printed, maxElements);
  return out;
}

} // namespace turbine::runtime
