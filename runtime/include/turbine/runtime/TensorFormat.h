//===- TensorFormat.h - Tensors as text and files (IREE conventions) -----===//
//
// The `--input`/`--output` conventions of iree-run-module, for tools and
// embedders:
//   "2x2xf32=1 2 3 4"     values (whitespace, commas and brackets separate;
//                         one value is splatted to every element)
//   "f32=5"               a scalar
//   "2x2xf32"             zeros
//   "2x2xf32=@x.bin"      raw little-endian bytes from a file
//   "@x.npy"              a NumPy .npy file (v1/v2/v3, little-endian, C order;
//                         not string arrays)
//   '3xstring="a b" c ""' strings: double-quoted (escapes \" \\ \n \t \r
//                         \xHH) or bare words; printed double-quoted
// and printing as iree-run-module does: "2x2xf32=[1 2][3 4]".
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_TENSORFORMAT_H
#define TURBINE_RUNTIME_TENSORFORMAT_H

#include "turbine/runtime/Status.h"
#include "turbine/runtime/Tensor.h"

#include <string>
#include <string_view>

namespace turbine::runtime {

/// Parses "4x3xf32" / "f32" into dtype and shape.
Status parseTensorType(std::string_view text, DType &dtype,
                       std::vector<int64_t> &shape);
/// Parses an IREE-style input value (see the file comment).
Result<Tensor> parseTensorSpec(std::string_view spec);

/// Decodes a .npy file's bytes; `label` names it in errors.
Result<Tensor> decodeNpy(const std::string &bytes, const std::string &label);
/// Encodes a tensor as .npy (version 1.0, or 2.0 for very long headers).
Result<std::string> encodeNpy(const Tensor &tensor);
Result<Tensor> readNpyFile(const std::string &path);
Status writeNpyFile(const Tensor &tensor, const std::string &path);

/// Formats like iree-run-module: "2x2xf32=[1 2][3 4]", "4xi32=1 2 3 4",
/// "f32=5". Prints at most `maxElements` values, then "...".
std::string formatTensor(const Tensor &tensor, size_t maxElements = 1024);

/// Reads element `i` (row-major) converted to double / int64.
double elementAsDouble(const Tensor &tensor, int64_t i);
int64_t elementAsInt(const Tensor &tensor, int64_t i);

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_TENSORFORMAT_H
