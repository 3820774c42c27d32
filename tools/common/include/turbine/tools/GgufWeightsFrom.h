//===- GgufWeightsFrom.h - A GGUF file's tensors as compile options -------===//
//
// `turbine compile --weights-from=F.gguf [--parameter-name-map=NAMES]` and
// the Python extension's `compile(weights_from=..., parameter_name_map=...)`
// both read the GGUF file's tensor index (no tensor data) and hand the
// compiler's turbine-bind-gguf-weights pass one `MODULE_NAME:GGUF_NAME:TYPE:
// D0xD1...` entry per tensor (CompileOptions::ggufTensors). No MLIR here.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_GGUFWEIGHTSFROM_H
#define TURBINE_TOOLS_GGUFWEIGHTSFROM_H

#include "turbine/runtime/Status.h"

#include <string>
#include <vector>

namespace turbine::tools {

/// The tensors of GGUF file `path` as turbine-bind-gguf-weights lists them,
/// renamed by the rules of the name map at `namesPath` when not empty.
/// Errors (a file that is not GGUF, a corrupt one, a bad name map, a name
/// with ':') start with "--weights-from: " or "--parameter-name-map: ".
runtime::Result<std::vector<std::string>> ggufTensorList(const std::string &path,
                                                        const std::string &namesPath);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_GGUFWEIGHTSFROM_H
