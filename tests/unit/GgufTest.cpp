//===- GgufTest.cpp - GGUF parameter files: reading, blocks, corruption ---===//
//
// GGUF files assembled byte by byte here from the public layout (GgufBuilder.h,
// independent of the reader): a round trip of every tensor type
// Turbine reads (F32, F16, BF16 as tensors; Q8_0 and Q4_0 as block views
// decoded against ggml's formulas with hand-picked scales), every metadata
// value type, unsupported / unknown ggml types, the parameter name map, and
// one test per kind of corruption. Every failure must be an error message
// naming what is wrong, never a crash.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Ggml.h"
#include "turbine/runtime/ParameterArchive.h"

#include "GgufBuilder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace turbine::runtime;
namespace fs = std::filesystem;

namespace {

using turbine::testing::Bytes;
using turbine::testing::GgufBuilder;

std::string floatBytes(const std::vector<float> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()), values.size() * 4);
}
std::string u16Bytes(const std::vector<uint16_t> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()), values.size() * 2);
}

/// One Q8_0 block: scale bits (f16) and 32 int8 quants.
std::string q8Block(uint16_t d, const int8_t (&q)[32]) {
  Bytes b;
  b.put(d);
  b.data.append(reinterpret_cast<const char *>(q), 32);
  return b.data;
}
/// One Q4_0 block: scale bits and 32 quants in 0..15 (packed as ggml does).
std::string q4Block(uint16_t d, const uint8_t (&q)[32]) {
  Bytes b;
  b.put(d);
  for (int j = 0; j < 16; ++j)
    b.put<uint8_t>(static_cast<uint8_t>(q[j] | (q[j + 16] << 4)));
  return b.data;
}

Result<ParameterIndex> parseBytes(const std::string &bytes) {
  auto copy = std::make_shared<std::string>(bytes);
  return ParameterIndex::parse(reinterpret_cast<const uint8_t *>(copy->data()), copy->size(),
                               copy, "test.gguf");
}

void expectError(const Result<ParameterIndex> &result, const std::string &fragment) {
  ASSERT_FALSE(result) << "expected an error containing: " << fragment;
  EXPECT_NE(result.message().find(fragment), std::string::npos) << result.message();
}

class GgufTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("turbine-gguf-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string &name, const std::string &bytes) {
    std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
    return path;
  }
  fs::path dir;
};

// Scales exactly representable in f16: 0.5, -0.25, 2.0.
constexpr uint16_t kHalf = 0x3800, kMinusQuarter = 0xB400, kTwo = 0x4000;

/// The sample file: one tensor of each type Turbine reads.
GgufBuilder sampleBuilder(std::vector<float> &q8Expected, std::vector<float> &q4Expected) {
  GgufBuilder g;
  g.addScalar<uint32_t>("general.quantization_version", 4, 2);
  g.addKv("general.architecture", 8, Bytes{}.data);
  g.kv.back().second = [] {
    Bytes b;
    b.put<uint32_t>(8);
    b.putString("llama");
    return b.data;
  }();
  // F32 2x3 (ne = [3, 2]).
  g.addTensor("w.f32", {3, 2}, kGgmlF32, floatBytes({1, 2, 3, 4, 5, 6}));
  // F16 2x2: 1, -2, 0.5, 65504.
  g.addTensor("w.f16", {2, 2}, kGgmlF16, u16Bytes({0x3C00, 0xC000, 0x3800, 0x7BFF}));
  // BF16 3: 1, -3, 0.15625.
  g.addTensor("w.bf16", {3}, kGgmlBF16, u16Bytes({0x3F80, 0xC040, 0x3E20}));
  // Q8_0 2x32 (two rows of one block): q = i - 16 and q = 127 - 8 i.
  int8_t qa[32], qb[32];
  for (int i = 0; i < 32; ++i) {
    qa[i] = static_cast<int8_t>(i - 16);
    qb[i] = static_cast<int8_t>(127 - 8 * i);
  }
  g.addTensor("w.q8", {32, 2}, kGgmlQ8_0, q8Block(kHalf, qa) + q8Block(kMinusQuarter, qb));
  q8Expected.clear();
  for (int i = 0; i < 32; ++i)
    q8Expected.push_back(0.5f * static_cast<float>(qa[i]));
  for (int i = 0; i < 32; ++i)
    q8Expected.push_back(-0.25f * static_cast<float>(qb[i]));
  // Q4_0 1x64 (one row of two blocks): q = i % 16 and q = 15 - i / 2.
  uint8_t q4a[32], q4b[32];
  for (int i = 0; i < 32; ++i) {
    q4a[i] = static_cast<uint8_t>(i % 16);
    q4b[i] = static_cast<uint8_t>(15 - i / 2);
  }
  g.addTensor("w.q4", {64, 1}, kGgmlQ4_0, q4Block(kTwo, q4a) + q4Block(kHalf, q4b));
  q4Expected.clear();
  for (int i = 0; i < 32; ++i)
    q4Expected.push_back(2.0f * static_cast<float>(q4a[i] - 8));
  for (int i = 0; i < 32; ++i)
    q4Expected.push_back(0.5f * static_cast<float>(q4b[i] - 8));
  return g;
}

TEST_F(GgufTest, ReadsEveryTensorType) {
  std::vector<float> q8Expected, q4Expected;
  GgufBuilder g = sampleBuilder(q8Expected, q4Expected);
  std::string path = write("m.gguf", g.build());
  auto index = ParameterIndex::open(path);
  ASSERT_TRUE(index) << index.message();
  EXPECT_EQ(index->format(), ParameterFileFormat::gguf);
  EXPECT_EQ(index->version(), 3u);
  ASSERT_EQ(index->entries().size(), 5u);

  const ParameterEntry *f32 = index->find("w.f32");
  ASSERT_TRUE(f32);
  EXPECT_EQ(f32->typeString(), "2x3xf32"); // ne reversed: outermost first
  EXPECT_EQ(f32->fileOffset, g.dataStart);
  auto t = index->tensor(*f32);
  ASSERT_TRUE(t) << t.message();
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(t->dataAs<float>()[i], static_cast<float>(i + 1));

  const ParameterEntry *f16 = index->find("w.f16");
  ASSERT_TRUE(f16);
  EXPECT_EQ(f16->typeString(), "2x2xf16");
  auto h = index->tensor(*f16, DType::f16, {2, 2});
  ASSERT_TRUE(h) << h.message();
  EXPECT_EQ(h->dataAs<uint16_t>()[3], 0x7BFF);
  auto wrong = index->tensor(*f16, DType::f32, {2, 2});
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("is 2x2xf16, expected 2x2xf32"), std::string::npos)
      << wrong.message();

  const ParameterEntry *bf16 = index->find("w.bf16");
  ASSERT_TRUE(bf16);
  EXPECT_EQ(bf16->typeString(), "3xbf16");
  auto b = index->tensor(*bf16);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dataAs<uint16_t>()[2], 0x3E20);

  // Quantized: typed by ggml type, viewed in place, decoded by formula.
  const ParameterEntry *q8 = index->find("w.q8");
  ASSERT_TRUE(q8);
  EXPECT_TRUE(q8->isBlockQuantized());
  EXPECT_EQ(q8->typeString(), "2x32xQ8_0");
  EXPECT_EQ(q8->length, 68u);
  auto view = index->ggmlBlocks(*q8);
  ASSERT_TRUE(view) << view.message();
  EXPECT_EQ(view->blocks, q8->bytes); // a view of the mapping, not a copy
  EXPECT_EQ(view->blockCount, 2u);
  EXPECT_EQ(view->blockElements, 32u);
  EXPECT_EQ(view->blockBytes, 34u);
  EXPECT_EQ(view->shape, (std::vector<int64_t>{2, 32}));
  std::vector<float> decoded(64);
  ASSERT_TRUE(decodeGgmlBlocks(view->ggmlType, view->blocks, view->blockCount, decoded.data()));
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(decoded[i], q8Expected[i]) << "Q8_0 element " << i;

  const ParameterEntry *q4 = index->find("w.q4");
  ASSERT_TRUE(q4);
  EXPECT_EQ(q4->typeString(), "1x64xQ4_0");
  auto view4 = index->ggmlBlocks(*q4);
  ASSERT_TRUE(view4);
  EXPECT_EQ(view4->blockCount, 2u);
  EXPECT_EQ(view4->blockBytes, 18u);
  ASSERT_TRUE(decodeGgmlBlocks(view4->ggmlType, view4->blocks, 2, decoded.data()));
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(decoded[i], q4Expected[i]) << "Q4_0 element " << i;

  // Binding a quantized tensor as f32 is an error naming its type.
  auto bound = index->tensor(*q8, DType::f32, {2, 32});
  ASSERT_FALSE(bound);
  EXPECT_NE(bound.message().find("'w.q8' in '" + path + "' is 2x32xQ8_0, a block-quantized"),
            std::string::npos)
      << bound.message();
  EXPECT_FALSE(index->ggmlBlocks(*f32)); // not quantized

  // Metadata (general.alignment written first by the builder).
  ASSERT_EQ(index->metadata().size(), 3u);
  EXPECT_EQ(index->metadata()[0].first, "general.alignment");
  EXPECT_EQ(index->metadata()[0].second.u, 32u);
  EXPECT_EQ(index->metadata()[2].second.string, "llama");

  // irpa can hold the plain tensors; GGUF is read-only.
  ParameterArchiveWriter writer;
  ASSERT_TRUE(writer.addEntry(*index, *f32));
  Status quantized = writer.addEntry(*index, *q8);
  ASSERT_FALSE(quantized);
  EXPECT_NE(quantized.message().find("'w.q8' is 2x32xQ8_0, a block-quantized GGUF tensor"),
            std::string::npos)
      << quantized.message();
  ASSERT_TRUE(writer.write((dir / "out.irpa").string(), ParameterFileFormat::irpa));
  auto irpa = ParameterIndex::open((dir / "out.irpa").string());
  ASSERT_TRUE(irpa);
  EXPECT_EQ(irpa->entries()[0].typeString(), "2x3xf32");
  Status gguf = writer.write((dir / "out.gguf").string(), ParameterFileFormat::gguf);
  ASSERT_FALSE(gguf);
  EXPECT_NE(gguf.message().find("writes only irpa and safetensors"), std::string::npos);
}

TEST_F(GgufTest, DecodesAgainstReferenceFormulaOverAllQuants) {
  // Every Q8_0 quant value and every Q4_0 nibble value, with a non-trivial
  // scale (f16 0x2E66 = 0.099975586).
  std::string q8, q4;
  std::vector<float> expected8, expected4;
  const float d = 0.0999755859375f;
  for (int base = -128; base < 128; base += 32) {
    int8_t q[32];
    for (int i = 0; i < 32; ++i) {
      q[i] = static_cast<int8_t>(base + i);
      expected8.push_back(d * static_cast<float>(q[i]));
    }
    q8 += q8Block(0x2E66, q);
  }
  uint8_t nibbles[32];
  for (int i = 0; i < 32; ++i)
    nibbles[i] = static_cast<uint8_t>((i * 7) % 16);
  for (int i = 0; i < 32; ++i)
    expected4.push_back(d * static_cast<float>(nibbles[i] - 8));
  q4 = q4Block(0x2E66, nibbles);
  std::vector<float> out(256);
  ASSERT_TRUE(decodeGgmlBlocks(kGgmlQ8_0, reinterpret_cast<const uint8_t *>(q8.data()), 8,
                               out.data()));
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(out[i], expected8[i]) << "element " << i;
  ASSERT_TRUE(decodeGgmlBlocks(kGgmlQ4_0, reinterpret_cast<const uint8_t *>(q4.data()), 1,
                               out.data()));
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(out[i], expected4[i]) << "element " << i;
  EXPECT_FALSE(decodeGgmlBlocks(12, nullptr, 0, out.data())); // Q4_K
}

TEST_F(GgufTest, ReadsEveryMetadataValueType) {
  GgufBuilder g;
  g.addScalar<uint8_t>("u8", 0, 200);
  g.addScalar<int8_t>("i8", 1, -100);
  g.addScalar<uint16_t>("u16", 2, 60000);
  g.addScalar<int16_t>("i16", 3, -30000);
  g.addScalar<uint32_t>("u32", 4, 4000000000u);
  g.addScalar<int32_t>("i32", 5, -2000000000);
  g.addScalar<float>("f32", 6, 0.25f);
  g.addScalar<uint8_t>("bool", 7, 1);
  Bytes s;
  s.putString("hello \"gguf\"");
  g.addKv("string", 8, s.data);
  g.addScalar<uint64_t>("u64", 10, 18000000000000000000ull);
  g.addScalar<int64_t>("i64", 11, -9000000000000000000ll);
  g.addScalar<double>("f64", 12, -1.5);
  Bytes ints; // array of 3 i32
  ints.put<uint32_t>(5);
  ints.put<uint64_t>(3);
  for (int32_t v : {7, -8, 9})
    ints.put(v);
  g.addKv("ints", 9, ints.data);
  Bytes strings; // array of 2 strings
  strings.put<uint32_t>(8);
  strings.put<uint64_t>(2);
  strings.putString("<s>");
  strings.putString("</s>");
  g.addKv("strings", 9, strings.data);
  Bytes nested; // array of 2 arrays of u8
  nested.put<uint32_t>(9);
  nested.put<uint64_t>(2);
  for (int k = 0; k < 2; ++k) {
    nested.put<uint32_t>(0);
    nested.put<uint64_t>(2);
    nested.put<uint8_t>(static_cast<uint8_t>(k));
    nested.put<uint8_t>(static_cast<uint8_t>(k + 10));
  }
  g.addKv("nested", 9, nested.data);
  auto index = parseBytes(g.build());
  ASSERT_TRUE(index) << index.message();
  std::vector<std::string> formatted;
  for (const auto &[key, value] : index->metadata())
    formatted.push_back(key + " " + value.typeName() + " " + value.format());
  std::vector<std::string> expected = {
      "general.alignment u32 32",
      "u8 u8 200",
      "i8 i8 -100",
      "u16 u16 60000",
      "i16 i16 -30000",
      "u32 u32 4000000000",
      "i32 i32 -2000000000",
      "f32 f32 0.25",
      "bool bool true",
      "string string \"hello \\\"gguf\\\"\"",
      "u64 u64 18000000000000000000",
      "i64 i64 -9000000000000000000",
      "f64 f64 -1.5",
      "ints array[i32] [7, -8, 9]",
      "strings array[string] [\"<s>\", \"</s>\"]",
      "nested array[array] [[0, 10], [1, 11]]",
  };
  EXPECT_EQ(formatted, expected);
  const GgufValue &ints2 = index->metadata()[13].second;
  EXPECT_EQ(ints2.count, 3u);
  EXPECT_EQ(ints2.format(2), "[7, -8, ... (3 elements)]");
}

TEST_F(GgufTest, UnsupportedAndUnknownTypes) {
  GgufBuilder g;
  g.addTensor("q4k", {256}, 12, std::string(144, '\0')); // Q4_K: one 256-element block
  auto index = parseBytes(g.build());
  ASSERT_TRUE(index) << index.message();
  const ParameterEntry *q4k = index->find("q4k");
  ASSERT_TRUE(q4k);
  EXPECT_EQ(q4k->typeString(), "256xQ4_K");
  auto bound = index->tensor(*q4k, DType::f32, {256});
  ASSERT_FALSE(bound);
  EXPECT_NE(bound.message().find("'q4k' in 'test.gguf' is 256xQ4_K: unsupported tensor type "
                                 "Q4_K"),
            std::string::npos)
      << bound.message();

  GgufBuilder unknown;
  unknown.addTensor("t", {4}, 99, std::string(16, '\0'));
  expectError(parseBytes(unknown.build()), "tensor 0 't' has unknown ggml type 99");
}

TEST_F(GgufTest, VersionTwoAndDefaultAlignment) {
  GgufBuilder g;
  g.version = 2;
  g.writeAlignmentKey = false; // default 32
  g.addTensor("a", {3}, kGgmlF32, floatBytes({1, 2, 3}));
  g.addTensor("b", {2}, kGgmlF32, floatBytes({4, 5}));
  auto index = parseBytes(g.build());
  ASSERT_TRUE(index) << index.message();
  EXPECT_EQ(index->version(), 2u);
  EXPECT_EQ(index->find("b")->fileOffset, g.dataStart + 32);
  EXPECT_EQ(index->tensor(*index->find("b"))->dataAs<float>()[1], 5.0f);
}

//===--- corruption -------------------------------------------------------===//

GgufBuilder smallBuilder() {
  GgufBuilder g;
  Bytes s;
  s.putString("llama");
  g.addKv("general.architecture", 8, s.data);
  g.addTensor("a", {4, 2}, kGgmlF32, floatBytes({1, 2, 3, 4, 5, 6, 7, 8}));
  int8_t q[32] = {};
  g.addTensor("b", {32}, kGgmlQ8_0, q8Block(kHalf, q));
  return g;
}

template <typename T> void patch(std::string &bytes, size_t at, T value) {
  std::memcpy(&bytes[at], &value, sizeof(T));
}

TEST_F(GgufTest, BadMagic) {
  std::string bytes = smallBuilder().build();
  bytes[3] = 'X';
  expectError(parseBytes(bytes), "neither an IRPA archive, a GGUF file nor a safetensors");
}

TEST_F(GgufTest, BadVersion) {
  GgufBuilder g = smallBuilder();
  std::string bytes = g.build();
  patch<uint32_t>(bytes, 4, 1);
  expectError(parseBytes(bytes), "has version 1; this build reads GGUF versions 2 and 3");
  patch<uint32_t>(bytes, 4, 4);
  expectError(parseBytes(bytes), "has version 4");
  patch<uint32_t>(bytes, 4, 0x03000000); // big-endian file
  expectError(parseBytes(bytes), "big-endian");
}

TEST_F(GgufTest, TruncatedAnywhereIsAnError) {
  GgufBuilder g = smallBuilder();
  std::string bytes = g.build();
  ASSERT_TRUE(parseBytes(bytes));
  for (size_t n = 0; n < g.dataEnd; ++n)
    EXPECT_FALSE(parseBytes(bytes.substr(0, n))) << "truncated to " << n;
  expectError(parseBytes(bytes.substr(0, 6)), "header (version) at offset 4 needs 4");
  expectError(parseBytes(bytes.substr(0, 20)), "header (metadata count) at offset 16 needs 8");
}

TEST_F(GgufTest, StringLengthPastEnd) {
  GgufBuilder g = smallBuilder();
  std::string bytes = g.build();
  patch<uint64_t>(bytes, 24, 1ull << 40); // length of the first key
  expectError(parseBytes(bytes), "metadata key 0 at offset 24 has length 1099511627776, past "
                                 "the end of the file");
  bytes = g.build();
  patch<uint64_t>(bytes, g.infoAt[1], 1000000); // tensor 1's name
  expectError(parseBytes(bytes), "tensor 1 name at offset");
}

TEST_F(GgufTest, HugeCountsAreRefusedBeforeAllocating) {
  GgufBuilder g = smallBuilder();
  std::string bytes = g.build();
  patch<uint64_t>(bytes, g.kvCountAt, 1ull << 60);
  expectError(parseBytes(bytes), "metadata keys, more than the file's");
  bytes = g.build();
  patch<uint64_t>(bytes, g.tensorCountAt, 1ull << 60);
  expectError(parseBytes(bytes), "tensors, more than the file's");
  // An array whose count exceeds the file.
  GgufBuilder a;
  Bytes arr;
  arr.put<uint32_t>(8); // strings
  arr.put<uint64_t>(1ull << 61);
  a.addKv("tokens", 9, arr.data);
  expectError(parseBytes(a.build()), "'tokens': array of 2305843009213693952 elements cannot fit");
  GgufBuilder n;
  Bytes nums;
  nums.put<uint32_t>(12); // f64
  nums.put<uint64_t>(1ull << 62);
  n.addKv("scores", 9, nums.data);
  expectError(parseBytes(n.build()), "'scores': array of 4611686018427387904 x 8-byte values");
  GgufBuilder t;
  Bytes bad;
  bad.put<uint32_t>(13); // no such value type
  bad.put<uint64_t>(1);
  t.addKv("x", 9, bad.data);
  expectError(parseBytes(t.build()), "'x': array of unknown value type 13");
}

TEST_F(GgufTest, TensorOffsetOrSizePastEnd) {
  GgufBuilder g = smallBuilder();
  std::string bytes = g.build();
  patch<uint64_t>(bytes, g.offsetAt[1], 1ull << 40);
  expectError(parseBytes(bytes), "tensor 'b' (32xQ8_0");
  expectError(parseBytes(bytes), "extends past the end of the file");
  // Dims that make the tensor larger than the file.
  bytes = g.build();
  patch<uint64_t>(bytes, g.ndimsAt[0] + 4 + 8, 1000000); // ne1 of 'a'
  expectError(parseBytes(bytes), "tensor 'a' (1000000x4xf32, 16000000 bytes at data offset 0) "
                                 "extends past the end of the file");
}

TEST_F(GgufTest, MisalignedOffset) {
  GgufBuilder g = smallBuilder();
  std::string bytes = g.build();
  patch<uint64_t>(bytes, g.offsetAt[1], 40);
  expectError(parseBytes(bytes), "tensor 1 'b' has data offset 40, not a multiple of the "
                                 "alignment 32");
  GgufBuilder bad = smallBuilder();
  bad.alignment = 24;
  expectError(parseBytes(bad.build()), "general.alignment 24 is not a power of two");
  GgufBuilder wrongType;
  wrongType.writeAlignmentKey = false;
  wrongType.addScalar<uint64_t>("general.alignment", 10, 32);
  expectError(parseBytes(wrongType.build()), "general.alignment is a u64, not a u32");
}

TEST_F(GgufTest, DimsOverflow) {
  GgufBuilder g;
  g.addTensor("big", {1ull << 40, 1ull << 40}, kGgmlF32, "");
  expectError(parseBytes(g.build()), "tensor 0 'big' has dims [1099511627776, 1099511627776] "
                                     "whose element count overflows");
  GgufBuilder neg;
  neg.addTensor("neg", {~0ull}, kGgmlF32, "");
  expectError(parseBytes(neg.build()), "whose element count overflows");
  GgufBuilder row;
  row.addTensor("row", {48}, kGgmlQ8_0, std::string(51, '\0'));
  expectError(parseBytes(row.build()), "tensor 0 'row' is Q8_0 with rows of 48 elements, not a "
                                       "multiple of its block of 32");
}

TEST_F(GgufTest, TooManyDims) {
  GgufBuilder g;
  g.addTensor("t", {1, 1, 1, 1, 2}, kGgmlF32, floatBytes({1, 2}));
  expectError(parseBytes(g.build()), "tensor 0 't' has 5 dims (ggml allows at most 4)");
}

TEST_F(GgufTest, DuplicateNames) {
  GgufBuilder g;
  g.addTensor("t", {1}, kGgmlF32, floatBytes({1}));
  g.addTensor("t", {1}, kGgmlF32, floatBytes({2}));
  expectError(parseBytes(g.build()), "tensor 't' appears twice");
  GgufBuilder k;
  k.addScalar<uint32_t>("x", 4, 1);
  k.addScalar<uint32_t>("x", 4, 2);
  expectError(parseBytes(k.build()), "metadata key 2 'x' appears twice");
}

TEST_F(GgufTest, FlippedBytesNeverCrash) {
  std::vector<float> q8, q4;
  std::string good = sampleBuilder(q8, q4).build();
  for (size_t at = 0; at < good.size(); ++at) {
    for (uint8_t flip : {0x01, 0x80, 0xFF}) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ flip);
      auto index = parseBytes(bad); // any result but a crash
      if (index)
        for (const ParameterEntry &entry : index->entries())
          (void)index->tensor(entry);
    }
  }
}

//===--- name map ---------------------------------------------------------===//

TEST_F(GgufTest, NameMapRenamesEntries) {
  auto map = ParameterNameMap::parse(
      "# llama.cpp names -> torch names\n"
      "token_embd.weight = tok_embeddings.weight\n"
      "blk.*.attn_q.weight = layers.*.attention.wq.weight   # per layer\n"
      "\n"
      "  blk.*.ffn_up.weight=layers.*.feed_forward.w3.weight\n",
      "llama.names");
  ASSERT_TRUE(map) << map.message();
  EXPECT_EQ(map->size(), 3u);
  EXPECT_EQ(map->map("token_embd.weight"), "tok_embeddings.weight");
  EXPECT_EQ(map->map("blk.11.attn_q.weight"), "layers.11.attention.wq.weight");
  EXPECT_EQ(map->map("blk.0.ffn_up.weight"), "layers.0.feed_forward.w3.weight");
  EXPECT_FALSE(map->map("blk..attn_q.weight")); // '*' matches a non-empty run
  EXPECT_FALSE(map->map("output.weight"));

  GgufBuilder g;
  g.addTensor("blk.0.attn_q.weight", {2}, kGgmlF32, floatBytes({1, 2}));
  g.addTensor("output.weight", {2}, kGgmlF32, floatBytes({3, 4}));
  auto index = parseBytes(g.build());
  ASSERT_TRUE(index);
  auto renamed = index->renamed(*map);
  ASSERT_TRUE(renamed) << renamed.message();
  EXPECT_TRUE(renamed->find("layers.0.attention.wq.weight"));
  EXPECT_TRUE(renamed->find("output.weight"));
  EXPECT_FALSE(renamed->find("blk.0.attn_q.weight"));
  EXPECT_TRUE(index->find("blk.0.attn_q.weight")); // the original is untouched

  auto clash = ParameterNameMap::parse("blk.0.attn_q.weight = output.weight\n", "m");
  ASSERT_TRUE(clash);
  expectError(index->renamed(*clash), "'output.weight' in 'test.gguf' becomes 'output.weight'");
}

TEST_F(GgufTest, NameMapErrors) {
  auto check = [](const std::string &text, const std::string &fragment) {
    auto map = ParameterNameMap::parse(text, "m.names");
    ASSERT_FALSE(map) << text;
    EXPECT_NE(map.message().find(fragment), std::string::npos) << map.message();
  };
  check("a b\n", "m.names' line 1: expected FILE_NAME = MODULE_NAME, got 'a b'");
  check("ok = fine\n = x\n", "line 2: a name is empty");
  check("a.* = b\n", "needs one '*' on each side, or none on either");
  check("a.*.* = b.*.*\n", "needs one '*' on each side");
  check("a = b = c\n", "expected FILE_NAME = MODULE_NAME");
  auto missing = ParameterNameMap::load("/nonexistent/names.txt");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("parameter name map: "), std::string::npos);
}

} // namespace
