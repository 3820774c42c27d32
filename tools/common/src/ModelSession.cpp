//===- ModelSession.cpp - Session + importers + custom-op extension -------===//
#include "turbine/tools/ModelSession.h"

#include "turbine/kernels/CustomOpCalls.h"

namespace turbine::tools {

Result<std::unique_ptr<compiler::Session>>
createModelSession(compiler::CompileOptions options,
                   std::vector<std::unique_ptr<compiler::Importer>> importers) {
  Result<std::shared_ptr<const compiler::PipelineExtension>> customOps =
      kernels::createCustomOpExtension();
  if (!customOps)
    return customOps.status();
  auto session = std::make_unique<compiler::Session>(std::move(options));
  for (std::unique_ptr<compiler::Importer> &importer : importers)
    session->addImporter(std::move(importer));
  session->addExtension(std::move(*customOps));
  return session;
}

} // namespace turbine::tools
