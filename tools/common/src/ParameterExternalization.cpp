//===- ParameterExternalization.cpp - Move artifact weights to a file ------===//
#include "turbine/tools/ParameterExternalization.h"

#include "turbine/runtime/ParameterArchive.h"

#include <filesystem>

namespace turbine::tools {

using namespace turbine::runtime;

namespace {

/// True if parameter `name` is `key` or derived from it (`key.T`, `key[0:64]`).
bool derivedFrom(const std::string &name, const std::string &key) {
  return name == key ||
         (name.size() > key.size() && name.compare(0, key.size(), key) == 0 &&
          (name[key.size()] == '.' || name[key.size()] == '['));
}

} // namespace

Result<size_t> externalizeParameters(artifact::Module &artifact, const std::string &path,
                                     uint64_t minBytes) {
  ExternalizeOptions options;
  options.minBytes = minBytes;
  return externalizeParameters(artifact, path, options);
}

Result<size_t> externalizeParameters(artifact::Module &artifact, const std::string &path,
                                     const ExternalizeOptions &options) {
  ParameterArchiveWriter writer;
  std::vector<bool> moves(artifact.parameters.size(), false);
  std::vector<bool> used(options.names.size(), false);
  for (size_t i = 0; i < artifact.parameters.size(); ++i) {
    const artifact::Parameter &p = artifact.parameters[i];
    if (p.external)
      continue;
    if (options.names.empty()) {
      moves[i] = p.size >= options.minBytes;
    } else {
      for (size_t n = 0; n < options.names.size(); ++n)
        if (derivedFrom(p.name, options.names[n]))
          moves[i] = used[n] = true;
    }
  }
  std::string available;
  for (const artifact::Parameter &p : artifact.parameters)
    available += (available.empty() ? "" : ", ") + p.name;
  for (size_t n = 0; n < options.names.size(); ++n)
    if (!used[n])
      return Status::error("externalize: '" + options.names[n] +
                           "' names no parameter of the artifact (parameters: " +
                           (available.empty() ? "none" : available) + ")");
  std::vector<std::string> newNames(artifact.parameters.size());
  for (size_t i = 0; i < artifact.parameters.size(); ++i)
    newNames[i] = artifact.parameters[i].name;
  for (const auto &[from, to] : options.renames) {
    bool found = false;
    for (size_t i = 0; i < artifact.parameters.size(); ++i)
      if (artifact.parameters[i].name == from) {
        if (!moves[i])
          return Status::error("externalize: parameter '" + from +
                               "' is renamed but stays in the artifact");
        newNames[i] = to;
        found = true;
      }
    if (!found)
      return Status::error("externalize: cannot rename '" + from +
                           "': no such parameter (parameters: " +
                           (available.empty() ? "none" : available) + ")");
  }
  for (size_t i = 0; i < artifact.parameters.size(); ++i) {
    if (!moves[i])
      continue;
    const artifact::Parameter &p = artifact.parameters[i];
    Result<Tensor> bytes =
        Tensor::wrap(p.dtype, p.shape, artifact.paramData.data() + p.offset, nullptr,
                     /*readOnly=*/true);
    if (!bytes)
      return Status::error("parameter '" + p.name + "': " + bytes.message());
    if (Status s = writer.addTensor(newNames[i], *bytes); !s)
      return s;
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
      p.name = newNames[i];
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
