//===- OnnxTensorIOTest.cpp - unit tests of TensorProto -> runtime tensors ===//
//
// Unsigned integer TensorProtos in every encoding ONNX allows: uint8/uint16
// in int32_data, uint32/uint64 in uint64_data (values above the signed
// range), raw_data; and the error for a field whose count disagrees with the
// shape.
//===----------------------------------------------------------------------===//
#include "OnnxTensorIO.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

using turbine::DType;
using turbine::tools::decodeTensorProto;

namespace {

onnx::TensorProto proto(int dataType, std::initializer_list<int64_t> dims) {
  onnx::TensorProto t;
  t.set_data_type(dataType);
  for (int64_t d : dims)
    t.add_dims(d);
  return t;
}

TEST(OnnxTensorIO, Uint16InInt32Data) {
  onnx::TensorProto t = proto(onnx::TensorProto::UINT16, {2});
  t.add_int32_data(65535);
  t.add_int32_data(7);
  auto r = decodeTensorProto(t.SerializeAsString(), "u16");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().dtype(), DType::u16);
  EXPECT_EQ(r.value().dataAs<uint16_t>()[0], 65535);
  EXPECT_EQ(r.value().dataAs<uint16_t>()[1], 7);
}

TEST(OnnxTensorIO, Uint32AndUint64InUint64Data) {
  onnx::TensorProto t32 = proto(onnx::TensorProto::UINT32, {1});
  t32.add_uint64_data(4000000000u);
  auto r32 = decodeTensorProto(t32.SerializeAsString(), "u32");
  ASSERT_TRUE(r32.ok()) << r32.message();
  EXPECT_EQ(r32.value().dtype(), DType::u32);
  EXPECT_EQ(r32.value().dataAs<uint32_t>()[0], 4000000000u);

  onnx::TensorProto t64 = proto(onnx::TensorProto::UINT64, {2});
  t64.add_uint64_data(std::numeric_limits<uint64_t>::max());
  t64.add_uint64_data(1);
  auto r64 = decodeTensorProto(t64.SerializeAsString(), "u64");
  ASSERT_TRUE(r64.ok()) << r64.message();
  EXPECT_EQ(r64.value().dtype(), DType::u64);
  EXPECT_EQ(r64.value().dataAs<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r64.value().dataAs<uint64_t>()[1], 1u);
}

TEST(OnnxTensorIO, Uint32InRawData) {
  onnx::TensorProto t = proto(onnx::TensorProto::UINT32, {2});
  uint32_t values[2] = {4294967295u, 3};
  t.set_raw_data(std::string(reinterpret_cast<const char *>(values), sizeof(values)));
  auto r = decodeTensorProto(t.SerializeAsString(), "raw");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().dtype(), DType::u32);
  EXPECT_EQ(r.value().dataAs<uint32_t>()[0], 4294967295u);
  EXPECT_EQ(r.value().dataAs<uint32_t>()[1], 3u);
}

TEST(OnnxTensorIO, WrongUint64CountIsReported) {
  onnx::TensorProto t = proto(onnx::TensorProto::UINT64, {3});
  t.add_uint64_data(1);
  auto r = decodeTensorProto(t.SerializeAsString(), "short.pb");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("short.pb: uint64_data holds 1 values but the shape"), std::string::npos)
      << r.message();
}

} // namespace

TEST(OnnxTensorIO, StringsFromStringData) {
  onnx::TensorProto t = proto(onnx::TensorProto::STRING, {1, 2});
  t.add_string_data("monday");
  t.add_string_data("\xc3\xa9t\xc3\xa9"); // "été" in UTF-8
  auto r = decodeTensorProto(t.SerializeAsString(), "s");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().typeString(), "1x2xstring");
  EXPECT_EQ(r.value().dataAs<std::string>()[0], "monday");
  EXPECT_EQ(r.value().dataAs<std::string>()[1], "\xc3\xa9t\xc3\xa9");
  onnx::TensorProto shortData = proto(onnx::TensorProto::STRING, {3});
  shortData.add_string_data("a");
  auto bad = decodeTensorProto(shortData.SerializeAsString(), "short.pb");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("short.pb: string_data: 3xstring needs 3 strings, got 1"),
            std::string::npos)
      << bad.message();
}
