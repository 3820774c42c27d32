//===- ArtifactTest.cpp - .tmod serialization and corruption checks ------===//
//
// Round trips a module through serialize/deserialize and writeFile/readFile,
// then feeds the reader damaged files (truncated, bad magic, wrong version,
// checksum mismatch, malformed or ill-typed JSON, out-of-range indices) and
// checks each gives a clear error instead of a crash.
//===----------------------------------------------------------------------===//
#include "TestArtifacts.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>
#include <functional>
#include <cstring>
#include <unistd.h>

using namespace turbine;
using namespace turbine::artifact;
using turbine::testing::makeAddModule;
using turbine::testing::makeLoopModule;

namespace {

uint64_t readU64(const std::string &b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void writeU64(std::string &b, size_t at, uint64_t v) { std::memcpy(&b[at], &v, 8); }

void fixChecksum(std::string &bytes) {
  writeU64(bytes, 64, XXH64(bytes.data() + 72, bytes.size() - 72, 0));
}

Module sampleModule() {
  Module m = makeAddModule("\x7f" "ELF fake library bytes");
  Parameter p;
  p.name = "weight";
  p.dtype = DType::f32;
  p.shape = {2, 3};
  p.offset = 64;
  p.size = 24;
  m.paramData = std::string(64, 'x') + std::string(24, '\1');
  m.parameters.push_back(p);
  Instruction assertInst;
  assertInst.op = Opcode::Assert;
  assertInst.a = 0;
  assertInst.message = "n must be positive";
  m.functions[0].code.insert(m.functions[0].code.begin() + 1, assertInst);
  return m;
}

/// Replaces the meta section of `bytes` with `meta` (and fixes the checksum).
std::string withMeta(const std::string &bytes, const std::string &meta) {
  Module dummy;
  std::string library = bytes.substr(readU64(bytes, 32), readU64(bytes, 40));
  std::string params = bytes.substr(readU64(bytes, 48), readU64(bytes, 56));
  auto align = [](uint64_t v) { return (v + 63) / 64 * 64; };
  uint64_t metaOffset = 128, libOffset = align(metaOffset + meta.size());
  uint64_t paramsOffset = align(libOffset + library.size());
  std::string out(paramsOffset + params.size(), '\0');
  std::memcpy(&out[0], bytes.data(), 16);
  writeU64(out, 16, metaOffset);
  writeU64(out, 24, meta.size());
  writeU64(out, 32, libOffset);
  writeU64(out, 40, library.size());
  writeU64(out, 48, paramsOffset);
  writeU64(out, 56, params.size());
  std::memcpy(&out[metaOffset], meta.data(), meta.size());
  std::memcpy(&out[libOffset], library.data(), library.size());
  std::memcpy(&out[paramsOffset], params.data(), params.size());
  fixChecksum(out);
  return out;
}

nlohmann::json metaOf(const std::string &bytes) {
  return nlohmann::json::parse(bytes.substr(readU64(bytes, 16), readU64(bytes, 24)));
}

std::string errorFor(const std::string &bytes) {
  Result<Module> out = deserialize(bytes);
  EXPECT_FALSE(out.ok());
  return out.message();
}

/// Applies `edit` to the meta JSON of the sample module and returns the error.
template <typename Edit> std::string errorAfterEdit(Edit edit) {
  std::string bytes = serialize(sampleModule());
  nlohmann::json meta = metaOf(bytes);
  edit(meta);
  return errorFor(withMeta(bytes, meta.dump()));
}

} // namespace

TEST(Artifact, DTypeNamesRoundTrip) {
  for (const char *name : {"f16", "bf16", "f32", "f64", "i1", "i8", "i16",
                           "i32", "i64", "u8", "u16", "u32", "u64", "string"}) {
    std::optional<DType> t = parseDType(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(dtypeName(*t), name);
  }
  EXPECT_FALSE(parseDType("f128"));
  EXPECT_EQ(dtypeSize(DType::bf16), 2u);
  EXPECT_EQ(dtypeSize(DType::i1), 1u);
  EXPECT_TRUE(dtypeIsFloat(DType::f16));
  EXPECT_FALSE(dtypeIsSigned(DType::u32));
  EXPECT_TRUE(dtypeIsString(DType::string));
  EXPECT_FALSE(dtypeIsString(DType::u8));
}

TEST(Artifact, OpcodeNamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(Opcode::GlobalStore); ++i)
    EXPECT_EQ(parseOpcode(opcodeName(static_cast<Opcode>(i))), static_cast<Opcode>(i));
  for (int i = 0; i <= static_cast<int>(BinaryKind::Uge); ++i)
    EXPECT_EQ(parseBinaryKind(binaryKindName(static_cast<BinaryKind>(i))),
              static_cast<BinaryKind>(i));
}

TEST(Artifact, RoundTrip) {
  Module m = sampleModule();
  std::string bytes = serialize(m);
  ASSERT_EQ(std::string(bytes.data(), 8), std::string(kMagic, 8));
  EXPECT_EQ(readU64(bytes, 16) % 64, 0u);
  EXPECT_EQ(readU64(bytes, 32) % 64, 0u);
  EXPECT_EQ(readU64(bytes, 48) % 64, 0u);
  Result<Module> read = deserialize(bytes);
  ASSERT_TRUE(read.ok()) << read.message();
  const Module &back = *read;
  EXPECT_EQ(back.library, m.library);
  EXPECT_EQ(back.paramData, m.paramData);
  EXPECT_EQ(back.kernels, m.kernels);
  ASSERT_EQ(back.parameters.size(), 1u);
  EXPECT_EQ(back.parameters[0].name, "weight");
  EXPECT_EQ(back.parameters[0].shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(back.functions.size(), 1u);
  const Function &f = back.functions[0];
  EXPECT_EQ(f.name, "add");
  EXPECT_EQ(f.inputs[0].shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(f.inputs[0].dimNames, (std::vector<std::string>{"n"}));
  ASSERT_EQ(f.code.size(), m.functions[0].code.size());
  for (size_t i = 0; i < f.code.size(); ++i) {
    EXPECT_EQ(f.code[i].op, m.functions[0].code[i].op);
    EXPECT_EQ(f.code[i].operands, m.functions[0].code[i].operands);
    EXPECT_EQ(f.code[i].bindings, m.functions[0].code[i].bindings);
    EXPECT_EQ(f.code[i].imm, m.functions[0].code[i].imm);
  }
  EXPECT_EQ(f.code[1].message, "n must be positive");
  EXPECT_EQ(serialize(back), bytes) << "serialization is deterministic";
}

TEST(Artifact, FileRoundTripAndMissingFile) {
  std::string path = ::testing::TempDir() + "artifact_test_" +
                     std::to_string(::getpid()) + ".tmod";
  Status written = writeFile(sampleModule(), path);
  ASSERT_TRUE(written.ok()) << written.message();
  Result<Module> back = readFile(path);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->functions[0].name, "add");
  std::remove(path.c_str());
  Result<Module> missing = readFile(path);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("cannot open artifact '" + path + "'"), std::string::npos)
      << missing.message();
  Status unwritable = writeFile(sampleModule(), "/nonexistent-dir/x.tmod");
  EXPECT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.message().find("cannot write"), std::string::npos) << unwritable.message();
}

TEST(Artifact, Truncated) {
  std::string bytes = serialize(sampleModule());
  std::string cut = bytes.substr(0, bytes.size() - 10);
  EXPECT_EQ(errorFor(cut), "artifact is truncated: expected " +
                               std::to_string(bytes.size()) + " bytes, file has " +
                               std::to_string(cut.size()));
  EXPECT_NE(errorFor(bytes.substr(0, 20)).find("truncated"), std::string::npos);
  EXPECT_NE(errorFor("").find("truncated"), std::string::npos);
}

TEST(Artifact, BadMagic) {
  std::string bytes = serialize(sampleModule());
  bytes[0] = 'X';
  EXPECT_EQ(errorFor(bytes), "artifact is not a Turbine artifact (bad magic)");
  EXPECT_NE(errorFor("hello world, this is not an artifact").find("bad magic"),
            std::string::npos);
}

TEST(Artifact, WrongVersion) {
  std::string bytes = serialize(sampleModule());
  bytes[8] = 7;
  EXPECT_NE(errorFor(bytes).find("unsupported format version 7"), std::string::npos);
}

TEST(Artifact, ChecksumMismatch) {
  std::string bytes = serialize(sampleModule());
  bytes[bytes.size() - 1] ^= 0x5a;
  EXPECT_EQ(errorFor(bytes), "artifact is corrupt: checksum mismatch");
}

TEST(Artifact, MisalignedOrOverlappingSections) {
  std::string bytes = serialize(sampleModule());
  writeU64(bytes, 32, readU64(bytes, 32) + 8);
  fixChecksum(bytes);
  EXPECT_NE(errorFor(bytes).find("not a 64-byte aligned"), std::string::npos);
  bytes = serialize(sampleModule());
  writeU64(bytes, 48, readU64(bytes, 16));
  fixChecksum(bytes);
  EXPECT_NE(errorFor(bytes).find("overlap"), std::string::npos);
  bytes = serialize(sampleModule());
  writeU64(bytes, 24, ~uint64_t(0) - 10);
  fixChecksum(bytes);
  EXPECT_NE(errorFor(bytes).find("overflows"), std::string::npos);
}

TEST(Artifact, MalformedJson) {
  std::string bytes = serialize(sampleModule());
  EXPECT_EQ(errorFor(withMeta(bytes, "{\"functions\": [")),
            "artifact is corrupt: metadata is not valid JSON");
  EXPECT_NE(errorFor(withMeta(bytes, "[1, 2]")).find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(errorFor(withMeta(bytes, "{}")).find("missing field 'kernels'"),
            std::string::npos);
}

TEST(Artifact, WrongJsonTypes) {
  EXPECT_NE(errorAfterEdit([](auto &m) { m["functions"][0]["name"] = 5; })
                .find("functions[0].name: expected a string, got number"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](auto &m) { m["functions"][0]["code"][0]["dst"] = "r0"; })
                .find("expected an integer, got string"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](auto &m) { m["kernels"] = "k"; })
                .find("metadata.kernels: expected an array"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](auto &m) { m["functions"][0]["code"][0]["op"] = "jump"; })
                .find("unknown opcode 'jump'"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](auto &m) { m["functions"][0]["inputs"][0]["dtype"] = "f33"; })
                .find("unknown dtype 'f33'"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](auto &m) { m["functions"][0]["inputs"][0]["shape"] = {-5}; })
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](auto &m) { m["functions"][1] = m["functions"][0]; })
                .find("duplicate function 'add'"),
            std::string::npos);
}

TEST(Artifact, RegisterIndexOutOfRange) {
  Module m = sampleModule();
  m.functions[0].code[0].dst = 99; // dim -> index register 99 of 3
  std::string error = errorFor(serialize(m));
  EXPECT_NE(error.find("code[0].dst: value 99 out of range [0, 2]"), std::string::npos)
      << error;
  m = sampleModule();
  m.functions[0].code.back().operands = {3}; // return buffer 3 of 3
  EXPECT_NE(errorFor(serialize(m)).find("out of range"), std::string::npos);
  m = sampleModule();
  m.functions[0].numBufferRegisters = 1; // fewer than the inputs
  EXPECT_NE(errorFor(serialize(m)).find("2 inputs but only 1 buffer registers"),
            std::string::npos);
}

TEST(Artifact, KernelIndexOutOfRange) {
  Module m = sampleModule();
  for (Instruction &inst : m.functions[0].code)
    if (inst.op == Opcode::Dispatch)
      inst.imm = 3;
  std::string error = errorFor(serialize(m));
  EXPECT_NE(error.find(".imm: value 3 out of range [0, 2]"), std::string::npos) << error;
}

TEST(Artifact, ParameterChecks) {
  Module m = sampleModule();
  Instruction param;
  param.op = Opcode::Param;
  param.dst = 2;
  param.imm = 1; // only parameter #0 exists
  m.functions[0].code.insert(m.functions[0].code.begin(), param);
  EXPECT_NE(errorFor(serialize(m)).find("imm: value 1 out of range [0, 0]"),
            std::string::npos);

  m = sampleModule();
  m.parameters[0].size = 4000;
  EXPECT_NE(errorFor(serialize(m)).find("lie outside the params section"),
            std::string::npos);
  m = sampleModule();
  m.parameters[0].offset = 8;
  EXPECT_NE(errorFor(serialize(m)).find("not 64-byte aligned"), std::string::npos);
  m = sampleModule();
  m.parameters[0].shape = {5};
  EXPECT_NE(errorFor(serialize(m)).find("does not match its type"), std::string::npos);
}

TEST(Artifact, ExternalParameters) {
  Module m = sampleModule();
  Parameter ext;
  ext.name = "encoder.weight";
  ext.dtype = DType::f16;
  ext.shape = {1000, 1000}; // far larger than the params section: no bytes here
  ext.size = 2000000;
  ext.external = true;
  m.parameters.push_back(ext);
  Result<Module> read = deserialize(serialize(m));
  ASSERT_TRUE(read.ok()) << read.message();
  const Module &back = *read;
  ASSERT_EQ(back.parameters.size(), 2u);
  EXPECT_FALSE(back.parameters[0].external);
  EXPECT_TRUE(back.parameters[1].external);
  EXPECT_EQ(back.parameters[1].name, "encoder.weight");

  m.parameters[1].offset = 64; // external parameters have no offset
  EXPECT_NE(errorFor(serialize(m)).find("an external parameter has no offset"),
            std::string::npos);
  m.parameters[1].offset = 0;
  m.parameters[1].size = 3; // still checked against the type
  EXPECT_NE(errorFor(serialize(m)).find("does not match its type"), std::string::npos);
}

TEST(Artifact, ReturnCountMustMatchOutputs) {
  Module m = sampleModule();
  m.functions[0].code.back().operands = {2, 2};
  EXPECT_NE(errorFor(serialize(m)).find("returns 2 values but the function has 1"),
            std::string::npos);
}

/// The sample module plus `idx[1] = buf[0][idx[0]]` read as `dtype`.
Module moduleWithLoad(DType dtype) {
  Module m = sampleModule();
  m.functions[0].code.insert(m.functions[0].code.begin() + 1,
                             turbine::testing::makeLoad(1, 0, dtype, {0}));
  return m;
}

TEST(Artifact, LoadRoundTrips) {
  Module m = moduleWithLoad(DType::u16);
  Result<Module> read = deserialize(serialize(m));
  ASSERT_TRUE(read.ok()) << read.message();
  const Module &back = *read;
  const Instruction &load = back.functions[0].code[1];
  EXPECT_EQ(load.op, Opcode::Load);
  EXPECT_EQ(load.dst, 1);
  EXPECT_EQ(load.a, 0);
  EXPECT_EQ(load.dtype, DType::u16);
  EXPECT_EQ(load.operands, (std::vector<int32_t>{0}));
  nlohmann::json j = metaOf(serialize(m))["functions"][0]["code"][1];
  EXPECT_EQ(j.dump(), R"({"a":0,"dst":1,"dtype":"u16","op":"load","operands":[0]})");
}

TEST(Artifact, CorruptLoadIsRejected) {
  EXPECT_NE(errorFor(serialize(moduleWithLoad(DType::f32)))
                .find("code[1].dtype: load reads integers into index registers, not 'f32'"),
            std::string::npos);
  Module m = moduleWithLoad(DType::i64);
  m.functions[0].code[1].a = 7; // buffer register 7 of 3
  EXPECT_NE(errorFor(serialize(m)).find("code[1].a: value 7 out of range [0, 2]"),
            std::string::npos);
  m = moduleWithLoad(DType::i64);
  m.functions[0].code[1].dst = 3; // index register 3 of 3
  EXPECT_NE(errorFor(serialize(m)).find("code[1].dst: value 3 out of range [0, 2]"),
            std::string::npos);
  m = moduleWithLoad(DType::i64);
  m.functions[0].code[1].operands = {0, -1};
  EXPECT_NE(errorFor(serialize(m)).find("code[1].operands[1]: value -1 out of range"),
            std::string::npos);
  auto edit = [](auto change) {
    return errorAfterEdit([&](nlohmann::json &meta) {
      meta["functions"][0]["code"][1] = {{"op", "load"}, {"dst", 1}, {"a", 0}, {"dtype", "i32"},
                                         {"operands", {0}}};
      change(meta["functions"][0]["code"][1]);
    });
  };
  EXPECT_NE(edit([](nlohmann::json &l) { l.erase("operands"); })
                .find("code[1]: missing field 'operands'"),
            std::string::npos);
  EXPECT_NE(edit([](nlohmann::json &l) { l["dtype"] = "i65"; }).find("unknown dtype 'i65'"),
            std::string::npos);
  EXPECT_NE(edit([](nlohmann::json &l) { l.erase("a"); }).find("code[1]: missing field 'a'"),
            std::string::npos);
}

TEST(Artifact, EveryByteFlipIsRejectedOrHarmless) {
  // Fuzz-style: flip each byte of the header and a sample of the body; the
  // reader must never crash, and body flips must be caught by the checksum.
  std::string bytes = serialize(sampleModule());
  for (size_t i = 0; i < bytes.size(); i += (i < 72 ? 1 : 7)) {
    std::string damaged = bytes;
    damaged[i] ^= 0xff;
    Result<Module> out = deserialize(damaged);
    if (i >= 72) {
      EXPECT_FALSE(out.ok()) << "flip at " << i;
    }
    if (!out.ok()) {
      EXPECT_FALSE(out.message().empty());
    }
  }
}

namespace {

/// main(x: string[?]) -> (y: string[?], z: string[?], w: i64[?]) with one
/// instruction of each string opcode.
Module stringModule() {
  Module m;
  Function f;
  f.name = "main";
  f.inputs = {{"x", DType::string, {-1}, {""}}};
  f.outputs = {{"y", DType::string, {-1}, {""}}, {"z", DType::string, {-1}, {""}},
               {"w", DType::i64, {-1}, {""}}};
  f.numBufferRegisters = 4;
  Instruction normalize;
  normalize.op = Opcode::StringNormalize;
  normalize.dst = 1;
  normalize.a = 0;
  normalize.caseChange = StringCase::Lower;
  normalize.caseSensitive = true;
  normalize.strings = {"monday", "été"};
  normalize.locale = "en_US";
  Instruction parse;
  parse.op = Opcode::FromString;
  parse.dst = 3;
  parse.a = 0;
  parse.dtype = DType::i64;
  Instruction format;
  format.op = Opcode::ToString;
  format.dst = 2;
  format.a = 3;
  format.dtype = DType::i64;
  Instruction ret;
  ret.op = Opcode::Return;
  ret.operands = {1, 2, 3};
  f.code = {normalize, parse, format, ret};
  m.functions.push_back(f);
  return m;
}

std::string stringErrorAfterEdit(const std::function<void(nlohmann::json &)> &edit) {
  std::string bytes = serialize(stringModule());
  nlohmann::json meta = metaOf(bytes);
  edit(meta);
  return errorFor(withMeta(bytes, meta.dump()));
}

} // namespace

TEST(Artifact, StringOpcodesRoundTrip) {
  std::string bytes = serialize(stringModule());
  Result<Module> read = deserialize(bytes);
  ASSERT_TRUE(read.ok()) << read.message();
  const Module &back = *read;
  const Function &f = back.functions[0];
  EXPECT_EQ(f.inputs[0].dtype, DType::string);
  const Instruction &normalize = f.code[0];
  EXPECT_EQ(normalize.op, Opcode::StringNormalize);
  EXPECT_EQ(normalize.caseChange, StringCase::Lower);
  EXPECT_TRUE(normalize.caseSensitive);
  EXPECT_EQ(normalize.strings, (std::vector<std::string>{"monday", "été"}));
  EXPECT_EQ(normalize.locale, "en_US");
  EXPECT_EQ(f.code[1].op, Opcode::FromString);
  EXPECT_EQ(f.code[1].dtype, DType::i64);
  EXPECT_EQ(f.code[2].op, Opcode::ToString);
  EXPECT_EQ(metaOf(bytes)["functions"][0]["code"][0].dump(),
            R"({"a":0,"case_change":"lower","case_sensitive":true,"dst":1,"locale":"en_US",)"
            R"("op":"string_normalize","stopwords":["monday","été"]})");
}

TEST(Artifact, CorruptStringOpcodesAreRejected) {
  auto code = [](nlohmann::json &meta, int i) -> nlohmann::json & {
    return meta["functions"][0]["code"][i];
  };
  auto expectError = [](const std::string &error, const std::string &part) {
    EXPECT_NE(error.find(part), std::string::npos) << error;
  };
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 0)["case_change"] = "title"; }),
              "code[0].case_change: unknown case change 'title' (expected none, lower or upper)");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 0)["case_sensitive"] = 1; }),
              "code[0].case_sensitive: expected a boolean");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 0)["stopwords"][1] = 7; }),
              "code[0].stopwords[1]: expected a string");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 0).erase("locale"); }),
              "code[0]: missing field 'locale'");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 0)["a"] = 9; }),
              "code[0].a: value 9 out of range [0, 3]");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 1)["dtype"] = "string"; }),
              "code[1].dtype: from_string converts between strings and 'string'");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 2)["dtype"] = "str"; }),
              "code[2].dtype: unknown dtype 'str'");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) { code(m, 2)["op"] = "string_split"; }),
              "code[2]: unknown opcode 'string_split'");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) {
                code(m, 1) = {{"op", "load"}, {"dst", 0}, {"a", 0}, {"dtype", "string"},
                              {"operands", nlohmann::json::array()}};
                m["functions"][0]["num_index_registers"] = 1;
              }),
              "load reads integers into index registers, not 'string'");
  expectError(stringErrorAfterEdit([&](nlohmann::json &m) {
                m["parameters"] = {{{"name", "words"}, {"dtype", "string"}, {"shape", {2}},
                                    {"offset", 0}, {"size", 64}}};
              }),
              "metadata.parameters[0] ('words'): string parameters are not supported");
}

TEST(Artifact, LoopOpcodesRoundTrip) {
  Module m = makeLoopModule("\x7f" "ELF fake library bytes");
  std::string bytes = serialize(m);
  Result<Module> read = deserialize(bytes);
  ASSERT_TRUE(read.ok()) << read.message();
  const Module &back = *read;
  const Function &f = back.functions[1];
  ASSERT_EQ(f.code.size(), m.functions[1].code.size());
  for (size_t pc = 0; pc < f.code.size(); ++pc) {
    EXPECT_EQ(f.code[pc].op, m.functions[1].code[pc].op) << pc;
    EXPECT_EQ(f.code[pc].imm, m.functions[1].code[pc].imm) << pc;
  }
  EXPECT_EQ(metaOf(bytes)["functions"][1]["code"][9].dump(),
            R"({"a":4,"imm":14,"op":"break_unless"})");
  EXPECT_EQ(metaOf(bytes)["functions"][1]["code"][5].dump(),
            R"({"a":0,"dst":2,"op":"move_buffer"})");
  std::vector<LoopBracket> loops = loopBrackets(f);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].begin, 6);
  EXPECT_EQ(loops[0].end, 14);
}

TEST(Artifact, CorruptLoopTargetsAreRejected) {
  auto errorAfterLoopEdit = [](const std::function<void(nlohmann::json &)> &edit) {
    std::string bytes = serialize(makeLoopModule("\x7f" "ELF fake library bytes"));
    nlohmann::json meta = metaOf(bytes);
    edit(meta["functions"][1]["code"]);
    return errorFor(withMeta(bytes, meta.dump()));
  };
  auto expectError = [](const std::string &error, const std::string &part) {
    EXPECT_NE(error.find(part), std::string::npos) << error;
  };
  const std::string where = "metadata.functions[1] ('repeat_add').code";
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[6]["imm"] = 99; }),
              where + "[6] (loop): target 99 is not the end_loop that closes this loop");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[6]["imm"] = -3; }),
              "[6] (loop): target -3 is not the end_loop");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[6]["imm"] = 12; }),
              "[6] (loop): target 12 is not the end_loop");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[9]["imm"] = 15; }),
              "[9] (break_unless): target 15 is not the end_loop of the innermost enclosing loop");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[14]["imm"] = 0; }),
              "[6] (loop): target 14 is not the end_loop that closes this loop");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[9]["a"] = 77; }),
              "code[9].a: value 77 out of range [0, 5]");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c.erase(14); }),
              "code[6] (loop): target 14 is not the end_loop");
  // A break_unless or end_loop outside any loop, a loop never closed.
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[3] = c[9]; }),
              "[3] (break_unless): target 14 is not the end_loop of the innermost enclosing loop");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) {
                c[14] = {{"op", "const"}, {"dst", 0}, {"imm", 0}};
              }),
              "[6] (loop): target 14 is not the end_loop that closes this loop");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) {
                c[2] = {{"op", "end_loop"}, {"imm", 6}};
              }),
              "[2] (end_loop): target 6 is not the loop this end_loop closes");
  expectError(errorAfterLoopEdit([](nlohmann::json &c) { c[14]["op"] = "jump"; }),
              "code[14]: unknown opcode 'jump'");
  // Brackets that cross: a second loop opened inside the first but closed
  // after it.
  expectError(errorAfterLoopEdit([](nlohmann::json &c) {
                c[7] = {{"op", "loop"}, {"imm", 15}};
                c[15] = {{"op", "end_loop"}, {"imm", 7}};
                c[9]["imm"] = 15;
                c.push_back({{"op", "return"}, {"operands", {3}}});
              }),
              "[14] (end_loop): target 6 is not the loop this end_loop closes");
}

TEST(Artifact, ReleasePositionsRespectLoops) {
  // repeat_add: loop [6, 14]. x (input, buffer 0) is read by move_buffer at
  // 5 and by the dispatch at 11 in every iteration: it lives until the loop
  // exits, not until 11.
  Module m = makeLoopModule("\x7f" "ELF fake library bytes");
  std::vector<LoopBracket> loops = loopBrackets(m.functions[1]);
  EXPECT_EQ(releasePositionAcrossLoops(loops, -1, 11), 14) << "input read inside the loop";
  EXPECT_EQ(releasePositionAcrossLoops(loops, 5, 13), 14) << "state register (moves)";
  EXPECT_EQ(releasePositionAcrossLoops(loops, 10, 13), 13) << "defined and dead inside one body";
  EXPECT_EQ(releasePositionAcrossLoops(loops, 8, 15), 15) << "result register used after";
  EXPECT_EQ(releasePositionAcrossLoops(loops, 0, 3), 3) << "before the loop only";
  EXPECT_EQ(releasePositionAcrossLoops(loops, 2, 20), 20) << "spans the loop";
  // Nested loops [2, 20] and [5, 10]: a register defined in the outer body
  // and read in the inner one lives until the inner loop exits; one defined
  // before both and read in the inner one until the outer loop exits.
  std::vector<LoopBracket> nested = {{2, 20}, {5, 10}};
  EXPECT_EQ(releasePositionAcrossLoops(nested, 3, 7), 10);
  EXPECT_EQ(releasePositionAcrossLoops(nested, 0, 7), 20);
  EXPECT_EQ(releasePositionAcrossLoops(nested, 6, 8), 8);
  EXPECT_EQ(releasePositionAcrossLoops(nested, 11, 12), 12);
}

// GPU targets (cuda): the library holds code images listed in `images`, and
// `kernel_launch` gives each kernel's parameter counts; both round-trip and
// are validated like the rest of the metadata.
namespace {
Module cudaModule() {
  Module m = sampleModule();
  m.target = "cuda";
  m.library = std::string(".version 8.0\n", 13) + '\0' + std::string(50, '\0') +
              std::string(100, '\x7f');
  m.images = {{"ptx", "sm_80", 0, 14}, {"cubin", "sm_90", 64, 100}};
  m.kernelLaunch.assign(m.kernels.size(), KernelLaunch{});
  m.kernelLaunch[0].bindings = 3;
  m.kernelLaunch[0].constants = 1;
  return m;
}
} // namespace

TEST(Artifact, CudaImagesAndLaunchRoundTrip) {
  Module m = cudaModule();
  Result<Module> back = deserialize(serialize(m));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->target, "cuda");
  ASSERT_EQ(back->images.size(), 2u);
  EXPECT_EQ(back->images[0].format, "ptx");
  EXPECT_EQ(back->images[0].arch, "sm_80");
  EXPECT_EQ(back->images[0].size, 14u);
  EXPECT_EQ(back->images[1].format, "cubin");
  EXPECT_EQ(back->images[1].arch, "sm_90");
  EXPECT_EQ(back->images[1].offset, 64u);
  ASSERT_EQ(back->kernelLaunch.size(), m.kernels.size());
  EXPECT_EQ(back->kernelLaunch[0].bindings, 3);
  EXPECT_EQ(back->kernelLaunch[0].constants, 1);
  EXPECT_EQ(back->kernelLaunch[0].maxThreads, 256);
  EXPECT_EQ(back->library, m.library);
  // A CPU artifact has neither.
  Result<Module> cpu = deserialize(serialize(sampleModule()));
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->images.empty());
  EXPECT_TRUE(cpu->kernelLaunch.empty());
}

TEST(Artifact, TargetCpuRoundTrips) {
  Module m = sampleModule();
  m.targetCpu = "znver3";
  m.cpuFeatures = {"avx2", "fma"};
  Result<Module> back = deserialize(serialize(m));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->targetCpu, "znver3");
  EXPECT_EQ(back->cpuFeatures, (std::vector<std::string>{"avx2", "fma"}));
  // Artifacts from before the record: none, and no "cpu" key written.
  EXPECT_FALSE(metaOf(serialize(sampleModule())).contains("cpu"));
  Result<Module> old = deserialize(serialize(sampleModule()));
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->targetCpu.empty() && old->cpuFeatures.empty());
}

TEST(Artifact, CorruptTargetCpuIsRejected) {
  EXPECT_NE(errorAfterEdit([](nlohmann::json &meta) { meta["cpu"] = "znver3"; })
                .find("metadata.cpu: expected an object"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](nlohmann::json &meta) { meta["cpu"] = {{"name", "znver3"}}; })
                .find("metadata.cpu: missing field 'features'"),
            std::string::npos);
  EXPECT_NE(errorAfterEdit([](nlohmann::json &meta) {
              meta["cpu"] = {{"name", "znver3"}, {"features", {"avx2", 7}}};
            }).find("metadata.cpu.features[1]: expected a non-empty feature name"),
            std::string::npos);
}

TEST(Artifact, CudaMetadataChecks) {
  Module m = cudaModule();
  m.images[1].size = 101; // one byte past the library
  EXPECT_NE(errorFor(serialize(m)).find("metadata.images[1]: bytes [64, +101) lie outside the "
                                        "164-byte library section"),
            std::string::npos);
  m = cudaModule();
  m.images[0].format = "fatbin";
  EXPECT_NE(errorFor(serialize(m)).find("metadata.images[0].format: expected ptx or cubin, got "
                                        "'fatbin'"),
            std::string::npos);
  m = cudaModule();
  m.kernelLaunch.pop_back();
  EXPECT_NE(errorFor(serialize(m)).find("metadata.kernel_launch: " +
                                        std::to_string(m.kernelLaunch.size()) + " entries for " +
                                        std::to_string(m.kernels.size()) + " kernels"),
            std::string::npos);
  m = cudaModule();
  m.kernelLaunch[0].maxThreads = 2048;
  EXPECT_NE(errorFor(serialize(m)).find("kernel_launch[0].max_threads: value 2048 out of range "
                                        "[1, 1024]"),
            std::string::npos);
}
