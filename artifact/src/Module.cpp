//===- Module.cpp - Reading and writing .tmod artifacts -------------------===//
//
// serialize/deserialize of the file layout described in Module.h. The meta
// section is JSON (functions with their reflection and host programs, kernel
// symbol names, parameter table); the file is protected by an XXH64 checksum.
// The reader treats its input as hostile: every offset, size, index, name and
// JSON type is checked, and all failures come back as messages, never as
// crashes or escaping exceptions.
//===----------------------------------------------------------------------===//
#include "turbine/artifact/Module.h"

#include <nlohmann/json.hpp>

// Header-only xxHash: the artifact (and the runtime that embeds it) then has
// no shared-library dependency on libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

namespace turbine::artifact {

using nlohmann::json;

//===----------------------------------------------------------------------===//
// Opcode and binary kind names
//===----------------------------------------------------------------------===//

namespace {

constexpr std::string_view kOpcodeNames[] = {
    "const", "dim",     "binary",   "select", "assert",
    "alloc", "param",   "reshape",  "dispatch", "return",
    "load",  "string_normalize", "to_string", "from_string",
    "move",  "move_buffer", "loop", "break_unless", "end_loop",
    "global_load", "global_store",
};

constexpr std::string_view kGlobalInitNames[] = {"zero", "parameter", "uninitialized"};

constexpr std::string_view kStringCaseNames[] = {"none", "lower", "upper"};

constexpr std::string_view kBinaryKindNames[] = {
    "add",  "sub",  "mul",  "divs", "divu", "ceildivs", "floordivs", "rems",
    "remu", "mins", "maxs", "minu", "maxu", "and",      "or",        "xor",
    "shl",  "shrs", "shru", "eq",   "ne",   "slt",      "sle",       "sgt",
    "sge",  "ult",  "ule",  "ugt",  "uge",
};

constexpr size_t kHeaderSize = 72;
constexpr uint64_t kSectionAlignment = 64;

} // namespace

std::string_view opcodeName(Opcode op) {
  size_t i = static_cast<size_t>(op);
  return i < std::size(kOpcodeNames) ? kOpcodeNames[i] : "<invalid opcode>";
}

std::optional<Opcode> parseOpcode(std::string_view name) {
  for (size_t i = 0; i < std::size(kOpcodeNames); ++i)
    if (kOpcodeNames[i] == name)
      return static_cast<Opcode>(i);
  return std::nullopt;
}

std::string_view binaryKindName(BinaryKind kind) {
  size_t i = static_cast<size_t>(kind);
  return i < std::size(kBinaryKindNames) ? kBinaryKindNames[i]
                                         : "<invalid binary kind>";
}

std::optional<BinaryKind> parseBinaryKind(std::string_view name) {
  for (size_t i = 0; i < std::size(kBinaryKindNames); ++i)
    if (kBinaryKindNames[i] == name)
      return static_cast<BinaryKind>(i);
  return std::nullopt;
}

std::string_view stringCaseName(StringCase c) {
  size_t i = static_cast<size_t>(c);
  return i < std::size(kStringCaseNames) ? kStringCaseNames[i]
                                         : "<invalid string case>";
}

std::string_view globalInitName(GlobalInit init) {
  size_t i = static_cast<size_t>(init);
  return i < std::size(kGlobalInitNames) ? kGlobalInitNames[i] : "<invalid global init>";
}

std::optional<GlobalInit> parseGlobalInit(std::string_view name) {
  for (size_t i = 0; i < std::size(kGlobalInitNames); ++i)
    if (kGlobalInitNames[i] == name)
      return static_cast<GlobalInit>(i);
  return std::nullopt;
}

std::optional<StringCase> parseStringCase(std::string_view name) {
  for (size_t i = 0; i < std::size(kStringCaseNames); ++i)
    if (kStringCaseNames[i] == name)
      return static_cast<StringCase>(i);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

uint64_t alignUp(uint64_t value) {
  return (value + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
}

void putU32(std::string &bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void putU64(std::string &bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t getU32(const std::string &bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return v;
}

uint64_t getU64(const std::string &bytes, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return v;
}

json tensorTypeToJson(const TensorType &t) {
  json j;
  j["name"] = t.name;
  j["dtype"] = std::string(dtypeName(t.dtype));
  j["shape"] = t.shape;
  j["dim_names"] = t.dimNames;
  return j;
}

json instructionToJson(const Instruction &inst) {
  json j;
  j["op"] = std::string(opcodeName(inst.op));
  switch (inst.op) {
  case Opcode::Const:
    j["dst"] = inst.dst;
    j["imm"] = inst.imm;
    break;
  case Opcode::Dim:
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    j["imm"] = inst.imm;
    break;
  case Opcode::Binary:
    j["kind"] = std::string(binaryKindName(inst.kind));
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    j["b"] = inst.b;
    break;
  case Opcode::Select:
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    j["b"] = inst.b;
    j["c"] = inst.c;
    break;
  case Opcode::Assert:
    j["a"] = inst.a;
    j["message"] = inst.message;
    break;
  case Opcode::Alloc:
    j["dst"] = inst.dst;
    j["dtype"] = std::string(dtypeName(inst.dtype));
    j["operands"] = inst.operands;
    break;
  case Opcode::Param:
    j["dst"] = inst.dst;
    j["imm"] = inst.imm;
    break;
  case Opcode::Reshape:
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    j["operands"] = inst.operands;
    break;
  case Opcode::Dispatch:
    j["imm"] = inst.imm;
    j["workgroups"] = {inst.workgroups[0], inst.workgroups[1], inst.workgroups[2]};
    j["bindings"] = inst.bindings;
    j["operands"] = inst.operands;
    break;
  case Opcode::Return:
    j["operands"] = inst.operands;
    break;
  case Opcode::Load:
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    j["dtype"] = std::string(dtypeName(inst.dtype));
    j["operands"] = inst.operands;
    break;
  case Opcode::StringNormalize:
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    j["case_change"] = std::string(stringCaseName(inst.caseChange));
    j["case_sensitive"] = inst.caseSensitive;
    j["stopwords"] = inst.strings;
    j["locale"] = inst.locale;
    break;
  case Opcode::ToString:
  case Opcode::FromString:
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    j["dtype"] = std::string(dtypeName(inst.dtype));
    break;
  case Opcode::Move:
  case Opcode::MoveBuffer:
    j["dst"] = inst.dst;
    j["a"] = inst.a;
    break;
  case Opcode::BreakUnless:
    j["a"] = inst.a;
    j["imm"] = inst.imm;
    break;
  case Opcode::Loop:
  case Opcode::EndLoop:
    j["imm"] = inst.imm;
    break;
  case Opcode::GlobalLoad:
    j["dst"] = inst.dst;
    j["imm"] = inst.imm;
    if (!inst.requiresInitialized)
      j["requires_initialized"] = false;
    break;
  case Opcode::GlobalStore:
    j["a"] = inst.a;
    j["imm"] = inst.imm;
    break;
  }
  return j;
}

json metaToJson(const Module &module) {
  json functions = json::array();
  for (const Function &f : module.functions) {
    json jf;
    jf["name"] = f.name;
    jf["inputs"] = json::array();
    for (const TensorType &t : f.inputs)
      jf["inputs"].push_back(tensorTypeToJson(t));
    jf["outputs"] = json::array();
    for (const TensorType &t : f.outputs)
      jf["outputs"].push_back(tensorTypeToJson(t));
    jf["num_index_registers"] = f.numIndexRegisters;
    jf["num_buffer_registers"] = f.numBufferRegisters;
    jf["code"] = json::array();
    for (const Instruction &inst : f.code)
      jf["code"].push_back(instructionToJson(inst));
    functions.push_back(std::move(jf));
  }
  json parameters = json::array();
  for (const Parameter &p : module.parameters) {
    json jp;
    jp["name"] = p.name;
    jp["dtype"] = std::string(dtypeName(p.dtype));
    jp["shape"] = p.shape;
    jp["offset"] = p.offset;
    jp["size"] = p.size;
    if (p.external)
      jp["external"] = true;
    if (!p.ggmlType.empty()) {
      jp["ggml_type"] = p.ggmlType;
      jp["ggml_shape"] = p.ggmlShape;
    }
    parameters.push_back(std::move(jp));
  }
  json meta;
  meta["functions"] = std::move(functions);
  meta["target"] = module.target;
  if (!module.targetCpu.empty() || !module.cpuFeatures.empty())
    meta["cpu"] = {{"name", module.targetCpu}, {"features", module.cpuFeatures}};
  meta["kernels"] = module.kernels;
  meta["parameters"] = std::move(parameters);
  if (!module.images.empty()) {
    json images = json::array();
    for (const CodeImage &image : module.images)
      images.push_back({{"format", image.format},
                        {"arch", image.arch},
                        {"offset", image.offset},
                        {"size", image.size}});
    meta["images"] = std::move(images);
  }
  if (!module.kernelLaunch.empty()) {
    json launches = json::array();
    for (const KernelLaunch &launch : module.kernelLaunch)
      launches.push_back({{"bindings", launch.bindings},
                          {"constants", launch.constants},
                          {"max_threads", launch.maxThreads}});
    meta["kernel_launch"] = std::move(launches);
  }
  if (!module.globals.empty()) {
    json globals = json::array();
    for (const Global &g : module.globals) {
      json jg;
      jg["name"] = g.name;
      jg["dtype"] = std::string(dtypeName(g.dtype));
      jg["shape"] = g.shape;
      jg["mutable"] = g.isMutable;
      jg["init"] = std::string(globalInitName(g.init));
      if (g.init == GlobalInit::Parameter)
        jg["parameter"] = g.parameter;
      globals.push_back(std::move(jg));
    }
    meta["globals"] = std::move(globals);
  }
  return meta;
}

} // namespace

/// Deepest loop nesting accepted (a compiled model nests a few levels; the
/// runtime's liveness walks are linear in the depth).
constexpr size_t kMaxLoopDepth = 256;

Status validateControlFlow(const Function &function) {
  const std::vector<Instruction> &code = function.code;
  const int64_t size = static_cast<int64_t>(code.size());
  std::vector<int64_t> open; // positions of the enclosing Loops
  auto at = [](int64_t pc, const Instruction &inst) {
    return "[" + std::to_string(pc) + "] (" + std::string(opcodeName(inst.op)) + ")";
  };
  for (int64_t pc = 0; pc < size; ++pc) {
    const Instruction &inst = code[pc];
    switch (inst.op) {
    case Opcode::Loop:
      if (inst.imm <= pc || inst.imm >= size || code[inst.imm].op != Opcode::EndLoop ||
          code[inst.imm].imm != pc) {
        return Status::error(at(pc, inst) + ": target " + std::to_string(inst.imm) +
                " is not the end_loop that closes this loop");
      }
      open.push_back(pc);
      if (open.size() > kMaxLoopDepth)
        return Status::error(at(pc, inst) + ": loops nested more than " +
                             std::to_string(kMaxLoopDepth) + " deep");
      break;
    case Opcode::BreakUnless:
      if (open.empty() || inst.imm != code[open.back()].imm) {
        return Status::error(at(pc, inst) + ": target " + std::to_string(inst.imm) +
                " is not the end_loop of the innermost enclosing loop");
      }
      break;
    case Opcode::EndLoop:
      if (open.empty() || inst.imm != open.back() || code[open.back()].imm != pc) {
        return Status::error(at(pc, inst) + ": target " + std::to_string(inst.imm) +
                " is not the loop this end_loop closes");
      }
      open.pop_back();
      break;
    default:
      break;
    }
  }
  if (!open.empty()) {
    return Status::error(at(open.back(), code[open.back()]) + ": loop is never closed");
  }
  return Status::success();
}

std::vector<LoopBracket> loopBrackets(const Function &function) {
  std::vector<LoopBracket> brackets;
  for (size_t pc = 0; pc < function.code.size(); ++pc)
    if (function.code[pc].op == Opcode::Loop)
      brackets.push_back({static_cast<int64_t>(pc), function.code[pc].imm});
  return brackets;
}

int64_t releasePositionAcrossLoops(const std::vector<LoopBracket> &loops, int64_t firstAccess,
                                   int64_t lastAccess) {
  int64_t release = lastAccess;
  for (const LoopBracket &loop : loops) {
    bool overlaps = firstAccess <= loop.end && lastAccess >= loop.begin;
    bool inside = firstAccess >= loop.begin && lastAccess <= loop.end;
    if (overlaps && !inside)
      release = std::max(release, loop.end);
  }
  return release;
}

std::string serialize(const Module &module) {
  std::string meta = metaToJson(module).dump(
      /*indent=*/-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  uint64_t metaOffset = alignUp(kHeaderSize);
  uint64_t libraryOffset = alignUp(metaOffset + meta.size());
  uint64_t paramsOffset = alignUp(libraryOffset + module.library.size());
  uint64_t fileSize = paramsOffset + module.paramData.size();

  std::string bytes(fileSize, '\0');
  std::memcpy(&bytes[0], kMagic, sizeof(kMagic));
  putU32(bytes, 8, kFormatVersion);
  putU32(bytes, 12, 0);
  putU64(bytes, 16, metaOffset);
  putU64(bytes, 24, meta.size());
  putU64(bytes, 32, libraryOffset);
  putU64(bytes, 40, module.library.size());
  putU64(bytes, 48, paramsOffset);
  putU64(bytes, 56, module.paramData.size());
  std::memcpy(&bytes[metaOffset], meta.data(), meta.size());
  if (!module.library.empty())
    std::memcpy(&bytes[libraryOffset], module.library.data(), module.library.size());
  if (!module.paramData.empty())
    std::memcpy(&bytes[paramsOffset], module.paramData.data(),
                module.paramData.size());
  putU64(bytes, 64, XXH64(bytes.data() + kHeaderSize, fileSize - kHeaderSize, 0));
  return bytes;
}

Status writeFile(const Module &module, const std::string &path) {
  std::string bytes = serialize(module);
  std::string tempPath = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tempPath, std::ios::binary | std::ios::trunc);
    if (!out)
      return Status::error("cannot write '" + tempPath + "': " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      Status error = Status::error("cannot write '" + tempPath + "': " + std::strerror(errno));
      out.close();
      std::remove(tempPath.c_str());
      return error;
    }
  }
  if (std::rename(tempPath.c_str(), path.c_str()) != 0) {
    Status error = Status::error("cannot rename '" + tempPath + "' to '" + path +
                                 "': " + std::strerror(errno));
    std::remove(tempPath.c_str());
    return error;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

/// Thrown inside the reader only; deserialize turns it into an error string.
struct CorruptArtifact {
  std::string reason;
};

[[noreturn]] void corrupt(std::string reason) {
  throw CorruptArtifact{std::move(reason)};
}

const json &field(const json &object, const char *key, const std::string &path) {
  if (!object.is_object())
    corrupt(path + ": expected an object");
  auto it = object.find(key);
  if (it == object.end())
    corrupt(path + ": missing field '" + key + "'");
  return *it;
}

int64_t toInt(const json &value, const std::string &path,
              int64_t min = std::numeric_limits<int64_t>::min(),
              int64_t max = std::numeric_limits<int64_t>::max()) {
  int64_t v;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    v = value.get<int64_t>();
  } else if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      corrupt(path + ": integer " + std::to_string(u) + " out of range");
    v = static_cast<int64_t>(u);
  } else {
    corrupt(path + ": expected an integer, got " + std::string(value.type_name()));
  }
  if (v < min || v > max)
    corrupt(path + ": value " + std::to_string(v) + " out of range [" +
            std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

int64_t intField(const json &object, const char *key, const std::string &path,
                 int64_t min = std::numeric_limits<int64_t>::min(),
                 int64_t max = std::numeric_limits<int64_t>::max()) {
  return toInt(field(object, key, path), path + "." + key, min, max);
}

std::string stringField(const json &object, const char *key,
                        const std::string &path) {
  const json &value = field(object, key, path);
  if (!value.is_string())
    corrupt(path + "." + key + ": expected a string, got " +
            std::string(value.type_name()));
  return value.get<std::string>();
}

const json &arrayField(const json &object, const char *key,
                       const std::string &path) {
  const json &value = field(object, key, path);
  if (!value.is_array())
    corrupt(path + "." + key + ": expected an array, got " +
            std::string(value.type_name()));
  return value;
}

DType dtypeField(const json &object, const char *key, const std::string &path) {
  std::string name = stringField(object, key, path);
  std::optional<DType> t = parseDType(name);
  if (!t)
    corrupt(path + "." + key + ": unknown dtype '" + name + "'");
  return *t;
}

std::vector<int64_t> shapeField(const json &object, const std::string &path,
                                bool allowDynamic) {
  const json &array = arrayField(object, "shape", path);
  std::vector<int64_t> shape;
  for (size_t i = 0; i < array.size(); ++i)
    shape.push_back(toInt(array[i], path + ".shape[" + std::to_string(i) + "]",
                          allowDynamic ? -1 : 0));
  return shape;
}

TensorType readTensorType(const json &j, const std::string &path) {
  TensorType t;
  t.name = stringField(j, "name", path);
  t.dtype = dtypeField(j, "dtype", path);
  t.shape = shapeField(j, path, /*allowDynamic=*/true);
  if (j.contains("dim_names")) {
    const json &names = arrayField(j, "dim_names", path);
    for (size_t i = 0; i < names.size(); ++i) {
      if (!names[i].is_string())
        corrupt(path + ".dim_names[" + std::to_string(i) + "]: expected a string");
      t.dimNames.push_back(names[i].get<std::string>());
    }
  }
  if (t.dimNames.empty())
    t.dimNames.resize(t.shape.size());
  if (t.dimNames.size() != t.shape.size())
    corrupt(path + ": " + std::to_string(t.dimNames.size()) +
            " dim names for rank " + std::to_string(t.shape.size()));
  return t;
}

/// Register-index checks against one function's register counts.
struct RegisterChecker {
  const Function &function;
  const std::string &path;

  int32_t index(const json &inst, const char *key) const {
    return static_cast<int32_t>(
        intField(inst, key, path, 0, function.numIndexRegisters - 1));
  }
  int32_t buffer(const json &inst, const char *key) const {
    return static_cast<int32_t>(
        intField(inst, key, path, 0, function.numBufferRegisters - 1));
  }
  std::vector<int32_t> list(const json &inst, const char *key, bool buffers,
                            bool required = true) const {
    std::vector<int32_t> regs;
    if (!required && !inst.contains(key))
      return regs;
    const json &array = arrayField(inst, key, path);
    int64_t max = (buffers ? function.numBufferRegisters
                           : function.numIndexRegisters) - 1;
    for (size_t i = 0; i < array.size(); ++i)
      regs.push_back(static_cast<int32_t>(toInt(
          array[i], path + "." + key + "[" + std::to_string(i) + "]", 0, max)));
    return regs;
  }
};

Instruction readInstruction(const json &j, const Function &function,
                            const Module &module, const std::string &path) {
  RegisterChecker regs{function, path};
  Instruction inst;
  std::string opName = stringField(j, "op", path);
  std::optional<Opcode> op = parseOpcode(opName);
  if (!op)
    corrupt(path + ": unknown opcode '" + opName + "'");
  inst.op = *op;
  switch (inst.op) {
  case Opcode::Const:
    inst.dst = regs.index(j, "dst");
    inst.imm = intField(j, "imm", path);
    break;
  case Opcode::Dim:
    inst.dst = regs.index(j, "dst");
    inst.a = regs.buffer(j, "a");
    inst.imm = intField(j, "imm", path, 0, 1 << 20);
    break;
  case Opcode::Binary: {
    std::string kindName = stringField(j, "kind", path);
    std::optional<BinaryKind> kind = parseBinaryKind(kindName);
    if (!kind)
      corrupt(path + ": unknown binary kind '" + kindName + "'");
    inst.kind = *kind;
    inst.dst = regs.index(j, "dst");
    inst.a = regs.index(j, "a");
    inst.b = regs.index(j, "b");
    break;
  }
  case Opcode::Select:
    inst.dst = regs.index(j, "dst");
    inst.a = regs.index(j, "a");
    inst.b = regs.index(j, "b");
    inst.c = regs.index(j, "c");
    break;
  case Opcode::Assert:
    inst.a = regs.index(j, "a");
    if (j.contains("message"))
      inst.message = stringField(j, "message", path);
    break;
  case Opcode::Alloc:
    inst.dst = regs.buffer(j, "dst");
    inst.dtype = dtypeField(j, "dtype", path);
    inst.operands = regs.list(j, "operands", /*buffers=*/false);
    break;
  case Opcode::Param:
    inst.dst = regs.buffer(j, "dst");
    inst.imm = intField(j, "imm", path, 0,
                        static_cast<int64_t>(module.parameters.size()) - 1);
    break;
  case Opcode::Reshape:
    inst.dst = regs.buffer(j, "dst");
    inst.a = regs.buffer(j, "a");
    inst.operands = regs.list(j, "operands", /*buffers=*/false);
    break;
  case Opcode::Dispatch: {
    inst.imm = intField(j, "imm", path, 0,
                        static_cast<int64_t>(module.kernels.size()) - 1);
    std::vector<int32_t> workgroups = regs.list(j, "workgroups", false);
    if (workgroups.size() != 3)
      corrupt(path + ".workgroups: expected 3 index registers, got " +
              std::to_string(workgroups.size()));
    std::copy(workgroups.begin(), workgroups.end(), inst.workgroups);
    inst.bindings = regs.list(j, "bindings", /*buffers=*/true);
    inst.operands = regs.list(j, "operands", /*buffers=*/false,
                              /*required=*/false);
    break;
  }
  case Opcode::Return:
    inst.operands = regs.list(j, "operands", /*buffers=*/true);
    if (inst.operands.size() != function.outputs.size())
      corrupt(path + ": returns " + std::to_string(inst.operands.size()) +
              " values but the function has " +
              std::to_string(function.outputs.size()) + " outputs");
    break;
  case Opcode::Load:
    inst.dst = regs.index(j, "dst");
    inst.a = regs.buffer(j, "a");
    inst.dtype = dtypeField(j, "dtype", path);
    if (dtypeIsFloat(inst.dtype) || dtypeIsString(inst.dtype))
      corrupt(path + ".dtype: load reads integers into index registers, not '" +
              std::string(dtypeName(inst.dtype)) + "'");
    inst.operands = regs.list(j, "operands", /*buffers=*/false);
    break;
  case Opcode::StringNormalize: {
    inst.dst = regs.buffer(j, "dst");
    inst.a = regs.buffer(j, "a");
    std::string caseName = stringField(j, "case_change", path);
    std::optional<StringCase> caseChange = parseStringCase(caseName);
    if (!caseChange)
      corrupt(path + ".case_change: unknown case change '" + caseName +
              "' (expected none, lower or upper)");
    inst.caseChange = *caseChange;
    const json &sensitive = field(j, "case_sensitive", path);
    if (!sensitive.is_boolean())
      corrupt(path + ".case_sensitive: expected a boolean, got " +
              std::string(sensitive.type_name()));
    inst.caseSensitive = sensitive.get<bool>();
    const json &stopwords = arrayField(j, "stopwords", path);
    for (size_t i = 0; i < stopwords.size(); ++i) {
      if (!stopwords[i].is_string())
        corrupt(path + ".stopwords[" + std::to_string(i) + "]: expected a string, got " +
                std::string(stopwords[i].type_name()));
      inst.strings.push_back(stopwords[i].get<std::string>());
    }
    inst.locale = stringField(j, "locale", path);
    break;
  }
  case Opcode::ToString:
  case Opcode::FromString:
    inst.dst = regs.buffer(j, "dst");
    inst.a = regs.buffer(j, "a");
    inst.dtype = dtypeField(j, "dtype", path);
    if (dtypeIsString(inst.dtype))
      corrupt(path + ".dtype: " + opName + " converts between strings and '" +
              std::string(dtypeName(inst.dtype)) + "'; the numeric side cannot be a string");
    break;
  case Opcode::Move:
    inst.dst = regs.index(j, "dst");
    inst.a = regs.index(j, "a");
    break;
  case Opcode::MoveBuffer:
    inst.dst = regs.buffer(j, "dst");
    inst.a = regs.buffer(j, "a");
    break;
  case Opcode::BreakUnless:
    inst.a = regs.index(j, "a");
    inst.imm = intField(j, "imm", path);
    break;
  case Opcode::Loop:
  case Opcode::EndLoop:
    inst.imm = intField(j, "imm", path);
    break;
  case Opcode::GlobalLoad:
  case Opcode::GlobalStore: {
    if (inst.op == Opcode::GlobalLoad)
      inst.dst = regs.buffer(j, "dst");
    else
      inst.a = regs.buffer(j, "a");
    inst.imm = intField(j, "imm", path, 0, static_cast<int64_t>(module.globals.size()) - 1);
    const Global &global = module.globals[static_cast<size_t>(inst.imm)];
    if (!global.isMutable)
      corrupt(path + ": " + opName + " of immutable global '" + global.name +
              "' (immutable globals are parameters: use param)");
    if (inst.op == Opcode::GlobalLoad && j.contains("requires_initialized")) {
      const json &flag = j["requires_initialized"];
      if (!flag.is_boolean())
        corrupt(path + ".requires_initialized: expected a boolean");
      inst.requiresInitialized = flag.get<bool>();
    }
    break;
  }
  }
  return inst;
}

Function readFunction(const json &j, const Module &module,
                      const std::string &path) {
  Function f;
  f.name = stringField(j, "name", path);
  if (f.name.empty())
    corrupt(path + ": empty function name");
  std::string fpath = path + " ('" + f.name + "')";
  const json &inputs = arrayField(j, "inputs", fpath);
  for (size_t i = 0; i < inputs.size(); ++i)
    f.inputs.push_back(
        readTensorType(inputs[i], fpath + ".inputs[" + std::to_string(i) + "]"));
  const json &outputs = arrayField(j, "outputs", fpath);
  for (size_t i = 0; i < outputs.size(); ++i)
    f.outputs.push_back(
        readTensorType(outputs[i], fpath + ".outputs[" + std::to_string(i) + "]"));
  constexpr int64_t kMaxRegisters = 1 << 20;
  f.numIndexRegisters = static_cast<int32_t>(
      intField(j, "num_index_registers", fpath, 0, kMaxRegisters));
  f.numBufferRegisters = static_cast<int32_t>(
      intField(j, "num_buffer_registers", fpath, 0, kMaxRegisters));
  if (static_cast<int64_t>(f.inputs.size()) > f.numBufferRegisters)
    corrupt(fpath + ": " + std::to_string(f.inputs.size()) + " inputs but only " +
            std::to_string(f.numBufferRegisters) + " buffer registers");
  const json &code = arrayField(j, "code", fpath);
  for (size_t i = 0; i < code.size(); ++i)
    f.code.push_back(readInstruction(
        code[i], f, module, fpath + ".code[" + std::to_string(i) + "]"));
  if (Status valid = validateControlFlow(f); !valid)
    corrupt(fpath + ".code" + valid.message());
  return f;
}

void readMeta(const json &meta, Module &module) {
  if (!meta.is_object())
    corrupt("metadata: expected a JSON object");
  if (meta.contains("target")) {
    if (!meta["target"].is_string() || meta["target"].get<std::string>().empty())
      corrupt("metadata.target: expected a non-empty target name");
    module.target = meta["target"].get<std::string>();
  }
  if (meta.contains("cpu")) {
    const json &cpu = meta["cpu"];
    module.targetCpu = stringField(cpu, "name", "metadata.cpu");
    const json &features = arrayField(cpu, "features", "metadata.cpu");
    for (size_t i = 0; i < features.size(); ++i) {
      if (!features[i].is_string() || features[i].get<std::string>().empty())
        corrupt("metadata.cpu.features[" + std::to_string(i) +
                "]: expected a non-empty feature name");
      module.cpuFeatures.push_back(features[i].get<std::string>());
    }
  }
  const json &kernels = arrayField(meta, "kernels", "metadata");
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].is_string() || kernels[i].get<std::string>().empty())
      corrupt("metadata.kernels[" + std::to_string(i) +
              "]: expected a non-empty symbol name");
    module.kernels.push_back(kernels[i].get<std::string>());
  }

  if (meta.contains("images")) {
    const json &images = arrayField(meta, "images", "metadata");
    for (size_t i = 0; i < images.size(); ++i) {
      std::string path = "metadata.images[" + std::to_string(i) + "]";
      CodeImage image;
      image.format = stringField(images[i], "format", path);
      if (image.format != "ptx" && image.format != "cubin")
        corrupt(path + ".format: expected ptx or cubin, got '" + image.format + "'");
      image.arch = stringField(images[i], "arch", path);
      image.offset = static_cast<uint64_t>(intField(images[i], "offset", path, 0));
      image.size = static_cast<uint64_t>(intField(images[i], "size", path, 0));
      if (image.offset > module.library.size() ||
          image.size > module.library.size() - image.offset)
        corrupt(path + ": bytes [" + std::to_string(image.offset) + ", +" +
                std::to_string(image.size) + ") lie outside the " +
                std::to_string(module.library.size()) + "-byte library section");
      module.images.push_back(std::move(image));
    }
  }
  if (meta.contains("kernel_launch")) {
    const json &launches = arrayField(meta, "kernel_launch", "metadata");
    if (launches.size() != module.kernels.size())
      corrupt("metadata.kernel_launch: " + std::to_string(launches.size()) +
              " entries for " + std::to_string(module.kernels.size()) + " kernels");
    for (size_t i = 0; i < launches.size(); ++i) {
      std::string path = "metadata.kernel_launch[" + std::to_string(i) + "]";
      KernelLaunch launch;
      launch.bindings = static_cast<int32_t>(intField(launches[i], "bindings", path, 0, 4096));
      launch.constants = static_cast<int32_t>(intField(launches[i], "constants", path, 0, 4096));
      launch.maxThreads =
          static_cast<int32_t>(intField(launches[i], "max_threads", path, 1, 1024));
      module.kernelLaunch.push_back(launch);
    }
  }

  const json &parameters = arrayField(meta, "parameters", "metadata");
  for (size_t i = 0; i < parameters.size(); ++i) {
    std::string path = "metadata.parameters[" + std::to_string(i) + "]";
    Parameter p;
    p.name = stringField(parameters[i], "name", path);
    p.dtype = dtypeField(parameters[i], "dtype", path);
    if (dtypeIsString(p.dtype))
      corrupt(path + " ('" + p.name + "'): string parameters are not supported "
              "(string tensors live only in host-program registers)");
    p.shape = shapeField(parameters[i], path, /*allowDynamic=*/false);
    p.offset = static_cast<uint64_t>(intField(parameters[i], "offset", path, 0));
    p.size = static_cast<uint64_t>(intField(parameters[i], "size", path, 0));
    if (parameters[i].contains("external")) {
      if (!parameters[i]["external"].is_boolean())
        corrupt(path + ".external: expected a boolean");
      p.external = parameters[i]["external"].get<bool>();
    }
    if (parameters[i].contains("ggml_type")) {
      p.ggmlType = stringField(parameters[i], "ggml_type", path);
      json shapeHolder;
      shapeHolder["shape"] = parameters[i].contains("ggml_shape") ? parameters[i]["ggml_shape"]
                                                                  : json();
      p.ggmlShape = shapeField(shapeHolder, path + ".ggml_shape", /*allowDynamic=*/false);
      if (!p.external)
        corrupt(path + " ('" + p.name + "'): ggml_type is only for external parameters");
    }
    if (p.external && p.offset != 0)
      corrupt(path + " ('" + p.name + "'): an external parameter has no offset");
    if (p.offset % kSectionAlignment != 0)
      corrupt(path + " ('" + p.name + "'): offset " + std::to_string(p.offset) +
              " is not 64-byte aligned");
    if (!p.external && (p.offset > module.paramData.size() ||
                        p.size > module.paramData.size() - p.offset))
      corrupt(path + " ('" + p.name + "'): bytes [" + std::to_string(p.offset) +
              ", " + std::to_string(p.offset + p.size) +
              ") lie outside the params section of " +
              std::to_string(module.paramData.size()) + " bytes");
    uint64_t expected = dtypeSize(p.dtype);
    for (int64_t d : p.shape) {
      if (d != 0 && expected > std::numeric_limits<uint64_t>::max() / d)
        corrupt(path + " ('" + p.name + "'): shape too large");
      expected *= static_cast<uint64_t>(d);
    }
    if (expected != p.size)
      corrupt(path + " ('" + p.name + "'): size " + std::to_string(p.size) +
              " does not match its type (" + std::to_string(expected) + " bytes)");
    module.parameters.push_back(std::move(p));
  }

  if (meta.contains("globals")) {
    const json &globals = arrayField(meta, "globals", "metadata");
    std::set<std::string> globalNames;
    for (size_t i = 0; i < globals.size(); ++i) {
      std::string path = "metadata.globals[" + std::to_string(i) + "]";
      Global g;
      g.name = stringField(globals[i], "name", path);
      if (g.name.empty())
        corrupt(path + ": empty global name");
      path += " ('" + g.name + "')";
      if (!globalNames.insert(g.name).second)
        corrupt(path + ": duplicate global name");
      g.dtype = dtypeField(globals[i], "dtype", path);
      if (dtypeIsString(g.dtype))
        corrupt(path + ": string globals are not supported");
      g.shape = shapeField(globals[i], path, /*allowDynamic=*/false);
      uint64_t bytes = dtypeSize(g.dtype);
      for (int64_t d : g.shape) {
        if (d != 0 && bytes > (uint64_t(1) << 40) / static_cast<uint64_t>(d))
          corrupt(path + ": shape too large");
        bytes *= static_cast<uint64_t>(d);
      }
      const json &isMutable = field(globals[i], "mutable", path);
      if (!isMutable.is_boolean())
        corrupt(path + ".mutable: expected a boolean");
      g.isMutable = isMutable.get<bool>();
      std::string initName = stringField(globals[i], "init", path);
      std::optional<GlobalInit> init = parseGlobalInit(initName);
      if (!init)
        corrupt(path + ".init: unknown initial value '" + initName +
                "' (expected zero, parameter or uninitialized)");
      g.init = *init;
      if (g.init == GlobalInit::Parameter) {
        g.parameter = intField(globals[i], "parameter", path, 0,
                               static_cast<int64_t>(module.parameters.size()) - 1);
        const Parameter &p = module.parameters[static_cast<size_t>(g.parameter)];
        if (p.dtype != g.dtype || p.shape != g.shape)
          corrupt(path + ": initial value parameter '" + p.name +
                  "' does not have the global's type");
      }
      if (!g.isMutable && g.init != GlobalInit::Parameter)
        corrupt(path + ": an immutable global must be a parameter");
      module.globals.push_back(std::move(g));
    }
  }

  const json &functions = arrayField(meta, "functions", "metadata");
  std::set<std::string> names;
  for (size_t i = 0; i < functions.size(); ++i) {
    Function f = readFunction(functions[i], module,
                              "metadata.functions[" + std::to_string(i) + "]");
    if (!names.insert(f.name).second)
      corrupt("metadata: duplicate function '" + f.name + "'");
    module.functions.push_back(std::move(f));
  }
}

struct Section {
  const char *name;
  uint64_t offset;
  uint64_t size;
};

/// Checks the header and section table; on failure returns "truncated: ..." or
/// "corrupt: ..." style text (without the artifact name).
bool deserializeImpl(const std::string &bytes, Module &out, std::string &reason) {
  if (bytes.size() < kHeaderSize) {
    if (bytes.size() >= sizeof(kMagic) &&
        std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
      reason = "is not a Turbine artifact (bad magic)";
      return false;
    }
    reason = "is truncated: expected at least " + std::to_string(kHeaderSize) +
             " bytes (header), file has " + std::to_string(bytes.size());
    return false;
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    reason = "is not a Turbine artifact (bad magic)";
    return false;
  }
  uint32_t version = getU32(bytes, 8);
  if (version != kFormatVersion) {
    reason = "has unsupported format version " + std::to_string(version) +
             " (this build reads version " + std::to_string(kFormatVersion) + ")";
    return false;
  }
  if (getU32(bytes, 12) != 0) {
    reason = "is corrupt: reserved header field is not zero";
    return false;
  }
  Section sections[3] = {{"meta", getU64(bytes, 16), getU64(bytes, 24)},
                         {"library", getU64(bytes, 32), getU64(bytes, 40)},
                         {"params", getU64(bytes, 48), getU64(bytes, 56)}};
  uint64_t expectedSize = kHeaderSize;
  for (const Section &s : sections) {
    if (s.offset < kHeaderSize || s.offset % kSectionAlignment != 0) {
      reason = std::string("is corrupt: ") + s.name + " section offset " +
               std::to_string(s.offset) + " is not a 64-byte aligned offset past the header";
      return false;
    }
    if (s.size > std::numeric_limits<uint64_t>::max() - s.offset) {
      reason = std::string("is corrupt: ") + s.name + " section size overflows";
      return false;
    }
    expectedSize = std::max(expectedSize, s.offset + s.size);
  }
  if (expectedSize > bytes.size()) {
    reason = "is truncated: expected " + std::to_string(expectedSize) +
             " bytes, file has " + std::to_string(bytes.size());
    return false;
  }
  for (int i = 0; i < 3; ++i)
    for (int k = i + 1; k < 3; ++k) {
      const Section &a = sections[i], &b = sections[k];
      if (a.size && b.size && a.offset < b.offset + b.size &&
          b.offset < a.offset + a.size) {
        reason = std::string("is corrupt: sections '") + a.name + "' and '" +
                 b.name + "' overlap";
        return false;
      }
    }
  uint64_t storedHash = getU64(bytes, 64);
  uint64_t actualHash = XXH64(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize, 0);
  if (storedHash != actualHash) {
    reason = "is corrupt: checksum mismatch";
    return false;
  }

  Module module;
  module.library = bytes.substr(sections[1].offset, sections[1].size);
  module.paramData = bytes.substr(sections[2].offset, sections[2].size);
  json meta = json::parse(bytes.begin() + sections[0].offset,
                          bytes.begin() + sections[0].offset + sections[0].size,
                          /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded()) {
    reason = "is corrupt: metadata is not valid JSON";
    return false;
  }
  try {
    readMeta(meta, module);
  } catch (const CorruptArtifact &e) {
    reason = "is corrupt: " + e.reason;
    return false;
  } catch (const std::exception &e) {
    reason = std::string("is corrupt: malformed metadata: ") + e.what();
    return false;
  }
  out = std::move(module);
  return true;
}

Result<Module> deserializeNamed(const std::string &bytes, const std::string &label) {
  std::string reason;
  try {
    Module module;
    if (deserializeImpl(bytes, module, reason))
      return module;
  } catch (const std::bad_alloc &) {
    reason = "is too large to load (out of memory)";
  } catch (const std::exception &e) {
    reason = std::string("could not be read: ") + e.what();
  }
  return Status::error(label + " " + reason);
}

} // namespace

Result<Module> deserialize(const std::string &bytes) {
  return deserializeNamed(bytes, "artifact");
}

Result<Module> readFile(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    return Status::error("cannot read artifact '" + path + "': not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot open artifact '" + path + "': " + std::strerror(errno));
  std::string bytes;
  try {
    std::ostringstream buffer;
    buffer << in.rdbuf();
    bytes = buffer.str();
  } catch (const std::exception &e) {
    return Status::error("cannot read artifact '" + path + "': " + e.what());
  }
  if (in.bad())
    return Status::error("cannot read artifact '" + path + "': " + std::strerror(errno));
  return deserializeNamed(bytes, "artifact '" + path + "'");
}

} // namespace turbine::artifact
