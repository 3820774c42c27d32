//===- StringOps.cpp - StringNormalizer and Cast to/from strings ---------===//
//
// The host side of string tensors (see StringOps.h). UTF-8 is decoded
// strictly (no overlong forms, surrogates or code points past U+10FFFF);
// case mapping uses the C library's wide-character tables of a UTF-8 locale
// (C.UTF-8 carries Unicode's simple case mapping), looked up once per name
// and kept for the life of the process. Float formatting takes the shortest
// round-trip digits from std::to_chars and lays them out as NumPy's str
// does, which is what the ONNX reference and its test data use.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/StringOps.h"

#include "Elements.h"
#include "Float16.h"
#include "HostStringOps.h"
#include "turbine/runtime/TensorFormat.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>

#include <locale.h>
#include <wctype.h>

namespace turbine::runtime {
namespace {

//===--- UTF-8 ------------------------------------------------------------===//

/// Decodes `text` into code points; false on malformed UTF-8 (`badOffset`
/// is then the byte offset of the first bad sequence).
bool decodeUtf8(const std::string &text, std::u32string &out, size_t &badOffset) {
  out.clear();
  const auto *s = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    char32_t cp;
    size_t length;
    if (c < 0x80) {
      cp = c;
      length = 1;
    } else if ((c & 0xe0) == 0xc0) {
      cp = c & 0x1f;
      length = 2;
    } else if ((c & 0xf0) == 0xe0) {
      cp = c & 0x0f;
      length = 3;
    } else if ((c & 0xf8) == 0xf0) {
      cp = c & 0x07;
      length = 4;
    } else {
      badOffset = i;
      return false;
    }
    if (i + length > n) {
      badOffset = i;
      return false;
    }
    for (size_t k = 1; k < length; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) {
        badOffset = i;
        return false;
      }
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    static const char32_t kMinimum[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinimum[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      badOffset = i;
      return false;
    }
    out.push_back(cp);
    i += length;
  }
  return true;
}

void appendUtf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

//===--- locales ----------------------------------------------------------===//

/// newlocale for `name`, trying the UTF-8 spellings too; null if none exists.
locale_t openLocale(const std::string &name) {
  for (const std::string &candidate : {name, name + ".UTF-8", name + ".utf8"})
    if (locale_t l = newlocale(LC_CTYPE_MASK, candidate.c_str(), locale_t(0)))
      return l;
  return locale_t(0);
}

/// True for names of the POSIX form language[_territory][.codeset][@modifier]
/// ("en_US.UTF-8", "tr", "de_DE@euro"). The C library reads locale data from
/// any absolute path it is given as a name, and a name comes from a model or
/// an artifact: only plain names are passed to it.
bool isPlainLocaleName(const std::string &name) {
  if (name.empty() || name.size() > 64)
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-' &&
        c != '@')
      return false;
  return std::isalpha(static_cast<unsigned char>(name[0])) && name.find("..") == std::string::npos;
}

/// The locale whose case tables map `name`'s strings (see normalizeStrings);
/// an error when none fits. Locales opened for a name are kept for the
/// process (one per installed locale asked for: the cache cannot grow with
/// the names a model makes up), in storage that is never destroyed, since
/// locale_t handles may be in use until exit; names that are not installed
/// share one fallback.
Result<locale_t> caseMappingLocale(const std::string &name) {
  static std::mutex mutex;
  static auto *opened = new std::map<std::string, locale_t>();
  static locale_t fallback = locale_t(0);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = opened->find(name); it != opened->end())
    return it->second;
  if (!name.empty() && !isPlainLocaleName(name))
    return Status::error("'" + name.substr(0, 64) + "' is not a locale name "
                         "(language[_territory][.codeset][@modifier], e.g. en_US.UTF-8)");
  if (locale_t l = name.empty() ? locale_t(0) : openLocale(name)) {
    (*opened)[name] = l;
    return l;
  }
  std::string language = name.substr(0, name.find_first_of("_.-@"));
  if (language == "tr" || language == "az" || language == "lt")
    return Status::error("locale '" + name + "' is not installed on this machine, "
                         "and its case rules differ from Unicode's default mapping");
  if (!fallback)
    for (const char *candidate : {"C.UTF-8", "C.utf8", "en_US.UTF-8"})
      if ((fallback = newlocale(LC_CTYPE_MASK, candidate, locale_t(0))))
        break;
  if (!fallback)
    return Status::error("no UTF-8 locale (C.UTF-8) is installed for Unicode case mapping");
  return fallback;
}

/// `text` with every code point mapped by towupper_l / towlower_l.
Result<std::string> changeCase(const std::string &text, bool upper, locale_t l) {
  std::u32string cps;
  size_t bad = 0;
  if (!decodeUtf8(text, cps, bad))
    return Status::error("is not valid UTF-8 (at byte " + std::to_string(bad) + ")");
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : cps) {
    wint_t mapped = upper ? towupper_l(static_cast<wint_t>(cp), l)
                          : towlower_l(static_cast<wint_t>(cp), l);
    appendUtf8(out, static_cast<char32_t>(mapped));
  }
  return out;
}

//===--- formatting numbers -----------------------------------------------===//

/// NumPy's str of a finite float given its shortest round-trip digits
/// (`digits`, no dot) and decimal exponent of the first digit.
std::string layoutDecimal(bool negative, const std::string &digits, int exponent,
                          bool scientific) {
  std::string out = negative ? "-" : "";
  if (scientific) {
    out += digits[0];
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    char buffer[16];
    std::snprintf(buffer, sizeof(buffer), "e%c%02d", exponent < 0 ? '-' : '+',
                  exponent < 0 ? -exponent : exponent);
    return out + buffer;
  }
  if (exponent < 0)
    return out + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  size_t integerDigits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= integerDigits)
    return out + digits + std::string(integerDigits - digits.size(), '0') + ".0";
  return out + digits.substr(0, integerDigits) + "." + digits.substr(integerDigits);
}

/// Splits to_chars' scientific text ("-1.2345e-07") into sign, digits and
/// exponent.
void splitScientific(const std::string &text, bool &negative, std::string &digits,
                     int &exponent) {
  size_t at = 0;
  negative = text[0] == '-';
  if (negative)
    ++at;
  size_t e = text.find('e');
  digits.clear();
  for (size_t i = at; i < e; ++i)
    if (text[i] != '.')
      digits += text[i];
  exponent = std::atoi(text.c_str() + e + 1);
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
}

/// Shortest scientific text of `value` that reads back to the same `T`.
template <typename T> std::string shortestScientific(T value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value,
                              std::chars_format::scientific);
  return std::string(buffer, result.ptr);
}

/// Shortest scientific text of a 16-bit float (`toBits` rounds a float to
/// its format) that reads back to the same bits.
template <typename ToBits>
std::string shortestScientific16(float value, uint16_t bits, ToBits toBits) {
  char buffer[64];
  for (int precision = 0; precision < 9; ++precision) {
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                std::chars_format::scientific, precision);
    float back = 0;
    std::from_chars(buffer, result.ptr, back);
    if (toBits(back) == bits)
      return std::string(buffer, result.ptr);
  }
  return shortestScientific(value);
}

std::string formatFloat(double value, const std::string &scientificText) {
  if (std::isnan(value))
    return "NaN";
  if (std::isinf(value))
    return value < 0 ? "-INF" : "INF";
  bool negative;
  std::string digits;
  int exponent;
  splitScientific(scientificText, negative, digits, exponent);
  double magnitude = std::fabs(value);
  bool scientific = !(value == 0 || (magnitude >= 1e-4 && magnitude < 1e16));
  if (value == 0) {
    digits = "0";
    exponent = 0;
  }
  return layoutDecimal(negative, digits, exponent, scientific);
}

std::string formatElement(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::f32: {
    float v = t.dataAs<float>()[i];
    return formatFloat(v, std::isfinite(v) ? shortestScientific(v) : "");
  }
  case DType::f64: {
    double v = t.dataAs<double>()[i];
    return formatFloat(v, std::isfinite(v) ? shortestScientific(v) : "");
  }
  case DType::f16:
  case DType::bf16: {
    uint16_t bits = t.dataAs<uint16_t>()[i];
    bool half = t.dtype() == DType::f16;
    float v = half ? detail::halfToFloat(bits) : detail::bf16ToFloat(bits);
    if (!std::isfinite(v))
      return formatFloat(v, "");
    std::string text = half ? shortestScientific16(v, bits, detail::floatToHalf)
                            : shortestScientific16(v, bits, detail::floatToBf16);
    return formatFloat(v, text);
  }
  case DType::i1:
    return t.dataAs<uint8_t>()[i] ? "True" : "False";
  case DType::u64:
    return std::to_string(static_cast<uint64_t>(elementAsInt(t, i)));
  default:
    return std::to_string(elementAsInt(t, i));
  }
}

//===--- parsing numbers --------------------------------------------------===//

std::string_view trimSpaces(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
                                   c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

/// Parses a decimal float (plain or scientific, optional sign) or one of
/// the reserved words; false for anything else.
template <typename T> bool parseFloatText(std::string_view text, T &out) {
  text = trimSpaces(text);
  bool negative = false;
  std::string_view body = text;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (equalsIgnoringCase(body, "nan")) {
    out = std::numeric_limits<T>::quiet_NaN();
    return true;
  }
  if (equalsIgnoringCase(body, "inf") || equalsIgnoringCase(body, "infinity")) {
    out = negative ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    return true;
  }
  if (body.empty() || body[0] == '+' || body[0] == '-')
    return false;
  T value = 0;
  auto result = std::from_chars(body.data(), body.data() + body.size(), value,
                                std::chars_format::general);
  if (result.ptr != body.data() + body.size())
    return false;
  if (result.ec == std::errc::result_out_of_range) {
    // Beyond the type's range: infinity, or zero below its smallest value
    // (as NumPy and Python's float() read them).
    std::string copy(body);
    double wide = std::strtod(copy.c_str(), nullptr);
    value = static_cast<T>(wide);
  } else if (result.ec != std::errc()) {
    return false;
  }
  out = negative ? -value : value;
  return true;
}

/// Range of integer dtype `t` as [lo, hi] (u64's hi does not fit: see caller).
void integerRange(DType t, int64_t &lo, uint64_t &hi) {
  int bits = static_cast<int>(dtypeSize(t) * 8);
  if (dtypeIsSigned(t)) {
    lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
    hi = bits == 64 ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                    : (uint64_t(1) << (bits - 1)) - 1;
  } else {
    lo = 0;
    hi = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t(1) << bits) - 1;
  }
}

/// Stores string `text` into element `i` of `out`; an error text on failure.
std::string parseElement(const std::string &text, Tensor &out, int64_t i) {
  DType t = out.dtype();
  if (t == DType::f32) {
    float v;
    if (!parseFloatText(text, v))
      return "is not a number";
    out.dataAs<float>()[i] = v;
    return "";
  }
  if (dtypeIsFloat(t)) {
    double v;
    if (!parseFloatText(text, v))
      return "is not a number";
    detail::storeFloatElement(out, i, v);
    return "";
  }
  std::string_view body = trimSpaces(text);
  if (t == DType::i1) {
    if (equalsIgnoringCase(body, "true")) {
      detail::storeIntElement(out, i, 1);
      return "";
    }
    if (equalsIgnoringCase(body, "false")) {
      detail::storeIntElement(out, i, 0);
      return "";
    }
    double v;
    if (!parseFloatText(body, v))
      return "is not a bool (True, False or a number)";
    detail::storeIntElement(out, i, !(v == 0));
    return "";
  }
  int64_t lo;
  uint64_t hi;
  integerRange(t, lo, hi);
  std::string_view digits = body;
  if (!digits.empty() && digits[0] == '+')
    digits.remove_prefix(1);
  bool negative = !digits.empty() && digits[0] == '-';
  if (!negative) {
    uint64_t v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (r.ptr == digits.data() + digits.size() && !digits.empty()) {
      if (r.ec != std::errc() || v > hi)
        return "is out of range for " + std::string(dtypeName(t));
      detail::storeIntElement(out, i, static_cast<int64_t>(v));
      return "";
    }
  } else {
    int64_t v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (r.ptr == digits.data() + digits.size()) {
      if (r.ec != std::errc() || v < lo)
        return "is out of range for " + std::string(dtypeName(t));
      detail::storeIntElement(out, i, v);
      return "";
    }
  }
  // A decimal fraction or scientific number: truncated toward zero.
  double v;
  if (!parseFloatText(body, v) || std::isnan(v))
    return "is not a number";
  double truncated = std::trunc(v);
  if (!(truncated >= static_cast<double>(lo) && truncated <= static_cast<double>(hi)) ||
      (dtypeSize(t) == 8 && truncated >= 18446744073709551616.0) ||
      (t == DType::i64 && truncated >= 9223372036854775808.0))
    return "is out of range for " + std::string(dtypeName(t));
  if (truncated < 0)
    detail::storeIntElement(out, i, static_cast<int64_t>(truncated));
  else
    detail::storeIntElement(out, i, static_cast<int64_t>(static_cast<uint64_t>(truncated)));
  return "";
}

std::string elementLabel(int64_t i, const std::string &value) {
  return "element " + std::to_string(i) + " (" + quoteString(value) + ")";
}

} // namespace

std::string quoteString(const std::string &value) {
  std::string out = "\"";
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (u < 0x20 || u == 0x7f) {
        char buffer[8];
        std::snprintf(buffer, sizeof(buffer), "\\x%02x", u);
        out += buffer;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

Result<Tensor> normalizeStrings(const Tensor &input, StringCaseChange caseChange,
                                bool caseSensitive,
                                const std::vector<std::string> &stopwords,
                                const std::string &locale) {
  if (input.dtype() != DType::string)
    return Status::error("StringNormalizer: input is " + input.typeString() +
                         ", expected strings");
  bool rowVector = input.rank() == 2;
  if (!(input.rank() == 1 || (rowVector && input.shape()[0] == 1)))
    return Status::error("StringNormalizer: input is " + input.typeString() +
                         "; ONNX allows only [C] and [1, C]");
  bool needsCase = caseChange != StringCaseChange::None ||
                   (!caseSensitive && !stopwords.empty());
  locale_t l = locale_t(0);
  if (needsCase) {
    Result<locale_t> found = caseMappingLocale(locale);
    if (!found)
      return Status::error("StringNormalizer: " + found.message());
    l = *found;
  }
  std::unordered_set<std::string> stops;
  for (const std::string &word : stopwords) {
    if (caseSensitive) {
      stops.insert(word);
      continue;
    }
    Result<std::string> folded = changeCase(word, /*upper=*/false, l);
    if (!folded)
      return Status::error("StringNormalizer: stopword " + quoteString(word) + " " +
                           folded.message());
    stops.insert(*folded);
  }
  const std::string *in = input.dataAs<std::string>();
  std::vector<std::string> kept;
  for (int64_t i = 0; i < input.elementCount(); ++i) {
    const std::string &word = in[i];
    if (!stops.empty()) {
      std::string key = word;
      if (!caseSensitive) {
        Result<std::string> folded = changeCase(word, /*upper=*/false, l);
        if (!folded)
          return Status::error("StringNormalizer: " + elementLabel(i, word) + " " +
                               folded.message());
        key = std::move(*folded);
      }
      if (stops.count(key))
        continue;
    }
    if (caseChange == StringCaseChange::None) {
      kept.push_back(word);
      continue;
    }
    Result<std::string> changed =
        changeCase(word, caseChange == StringCaseChange::Upper, l);
    if (!changed)
      return Status::error("StringNormalizer: " + elementLabel(i, word) + " " +
                           changed.message());
    kept.push_back(std::move(*changed));
  }
  // Everything removed: one empty string, [1] or [1, 1] (the ONNX rule).
  if (kept.empty() && input.elementCount() > 0)
    kept.emplace_back();
  int64_t count = static_cast<int64_t>(kept.size());
  std::vector<int64_t> shape = rowVector ? std::vector<int64_t>{1, count}
                                         : std::vector<int64_t>{count};
  return Tensor::fromStrings(std::move(shape), std::move(kept));
}

Result<Tensor> formatAsStrings(const Tensor &input) {
  if (input.dtype() == DType::string)
    return input.clone();
  std::vector<std::string> values;
  values.reserve(static_cast<size_t>(input.elementCount()));
  for (int64_t i = 0; i < input.elementCount(); ++i)
    values.push_back(formatElement(input, i));
  return Tensor::fromStrings(input.shape(), std::move(values));
}

Result<Tensor> parseStrings(const Tensor &input, DType to) {
  if (input.dtype() != DType::string)
    return Status::error("cast from strings: input is " + input.typeString() +
                         ", expected strings");
  if (to == DType::string)
    return input.clone();
  Result<Tensor> out = Tensor::zeros(to, input.shape());
  if (!out)
    return out;
  const std::string *in = input.dataAs<std::string>();
  for (int64_t i = 0; i < input.elementCount(); ++i) {
    std::string why = parseElement(in[i], *out, i);
    if (!why.empty())
      return Status::error("cast from strings to " + std::string(dtypeName(to)) + ": " +
                           elementLabel(i, in[i]) + " " + why);
  }
  return out;
}

} // namespace turbine::runtime

//===--- the host program's string opcodes --------------------------------===//

namespace turbine::runtime::detail {

Result<Tensor> runStringInstruction(const artifact::Instruction &inst,
                                    const Tensor &operand) {
  using artifact::Opcode;
  switch (inst.op) {
  case Opcode::StringNormalize: {
    StringCaseChange change = StringCaseChange::None;
    if (inst.caseChange == artifact::StringCase::Lower)
      change = StringCaseChange::Lower;
    else if (inst.caseChange == artifact::StringCase::Upper)
      change = StringCaseChange::Upper;
    return normalizeStrings(operand, change, inst.caseSensitive, inst.strings,
                            inst.locale);
  }
  case Opcode::ToString: {
    // Kernels compute in signless integers: an i8 buffer may hold the u8
    // values the instruction's dtype says (same size, both integers).
    bool sameBits = !dtypeIsFloat(operand.dtype()) && !dtypeIsFloat(inst.dtype) &&
                    operand.dtype() != DType::i1 && inst.dtype != DType::i1 &&
                    dtypeSize(operand.dtype()) == dtypeSize(inst.dtype);
    if (dtypeIsString(operand.dtype()) || (operand.dtype() != inst.dtype && !sameBits))
      return Status::error("cast to strings expects a " +
                           std::string(dtypeName(inst.dtype)) + " operand, got " +
                           operand.typeString());
    if (operand.dtype() == inst.dtype)
      return formatAsStrings(operand);
    auto keepAlive = std::make_shared<Tensor>(operand);
    Result<Tensor> view = Tensor::wrap(inst.dtype, operand.shape(),
                                       const_cast<void *>(operand.data()), keepAlive,
                                       /*readOnly=*/true);
    if (!view)
      return view;
    return formatAsStrings(*view);
  }
  case Opcode::FromString:
    if (!dtypeIsString(operand.dtype()))
      return Status::error("cast from strings expects a string operand, got " +
                           operand.typeString());
    return parseStrings(operand, inst.dtype);
  default:
    break;
  }
  return Status::error("not a string instruction");
}

} // namespace turbine::runtime::detail
