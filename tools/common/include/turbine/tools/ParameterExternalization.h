//===- ParameterExternalization.h - Move artifact weights to a file --------===//
//
// `turbine compile --externalize-params=FILE`: the embedded parameters of a
// compiled artifact that are at least `minBytes` large move into a parameter
// file (.irpa, or .safetensors by extension); the artifact keeps only their
// names and types, and `turbine run --parameters=FILE` binds them at load.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_PARAMETEREXTERNALIZATION_H
#define TURBINE_TOOLS_PARAMETEREXTERNALIZATION_H

#include "turbine/artifact/Module.h"
#include "turbine/runtime/Status.h"

#include <cstdint>
#include <string>

namespace turbine::tools {

/// Writes the parameters of `artifact` of at least `minBytes` to `path`,
/// marks them external and compacts the params section. On error the
/// artifact is unchanged. Returns the number of parameters moved.
runtime::Result<size_t> externalizeParameters(artifact::Module &artifact,
                                              const std::string &path, uint64_t minBytes);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_PARAMETEREXTERNALIZATION_H
