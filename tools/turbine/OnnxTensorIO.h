//===- OnnxTensorIO.h - onnx.TensorProto files -> runtime tensors --------===//
//
// The ONNX backend test data stores every input and expected output as a
// serialized onnx.TensorProto (`input_0.pb`, `output_0.pb`, ...). This reads
// one into a runtime::Tensor: all numeric dtypes and bool, from `raw_data`
// (little-endian) or from the typed repeated fields (float_data, int32_data,
// int64_data, double_data, uint64_data; f16/bf16 and the narrow integer types
// are carried in int32_data). Strings, complex numbers, external data and
// segments are reported as "unsupported: ...". Sequence- and optional-typed
// graph values are stored as onnx.SequenceProto / onnx.OptionalProto files
// (readDataValueFile). The protobuf classes stay in the .cpp.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_ONNXTENSORIO_H
#define TURBINE_TOOLS_ONNXTENSORIO_H

#include "turbine/runtime/Runtime.h"

#include <string>
#include <vector>

namespace turbine::tools {

/// Parses serialized TensorProto bytes; `label` names them in errors.
runtime::Result<runtime::Tensor> decodeTensorProto(const std::string &bytes,
                                                   const std::string &label);

/// Reads and decodes the TensorProto file at `path`.
runtime::Result<runtime::Tensor> readTensorProtoFile(const std::string &path);

/// One graph value of the test data: a tensor, a sequence of tensors, or an
/// empty optional (an optional holding a value reads as that value).
struct OnnxDataValue {
  enum class Kind { Tensor, Sequence, None } kind = Kind::Tensor;
  std::vector<runtime::Tensor> tensors; ///< one for a tensor; the elements of a sequence
};

/// Reads a test data file: a TensorProto, or a SequenceProto of tensors when
/// `sequence`, wrapped in an OptionalProto when `optional`.
runtime::Result<OnnxDataValue> readDataValueFile(const std::string &path, bool sequence,
                                                 bool optional);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_ONNXTENSORIO_H
