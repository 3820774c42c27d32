//===- CompileAndRun.h - Shared harness of the compiler strategy tests ----===//
//
// The compiler strategy tests (matmul data tiling, small matmuls,
// convolution strategies) write a function as MLIR text with exact f32
// constants, compile it with the whole pipeline (checking an intermediate
// phase's IR on the way), run the artifact and compare with a plain C++
// reference. These are the pieces they share.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TESTS_UNIT_COMPILER_COMPILEANDRUN_H
#define TURBINE_TESTS_UNIT_COMPILER_COMPILEANDRUN_H

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Session.h"
#include "turbine/runtime/Device.h"
#include "turbine/runtime/Function.h"
#include "turbine/runtime/Module.h"
#include "turbine/runtime/Tensor.h"

#include <gtest/gtest.h>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace turbine::testing {

/// An f32 literal MLIR parses back to exactly `v`.
inline std::string f32Literal(float v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

/// Runs the pipeline with `options` on `source` up to `stopAfter` (or to the
/// artifact, into `artifact`); `ir` receives the module as it is then.
inline bool compileSource(const std::string &source,
                          std::optional<turbine::compiler::Phase> stopAfter, std::string &ir,
                          turbine::artifact::Module *artifact, std::string &error,
                          turbine::compiler::CompileOptions options = {}) {
  options.stopAfter = stopAfter;
  turbine::compiler::Session session(options);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, mlir::ParserConfig(&session.context()));
  if (!module) {
    error = "parse failed:\n" + source;
    return false;
  }
  Result<turbine::compiler::CompileOutput> output = session.compileModule(*module);
  if (!output) {
    error = output.message();
    return false;
  }
  if (artifact && output->artifact)
    *artifact = std::move(*output->artifact);
  llvm::raw_string_ostream os(ir);
  module->print(os);
  return true;
}

/// The text of each kernel of printed IR (the functions of the kernel
/// container, `func.func` before codegen, `llvm.func` after), in order.
inline std::vector<std::string> kernelTexts(const std::string &ir, const std::string &keyword) {
  std::vector<std::string> kernels;
  size_t container = ir.find("module @kernels");
  if (container == std::string::npos)
    return kernels;
  const std::string marker = keyword + " @";
  size_t start = ir.find(marker, container);
  while (start != std::string::npos) {
    size_t end = ir.find(marker, start + 1);
    kernels.push_back(ir.substr(start, end - start));
    start = end;
  }
  return kernels;
}

/// An f32 tensor of `shape` whose element at linear index i is value(i).
inline runtime::Tensor filledTensor(std::vector<int64_t> shape,
                                    const std::function<float(int64_t)> &value) {
  runtime::Tensor t = runtime::Tensor::allocate(runtime::DType::f32, std::move(shape)).value();
  for (int64_t i = 0; i < t.elementCount(); ++i)
    t.dataAs<float>()[i] = value(i);
  return t;
}

/// Compiles `source` to an artifact, loads it and calls `run` with its
/// `main` on each device a strategy must give the same answer on:
/// local-sync, and local-task with 2 workers (workgroups split across
/// threads).
inline void runOnEachDevice(
    const std::string &source,
    const std::function<void(runtime::Function &, runtime::Device &, const char *deviceName)>
        &run,
    const turbine::compiler::CompileOptions &options = {}) {
  std::string ir, error;
  artifact::Module artifact;
  ASSERT_TRUE(compileSource(source, std::nullopt, ir, &artifact, error, options)) << error;
  auto module = runtime::Module::loadFromBytes(artifact::serialize(artifact));
  ASSERT_TRUE(module.ok()) << module.message();
  auto function = module.value()->lookupFunction("main");
  ASSERT_TRUE(function.ok()) << function.message();
  for (const char *deviceName : {"local-sync", "local-task"}) {
    runtime::DeviceOptions deviceOptions;
    deviceOptions.taskWorkers = 2;
    auto device = runtime::Device::create(deviceName, deviceOptions);
    ASSERT_TRUE(device.ok()) << device.message();
    run(function.value(), *device.value(), deviceName);
  }
}

} // namespace turbine::testing

#endif // TURBINE_TESTS_UNIT_COMPILER_COMPILEANDRUN_H
