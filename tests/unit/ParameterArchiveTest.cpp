//===- ParameterArchiveTest.cpp - .irpa / .safetensors read and write -----===//
//
// Round trips through both formats, files assembled byte by byte from the
// public layouts (so the reader is not only checked against our writer),
// and corrupt input: truncation at every length, out-of-range offsets,
// flipped bytes, bad magic, type mismatches. Every failure must be an error
// message, never a crash.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/ParameterArchive.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace turbine::runtime;
namespace fs = std::filesystem;

namespace {

class ParameterArchiveTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("turbine-params-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string &name) const { return (dir / name).string(); }

  static std::string readAll(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void writeAll(const std::string &file, const std::string &bytes) {
    std::ofstream(file, std::ios::binary).write(bytes.data(), bytes.size());
  }
  static Result<ParameterIndex> parseBytes(const std::string &bytes) {
    auto copy = std::make_shared<std::string>(bytes);
    return ParameterIndex::parse(reinterpret_cast<const uint8_t *>(copy->data()),
                                 copy->size(), copy, "test");
  }

  static Tensor f32Tensor(std::vector<int64_t> shape, float start) {
    Tensor t = Tensor::allocate(DType::f32, std::move(shape)).value();
    for (int64_t i = 0; i < t.elementCount(); ++i)
      t.dataAs<float>()[i] = start + static_cast<float>(i);
    return t;
  }

  /// Writes three tensors and two splats; returns the path.
  std::string writeSample(ParameterFileFormat format, const std::string &name) {
    ParameterArchiveWriter writer;
    EXPECT_TRUE(writer.addTensor("layer0.weight", f32Tensor({2, 3}, 1.0f)));
    Tensor ids = Tensor::allocate(DType::i64, {4}).value();
    for (int i = 0; i < 4; ++i)
      ids.dataAs<int64_t>()[i] = -7 + i;
    EXPECT_TRUE(writer.addTensor("ids", ids));
    Tensor bytes = Tensor::allocate(DType::u8, {5}).value();
    for (int i = 0; i < 5; ++i)
      bytes.dataAs<uint8_t>()[i] = static_cast<uint8_t>(250 + i);
    EXPECT_TRUE(writer.addTensor("bytes", bytes));
    float half = 0.5f;
    std::vector<uint8_t> pattern(4);
    std::memcpy(pattern.data(), &half, 4);
    EXPECT_TRUE(writer.addSplat("bias", pattern, 4 * 8, DType::f32, {8}));
    if (format == ParameterFileFormat::irpa)
      EXPECT_TRUE(writer.addSplat("untyped", {0xAB, 0xCD}, 6));
    std::string file = path(name);
    Status written = writer.write(file, format);
    EXPECT_TRUE(written) << written.message();
    return file;
  }

  fs::path dir;
};

TEST_F(ParameterArchiveTest, IrpaRoundTrip) {
  std::string file = writeSample(ParameterFileFormat::irpa, "w.irpa");
  EXPECT_EQ(fs::file_size(file) % 4096, 0u);
  auto index = ParameterIndex::open(file);
  ASSERT_TRUE(index) << index.message();
  EXPECT_EQ(index->format(), ParameterFileFormat::irpa);
  ASSERT_EQ(index->entries().size(), 5u);
  EXPECT_EQ(index->entries()[0].name, "layer0.weight");
  EXPECT_EQ(index->entries()[0].typeString(), "2x3xf32");
  EXPECT_EQ(index->entries()[0].fileOffset % 64, 0u);

  auto weight = index->tensor(*index->find("layer0.weight"));
  ASSERT_TRUE(weight) << weight.message();
  EXPECT_TRUE(weight->isReadOnly()); // a view of the mapping, not a copy
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(weight->dataAs<float>()[i], 1.0f + i);
  auto ids = index->tensor(*index->find("ids"));
  ASSERT_TRUE(ids);
  EXPECT_EQ(ids->dataAs<int64_t>()[3], -4);
  auto bytes = index->tensor(*index->find("bytes"));
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->dtype(), DType::u8);
  EXPECT_EQ(bytes->dataAs<uint8_t>()[4], 254);

  const ParameterEntry *bias = index->find("bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->kind, ParameterEntry::Kind::splat);
  auto biasTensor = index->tensor(*bias);
  ASSERT_TRUE(biasTensor);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(biasTensor->dataAs<float>()[i], 0.5f);

  const ParameterEntry *untyped = index->find("untyped");
  ASSERT_NE(untyped, nullptr);
  EXPECT_FALSE(untyped->hasTensorType());
  EXPECT_EQ(untyped->typeString(), "<6 bytes>");
  EXPECT_FALSE(index->tensor(*untyped));
  auto asU16 = index->tensor(*untyped, DType::u16, {3});
  ASSERT_TRUE(asU16) << asU16.message();
  EXPECT_EQ(asU16->dataAs<uint16_t>()[2], 0xCDAB);
  EXPECT_EQ(index->find("missing"), nullptr);
}

TEST_F(ParameterArchiveTest, SafetensorsRoundTripExpandsSplats) {
  std::string file = writeSample(ParameterFileFormat::safetensors, "w.safetensors");
  auto index = ParameterIndex::open(file);
  ASSERT_TRUE(index) << index.message();
  EXPECT_EQ(index->format(), ParameterFileFormat::safetensors);
  ASSERT_EQ(index->entries().size(), 4u);
  // File order is kept.
  EXPECT_EQ(index->entries()[0].name, "layer0.weight");
  EXPECT_EQ(index->entries()[3].name, "bias");
  EXPECT_EQ(index->entries()[3].kind, ParameterEntry::Kind::data);
  auto bias = index->tensor(index->entries()[3]);
  ASSERT_TRUE(bias);
  EXPECT_EQ(bias->dataAs<float>()[7], 0.5f);
  auto weight = index->tensor(index->entries()[0]);
  ASSERT_TRUE(weight);
  EXPECT_EQ(weight->dataAs<float>()[5], 6.0f);
}

TEST_F(ParameterArchiveTest, ConvertsBetweenFormats) {
  auto source = ParameterIndex::open(writeSample(ParameterFileFormat::safetensors, "a.st"));
  ASSERT_TRUE(source);
  ParameterArchiveWriter writer;
  for (const ParameterEntry &entry : source->entries())
    ASSERT_TRUE(writer.addEntry(*source, entry));
  std::string converted = path("b.irpa");
  ASSERT_TRUE(writer.write(converted, ParameterFileFormat::irpa));
  auto index = ParameterIndex::open(converted);
  ASSERT_TRUE(index) << index.message();
  ASSERT_EQ(index->entries().size(), source->entries().size());
  for (const ParameterEntry &entry : source->entries()) {
    const ParameterEntry *copy = index->find(entry.name);
    ASSERT_NE(copy, nullptr) << entry.name;
    EXPECT_EQ(copy->typeString(), entry.typeString());
    EXPECT_EQ(std::memcmp(copy->bytes, entry.bytes, entry.length), 0);
  }
}

TEST_F(ParameterArchiveTest, SafetensorsNeedsTypes) {
  ParameterArchiveWriter writer;
  ASSERT_TRUE(writer.addSplat("raw", {1}, 3));
  Status s = writer.write(path("x.safetensors"), ParameterFileFormat::safetensors);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("'raw' has no tensor type"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(path("x.safetensors")));
  // No temporary file is left behind.
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST_F(ParameterArchiveTest, WriterRejectsBadEntries) {
  ParameterArchiveWriter writer;
  ASSERT_TRUE(writer.addTensor("a", f32Tensor({1}, 0)));
  EXPECT_FALSE(writer.addTensor("a", f32Tensor({1}, 0)));
  EXPECT_FALSE(writer.addTensor("", f32Tensor({1}, 0)));
  EXPECT_FALSE(writer.addSplat("s", {1, 2, 3}, 6));          // pattern of 3 bytes
  EXPECT_FALSE(writer.addSplat("s", {1, 2}, 5));             // not a multiple
  EXPECT_FALSE(writer.addSplat("s", {1, 2, 3, 4}, 8, DType::f32, {3})); // 12 != 8
  Status s = writer.write((dir / "no-such-dir" / "w.irpa").string(), ParameterFileFormat::irpa);
  EXPECT_FALSE(s);
}

/// Little-endian byte assembly for hand-made files.
struct Bytes {
  std::string data;
  template <typename T> Bytes &put(T value) {
    data.append(reinterpret_cast<const char *>(&value), sizeof(T));
    return *this;
  }
  Bytes &text(const std::string &s) {
    data += s;
    return *this;
  }
  Bytes &padTo(size_t size) {
    data.resize(size, '\0');
    return *this;
  }
};

/// An IRPA v0 file with one DATA entry "w" (4 bytes at storage offset 0)
/// and one SPLAT entry "s", laid out by hand from the public schema.
std::string handMadeIrpa() {
  Bytes b;
  // Header (88 bytes): prefix, entry count, three segments.
  b.put<uint32_t>(0x41505249u).put<uint16_t>(0).put<uint16_t>(0);
  b.put<uint64_t>(88).put<uint64_t>(0).put<uint64_t>(0);
  b.put<uint64_t>(2);
  b.put<uint64_t>(96).put<uint64_t>(80 + 85);    // entries: data (76, padded) + splat
  b.put<uint64_t>(96 + 165).put<uint64_t>(2);    // metadata: names "w" "s"
  b.put<uint64_t>(320).put<uint64_t>(4);         // storage
  b.padTo(96);
  // Data entry (76 bytes, padded to 80): entry header, storage range.
  b.put<uint64_t>(76).put<uint32_t>(2).put<uint64_t>(0);
  b.put<uint64_t>(0).put<uint64_t>(1).put<uint64_t>(0).put<uint64_t>(0).put<uint64_t>(64);
  b.put<uint64_t>(0).put<uint64_t>(4);
  b.padTo(96 + 80);
  // Splat entry (85 bytes): 8 bytes of 0x0102 pattern.
  b.put<uint64_t>(85).put<uint32_t>(1).put<uint64_t>(0);
  b.put<uint64_t>(1).put<uint64_t>(1).put<uint64_t>(0).put<uint64_t>(0).put<uint64_t>(0);
  b.put<uint64_t>(8);
  uint8_t pattern[16] = {0x01, 0x02};
  b.data.append(reinterpret_cast<const char *>(pattern), 16);
  b.put<uint8_t>(2);
  b.text("ws");
  b.padTo(320);
  b.put<float>(3.25f);
  return b.data;
}

TEST_F(ParameterArchiveTest, ReadsHandMadeIrpa) {
  auto index = parseBytes(handMadeIrpa());
  ASSERT_TRUE(index) << index.message();
  ASSERT_EQ(index->entries().size(), 2u);
  const ParameterEntry *w = index->find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->fileOffset, 320u);
  auto t = index->tensor(*w, DType::f32, {1});
  ASSERT_TRUE(t) << t.message();
  EXPECT_EQ(t->dataAs<float>()[0], 3.25f);
  auto s = index->tensor(*index->find("s"), DType::u16, {4});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->dataAs<uint16_t>()[3], 0x0201);
  // Wrong size for the untyped entry: a clear error.
  auto wrong = index->tensor(*w, DType::f32, {2});
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("holds 4 bytes, expected 2xf32 (8 bytes)"), std::string::npos)
      << wrong.message();
}

TEST_F(ParameterArchiveTest, ReadsHandMadeSafetensors) {
  std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"I32","shape":[2],"data_offsets":[8,16]},)"
      R"("a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})";
  Bytes b;
  b.put<uint64_t>(header.size()).text(header).put<double>(-1.5).put<int32_t>(7).put<int32_t>(9);
  auto index = parseBytes(b.data);
  ASSERT_TRUE(index) << index.message();
  ASSERT_EQ(index->entries().size(), 2u);
  EXPECT_EQ(index->entries()[0].name, "a"); // sorted by data offset
  auto bt = index->tensor(*index->find("b"));
  ASSERT_TRUE(bt);
  EXPECT_EQ(bt->dataAs<int32_t>()[1], 9);
  auto mismatch = index->tensor(*index->find("b"), DType::f32, {2});
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.message().find("is 2xi32, expected 2xf32"), std::string::npos)
      << mismatch.message();
}

void expectError(const Result<ParameterIndex> &result, const std::string &fragment) {
  ASSERT_FALSE(result) << "expected an error containing: " << fragment;
  EXPECT_NE(result.message().find(fragment), std::string::npos) << result.message();
}

TEST_F(ParameterArchiveTest, CorruptIrpaGivesErrors) {
  const std::string good = handMadeIrpa();
  // Truncation anywhere before the end of the data.
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(parseBytes(good.substr(0, n))) << "truncated to " << n;

  std::string bad = good;
  bad[0] = 'X';
  expectError(parseBytes(bad), "neither an IRPA archive, a GGUF file nor a safetensors file");

  bad = good;
  bad[4] = 1; // version 1.0
  expectError(parseBytes(bad), "has version 1.0");

  bad = good;
  uint64_t huge = 1ull << 62;
  std::memcpy(&bad[96 + 60], &huge, 8); // data entry storage offset
  expectError(parseBytes(bad), "is outside the storage segment");

  bad = good;
  uint64_t many = 1000;
  std::memcpy(&bad[32], &many, 8); // entry count
  expectError(parseBytes(bad), "lies outside the entry table");

  bad = good;
  std::memcpy(&bad[72], &huge, 8); // storage segment offset
  expectError(parseBytes(bad), "storage segment");

  bad = good;
  bad[176 + 84] = 3; // splat pattern length 3
  expectError(parseBytes(bad), "splat pattern length 3");

  bad = good;
  bad[96 + 8] = 3; // data entry becomes EXTERNAL
  expectError(parseBytes(bad), "external entries are not supported");

  bad = good;
  uint64_t next = 8;
  std::memcpy(&bad[16], &next, 8); // misaligned next header
  expectError(parseBytes(bad), "next header offset 8 is out of range");

  // Any single flipped byte in the header and entry table: no crash.
  for (size_t i = 0; i < 320; ++i) {
    bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5A);
    (void)parseBytes(bad);
  }
}

TEST_F(ParameterArchiveTest, CorruptSafetensorsGivesErrors) {
  auto make = [](const std::string &header, size_t dataBytes) {
    Bytes b;
    b.put<uint64_t>(header.size()).text(header);
    b.data.append(dataBytes, '\0');
    return b.data;
  };
  const std::string good =
      make(R"({"x":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", 16);
  ASSERT_TRUE(parseBytes(good));
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(parseBytes(good.substr(0, n))) << "truncated to " << n;

  expectError(parseBytes(make(R"({"x":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 16)),
              "is 2x2xf32 (16 bytes) but holds 12 bytes");
  expectError(parseBytes(make(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 16)),
              "outside the data (16 bytes)");
  expectError(parseBytes(make(R"({"x":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}})", 4)),
              "has dtype F8_E4M3, which Turbine does not support");
  expectError(parseBytes(make(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)),
              "not a non-negative integer");
  expectError(parseBytes(make(R"({"x":{"dtype":"F32"}})", 0)), "needs \"dtype\"");
  expectError(parseBytes(make(R"({"x": [1, 2)", 0)), "header is not a JSON object");
  Bytes hugeHeader;
  hugeHeader.put<uint64_t>(1ull << 40);
  expectError(parseBytes(hugeHeader.data), "exceeds the file");
}

TEST_F(ParameterArchiveTest, OpenReportsMissingAndEmptyFiles) {
  auto missing = ParameterIndex::open(path("nope.irpa"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("cannot open"), std::string::npos);
  writeAll(path("empty.irpa"), "");
  EXPECT_FALSE(ParameterIndex::open(path("empty.irpa")));
  EXPECT_FALSE(ParameterIndex::open(dir.string())); // a directory
}

} // namespace
