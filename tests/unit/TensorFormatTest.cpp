//===- TensorFormatTest.cpp - Tensor text, .npy and comparison -----------===//
//
// IREE-style input parsing (good and bad), iree-run-module style printing,
// .npy read/write round trips and malformed files, and tolerance comparison.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace turbine;
using namespace turbine::runtime;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "tensor_format_" + std::to_string(::getpid()) + "_" + name;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

Tensor parse(const std::string &spec) {
  Result<Tensor> t = parseTensorSpec(spec);
  EXPECT_TRUE(t.ok()) << spec << ": " << t.message();
  return t.ok() ? *t : Tensor();
}

std::string parseError(const std::string &spec) {
  Result<Tensor> t = parseTensorSpec(spec);
  EXPECT_FALSE(t.ok()) << spec;
  return t.message();
}

} // namespace

TEST(TensorFormat, ParsesValues) {
  EXPECT_EQ(formatTensor(parse("2x2xf32=1 2 3 4")), "2x2xf32=[1 2][3 4]");
  EXPECT_EQ(formatTensor(parse("f32=5")), "f32=5");
  EXPECT_EQ(formatTensor(parse("4xi32=1,-2, 3 ,4")), "4xi32=1 -2 3 4");
  EXPECT_EQ(formatTensor(parse("2x2xi64=[1 2][3 4]")), "2x2xi64=[1 2][3 4]");
  EXPECT_EQ(formatTensor(parse("3xf32=7")), "3xf32=7 7 7");
  EXPECT_EQ(formatTensor(parse("2x3xi8")), "2x3xi8=[0 0 0][0 0 0]");
  EXPECT_EQ(formatTensor(parse("3xi1=true 0 1")), "3xi1=1 0 1");
  EXPECT_EQ(formatTensor(parse("2xf16=1.5 -0.25")), "2xf16=1.5 -0.25");
  EXPECT_EQ(formatTensor(parse("2xbf16=1.5 -2")), "2xbf16=1.5 -2");
  EXPECT_EQ(formatTensor(parse("1xu64=18446744073709551615")),
            "1xu64=18446744073709551615");
  EXPECT_EQ(formatTensor(parse("0x3xf32=")), "0x3xf32=");
  EXPECT_EQ(formatTensor(parse("2x0xi64")), "2x0xi64=[][]");
  // Empty sub-tensors count against the element limit (found by the
  // input_spec fuzzer: 1x...x7237231x0 printed 7 million "[]").
  EXPECT_EQ(formatTensor(parse("3x1000000x0xf32"), 4), "3x1000000x0xf32=[[][][][]...]");
  Tensor special = parse("3xf64=nan inf -inf");
  EXPECT_TRUE(std::isnan(special.dataAs<double>()[0]));
  EXPECT_TRUE(std::isinf(special.dataAs<double>()[2]));
  EXPECT_EQ(formatTensor(parse("2x2x2xf32=1 2 3 4 5 6 7 8")),
            "2x2x2xf32=[[1 2][3 4]][[5 6][7 8]]");
}

TEST(TensorFormat, RejectsBadText) {
  EXPECT_EQ(parseError("2x2xf32=1 2 x 4"), "invalid f32 value 'x'");
  EXPECT_EQ(parseError("2x2xf32=1 2 3"), "2x2xf32 needs 4 values, got 3");
  EXPECT_EQ(parseError("2xq32=1 2"),
            "invalid tensor type '2xq32': 'q32' is not a dtype (expected one of "
            "f16 bf16 f32 f64 i1 i8 i16 i32 i64 u8 u16 u32 u64 string)");
  EXPECT_EQ(parseError("2xax3xf32=1"), "invalid tensor type '2xax3xf32': 'a' is not a dimension");
  EXPECT_EQ(parseError("2xi8=1 300"), "invalid i8 value '300': out of range");
  EXPECT_EQ(parseError("2xu8=1 -1"), "invalid u8 value '-1': negative value for an unsigned type");
  EXPECT_EQ(parseError("2xi32=1 2.5"), "invalid i32 value '2.5'");
  EXPECT_EQ(parseError("1xi1=2"), "invalid i1 value '2': expected 0, 1, true or false");
  EXPECT_NE(parseError("").find("empty tensor value"), std::string::npos);
  EXPECT_NE(parseError("@/nonexistent/x.npy").find("cannot open '/nonexistent/x.npy'"),
            std::string::npos);
}

TEST(TensorFormat, RawBytesFromFile) {
  std::string path = tempPath("raw.bin");
  float data[4] = {1, 2, 3, 4};
  writeBytes(path, std::string(reinterpret_cast<char *>(data), sizeof(data)));
  EXPECT_EQ(formatTensor(parse("2x2xf32=@" + path)), "2x2xf32=[1 2][3 4]");
  EXPECT_EQ(parseError("3xf32=@" + path), "'" + path + "' has 16 bytes but 3xf32 needs 12");
  std::remove(path.c_str());
}

TEST(TensorFormat, Elision) {
  Tensor big = parse("3x4xi32=1");
  EXPECT_EQ(formatTensor(big, 5), "3x4xi32=[1 1 1 1][1 ...]");
  EXPECT_EQ(formatTensor(parse("6xf32=2"), 3), "6xf32=2 2 2 ...");
}

TEST(Npy, RoundTripAllDtypes) {
  for (const char *spec : {"2x3xf32=1 2 3 4 5 6", "4xf64=1 -2 3.5 4", "3xi8=-1 0 1",
                           "2xi16=-300 300", "2xi32=-7 7", "2xi64=-9 9", "2xu8=0 255",
                           "2xu16=1 65535", "2xu32=1 4000000000", "2xu64=1 2",
                           "2xi1=1 0", "2xf16=0.5 -8", "f32=3.25", "0x2xf32="}) {
    Tensor t = parse(spec);
    std::string path = tempPath("round.npy");
    ASSERT_TRUE(writeNpyFile(t, path).ok()) << spec;
    Result<Tensor> back = parseTensorSpec("@" + path);
    ASSERT_TRUE(back.ok()) << spec << ": " << back.message();
    EXPECT_EQ(formatTensor(*back), formatTensor(t)) << spec;
    EXPECT_EQ(compareTensors(t, *back, 0, 0), "") << spec;
    std::remove(path.c_str());
  }
  Result<std::string> bf16 = encodeNpy(parse("2xbf16=1 2"));
  ASSERT_FALSE(bf16.ok());
  EXPECT_EQ(bf16.message(), "dtype bf16 has no NumPy equivalent");
}

TEST(Npy, HeaderIsAlignedAndReadableByNumpyConventions) {
  Result<std::string> bytes = encodeNpy(parse("2x3xf32=1 2 3 4 5 6"));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 6), "\x93NUMPY");
  size_t headerLength = uint8_t((*bytes)[8]) | (uint8_t((*bytes)[9]) << 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u);
  EXPECT_NE(bytes->find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
            std::string::npos);
  Result<std::string> vec = encodeNpy(parse("3xi32=1 2 3"));
  EXPECT_NE(vec->find("'shape': (3,)"), std::string::npos);
}

TEST(Npy, ReadsVersion2AndVersion3) {
  for (char version : {'\2', '\3'}) {
    std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    header.append(64 - (12 + header.size() + 1) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY", 6) + version + '\0';
    uint32_t length = static_cast<uint32_t>(header.size());
    bytes.append(reinterpret_cast<char *>(&length), 4);
    int32_t data[2] = {7, -8};
    bytes += header + std::string(reinterpret_cast<char *>(data), 8);
    Result<Tensor> t = decodeNpy(bytes, "v.npy");
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ(formatTensor(*t), "2xi32=7 -8");
  }
}

TEST(Npy, RejectsMalformedFiles) {
  std::string good = *encodeNpy(parse("2xf32=1 2"));
  auto error = [](const std::string &bytes) {
    Result<Tensor> t = decodeNpy(bytes, "bad.npy");
    EXPECT_FALSE(t.ok());
    return t.message();
  };
  EXPECT_EQ(error("hello"), "invalid .npy file 'bad.npy': missing \\x93NUMPY magic");
  EXPECT_NE(error(good.substr(0, good.size() - 1)).find("expected 8 data bytes for 2xf32, file has 7"),
            std::string::npos);
  EXPECT_NE(error(good.substr(0, 30)).find("truncated header"), std::string::npos);
  std::string bigEndian = good;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  EXPECT_NE(error(bigEndian).find("big-endian"), std::string::npos);
  std::string complex = good;
  complex.replace(complex.find("<f4"), 3, "<c8");
  EXPECT_NE(error(complex).find("unsupported dtype '<c8'"), std::string::npos);
  std::string fortran = *encodeNpy(parse("2x2xf32=1 2 3 4"));
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(error(fortran).find("Fortran-order"), std::string::npos);
  std::string badShape = good;
  badShape.replace(badShape.find("(2,)"), 4, "(x,)");
  EXPECT_NE(error(badShape).find("bad shape entry 'x'"), std::string::npos);
  std::string version = good;
  version[6] = 9;
  EXPECT_NE(error(version).find("unsupported version 9"), std::string::npos);
}

TEST(TensorCompare, TolerancesAndNaN) {
  Tensor expected = parse("3xf32=1 2 nan");
  EXPECT_EQ(compareTensors(expected, parse("3xf32=1.00005 2 nan"), 1e-4, 1e-4), "");
  EXPECT_EQ(compareTensors(expected, parse("3xf32=1 2.5 nan"), 1e-4, 1e-4),
            "index [1]: expected 2, got 2.5 (atol 0.0001, rtol 0.0001)");
  EXPECT_NE(compareTensors(expected, parse("3xf32=1 2 3"), 1e-4, 1e-4).find("index [2]"),
            std::string::npos);
  EXPECT_EQ(compareTensors(parse("2x2xi32=1 2 3 4"), parse("2x2xi32=1 2 5 4"), 1, 1),
            "index [1, 0]: expected 3, got 5");
  EXPECT_EQ(compareTensors(parse("2xf32=1 2"), parse("3xf32=1 2 3"), 1, 1),
            "expected 2xf32, got 3xf32");
  EXPECT_EQ(compareTensors(parse("2xf32=1 inf"), parse("2xf32=1 inf"), 0, 0), "");
  EXPECT_NE(compareTensors(parse("1xf32=inf"), parse("1xf32=1e30"), 1e-4, 1), "");
}

TEST(TensorCompare, UnsignedValuesAboveSignedRange) {
  EXPECT_EQ(compareTensors(parse("2xu64=18446744073709551615 1"),
                           parse("2xu64=18446744073709551615 1"), 0, 0), "");
  EXPECT_EQ(compareTensors(parse("2xu64=18446744073709551615 1"),
                           parse("2xu64=18446744073709551614 1"), 0, 0),
            "index [0]: expected 18446744073709551615, got 18446744073709551614");
  EXPECT_EQ(compareTensors(parse("1xu16=65535"), parse("1xu16=1"), 0, 0),
            "index [0]: expected 65535, got 1");
  EXPECT_EQ(compareTensors(parse("1xu32=4000000000"), parse("1xu32=4000000000"), 0, 0), "");
}
