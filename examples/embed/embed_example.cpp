//===- embed_example.cpp - Running a .tmod artifact from C++, runtime only ===//
//
//   embed_example ARTIFACT.tmod [FUNCTION] [DYNAMIC_DIM]
//
// What an application embedding Turbine does, start to finish, using nothing
// but libturbine_runtime (no compiler, no MLIR, no LLVM in this process):
//   1. load the artifact,
//   2. list its functions with their reflected signatures (names, dtypes,
//      shapes; `?` marks a dynamic dim, with its symbolic name if it has one),
//   3. build one input tensor per argument, every dynamic dim set to
//      DYNAMIC_DIM (default 4), filled with a fixed pattern,
//   4. invoke FUNCTION (default: the first one) on the `local-task` device,
//   5. print each result's shape and its first values.
// Every runtime call returns a Status / Result; errors are printed and the
// program exits with status 1. The last line is "embed_example: OK" only when
// everything succeeded.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace turbine::runtime;

namespace {

/// Values printed per result.
constexpr int64_t kPrintedValueCount = 8;

int fail(const std::string &message) {
  std::fprintf(stderr, "embed_example: error: %s\n", message.c_str());
  return 1;
}

/// "x: ?x64xf32 (dim 0 = batch)": a signature entry with its symbolic dims.
std::string describeSignature(const TensorSignature &signature) {
  std::string text = (signature.name.empty() ? "<unnamed>" : signature.name) +
                     ": " + signature.typeString();
  std::string symbols;
  for (size_t d = 0; d < signature.dimNames.size(); ++d)
    if (signature.shape[d] < 0 && !signature.dimNames[d].empty())
      symbols += (symbols.empty() ? "" : ", ") + std::string("dim ") +
                 std::to_string(d) + " = " + signature.dimNames[d];
  return symbols.empty() ? text : text + " (" + symbols + ")";
}

/// The pattern value of element `i`: small, signed, exactly representable,
/// and different between neighbours, so a transposed or shifted read shows.
double patternValue(int64_t i) { return static_cast<double>(i % 7 - 3) / 8.0; }

template <typename T> void fillWith(Tensor &tensor, T (*convert)(int64_t)) {
  T *data = tensor.dataAs<T>();
  for (int64_t i = 0; i < tensor.elementCount(); ++i)
    data[i] = convert(i);
}

/// Allocates a tensor matching `signature` (dynamic dims = `dynamicDim`) and
/// fills it: floats with patternValue, integers with i % 7 - 3 (unsigned:
/// i % 7), booleans with i % 2. f16/bf16 are left zero (no portable half type
/// in C++17).
Result<Tensor> makePatternInput(const TensorSignature &signature,
                                int64_t dynamicDim) {
  std::vector<int64_t> shape = signature.shape;
  for (int64_t &d : shape)
    if (d < 0)
      d = dynamicDim;
  Result<Tensor> tensor = Tensor::zeros(signature.dtype, shape);
  if (!tensor)
    return tensor;
  Tensor &t = *tensor;
  switch (signature.dtype) {
  case DType::f32:
    fillWith<float>(t, [](int64_t i) { return static_cast<float>(patternValue(i)); });
    break;
  case DType::f64:
    fillWith<double>(t, [](int64_t i) { return patternValue(i); });
    break;
  case DType::i8:
    fillWith<int8_t>(t, [](int64_t i) { return static_cast<int8_t>(i % 7 - 3); });
    break;
  case DType::i16:
    fillWith<int16_t>(t, [](int64_t i) { return static_cast<int16_t>(i % 7 - 3); });
    break;
  case DType::i32:
    fillWith<int32_t>(t, [](int64_t i) { return static_cast<int32_t>(i % 7 - 3); });
    break;
  case DType::i64:
    fillWith<int64_t>(t, [](int64_t i) { return i % 7 - 3; });
    break;
  case DType::u8:
    fillWith<uint8_t>(t, [](int64_t i) { return static_cast<uint8_t>(i % 7); });
    break;
  case DType::u16:
    fillWith<uint16_t>(t, [](int64_t i) { return static_cast<uint16_t>(i % 7); });
    break;
  case DType::u32:
    fillWith<uint32_t>(t, [](int64_t i) { return static_cast<uint32_t>(i % 7); });
    break;
  case DType::u64:
    fillWith<uint64_t>(t, [](int64_t i) { return static_cast<uint64_t>(i % 7); });
    break;
  case DType::i1:
    fillWith<uint8_t>(t, [](int64_t i) { return static_cast<uint8_t>(i % 2); });
    break;
  case DType::f16:
  case DType::bf16:
    break;
  }
  return tensor;
}

/// "4x32xf32 = [0.8125 0 1.25 ...]": the shape and the first values.
std::string describeResult(const Tensor &result) {
  std::string text = result.typeString() + " = [";
  int64_t shown = std::min<int64_t>(result.elementCount(), kPrintedValueCount);
  for (int64_t i = 0; i < shown; ++i) {
    char value[32];
    std::snprintf(value, sizeof(value), "%.7g", elementAsDouble(result, i));
    text += (i ? " " : "") + std::string(value);
  }
  if (result.elementCount() > shown)
    text += " ...";
  return text + "]";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr,
                 "usage: %s ARTIFACT.tmod [FUNCTION] [DYNAMIC_DIM]\n"
                 "Loads ARTIFACT, lists its functions, runs FUNCTION (default:\n"
                 "the first) on local-task with pattern-filled inputs whose\n"
                 "dynamic dims are DYNAMIC_DIM (default 4), prints the results.\n",
                 argv[0]);
    return argc == 2 ? 0 : 1;
  }
  const std::string artifactPath = argv[1];
  const std::string functionName = argc >= 3 ? argv[2] : "";
  int64_t dynamicDim = 4;
  if (argc >= 4) {
    char *end = nullptr;
    dynamicDim = std::strtoll(argv[3], &end, 10);
    if (end == argv[3] || *end != '\0' || dynamicDim < 0)
      return fail("DYNAMIC_DIM must be a non-negative integer, got '" +
                  std::string(argv[3]) + "'");
  }

  // 1. Load.
  Result<std::shared_ptr<Module>> module = Module::load(artifactPath);
  if (!module)
    return fail(module.message());

  // 2. Reflect.
  const std::vector<Function> &functions = (*module)->functions();
  std::printf("module %s: %zu function(s)\n", artifactPath.c_str(),
              functions.size());
  for (const Function &function : functions) {
    std::printf("  @%s%s\n", function.name().c_str(),
                function.signatureString().c_str());
    for (size_t i = 0; i < function.inputs().size(); ++i)
      std::printf("    input %zu  %s\n", i,
                  describeSignature(function.inputs()[i]).c_str());
    for (size_t i = 0; i < function.outputs().size(); ++i)
      std::printf("    output %zu %s\n", i,
                  describeSignature(function.outputs()[i]).c_str());
  }
  if (functions.empty())
    return fail("'" + artifactPath + "' has no functions to run");
  Result<Function> function = functionName.empty()
                                  ? Result<Function>(functions.front())
                                  : (*module)->lookupFunction(functionName);
  if (!function)
    return fail(function.message());

  // 3. Inputs.
  std::vector<Tensor> inputs;
  for (const TensorSignature &signature : function->inputs()) {
    Result<Tensor> input = makePatternInput(signature, dynamicDim);
    if (!input)
      return fail("input '" + signature.name + "': " + input.message());
    inputs.push_back(std::move(*input));
  }

  // 4. Invoke on local-task (one worker per core, the caller included).
  Result<std::unique_ptr<Device>> device = Device::create("local-task");
  if (!device)
    return fail(device.message());
  std::printf("invoking @%s on %s (%d workers), dynamic dims = %lld\n",
              function->name().c_str(), (*device)->name().c_str(),
              (*device)->workerCount(), static_cast<long long>(dynamicDim));
  for (size_t i = 0; i < inputs.size(); ++i)
    std::printf("  input %zu:  %s\n", i, describeResult(inputs[i]).c_str());
  Result<std::vector<Tensor>> results = function->invoke(**device, inputs);
  if (!results)
    return fail(results.message());

  // 5. Results.
  for (size_t i = 0; i < results->size(); ++i)
    std::printf("  result %zu: %s\n", i, describeResult((*results)[i]).c_str());
  std::printf("embed_example: OK\n");
  return 0;
}
