//===- ParamsCommand.cpp - `turbine params`: inspect and build parameter files
//
// Parameter files (.irpa, .safetensors, .gguf read only; runtime/ParameterArchive.h), in the
// spirit of iree-dump-parameters / iree-create-parameters /
// iree-convert-parameters:
//   turbine params list FILE
//   turbine params dump FILE [--name=N]... [--extract=N=out.npy]...
//   turbine params create -o OUT --data=N=SPEC... --splat=N=TYPE=VALUE...
//   turbine params convert IN -o OUT [--strip] [--splat=N]... [--exclude=N]...
// The output format follows OUT's extension (.safetensors, else IRPA) unless
// --format says otherwise. Errors: "turbine params: error: ..." and exit 1.
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "turbine/runtime/Ggml.h"
#include "turbine/runtime/ParameterArchive.h"
#include "turbine/runtime/TensorFormat.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <set>

namespace turbine::tools {

using namespace turbine::runtime;

namespace {

int reportError(const std::string &message) {
  std::cerr << "turbine params: error: " << message << "\n";
  return 1;
}

/// Splits "name=rest" at the first '='.
bool splitNamed(const std::string &arg, std::string &name, std::string &rest) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    return false;
  name = arg.substr(0, eq);
  rest = arg.substr(eq + 1);
  return true;
}

Result<ParameterFileFormat> outputFormat(const std::string &path, const std::string &format) {
  if (format == "irpa")
    return ParameterFileFormat::irpa;
  if (format == "safetensors")
    return ParameterFileFormat::safetensors;
  if (!format.empty())
    return Status::error("unknown --format '" + format + "' (irpa or safetensors)");
  return std::filesystem::path(path).extension() == ".safetensors"
             ? ParameterFileFormat::safetensors
             : ParameterFileFormat::irpa;
}

const char *kindName(const ParameterEntry &entry) {
  return entry.kind == ParameterEntry::Kind::splat ? "splat" : "data";
}

/// Opens `file`, renamed by the name map at `nameMap` when one is given.
Result<ParameterIndex> openRenamed(const std::string &file, const std::string &nameMap) {
  auto index = ParameterIndex::open(file);
  if (!index || nameMap.empty())
    return index;
  auto names = ParameterNameMap::load(nameMap);
  if (!names)
    return Status::error("--parameter-name-map: " + names.message());
  return index->renamed(*names);
}

//===--- list -------------------------------------------------------------===//

int listCommand(const std::string &file, const std::string &nameMap) {
  auto index = openRenamed(file, nameMap);
  if (!index)
    return reportError(index.message());
  uint64_t total = 0;
  size_t nameWidth = 4;
  for (const ParameterEntry &entry : index->entries())
    nameWidth = std::max(nameWidth, entry.name.size());
  std::cout << fmt::format("{}: {} file, {} parameters\n", file,
                           parameterFileFormatName(index->format()), index->entries().size());
  if (index->format() == ParameterFileFormat::gguf) {
    std::cout << fmt::format("GGUF version {}, {} metadata keys\n", index->version(),
                             index->metadata().size());
    for (const auto &[key, value] : index->metadata())
      std::cout << fmt::format("  {} ({}) = {}\n", key, value.typeName(), value.format());
  }
  std::cout << fmt::format("{:<{}}  {:<5}  {:>12}  {:>12}  {}\n", "name", nameWidth, "kind",
                           "offset", "bytes", "type");
  for (const ParameterEntry &entry : index->entries()) {
    std::string offset = entry.kind == ParameterEntry::Kind::data
                             ? std::to_string(entry.fileOffset)
                             : std::string("-");
    std::cout << fmt::format("{:<{}}  {:<5}  {:>12}  {:>12}  {}\n", entry.name, nameWidth,
                             kindName(entry), offset, entry.length, entry.typeString());
    total += entry.length;
  }
  std::cout << fmt::format("total: {} bytes\n", total);
  return 0;
}

//===--- dump -------------------------------------------------------------===//

/// The entry as a tensor; Q8_0 / Q4_0 GGUF tensors are dequantized to f32
/// (a copy, for printing and --extract only).
Result<Tensor> entryTensor(const ParameterIndex &index, const ParameterEntry &entry) {
  if (!entry.isBlockQuantized() ||
      (*entry.ggmlType != kGgmlQ8_0 && *entry.ggmlType != kGgmlQ4_0))
    return index.tensor(entry);
  auto blocks = index.ggmlBlocks(entry);
  if (!blocks)
    return blocks.status();
  auto tensor = Tensor::allocate(DType::f32, blocks->shape);
  if (!tensor)
    return tensor;
  if (Status s = decodeGgmlBlocks(blocks->ggmlType, blocks->blocks, blocks->blockCount,
                                  tensor->dataAs<float>());
      !s)
    return s;
  return tensor;
}

struct DumpOptions {
  std::string file;
  std::vector<std::string> names;
  std::vector<std::string> extracts;
  size_t maxElements = 16;
  std::string nameMap;
};

int dumpCommand(const DumpOptions &options) {
  auto index = openRenamed(options.file, options.nameMap);
  if (!index)
    return reportError(index.message());
  auto lookup = [&](const std::string &name) -> const ParameterEntry * {
    const ParameterEntry *entry = index->find(name);
    if (!entry)
      reportError("no parameter '" + name + "' in '" + options.file + "'");
    return entry;
  };
  for (const std::string &extract : options.extracts) {
    std::string name, target;
    if (!splitNamed(extract, name, target) || target.empty())
      return reportError("--extract expects NAME=FILE.npy, got '" + extract + "'");
    const ParameterEntry *entry = lookup(name);
    if (!entry)
      return 1;
    auto tensor = entryTensor(*index, *entry);
    if (!tensor)
      return reportError(tensor.message());
    if (Status s = writeNpyFile(*tensor, target); !s)
      return reportError(s.message());
  }
  std::vector<const ParameterEntry *> selected;
  for (const std::string &name : options.names) {
    const ParameterEntry *entry = lookup(name);
    if (!entry)
      return 1;
    selected.push_back(entry);
  }
  if (options.names.empty() && options.extracts.empty())
    for (const ParameterEntry &entry : index->entries())
      selected.push_back(&entry);
  for (const ParameterEntry *entry : selected) {
    std::cout << entry->name << ": ";
    if (entry->isBlockQuantized()) {
      auto tensor = entryTensor(*index, *entry);
      if (!tensor) {
        std::cout << entry->typeString() << " (not decodable here: Q8_0 and Q4_0 only)\n";
        continue;
      }
      std::cout << entry->typeString() << ", dequantized: "
                << formatTensor(*tensor, options.maxElements) << "\n";
      continue;
    }
    if (!entry->hasTensorType()) {
      std::cout << entry->typeString() << " (untyped " << kindName(*entry) << ")\n";
      continue;
    }
    auto tensor = index->tensor(*entry);
    if (!tensor)
      return reportError(tensor.message());
    std::cout << formatTensor(*tensor, options.maxElements) << "\n";
  }
  return 0;
}

//===--- create -----------------------------------------------------------===//

struct CreateOptions {
  std::string output;
  std::string format;
  std::vector<std::string> data;
  std::vector<std::string> splats;
};

int createCommand(const CreateOptions &options) {
  auto format = outputFormat(options.output, options.format);
  if (!format)
    return reportError(format.message());
  if (options.data.empty() && options.splats.empty())
    return reportError("nothing to write: pass --data=NAME=VALUE or --splat=NAME=TYPE=VALUE");
  ParameterArchiveWriter writer;
  for (const std::string &arg : options.data) {
    std::string name, spec;
    if (!splitNamed(arg, name, spec))
      return reportError("--data expects NAME=VALUE (e.g. w=2x2xf32=1 2 3 4 or w=@w.npy), got '" +
                         arg + "'");
    auto tensor = parseTensorSpec(spec);
    if (!tensor)
      return reportError("--data " + name + ": " + tensor.message());
    if (Status s = writer.addTensor(name, *tensor); !s)
      return reportError(s.message());
  }
  for (const std::string &arg : options.splats) {
    std::string name, spec;
    if (!splitNamed(arg, name, spec) || spec.find('=') == std::string::npos)
      return reportError("--splat expects NAME=TYPE=VALUE (e.g. b=1024xf32=0.5), got '" + arg +
                         "'");
    // One element of the type holds the pattern.
    DType dtype;
    std::vector<int64_t> shape;
    std::string type = spec.substr(0, spec.find('='));
    if (Status s = parseTensorType(type, dtype, shape); !s)
      return reportError("--splat " + name + ": " + s.message());
    auto element = parseTensorSpec(std::string(dtypeName(dtype)) + spec.substr(type.size()));
    if (!element)
      return reportError("--splat " + name + ": " + element.message());
    auto count = elementCountOf(shape);
    if (!count)
      return reportError("--splat " + name + ": " + count.message());
    const auto *bytes = static_cast<const uint8_t *>(element->data());
    std::vector<uint8_t> pattern(bytes, bytes + element->byteSize());
    if (Status s = writer.addSplat(name, pattern, *count * pattern.size(), dtype, shape); !s)
      return reportError(s.message());
  }
  if (Status s = writer.write(options.output, *format); !s)
    return reportError(s.message());
  std::cout << "wrote " << writer.size() << " parameters to " << options.output << " ("
            << parameterFileFormatName(*format) << ")\n";
  return 0;
}

//===--- convert ----------------------------------------------------------===//

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string format;
  bool strip = false;
  std::vector<std::string> splats;
  std::vector<std::string> excludes;
};

int convertCommand(const ConvertOptions &options) {
  auto format = outputFormat(options.output, options.format);
  if (!format)
    return reportError(format.message());
  std::error_code ec;
  if (std::filesystem::equivalent(options.input, options.output, ec))
    return reportError("output file '" + options.output + "' is the input file");
  auto index = ParameterIndex::open(options.input);
  if (!index)
    return reportError(index.message());
  std::set<std::string> excluded(options.excludes.begin(), options.excludes.end());
  std::set<std::string> splatted(options.splats.begin(), options.splats.end());
  for (const std::set<std::string> *names : {&excluded, &splatted})
    for (const std::string &name : *names)
      if (!index->find(name))
        return reportError("no parameter '" + name + "' in '" + options.input + "'");
  ParameterArchiveWriter writer;
  for (const ParameterEntry &entry : index->entries()) {
    if (excluded.count(entry.name))
      continue;
    Status s;
    if ((options.strip || splatted.count(entry.name)) &&
        entry.kind == ParameterEntry::Kind::data)
      // Like iree-convert-parameters --strip: same size, zero contents.
      s = writer.addSplat(entry.name, {0}, entry.length, entry.dtype, entry.shape);
    else
      s = writer.addEntry(*index, entry);
    if (!s)
      return reportError(s.message());
  }
  if (Status s = writer.write(options.output, *format); !s)
    return reportError(s.message());
  std::cout << "wrote " << writer.size() << " parameters to " << options.output << " ("
            << parameterFileFormatName(*format) << ")\n";
  return 0;
}

/// Runs `body`, turning exceptions (e.g. out of memory) into an error exit.
template <typename Fn> void guarded(int &exitCode, Fn body) {
  try {
    exitCode = body();
  } catch (const std::exception &e) {
    exitCode = reportError(e.what());
  }
}

} // namespace

void registerParamsCommand(CLI::App &app, int &exitCode) {
  CLI::App *params = app.add_subcommand(
      "params", "Inspect, create and convert parameter files (.irpa, .safetensors; .gguf read)");
  params->require_subcommand(1);

  const char *nameMapHelp = "File of 'FILE_NAME = MODULE_NAME' lines: show the names a "
                            "module binds (as run --parameter-name-map does)";
  auto listFile = std::make_shared<std::string>();
  auto listNameMap = std::make_shared<std::string>();
  CLI::App *list = params->add_subcommand("list", "List the parameters of a file");
  list->add_option("file", *listFile, "Parameter file")->required();
  list->add_option("--parameter-name-map", *listNameMap, nameMapHelp);
  list->callback([listFile, listNameMap, &exitCode] {
    guarded(exitCode, [&] { return listCommand(*listFile, *listNameMap); });
  });

  auto dump = std::make_shared<DumpOptions>();
  CLI::App *dumpCmd = params->add_subcommand("dump", "Print parameter values or extract them");
  dumpCmd->add_option("file", dump->file, "Parameter file")->required();
  dumpCmd->add_option("--name", dump->names, "Parameter to print (repeatable; default all)");
  dumpCmd->add_option("--extract", dump->extracts,
                      "NAME=FILE.npy: write a parameter as .npy (Q8_0/Q4_0: dequantized f32)");
  dumpCmd->add_option("--parameter-name-map", dump->nameMap, nameMapHelp);
  dumpCmd->add_option("--print_max_element_count", dump->maxElements,
                      "Elements printed per parameter before eliding")
      ->capture_default_str();
  dumpCmd->callback([dump, &exitCode] { guarded(exitCode, [&] { return dumpCommand(*dump); }); });

  auto create = std::make_shared<CreateOptions>();
  CLI::App *createCmd = params->add_subcommand("create", "Write a new parameter file");
  createCmd->add_option("-o,--output", create->output, "Output file")->required();
  createCmd->add_option("--format", create->format,
                        "irpa or safetensors (default: from the output's extension)");
  createCmd->add_option("--data", create->data,
                        "NAME=VALUE, VALUE as for `turbine run --input` (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  createCmd->add_option("--splat", create->splats,
                        "NAME=TYPE=VALUE: TYPE filled with one value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  createCmd->callback(
      [create, &exitCode] { guarded(exitCode, [&] { return createCommand(*create); }); });

  auto convert = std::make_shared<ConvertOptions>();
  CLI::App *convertCmd =
      params->add_subcommand("convert", "Rewrite a parameter file (format, strip, splat, exclude)");
  convertCmd->add_option("input", convert->input, "Parameter file to read")->required();
  convertCmd->add_option("-o,--output", convert->output, "Output file")->required();
  convertCmd->add_option("--format", convert->format,
                         "irpa or safetensors (default: from the output's extension)");
  convertCmd->add_flag("--strip", convert->strip, "Replace all data with zero splats");
  convertCmd->add_option("--splat", convert->splats, "Replace this parameter with a zero splat");
  convertCmd->add_option("--exclude", convert->excludes, "Leave this parameter out");
  convertCmd->callback(
      [convert, &exitCode] { guarded(exitCode, [&] { return convertCommand(*convert); }); });
}

} // namespace turbine::tools
