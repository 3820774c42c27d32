//===- OnnxTensorIO.h - onnx.TensorProto files -> runtime tensors --------===//
//
// The ONNX backend test data stores every input and expected output as a
// serialized onnx.TensorProto (`input_0.pb`, `output_0.pb`, ...). This reads
// one into a runtime::Tensor: all numeric dtypes and bool, from `raw_data`
// (little-endian) or from the typed repeated fields (float_data, int32_data,
// int64_data, double_data, uint64_data; f16/bf16 and the narrow integer types
// are carried in int32_data). Strings, complex numbers, external data and
// segments are reported as "unsupported: ...". The protobuf classes stay in
// the .cpp.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_ONNXTENSORIO_H
#define TURBINE_TOOLS_ONNXTENSORIO_H

#include "turbine/runtime/Runtime.h"

#include <string>

namespace turbine::tools {

/// Parses serialized TensorProto bytes; `label` names them in errors.
runtime::Result<runtime::Tensor> decodeTensorProto(const std::string &bytes,
                                                   const std::string &label);

/// Reads and decodes the TensorProto file at `path`.
runtime::Result<runtime::Tensor> readTensorProtoFile(const std::string &path);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_ONNXTENSORIO_H
