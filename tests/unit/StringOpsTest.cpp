//===- StringOpsTest.cpp - String tensors and the host string opcodes ----===//
//
// String tensors in the runtime: storage, text input/output, comparison;
// StringNormalizer (stopwords with and without case, UTF-8 case mapping, the
// empty-result shape rule, bad input); Cast to and from strings (the float
// formatting ONNX's reference uses, NaN/INF spellings, parsing, range and
// syntax errors); and the string opcodes run by a hand-built host program,
// including the errors when strings meet a kernel or the wrong dtype.
//===----------------------------------------------------------------------===//
#include "TestArtifacts.h"

#include "turbine/runtime/ParameterArchive.h"
#include "turbine/runtime/Runtime.h"
#include "turbine/runtime/StringOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace turbine;
using namespace turbine::runtime;

namespace {

Tensor strings(std::vector<int64_t> shape, std::vector<std::string> values) {
  Result<Tensor> t = Tensor::fromStrings(std::move(shape), std::move(values));
  EXPECT_TRUE(t.ok()) << t.message();
  return *t;
}

std::vector<std::string> valuesOf(const Tensor &t) {
  EXPECT_EQ(t.dtype(), DType::string);
  const std::string *p = t.dataAs<std::string>();
  return std::vector<std::string>(p, p + t.elementCount());
}

template <typename T> Tensor numbers(DType dtype, std::vector<T> values) {
  Result<Tensor> t = Tensor::fromBytes(dtype, {static_cast<int64_t>(values.size())},
                                       values.data(), values.size() * sizeof(T));
  EXPECT_TRUE(t.ok()) << t.message();
  return *t;
}

std::vector<std::string> formatted(const Tensor &t) {
  Result<Tensor> s = formatAsStrings(t);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? valuesOf(*s) : std::vector<std::string>{};
}

} // namespace

TEST(StringTensor, StorageCloneAndRefusedWraps) {
  Tensor t = strings({2}, {"a", "bb"});
  EXPECT_EQ(t.typeString(), "2xstring");
  Result<Tensor> copy = t.clone();
  ASSERT_TRUE(copy.ok());
  copy->dataAs<std::string>()[0] = "changed";
  EXPECT_EQ(valuesOf(t), (std::vector<std::string>{"a", "bb"}));
  Result<Tensor> empty = Tensor::zeros(DType::string, {3});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(valuesOf(*empty), (std::vector<std::string>{"", "", ""}));
  std::string raw[1];
  EXPECT_FALSE(Tensor::wrap(DType::string, {1}, raw).ok());
  EXPECT_FALSE(Tensor::fromBytes(DType::string, {1}, "x", 1).ok());
  Result<Tensor> wrongCount = Tensor::fromStrings({3}, {"a"});
  ASSERT_FALSE(wrongCount.ok());
  EXPECT_NE(wrongCount.message().find("3xstring needs 3 strings, got 1"), std::string::npos);
}

TEST(StringTensor, CannotBeAParameter) {
  ParameterArchiveWriter writer;
  Status tensor = writer.addTensor("words", strings({1}, {"a"}));
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.message(), "parameter 'words': string tensors cannot be parameters");
  Status splat = writer.addSplat("words", std::vector<uint8_t>(8, 0), 32, DType::string, {1});
  EXPECT_FALSE(splat.ok());
}

TEST(StringTensor, TextInputAndPrinting) {
  Result<Tensor> t = parseTensorSpec(R"(2x2xstring=["a b" plain]["" "q\"\\\n\x41"])");
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(valuesOf(*t), (std::vector<std::string>{"a b", "plain", "", "q\"\\\nA"}));
  EXPECT_EQ(formatTensor(*t), R"(2x2xstring=["a b" "plain"]["" "q\"\\\nA"])");
  Result<Tensor> splat = parseTensorSpec("3xstring=\"Straße\"");
  ASSERT_TRUE(splat.ok()) << splat.message();
  EXPECT_EQ(valuesOf(*splat), (std::vector<std::string>{"Straße", "Straße", "Straße"}));
  Result<Tensor> zeros = parseTensorSpec("2xstring");
  ASSERT_TRUE(zeros.ok());
  EXPECT_EQ(valuesOf(*zeros), (std::vector<std::string>{"", ""}));

  auto errorOf = [](const std::string &spec) {
    Result<Tensor> r = parseTensorSpec(spec);
    EXPECT_FALSE(r.ok()) << spec;
    return r.ok() ? std::string() : r.message();
  };
  EXPECT_NE(errorOf("2xstring=\"open").find("missing closing quote"), std::string::npos);
  EXPECT_NE(errorOf("2xstring=\"a\\q\" b").find("unknown escape"), std::string::npos);
  EXPECT_NE(errorOf("2xstring=\"a\"b c").find("closing quote must be followed"),
            std::string::npos);
  EXPECT_NE(errorOf("3xstring=a b").find("3xstring needs 3 values, got 2"), std::string::npos);
  EXPECT_NE(errorOf("2xstring=@x.bin").find("cannot be read from raw bytes"), std::string::npos);
  EXPECT_FALSE(encodeNpy(*t).ok());
}

TEST(StringTensor, CompareIsExact) {
  Tensor a = strings({2}, {"x", "y"});
  EXPECT_EQ(compareTensors(a, strings({2}, {"x", "y"}), 0, 0), "");
  EXPECT_EQ(compareTensors(a, strings({2}, {"x", "Y"}), 1, 1),
            "index [1]: expected \"y\", got \"Y\"");
  EXPECT_EQ(compareTensors(a, strings({1}, {"x"}), 0, 0), "expected 2xstring, got 1xstring");
}

TEST(StringNormalizer, StopwordsCaseSensitiveAndNot) {
  Tensor x = strings({4}, {"monday", "Monday", "MONDAY", "tuesday"});
  Result<Tensor> sensitive =
      normalizeStrings(x, StringCaseChange::None, /*caseSensitive=*/true, {"monday"}, "");
  ASSERT_TRUE(sensitive.ok()) << sensitive.message();
  EXPECT_EQ(sensitive->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(valuesOf(*sensitive), (std::vector<std::string>{"Monday", "MONDAY", "tuesday"}));
  Result<Tensor> insensitive =
      normalizeStrings(x, StringCaseChange::Upper, /*caseSensitive=*/false, {"mOnDaY"}, "");
  ASSERT_TRUE(insensitive.ok()) << insensitive.message();
  EXPECT_EQ(valuesOf(*insensitive), (std::vector<std::string>{"TUESDAY"}));
  // Non-ASCII stopwords compare without case too.
  Result<Tensor> accented = normalizeStrings(strings({3}, {"ÉTÉ", "été", "hiver"}),
                                             StringCaseChange::None, false, {"Été"}, "");
  ASSERT_TRUE(accented.ok()) << accented.message();
  EXPECT_EQ(valuesOf(*accented), (std::vector<std::string>{"hiver"}));
}

TEST(StringNormalizer, Utf8CaseMapping) {
  Tensor x = strings({1, 4}, {"été", "Ωμέγα", "привет", "Straße"});
  Result<Tensor> upper = normalizeStrings(x, StringCaseChange::Upper, true, {}, "");
  ASSERT_TRUE(upper.ok()) << upper.message();
  EXPECT_EQ(upper->shape(), (std::vector<int64_t>{1, 4}));
  // Simple (one code point to one) mapping: ß has no single upper case.
  EXPECT_EQ(valuesOf(*upper), (std::vector<std::string>{"ÉTÉ", "ΩΜΈΓΑ", "ПРИВЕТ", "STRAßE"}));
  Result<Tensor> lower = normalizeStrings(*upper, StringCaseChange::Lower, true, {}, "en_US");
  ASSERT_TRUE(lower.ok()) << lower.message();
  EXPECT_EQ(valuesOf(*lower), (std::vector<std::string>{"été", "ωμέγα", "привет", "straße"}));
}

TEST(StringNormalizer, EmptyResultIsOneEmptyString) {
  Result<Tensor> vector = normalizeStrings(strings({2}, {"monday", "Monday"}),
                                           StringCaseChange::Upper, false, {"monday"}, "");
  ASSERT_TRUE(vector.ok()) << vector.message();
  EXPECT_EQ(vector->shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(valuesOf(*vector), (std::vector<std::string>{""}));
  Result<Tensor> row = normalizeStrings(strings({1, 2}, {"a", "a"}), StringCaseChange::None,
                                        true, {"a"}, "");
  ASSERT_TRUE(row.ok()) << row.message();
  EXPECT_EQ(row->shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(valuesOf(*row), (std::vector<std::string>{""}));
}

TEST(StringNormalizer, BadInputsAreErrors) {
  Result<Tensor> shape = normalizeStrings(strings({2, 1}, {"a", "b"}), StringCaseChange::None,
                                          true, {}, "");
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.message().find("only [C] and [1, C]"), std::string::npos);
  Result<Tensor> utf8 = normalizeStrings(strings({2}, {"ok", std::string("bad\xff", 4)}),
                                         StringCaseChange::Lower, true, {}, "");
  ASSERT_FALSE(utf8.ok());
  EXPECT_NE(utf8.message().find("element 1 (\"bad\xff\") is not valid UTF-8 (at byte 3)"),
            std::string::npos)
      << utf8.message();
  Result<Tensor> overlong = normalizeStrings(strings({1}, {std::string("\xc0\xaf", 2)}),
                                             StringCaseChange::Upper, true, {}, "");
  EXPECT_FALSE(overlong.ok());
  Result<Tensor> notStrings = normalizeStrings(numbers<float>(DType::f32, {1.0f}),
                                               StringCaseChange::None, true, {}, "");
  ASSERT_FALSE(notStrings.ok());
  EXPECT_NE(notStrings.message().find("expected strings"), std::string::npos);
}

TEST(StringCast, FloatsFormatAsTheOnnxReference) {
  // Expected texts are NumPy's str of the same float32 values (the ONNX
  // reference: x.astype(np.str_)), except the reserved NaN / INF spellings.
  EXPECT_EQ(formatted(numbers<float>(
                DType::f32, {0.9767611026763916f, 0.039187793f, 1e-7f, 1.0f, 123456.0f, 1e16f,
                             1.5e16f, 0.0001f, 0.00012f, -0.0f, 0.1f, 3.4028235e38f, 1e-45f,
                             16777216.0f, 2.5f})),
            (std::vector<std::string>{"0.9767611", "0.039187793", "1e-07", "1.0", "123456.0",
                                      "1e+16", "1.5e+16", "1e-04", "0.00012", "-0.0", "0.1",
                                      "3.4028235e+38", "1e-45", "16777216.0", "2.5"}));
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(formatted(numbers<float>(DType::f32, {std::nanf(""), inf, -inf})),
            (std::vector<std::string>{"NaN", "INF", "-INF"}));
  EXPECT_EQ(formatted(numbers<double>(DType::f64, {0.1, 1e-4, 1.17549435e-38, 1e300})),
            (std::vector<std::string>{"0.1", "0.0001", "1.17549435e-38", "1e+300"}));
  // float16 0.1 is 0.0999755859375: its shortest half-precision text is "0.1".
  EXPECT_EQ(formatted(numbers<uint16_t>(DType::f16, {0x2e66, 0x3c00, 0x7bff})),
            (std::vector<std::string>{"0.1", "1.0", "65500.0"}));
}

TEST(StringCast, FloatsRoundTrip) {
  std::vector<float> values;
  uint32_t state = 12345;
  for (int i = 0; i < 2000; ++i) {
    state = state * 1664525u + 1013904223u;
    float f;
    std::memcpy(&f, &state, 4);
    if (std::isfinite(f))
      values.push_back(f);
  }
  Tensor in = numbers<float>(DType::f32, values);
  Result<Tensor> text = formatAsStrings(in);
  ASSERT_TRUE(text.ok());
  Result<Tensor> back = parseStrings(*text, DType::f32);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(std::memcmp(back->data(), in.data(), in.byteSize()), 0);
}

TEST(StringCast, IntegersAndBools) {
  EXPECT_EQ(formatted(numbers<int8_t>(DType::i8, {-128, 0, 127})),
            (std::vector<std::string>{"-128", "0", "127"}));
  EXPECT_EQ(formatted(numbers<uint64_t>(DType::u64, {18446744073709551615ull})),
            (std::vector<std::string>{"18446744073709551615"}));
  EXPECT_EQ(formatted(numbers<uint8_t>(DType::i1, {1, 0})),
            (std::vector<std::string>{"True", "False"}));
}

TEST(StringCast, ParseFloats) {
  Result<Tensor> f = parseStrings(
      strings({9}, {"0.47892547", "NaN", "INF", "+INF", "-INF", "inf", " 2.5 ", "1E3", "-1e-5"}),
      DType::f32);
  ASSERT_TRUE(f.ok()) << f.message();
  const float *v = f->dataAs<float>();
  EXPECT_EQ(v[0], 0.47892547f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[4], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[5], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[6], 2.5f);
  EXPECT_EQ(v[7], 1000.0f);
  EXPECT_EQ(v[8], -1e-5f);
  Result<Tensor> big = parseStrings(strings({1}, {"1e400"}), DType::f64);
  ASSERT_TRUE(big.ok()) << big.message();
  EXPECT_EQ(big->dataAs<double>()[0], std::numeric_limits<double>::infinity());
  Result<Tensor> bad = parseStrings(strings({2}, {"1", "Hello World!"}), DType::f32);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "cast from strings to f32: element 1 (\"Hello World!\") is not a number");
  EXPECT_FALSE(parseStrings(strings({1}, {"0x10"}), DType::f32).ok());
  EXPECT_FALSE(parseStrings(strings({1}, {"++1"}), DType::f32).ok());
}

TEST(StringCast, ParseIntegersAndBools) {
  Result<Tensor> i = parseStrings(strings({4}, {"-128", "+5", "100.5", "-2.9"}), DType::i8);
  ASSERT_TRUE(i.ok()) << i.message();
  const int8_t *v = i->dataAs<int8_t>();
  EXPECT_EQ(v[0], -128);
  EXPECT_EQ(v[1], 5);
  EXPECT_EQ(v[2], 100); // ONNX: "100.5" may become 100 (truncation toward zero)
  EXPECT_EQ(v[3], -2);
  Result<Tensor> u = parseStrings(strings({1}, {"18446744073709551615"}), DType::u64);
  ASSERT_TRUE(u.ok()) << u.message();
  EXPECT_EQ(u->dataAs<uint64_t>()[0], 18446744073709551615ull);
  Result<Tensor> range = parseStrings(strings({1}, {"128"}), DType::i8);
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.message().find("element 0 (\"128\") is out of range for i8"),
            std::string::npos);
  EXPECT_FALSE(parseStrings(strings({1}, {"-1"}), DType::u8).ok());
  EXPECT_FALSE(parseStrings(strings({1}, {"1e30"}), DType::i64).ok());
  EXPECT_FALSE(parseStrings(strings({1}, {"twelve"}), DType::i32).ok());
  Result<Tensor> b = parseStrings(strings({5}, {"True", "false", "0", "2", "-0.0"}), DType::i1);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(std::vector<uint8_t>(b->dataAs<uint8_t>(), b->dataAs<uint8_t>() + 5),
            (std::vector<uint8_t>{1, 0, 0, 1, 0}));
  EXPECT_FALSE(parseStrings(strings({1}, {"yes"}), DType::i1).ok());
}

namespace {

/// main(x: string[?]) -> (normalized: string[?], parsed: f32[?]):
/// normalized = StringNormalizer(x, UPPER, stopwords {"monday"}),
/// parsed = Cast<float>(x).
artifact::Module stringModule(artifact::Opcode second = artifact::Opcode::FromString) {
  using artifact::Instruction;
  using artifact::Opcode;
  artifact::Module m;
  artifact::Function f;
  f.name = "main";
  f.inputs = {{"x", DType::string, {-1}, {""}}};
  f.outputs = {{"normalized", DType::string, {-1}, {""}},
               {"parsed", second == Opcode::FromString ? DType::f32 : DType::string, {-1}, {""}}};
  f.numBufferRegisters = 3;
  Instruction normalize;
  normalize.op = Opcode::StringNormalize;
  normalize.dst = 1;
  normalize.a = 0;
  normalize.caseChange = artifact::StringCase::Upper;
  normalize.strings = {"monday"};
  Instruction cast;
  cast.op = second;
  cast.dst = 2;
  cast.a = 0;
  cast.dtype = DType::f32;
  f.code = {normalize, cast, turbine::testing::makeReturn({1, 2})};
  m.functions.push_back(f);
  return m;
}

} // namespace

TEST(HostStringOps, RunInAHostProgram) {
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(stringModule()), "strings");
  ASSERT_TRUE(module.ok()) << module.message();
  Result<std::unique_ptr<Device>> device = Device::create("local-sync");
  ASSERT_TRUE(device.ok());
  const Function &fn = (*module)->functions().front();
  Result<std::vector<Tensor>> results =
      fn.invoke(**device, {strings({3}, {"1.5", "Monday", "-INF"})});
  ASSERT_FALSE(results.ok()); // "Monday" is not a number
  EXPECT_NE(results.message().find("instruction 1 (from_string): cast from strings to f32: "
                                   "element 1 (\"Monday\") is not a number"),
            std::string::npos)
      << results.message();
  results = fn.invoke(**device, {strings({3}, {"1.5", "monday", "-INF"})});
  ASSERT_FALSE(results.ok());
  results = fn.invoke(**device, {strings({2}, {"1.5", "-INF"})});
  ASSERT_TRUE(results.ok()) << results.message();
  EXPECT_EQ(valuesOf((*results)[0]), (std::vector<std::string>{"1.5", "-INF"}));
  EXPECT_EQ((*results)[1].dataAs<float>()[1], -std::numeric_limits<float>::infinity());

  // A float tensor where the signature says strings.
  Result<std::vector<Tensor>> wrong = fn.invoke(**device, {numbers<float>(DType::f32, {1})});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("expected ?xstring"), std::string::npos) << wrong.message();
}

TEST(HostStringOps, WrongOperandDTypeIsAnError) {
  // to_string declared for f32 operands, given strings.
  Result<std::shared_ptr<Module>> module = Module::loadFromBytes(
      artifact::serialize(stringModule(artifact::Opcode::ToString)), "strings");
  ASSERT_TRUE(module.ok()) << module.message();
  Result<std::unique_ptr<Device>> device = Device::create("local-sync");
  Result<std::vector<Tensor>> results =
      (*module)->functions().front().invoke(**device, {strings({1}, {"a"})});
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.message().find("cast to strings expects a f32 operand, got 1xstring"),
            std::string::npos)
      << results.message();
}

TEST(HostStringOps, StringsNeverReachAKernel) {
  using namespace turbine::testing;
  artifact::Module m = makeAddModule(readKernelLibrary(TURBINE_TEST_KERNELS_PATH));
  artifact::Function &f = m.functions[0];
  f.inputs[0].dtype = DType::string; // x: strings, bound to the add kernel
  Result<std::shared_ptr<Module>> module = Module::loadFromBytes(artifact::serialize(m), "k");
  ASSERT_TRUE(module.ok()) << module.message();
  Result<std::unique_ptr<Device>> device = Device::create("local-sync");
  Result<std::vector<Tensor>> results = (*module)->functions().front().invoke(
      **device, {strings({2}, {"a", "b"}), numbers<float>(DType::f32, {1, 2})});
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.message().find("buffer register 0 holds strings (2xstring), which no "
                                   "kernel can take"),
            std::string::npos)
      << results.message();
}

TEST(StringNormalizer, LocaleMustBeAPlainName) {
  // A model or artifact names the locale: paths never reach newlocale().
  for (const char *bad : {"/tmp/locale", "../../x", "en_US/../../etc", "C.UTF-8\n"}) {
    Result<Tensor> r =
        normalizeStrings(strings({2}, {"a", "b"}), StringCaseChange::Upper, false, {}, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.message().find("is not a locale name"), std::string::npos) << r.message();
  }
  for (const char *good : {"", "en_US", "en_US.UTF-8", "de_DE@euro", "C.UTF-8"}) {
    Result<Tensor> r =
        normalizeStrings(strings({2}, {"a", "b"}), StringCaseChange::Upper, false, {}, good);
    ASSERT_TRUE(r.ok()) << good << ": " << r.message();
  }
}
