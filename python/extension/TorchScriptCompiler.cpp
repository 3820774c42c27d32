//===- TorchScriptCompiler.cpp - In-process TorchScript -> artifact --------===//
#include "TorchScriptCompiler.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Pipeline.h"
#include "turbine/frontends/torch/TorchImporter.h"
#include "turbine/kernels/CustomOp.h"
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/kernels/LibraryOps.h"

#include "turbine/tools/ParameterExternalization.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace turbine::torch_ext {
namespace {

std::optional<DType> dtypeOfType(mlir::Type t) {
  if (t.isF16()) return DType::f16;
  if (t.isBF16()) return DType::bf16;
  if (t.isF32()) return DType::f32;
  if (t.isF64()) return DType::f64;
  if (t.isSignlessInteger(1)) return DType::i1;
  if (t.isSignlessInteger(8)) return DType::i8;
  if (t.isSignlessInteger(16)) return DType::i16;
  if (t.isSignlessInteger(32)) return DType::i32;
  if (t.isSignlessInteger(64)) return DType::i64;
  return std::nullopt;
}

mlir::Type typeOfDType(mlir::MLIRContext *ctx, DType t) {
  mlir::Builder b(ctx);
  switch (t) {
  case DType::f16: return b.getF16Type();
  case DType::bf16: return b.getBF16Type();
  case DType::f32: return b.getF32Type();
  case DType::f64: return b.getF64Type();
  case DType::i1: return b.getI1Type();
  case DType::i8: return b.getIntegerType(8);
  case DType::i16: return b.getIntegerType(16);
  case DType::i32: return b.getI32Type();
  case DType::i64: return b.getI64Type();
  default: return nullptr;
  }
}

/// Custom ops registered outside the importer (Python CustomOp classes): a
/// torch op `ns::name` is the custom op `ns.name` when one is registered.
void addCustomOpHooks(torch_frontend::ImportOptions &options) {
  options.customOpName = [](const std::string &kind) -> std::string {
    size_t sep = kind.find("::");
    if (sep == std::string::npos)
      return "";
    std::string name = kind.substr(0, sep) + "." + kind.substr(sep + 2);
    return kernels::lookupCustomOp(name) ? name : "";
  };
  options.customOpResultTypes =
      [](const std::string &name, const std::vector<mlir::Type> &operands,
         const std::map<std::string, double> &attributes) -> Result<std::vector<mlir::Type>> {
    std::shared_ptr<const kernels::CustomOp> op = kernels::lookupCustomOp(name);
    if (!op)
      return Status::error("custom op '" + name + "' is not registered");
    std::vector<kernels::BufferSignature> args;
    mlir::MLIRContext *ctx = nullptr;
    for (mlir::Type t : operands) {
      auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t);
      std::optional<DType> dtype = tensor ? dtypeOfType(tensor.getElementType()) : std::nullopt;
      if (!tensor || !tensor.hasStaticShape() || !dtype)
        return Status::error("custom op '" + name + "': arguments must be tensors of static "
                             "shape and a supported dtype");
      ctx = t.getContext();
      args.push_back({std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end()),
                      *dtype});
    }
    kernels::CustomOpSelection selection;
    selection.arguments = args;
    selection.attributes = attributes;
    if (Status s = op->select(args, selection); !s.ok())
      return Status::error("custom op '" + name + "': " + s.message());
    if (!ctx)
      return Status::error("custom op '" + name + "' takes no tensor argument");
    std::vector<mlir::Type> results;
    for (const kernels::BufferSignature &r : selection.results)
      results.push_back(mlir::RankedTensorType::get(r.shape, typeOfDType(ctx, r.dtype)));
    return results;
  };
}

} // namespace

bool compileTorchScript(const TorchScriptCompileRequest &request, std::string &result,
                        std::string &error) {
  torch_frontend::ImportOptions options;
  for (const std::string &text : request.inputShapes) {
    Result<torch_frontend::InputSpec> spec = torch_frontend::parseInputSpec(text);
    if (!spec) {
      error = spec.message();
      return false;
    }
    options.inputs.push_back(*spec);
  }
  for (const std::string &text : request.dynamicDims) {
    Result<torch_frontend::DynamicDim> dim = torch_frontend::parseDynamicDim(text);
    if (!dim) {
      error = dim.message();
      return false;
    }
    options.dynamicDims.push_back(*dim);
  }
  addCustomOpHooks(options);
  compiler::CompileOptions compileOptions;
  if (!request.externalizeParams.empty() && !request.compileTo.empty()) {
    error = "externalize_params needs an artifact to write (not compile_to='" +
            request.compileTo + "')";
    return false;
  }
  if (!request.compileTo.empty()) {
    compileOptions.stopAfter = compiler::parsePhase(request.compileTo);
    if (!compileOptions.stopAfter) {
      error = "unknown phase '" + request.compileTo +
              "' (input, global-opt, dispatch, codegen, link)";
      return false;
    }
  }

  mlir::DialectRegistry registry;
  compiler::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.disableMultithreading();
  Result<mlir::OwningOpRef<mlir::ModuleOp>> imported = torch_frontend::importTorchScriptBytes(
      context, request.archive, "<torch.jit module>", options);
  if (!imported) {
    error = imported.message();
    return false;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(*imported);
  // After the input phase, Turbine ops are still calls of their custom-op
  // declarations (the readable form); later phases see their dispatches.
  if (request.compileTo != "input") {
    if (kernels::Status s = kernels::registerLibraryOps(); !s.ok()) {
      error = s.message();
      return false;
    }
    if (kernels::Status s = kernels::expandCustomOpCalls(*module); !s.ok()) {
      error = s.message();
      return false;
    }
  }
  artifact::Module artifact;
  if (!compiler::compileModule(*module, compileOptions, &artifact, error))
    return false;
  if (compileOptions.stopAfter) {
    mlir::OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(16);
    llvm::raw_string_ostream os(result);
    module->print(os, flags);
    return true;
  }
  if (!request.externalizeParams.empty()) {
    tools::ExternalizeOptions externalize;
    externalize.minBytes = request.externalizeMinBytes;
    externalize.names = request.externalizeNames;
    for (const std::string &rename : request.renames) {
      size_t eq = rename.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == rename.size()) {
        error = "rename '" + rename + "' is not old=new";
        return false;
      }
      externalize.renames[rename.substr(0, eq)] = rename.substr(eq + 1);
    }
    auto moved = tools::externalizeParameters(artifact, request.externalizeParams, externalize);
    if (!moved) {
      error = moved.message();
      return false;
    }
  } else if (!request.externalizeNames.empty() || !request.renames.empty()) {
    error = "externalize / rename need externalize_params (the file to write)";
    return false;
  }
  result = artifact::serialize(artifact);
  return true;
}

} // namespace turbine::torch_ext
