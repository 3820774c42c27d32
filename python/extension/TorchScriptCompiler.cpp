//===- TorchScriptCompiler.cpp - In-process TorchScript -> artifact --------===//
#include "TorchScriptCompiler.h"

#include "turbine/artifact/Module.h"
#include "turbine/frontends/torch/TorchImporter.h"
#include "turbine/kernels/CustomOp.h"
#include "turbine/kernels/EmitKernel.h"
#include "turbine/tools/GgufWeightsFrom.h"
#include "turbine/tools/ModelSession.h"
#include "turbine/tools/ParameterExternalization.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

namespace turbine::torch_ext {
namespace {

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
      std::optional<DType> dtype = tensor ? kernels::dtypeOfElementType(tensor.getElementType()) : std::nullopt;
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
      results.push_back(mlir::RankedTensorType::get(r.shape, kernels::elementTypeOf(ctx, r.dtype)));
    return results;
  };
}

} // namespace

Result<std::string> compileTorchScript(const TorchScriptCompileRequest &request) {
  Result<torch_frontend::ImportOptions> parsed = torch_frontend::parseImportOptions(
      request.inputShapes, request.functionShapes, request.dynamicDims);
  if (!parsed)
    return parsed.status();
  torch_frontend::ImportOptions torchOptions = std::move(*parsed);
  addCustomOpHooks(torchOptions);
  compiler::CompileOptions options;
  // weights_from (a GGUF file) and its parameter_name_map are read here, as
  // `turbine compile --weights-from` does (tools/common GgufWeightsFrom.h).
  std::string weightsFrom, parameterNameMap;
  for (const std::string &option : request.options) {
    size_t eq = option.find('=');
    if (eq == std::string::npos)
      return Status::error("compile option '" + option + "' is not NAME=VALUE");
    std::string key = option.substr(0, eq);
    std::replace(key.begin(), key.end(), '-', '_');
    if (key == "weights_from") {
      weightsFrom = option.substr(eq + 1);
      continue;
    }
    if (key == "parameter_name_map") {
      parameterNameMap = option.substr(eq + 1);
      continue;
    }
    if (Status set = compiler::setCompileOption(options, option.substr(0, eq),
                                                option.substr(eq + 1));
        !set)
      return set;
  }
  if (!weightsFrom.empty()) {
    Result<std::vector<std::string>> tensors = tools::ggufTensorList(weightsFrom, parameterNameMap);
    if (!tensors)
      return Status::error("weights_from: " + tensors.status().message());
    options.ggufTensors = std::move(*tensors);
  } else if (!parameterNameMap.empty()) {
    return Status::error("parameter_name_map renames the tensors of weights_from, which is "
                         "not given");
  }
  if (!request.compileTo.empty()) {
    options.stopAfter = compiler::parsePhase(request.compileTo);
    if (!options.stopAfter)
      return Status::error("unknown phase '" + request.compileTo + "' (" +
                           compiler::phaseNameList() + ")");
    if (!request.externalizeParams.empty())
      return Status::error("externalize_params needs an artifact to write (not compile_to='" +
                           request.compileTo + "')");
  }
  if (request.externalizeParams.empty() &&
      (!request.externalizeNames.empty() || !request.renames.empty()))
    return Status::error("externalize / rename need externalize_params (the file to write)");
  std::vector<std::unique_ptr<compiler::Importer>> importers;
  importers.push_back(torch_frontend::createTorchScriptImporter(std::move(torchOptions)));
  Result<std::unique_ptr<compiler::Session>> session =
      tools::createModelSession(std::move(options), std::move(importers));
  if (!session)
    return session.status();
  Result<compiler::CompileOutput> output = (*session)->compile(
      compiler::Source::inMemory(request.archive, "<torch.jit module>", "torchscript"));
  if (!output)
    return output.status();
  if (!output->artifact)
    return std::move(output->ir);
  if (!request.externalizeParams.empty()) {
    tools::ExternalizeOptions externalize;
    externalize.minBytes = request.externalizeMinBytes;
    externalize.names = request.externalizeNames;
    for (const std::string &rename : request.renames) {
      size_t eq = rename.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == rename.size())
        return Status::error("rename '" + rename + "' is not old=new");
      externalize.renames[rename.substr(0, eq)] = rename.substr(eq + 1);
    }
    auto moved = tools::externalizeParameters(*output->artifact, request.externalizeParams,
                                              externalize);
    if (!moved)
      return moved.status();
  }
  return artifact::serialize(*output->artifact);
}

} // namespace turbine::torch_ext
