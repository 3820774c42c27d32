//===- GgufWeightsFrom.cpp - A GGUF file's tensors as compile options -----===//
//
// See GgufWeightsFrom.h.
//===----------------------------------------------------------------------===//
#include "turbine/tools/GgufWeightsFrom.h"

#include "turbine/runtime/Ggml.h"
#include "turbine/runtime/ParameterArchive.h"

namespace turbine::tools {

/// The tensors of GGUF file `path` as turbine-bind-gguf-weights lists them
/// (`MODULE_NAME:GGUF_NAME:TYPE:D0xD1...`), renamed by the rules of
/// `namesPath` when given.
runtime::Result<std::vector<std::string>> ggufTensorList(const std::string &path,
                                                        const std::string &namesPath) {
  using namespace turbine::runtime;
  Result<ParameterIndex> file = ParameterIndex::open(path);
  if (!file)
    return Status::error("--weights-from: " + file.status().message());
  if (file->format() != ParameterFileFormat::gguf)
    return Status::error("--weights-from: '" + path + "' is a " +
                         parameterFileFormatName(file->format()) +
                         " file, not GGUF (use --externalize-params for other formats)");
  if (!namesPath.empty()) {
    Result<ParameterNameMap> names = ParameterNameMap::load(namesPath);
    if (!names)
      return Status::error("--parameter-name-map: " + names.status().message());
    Result<ParameterIndex> renamed = file->renamed(*names);
    if (!renamed)
      return Status::error("--parameter-name-map: " + renamed.status().message());
    file = std::move(renamed);
  }
  std::vector<std::string> tensors;
  for (const ParameterEntry &entry : file->entries()) {
    std::string fileName = entry.fileName.empty() ? entry.name : entry.fileName;
    if (entry.name.find(':') != std::string::npos || fileName.find(':') != std::string::npos)
      return Status::error("--weights-from: tensor name '" + fileName + "' contains ':'");
    std::string shape;
    for (int64_t d : entry.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    std::string type = entry.ggmlType ? ggmlTypeName(*entry.ggmlType) : "?";
    tensors.push_back(entry.name + ":" + fileName + ":" + type + ":" + shape);
  }
  return tensors;
}

} // namespace turbine::tools
