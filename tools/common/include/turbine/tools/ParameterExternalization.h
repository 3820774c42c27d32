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
#include <map>
#include <vector>
#include <string>

namespace turbine::tools {

/// Writes the parameters of `artifact` of at least `minBytes` to `path`,
/// marks them external and compacts the params section. On error the
/// artifact is unchanged. Returns the number of parameters moved.
runtime::Result<size_t> externalizeParameters(artifact::Module &artifact,
                                              const std::string &path, uint64_t minBytes);

/// Which parameters move, and under which names.
struct ExternalizeOptions {
  /// Parameters of at least this many bytes move (when `names` is empty).
  uint64_t minBytes = 256;
  /// When not empty, exactly the parameters named here move, whatever their
  /// size: a parameter whose name is one of them or is derived from one
  /// (`fc.weight.T` and `fc.weight.T.reshape(...)` from `fc.weight`; see
  /// python/README.md, "Parameter names"). A name that matches no parameter
  /// is an error listing the artifact's parameters.
  std::vector<std::string> names;
  /// New names, by current name, for parameters that move (in the artifact
  /// and the file); renaming one that does not move is an error.
  std::map<std::string, std::string> renames;
};

runtime::Result<size_t> externalizeParameters(artifact::Module &artifact,
                                              const std::string &path,
                                              const ExternalizeOptions &options);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_PARAMETEREXTERNALIZATION_H
