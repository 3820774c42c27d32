//===- ParameterExternalization.cpp - Move artifact weights to a file ------===//
#include "turbine/tools/ParameterExternalization.h"

#include "turbine/runtime/ParameterArchive.h"

#include <filesystem>

namespace turbine::tools {

using namespace turbine::runtime;

Result<size_t> externalizeParameters(artifact::Module &artifact, const std::string &path,
                                     uint64_t minBytes) {
  ParameterArchiveWriter writer;
  std::vector<bool> moves(artifact.parameters.size(), false);
  for (size_t i = 0; i < artifact.parameters.size(); ++i) {
    const artifact::Parameter &p = artifact.parameters[i];
    if (p.external || p.size < minBytes)
      continue;
    Result<Tensor> bytes =
        Tensor::wrap(p.dtype, p.shape, artifact.paramData.data() + p.offset, nullptr,
                     /*readOnly=*/true);
    if (!bytes)
      return Status::error("parameter '" + p.name + "': " + bytes.message());
    if (Status s = writer.addTensor(p.name, *bytes); !s)
      return s;
    moves[i] = true;
  }
  ParameterFileFormat format = std::filesystem::path(path).extension() == ".safetensors"
                                   ? ParameterFileFormat::safetensors
                                   : ParameterFileFormat::irpa;
  if (Status s = writer.write(path, format); !s)
    return s;

  // Keep the others, repacked 64-byte aligned.
  std::string kept;
  for (size_t i = 0; i < artifact.parameters.size(); ++i) {
    artifact::Parameter &p = artifact.parameters[i];
    if (moves[i]) {
      p.external = true;
      p.offset = 0;
      continue;
    }
    if (p.external)
      continue;
    kept.resize((kept.size() + 63) / 64 * 64, '\0');
    std::string bytes = artifact.paramData.substr(p.offset, p.size);
    p.offset = kept.size();
    kept += bytes;
  }
  artifact.paramData = std::move(kept);
  return writer.size();
}

} // namespace turbine::tools
