//===- TorchScriptCompiler.cpp - In-process TorchScript -> artifact --------===//
#include "TorchScriptCompiler.h"

#include "turbine/artifact/Module.h"
#include "turbine/frontends/torch/TorchImporter.h"
#include "turbine/tools/ModelSession.h"
#include "turbine/tools/ParameterExternalization.h"

namespace turbine::torch_ext {

Result<std::string> compileTorchScript(const TorchScriptCompileRequest &request) {
  torch_frontend::ImportOptions torchOptions;
  for (const std::string &text : request.inputShapes) {
    Result<torch_frontend::InputSpec> spec = torch_frontend::parseInputSpec(text);
    if (!spec)
      return spec.status();
    torchOptions.inputs.push_back(*spec);
  }
  for (const std::string &text : request.dynamicDims) {
    Result<torch_frontend::DynamicDim> dim = torch_frontend::parseDynamicDim(text);
    if (!dim)
      return dim.status();
    torchOptions.dynamicDims.push_back(*dim);
  }
  compiler::CompileOptions options;
  for (const std::string &option : request.options) {
    size_t eq = option.find('=');
    if (eq == std::string::npos)
      return Status::error("compile option '" + option + "' is not NAME=VALUE");
    if (Status set = compiler::setCompileOption(options, option.substr(0, eq),
                                                option.substr(eq + 1));
        !set)
      return set;
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
    auto moved = tools::externalizeParameters(*output->artifact, request.externalizeParams,
                                              request.externalizeMinBytes);
    if (!moved)
      return moved.status();
  }
  return artifact::serialize(*output->artifact);
}

} // namespace turbine::torch_ext
