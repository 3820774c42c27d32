//===- ModelSession.cpp - Session + frontends + custom-op extension -------===//
#include "turbine/tools/ModelSession.h"

#include "turbine/kernels/CustomOpCalls.h"

namespace turbine::tools {

Result<std::unique_ptr<compiler::Session>> createModelSession(compiler::CompileOptions options,
                                                              FrontendOptions frontends) {
  Result<std::shared_ptr<const compiler::PipelineExtension>> customOps =
      kernels::createCustomOpExtension();
  if (!customOps)
    return customOps.status();
  auto session = std::make_unique<compiler::Session>(std::move(options));
  session->addImporter(onnx_frontend::createOnnxImporter(std::move(frontends.onnx)));
  session->addImporter(torch_frontend::createTorchScriptImporter(std::move(frontends.torch)));
  session->addExtension(std::move(*customOps));
  return session;
}

} // namespace turbine::tools
