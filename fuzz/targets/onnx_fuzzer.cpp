//===- onnx_fuzzer.cpp - ONNX model bytes -> import -> verify -> global-opt ===//
//
// The bytes are a serialized ModelProto: importOnnxBytes parses it
// (protobuf), runs ONNX's checker and shape inference (libonnx), imports
// every node and verifies the module (an unverifiable module is reported as
// an internal error, which this target treats as a finding). Imported
// modules of at most kMaxGlobalOptOps operations then go through the
// compiler's input and global-opt phases (constant folding, fusion, data
// tiling), which must either succeed and verify or fail with a message.
// One MLIRContext serves kInputsPerContext inputs (a context never frees
// the types and attributes it uniques).
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Session.h"
#include "turbine/frontends/onnx/OnnxImporter.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

constexpr int kInputsPerContext = 500;
constexpr int64_t kMaxGlobalOptOps = 64;

void check(bool condition, const std::string &what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
    std::abort();
  }
}

/// The compile session whose context the inputs are imported into (a
/// session owns its context; global-opt runs through it).
turbine::compiler::Session &session() {
  static std::unique_ptr<turbine::compiler::Session> current;
  static int uses = 0;
  if (!current || ++uses > kInputsPerContext) {
    current.reset(); // before the next one: one context at a time
    turbine::compiler::CompileOptions options;
    options.stopAfter = turbine::compiler::Phase::GlobalOpt;
    current = std::make_unique<turbine::compiler::Session>(options);
    turbine::onnx_frontend::registerImportedDialects(current->context());
    uses = 1;
  }
  return *current;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  turbine::compiler::Session &compiler = session();
  mlir::MLIRContext &ctx = compiler.context();
  // Diagnostics are collected into the error strings; keep stderr quiet.
  mlir::ScopedDiagnosticHandler quiet(&ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  turbine::onnx_frontend::ImportOptions options;
  auto module = turbine::onnx_frontend::importOnnxBytes(ctx, bytes, "fuzz.onnx", options);
  if (!module) {
    const std::string &error = module.message();
    check(!error.empty(), "an import error without a message");
    // A model can carry the words itself (a node or value name quoted in
    // the error; libFuzzer learns them from this very comparison).
    bool modelSaysIt = bytes.find("internal error") != std::string::npos;
    check(modelSaysIt || error.find("internal error") == std::string::npos,
          "importer bug: " + error);
    return 0;
  }
  mlir::ModuleOp imported = **module;
  check(mlir::succeeded(mlir::verify(imported)), "an imported module does not verify");
  int64_t ops = 0;
  imported->walk([&](mlir::Operation *) { ++ops; });
  if (ops > kMaxGlobalOptOps)
    return 0;
  auto compiled = compiler.compileModule(imported);
  if (compiled)
    check(mlir::succeeded(mlir::verify(imported)), "global-opt left a module that does not verify");
  else
    check(!compiled.message().empty(), "a compile error without a message");
  return 0;
}
