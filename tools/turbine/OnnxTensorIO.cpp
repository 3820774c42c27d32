//===- OnnxTensorIO.cpp - onnx.TensorProto files -> runtime tensors ------===//
//
// Maps TensorProto.data_type to a runtime DType, then copies the elements:
// raw_data byte for byte (the ONNX format is little-endian, like the hosts we
// run on; bool is one byte per element, as in the runtime), or the typed field
// the ONNX spec assigns to that dtype, narrowing each value to the element
// width (f16/bf16 values are their 16-bit patterns in int32_data). String
// tensors come from string_data, one std::string per element.
//===----------------------------------------------------------------------===//
#include "OnnxTensorIO.h"

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace turbine::tools {
namespace {

using runtime::Result;
using runtime::Status;
using runtime::Tensor;

/// The runtime dtype of an ONNX element type, or nullopt if it has none.
std::optional<DType> dtypeOfOnnxType(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return DType::f32;
  case onnx::TensorProto::DOUBLE: return DType::f64;
  case onnx::TensorProto::FLOAT16: return DType::f16;
  case onnx::TensorProto::BFLOAT16: return DType::bf16;
  case onnx::TensorProto::BOOL: return DType::i1;
  case onnx::TensorProto::INT8: return DType::i8;
  case onnx::TensorProto::INT16: return DType::i16;
  case onnx::TensorProto::INT32: return DType::i32;
  case onnx::TensorProto::INT64: return DType::i64;
  case onnx::TensorProto::UINT8: return DType::u8;
  case onnx::TensorProto::UINT16: return DType::u16;
  case onnx::TensorProto::UINT32: return DType::u32;
  case onnx::TensorProto::UINT64: return DType::u64;
  default: return std::nullopt;
  }
}

/// Copies `values` into `tensor`, narrowing each to the element type `T`.
template <typename T, typename Field>
void copyNarrowed(const Field &values, Tensor &tensor) {
  T *out = tensor.dataAs<T>();
  for (int i = 0; i < values.size(); ++i)
    out[i] = static_cast<T>(values.Get(i));
}

/// Fills `tensor` from the typed repeated field that carries `dtype`.
Status copyTypedField(const onnx::TensorProto &proto, Tensor &tensor,
                      const std::string &label) {
  auto checkCount = [&](int count, const char *field) -> Status {
    if (count != tensor.elementCount())
      return Status::error(label + ": " + field + " holds " + std::to_string(count) +
                           " values but the shape " + tensor.typeString() +
                           " needs " + std::to_string(tensor.elementCount()));
    return Status::success();
  };
  switch (tensor.dtype()) {
  case DType::f32:
    if (Status s = checkCount(proto.float_data_size(), "float_data"); !s)
      return s;
    copyNarrowed<float>(proto.float_data(), tensor);
    return Status::success();
  case DType::f64:
    if (Status s = checkCount(proto.double_data_size(), "double_data"); !s)
      return s;
    copyNarrowed<double>(proto.double_data(), tensor);
    return Status::success();
  case DType::i64:
    if (Status s = checkCount(proto.int64_data_size(), "int64_data"); !s)
      return s;
    copyNarrowed<int64_t>(proto.int64_data(), tensor);
    return Status::success();
  case DType::u32:
  case DType::u64:
    if (Status s = checkCount(proto.uint64_data_size(), "uint64_data"); !s)
      return s;
    if (tensor.dtype() == DType::u32)
      copyNarrowed<uint32_t>(proto.uint64_data(), tensor);
    else
      copyNarrowed<uint64_t>(proto.uint64_data(), tensor);
    return Status::success();
  default:
    break;
  }
  // Everything else (i32 and narrower, bool, f16, bf16) lives in int32_data.
  if (Status s = checkCount(proto.int32_data_size(), "int32_data"); !s)
    return s;
  switch (tensor.dtype()) {
  case DType::i32: copyNarrowed<int32_t>(proto.int32_data(), tensor); break;
  case DType::i16: copyNarrowed<int16_t>(proto.int32_data(), tensor); break;
  case DType::i8: copyNarrowed<int8_t>(proto.int32_data(), tensor); break;
  case DType::u16:
  case DType::f16:
  case DType::bf16: copyNarrowed<uint16_t>(proto.int32_data(), tensor); break;
  case DType::u8: copyNarrowed<uint8_t>(proto.int32_data(), tensor); break;
  case DType::i1: {
    uint8_t *out = tensor.dataAs<uint8_t>();
    for (int i = 0; i < proto.int32_data_size(); ++i)
      out[i] = proto.int32_data(i) != 0;
    break;
  }
  default:
    return Status::error(label + ": internal error: no typed field for " +
                         std::string(dtypeName(tensor.dtype())));
  }
  return Status::success();
}

} // namespace

Result<Tensor> decodeTensorProto(const std::string &bytes, const std::string &label) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return Status::error(label + ": not a valid onnx.TensorProto");
  if (proto.data_type() == onnx::TensorProto::STRING) {
    // string_data holds one byte string per element (UTF-8 by convention).
    if (proto.data_location() == onnx::TensorProto::EXTERNAL)
      return Status::error("unsupported: tensor with external data (" + label + ")");
    std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
    std::vector<std::string> values(proto.string_data().begin(), proto.string_data().end());
    Result<Tensor> tensor = Tensor::fromStrings(shape, std::move(values));
    if (!tensor)
      return Status::error(label + ": string_data: " + tensor.message());
    return tensor;
  }
  if (proto.data_type() == onnx::TensorProto::COMPLEX64 ||
      proto.data_type() == onnx::TensorProto::COMPLEX128)
    return Status::error("unsupported: complex tensor (" + label + ")");
  std::optional<DType> dtype = dtypeOfOnnxType(proto.data_type());
  if (!dtype)
    return Status::error(label + ": unknown TensorProto data_type " +
                         std::to_string(proto.data_type()));
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return Status::error("unsupported: tensor with external data (" + label + ")");
  if (proto.has_segment())
    return Status::error("unsupported: segmented tensor (" + label + ")");

  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  Result<Tensor> tensor = Tensor::allocate(*dtype, shape);
  if (!tensor)
    return Status::error(label + ": " + tensor.message());
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != tensor->byteSize())
      return Status::error(label + ": raw_data holds " + std::to_string(raw.size()) +
                           " bytes but " + tensor->typeString() + " needs " +
                           std::to_string(tensor->byteSize()));
    if (!raw.empty())
      std::memcpy(tensor->data(), raw.data(), raw.size());
    return tensor;
  }
  if (Status s = copyTypedField(proto, *tensor, label); !s)
    return s;
  return tensor;
}

Result<Tensor> readTensorProtoFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::error("cannot read '" + path + "'");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return decodeTensorProto(bytes.str(), path);
}

namespace {

runtime::Result<OnnxDataValue> decodeSequence(const onnx::SequenceProto &proto,
                                              const std::string &label) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR &&
      !(proto.elem_type() == onnx::SequenceProto::UNDEFINED && proto.tensor_values_size() == 0))
    return Status::error("unsupported: sequence of non-tensors (" + label + ")");
  OnnxDataValue value;
  value.kind = OnnxDataValue::Kind::Sequence;
  for (int k = 0; k < proto.tensor_values_size(); ++k) {
    Result<Tensor> tensor = decodeTensorProto(proto.tensor_values(k).SerializeAsString(),
                                              label + " element " + std::to_string(k));
    if (!tensor)
      return tensor.status();
    value.tensors.push_back(std::move(*tensor));
  }
  return value;
}

} // namespace

Result<OnnxDataValue> readDataValueFile(const std::string &path, bool sequence, bool optional) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::error("cannot read '" + path + "'");
  std::ostringstream stream;
  stream << file.rdbuf();
  const std::string bytes = stream.str();
  if (optional) {
    onnx::OptionalProto proto;
    if (!proto.ParseFromString(bytes))
      return Status::error(path + ": not a valid onnx.OptionalProto");
    if (proto.has_sequence_value())
      return decodeSequence(proto.sequence_value(), path);
    if (proto.has_tensor_value()) {
      Result<Tensor> tensor = decodeTensorProto(proto.tensor_value().SerializeAsString(), path);
      if (!tensor)
        return tensor.status();
      OnnxDataValue value;
      value.tensors.push_back(std::move(*tensor));
      return value;
    }
    if (proto.elem_type() != onnx::OptionalProto::UNDEFINED &&
        proto.elem_type() != onnx::OptionalProto::TENSOR &&
        proto.elem_type() != onnx::OptionalProto::SEQUENCE)
      return Status::error("unsupported: optional of a map or sparse tensor (" + path + ")");
    OnnxDataValue none;
    none.kind = OnnxDataValue::Kind::None;
    return none;
  }
  if (sequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(bytes))
      return Status::error(path + ": not a valid onnx.SequenceProto");
    return decodeSequence(proto, path);
  }
  Result<Tensor> tensor = decodeTensorProto(bytes, path);
  if (!tensor)
    return tensor.status();
  OnnxDataValue value;
  value.tensors.push_back(std::move(*tensor));
  return value;
}

} // namespace turbine::tools
