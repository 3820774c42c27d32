//===- StringOps.h - Host implementations of ONNX's string operations ----===//
//
// String tensors (DType::string) never reach a kernel: the host program runs
// these directly (opcodes string_normalize, to_string, from_string of
// artifact/Module.h). They are public so embedders and tests can call them.
//
//   normalizeStrings     ONNX StringNormalizer: drop stopwords, then change
//                        case (UTF-8, Unicode simple case mapping).
//   formatAsStrings      ONNX Cast to STRING.
//   parseStrings         ONNX Cast from STRING.
//
// Every failure (invalid UTF-8, a string that is not a number, a value out
// of the target's range, a bad shape) is an error naming the element.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_STRINGOPS_H
#define TURBINE_RUNTIME_STRINGOPS_H

#include "turbine/runtime/Status.h"
#include "turbine/runtime/Tensor.h"

#include <string>
#include <vector>

namespace turbine::runtime {

enum class StringCaseChange { None, Lower, Upper };

/// ONNX StringNormalizer (opset 10). `input` is [C] or [1, C] strings.
/// Elements equal to a stopword are removed (compared after lower-casing
/// both sides unless `caseSensitive`), the rest get `caseChange`. The result
/// is [C'] or [1, C']; when every element was removed it is [1] or [1, 1]
/// holding one empty string (the ONNX rule). Case mapping is Unicode's
/// simple (one code point to one) mapping; `locale` names a C library
/// locale whose mapping to use ("en_US", "tr_TR.UTF-8"); "" or a locale that
/// is not installed uses the Unicode default, except for the languages
/// whose case rules differ from it (tr, az, lt), which are an error then.
/// A `locale` that is not a plain name (language[_territory][.codeset]
/// [@modifier]: a path, "..") is an error: it is never handed to the C
/// library, which would read locale data from a path.
Result<Tensor> normalizeStrings(const Tensor &input, StringCaseChange caseChange,
                                bool caseSensitive,
                                const std::vector<std::string> &stopwords,
                                const std::string &locale);

/// ONNX Cast of a number or bool tensor to strings, formatted as the ONNX
/// reference (NumPy's str) does: floats as the shortest text that reads
/// back to the same value, positional for 1e-4 <= |x| < 1e16 ("0.5",
/// "1.0", "123456.0") and scientific otherwise ("1e-07", "1.5e+16"); NaN
/// and infinities as ONNX's reserved "NaN", "INF", "-INF"; integers in
/// decimal; bools "True" / "False".
Result<Tensor> formatAsStrings(const Tensor &input);

/// ONNX Cast of strings to `to` (a number type or i1). Floats accept plain
/// and scientific decimal text with optional sign and surrounding spaces,
/// and, in any letter case, "NaN", "INF", "+INF", "-INF", "Infinity".
/// Integers accept decimal integers; decimal fractions are truncated toward
/// zero ("100.5" -> 100, as ONNX allows); a value outside the type's range
/// is an error. Bools accept "True"/"False" (any case) and numbers (non-zero
/// is true). Anything else is an error naming the element.
Result<Tensor> parseStrings(const Tensor &input, DType to);

/// One string element as printed in tensor text: double-quoted, with
/// \" \\ \n \t \r and \xHH escapes for other control bytes (UTF-8 as is).
std::string quoteString(const std::string &value);

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_STRINGOPS_H
