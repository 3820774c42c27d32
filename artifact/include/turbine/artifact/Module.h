//===- Module.h - The compiled artifact: host programs, kernels, params ---===//
//
// A `.tmod` artifact is one file holding everything the runtime needs:
//   * reflection and the host program of every entry function (JSON),
//   * the native code of all kernels (an ELF shared object, see KernelABI.h),
//   * constant parameters (raw little-endian bytes, 64-byte aligned), or,
//     for parameters compiled as external, only their name and type: their
//     bytes come from a parameter file (.irpa / .safetensors) bound at load.
//
// File layout (all integers little-endian):
//   offset 0   char[8]  magic "TURBMOD\0"
//   offset 8   u32      format version (kFormatVersion)
//   offset 12  u32      reserved, 0
//   offset 16  u64      meta offset,    u64 meta size      (JSON, UTF-8)
//   offset 32  u64      library offset, u64 library size   (ELF .so)
//   offset 48  u64      params offset,  u64 params size    (64-byte aligned)
//   offset 64  u64      XXH64 (seed 0) of bytes [72, file end)
//   offset 72  ...      sections, each starting 64-byte aligned
//
// The host program is a register machine, interpreted by the runtime (which
// links no compiler). Registers are of two kinds: index registers (int64) and
// buffer registers (a dense row-major tensor: dtype, shape, storage). On
// entry, buffer registers 0..N-1 hold the N inputs. Instructions run in order,
// except for structured loops: `loop` ... `end_loop` brackets (properly
// nested, each naming the other's position) whose body repeats until a
// `break_unless` directly inside them finds its condition false (see
// Opcode). Liveness across iterations: a register accessed both inside and
// outside a loop must stay alive until that loop has exited (loopBrackets()
// gives each loop's positions). String tensors (DType::string) exist only in
// buffer registers: the string opcodes below run on the host, kernels never
// see them.
//
// Module state: `globals` are the module's variables (ml_program.global).
// Mutable globals live in an instance of the loaded module (the runtime's
// Instance), one storage per instance, created at instance creation from
// the global's initial value (zero-filled, a parameter's bytes, or
// uninitialized). `global_load` puts a view of that storage into a buffer
// register (no copy); `global_store` makes a register's value the global's
// value (nothing to do when the register already is the global's storage,
// as after a dispatch that updated it in place). Immutable globals are
// parameters and are listed for reflection only.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_ARTIFACT_MODULE_H
#define TURBINE_ARTIFACT_MODULE_H

#include "turbine/artifact/DType.h"
#include "turbine/base/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace turbine::artifact {

inline constexpr char kMagic[8] = {'T', 'U', 'R', 'B', 'M', 'O', 'D', '\0'};
inline constexpr uint32_t kFormatVersion = 1;

/// Signature of one argument or result. shape[i] == -1 marks a dynamic dim;
/// dimNames[i] is its symbolic name ("batch") or empty.
struct TensorType {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<std::string> dimNames;
};

enum class Opcode : uint8_t {
  Const,    // idx[dst] = imm
  Dim,      // idx[dst] = buf[a].shape[imm]
  Binary,   // idx[dst] = idx[a] <kind> idx[b]
  Select,   // idx[dst] = idx[a] != 0 ? idx[b] : idx[c]
  Assert,   // fail with `message` unless idx[a] != 0
  Alloc,    // buf[dst] = new uninitialized tensor of `dtype`, shape idx[operands]
  Param,    // buf[dst] = read-only view of parameter #imm
  Reshape,  // buf[dst] = buf[a] viewed with shape idx[operands] (same bytes)
  Dispatch, // run kernel #imm over workgroups idx[workgroups[0..2]] with
            // bindings buf[bindings] and push constants idx[operands]
  Return,   // results are buf[operands]
  Load,     // idx[dst] = element of buf[a] at indices idx[operands] (one per
            // dim, bounds-checked at run time); buf[a] must hold integers of
            // the size of `dtype` (i1/iN sign-extended as `dtype` says:
            // i* sign-, u* zero-extended, i1 0 or 1)
  StringNormalize, // buf[dst] = ONNX StringNormalizer of string buf[a]
                   // (caseChange, caseSensitive, strings = stopwords, locale)
  ToString,   // buf[dst] = string tensor of buf[a]'s numbers; `dtype` is the
              // source dtype (ONNX Cast to STRING)
  FromString, // buf[dst] = `dtype` tensor parsed from string buf[a] (ONNX
              // Cast from STRING)
  // Structured control flow (host loops, e.g. an ONNX Loop whose trip count
  // is run-time data). Targets are instruction positions in the same
  // function, validated when the artifact is read.
  Move,        // idx[dst] = idx[a]
  MoveBuffer,  // buf[dst] = buf[a] (the same tensor: no copy)
  Loop,        // start of a loop body; imm = position of its EndLoop
  BreakUnless, // unless idx[a] != 0, continue after the EndLoop at imm (the
               // innermost loop enclosing this instruction)
  EndLoop,     // jump back to just after the Loop at imm
  // Module state (see `Global`): imm is an index into Module::globals, which
  // must name a mutable global.
  GlobalLoad,  // buf[dst] = view of global #imm's storage in the calling
               // instance; when `requiresInitialized`, an uninitialized
               // global (never stored in this instance) is a run-time error
  GlobalStore, // global #imm's value becomes buf[a] (a no-op when buf[a]
               // already is the global's storage)
};

/// case_change_action of Opcode::StringNormalize.
enum class StringCase : uint8_t { None, Lower, Upper };

/// Integer operations of Opcode::Binary (signed unless marked `u`;
/// comparisons produce 0 or 1; division by zero is a runtime error).
enum class BinaryKind : uint8_t {
  Add, Sub, Mul, DivS, DivU, CeilDivS, FloorDivS, RemS, RemU,
  MinS, MaxS, MinU, MaxU, And, Or, Xor, Shl, ShrS, ShrU,
  Eq, Ne, Slt, Sle, Sgt, Sge, Ult, Ule, Ugt, Uge,
};

/// Names used for opcodes and binary kinds in the JSON metadata and in
/// printed host programs ("dispatch", "ceildivs", ...).
std::string_view opcodeName(Opcode op);
std::optional<Opcode> parseOpcode(std::string_view name);
std::string_view binaryKindName(BinaryKind kind);
std::optional<BinaryKind> parseBinaryKind(std::string_view name);
/// "none", "lower", "upper".
std::string_view stringCaseName(StringCase c);
std::optional<StringCase> parseStringCase(std::string_view name);

struct Instruction {
  Opcode op = Opcode::Const;
  BinaryKind kind = BinaryKind::Add; // Binary only
  int32_t dst = -1;
  int32_t a = -1, b = -1, c = -1;
  int64_t imm = 0;
  DType dtype = DType::f32;          // Alloc, Load, ToString, FromString
  std::vector<int32_t> operands;     // see Opcode
  std::vector<int32_t> bindings;     // Dispatch only: buffer registers
  int32_t workgroups[3] = {-1, -1, -1}; // Dispatch only: index registers
  std::string message;               // Assert only
  // StringNormalize only:
  StringCase caseChange = StringCase::None;
  bool caseSensitive = false;
  std::vector<std::string> strings;  // stopwords
  std::string locale;                // "" = Unicode default case mapping
  // GlobalLoad only: false for a load whose value is only the destination
  // of an in-place update (it reads nothing the program observes).
  bool requiresInitialized = true;
};

/// One entry function: its reflection and its host program.
struct Function {
  std::string name;
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
  int32_t numIndexRegisters = 0;
  int32_t numBufferRegisters = 0;
  std::vector<Instruction> code;
};

/// A constant tensor stored in the params section, or an external one.
struct Parameter {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  uint64_t offset = 0;   // into the params section, 64-byte aligned (0 if external)
  uint64_t size = 0;     // bytes
  bool external = false; // bytes come from a parameter file named at load time
  /// External parameters compiled against a block-quantized GGUF tensor
  /// (`turbine compile --weights-from=F.gguf`): its ggml type name ("Q8_0",
  /// "Q4_0") and logical shape (outermost first, as the GGUF reader gives
  /// it); `dtype`/`shape` are then the raw blocks as i8 [rows, blocks, bytes].
  /// The runtime binds only a tensor of exactly that type and shape. Empty
  /// for every other parameter.
  std::string ggmlType;
  std::vector<int64_t> ggmlShape;
};

/// How a global's storage starts out in a new instance.
enum class GlobalInit : uint8_t {
  Zero,          ///< zero-filled
  Parameter,     ///< a copy of parameter #parameter (same dtype and shape)
  Uninitialized, ///< reading it before any store is a run-time error
};

/// One module variable (ml_program.global): reflection, and for mutable
/// globals the per-instance storage the global_load / global_store opcodes
/// work on. An immutable global is a parameter (`init` Parameter).
struct Global {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape; ///< static
  bool isMutable = true;
  GlobalInit init = GlobalInit::Zero;
  int64_t parameter = -1;     ///< init == Parameter: index into Module::parameters
};

/// "zero", "parameter", "uninitialized".
std::string_view globalInitName(GlobalInit init);
std::optional<GlobalInit> parseGlobalInit(std::string_view name);

/// GPU targets: one device code image inside Module::library.
struct CodeImage {
  std::string format;  ///< "ptx" (text, JIT-compiled by the driver) or "cubin"
  std::string arch;    ///< the GPU architecture it was made for ("sm_80")
  uint64_t offset = 0; ///< into Module::library
  uint64_t size = 0;   ///< bytes
};

/// GPU targets: how to launch kernel #i (parallel to Module::kernels). The
/// kernel's parameters are the first `bindings` buffer pointers of a
/// dispatch, its first `constants` push constants (int64), then the grid's
/// three workgroup counts (int64); one thread per workgroup, the body
/// guarded by the counts, so any block shape of at most `maxThreads` threads
/// whose blocks cover the counts is correct.
struct KernelLaunch {
  int32_t bindings = 0;
  int32_t constants = 0;
  int32_t maxThreads = 256;
};

/// The whole artifact in memory.
struct Module {
  /// The compiler target the kernels were generated for ("cpu": `library`
  /// is an ELF shared object for x86-64; "cuda": `library` holds the PTX
  /// and cubins listed in `images`, launched as `kernelLaunch` says). Artifacts written before targets
  /// existed have none in their metadata and read as "cpu".
  std::string target = "cpu";
  /// CPU target: the LLVM CPU the kernels were compiled for ("znver3") and
  /// which extensions of CpuFeatures.h it has, any of which the kernels may
  /// use; the runtime refuses to load the artifact on a CPU that lacks one.
  /// Empty in artifacts written before they were recorded (not checked).
  std::string targetCpu;
  std::vector<std::string> cpuFeatures;
  std::vector<Function> functions;
  std::vector<std::string> kernels;   // exported symbol names in `library`
  std::vector<Parameter> parameters;
  std::vector<Global> globals;        // module variables (see Global)
  std::string library;                // ELF shared object bytes (cpu), code
                                      // images (cuda: see `images`)
  std::vector<CodeImage> images;      // GPU targets: PTX and cubins in `library`
  std::vector<KernelLaunch> kernelLaunch; // GPU targets: one per kernel
  std::string paramData;              // parameter bytes (offsets above)
};

/// Checks that the Loop / BreakUnless / EndLoop instructions of `function`
/// form properly nested brackets whose targets name each other (and that a
/// BreakUnless names its innermost enclosing loop), nested at most 256 deep;
/// an error naming the instruction otherwise. deserialize() runs it on every
/// function.
Status validateControlFlow(const Function &function);

/// The [loop, end_loop] positions of every loop of a validated function, in
/// program order (outer loops before the loops they contain).
struct LoopBracket {
  int64_t begin = 0; ///< position of the Loop
  int64_t end = 0;   ///< position of its EndLoop
};
std::vector<LoopBracket> loopBrackets(const Function &function);

/// Liveness of a register across loops, for a plan that releases each
/// buffer register after its last access: a register first accessed at
/// `firstAccess` (-1 for inputs, which are set on entry) and last at
/// `lastAccess` in program order may be released after the returned
/// position: `lastAccess`, or the end_loop of a loop whose bracket holds
/// some but not all of [firstAccess, lastAccess] (its value lives around the
/// back edge), whichever is later. The interpreter runs the releases planned
/// for an end_loop when that loop exits (break_unless jumps there), never on
/// the back edge.
int64_t releasePositionAcrossLoops(const std::vector<LoopBracket> &loops, int64_t firstAccess,
                                   int64_t lastAccess);

/// Serializes `module` to bytes in the layout above.
std::string serialize(const Module &module);
/// Writes serialize(module) to `path`; an error on I/O failure. The file is
/// written to a temporary name and renamed into place.
Status writeFile(const Module &module, const std::string &path);
/// Parses and validates an artifact (magic, version, bounds, checksum, JSON
/// schema, register and kernel indices). Never crashes on corrupt input:
/// returns an error naming what is wrong.
Result<Module> deserialize(const std::string &bytes);
Result<Module> readFile(const std::string &path);

} // namespace turbine::artifact

#endif // TURBINE_ARTIFACT_MODULE_H
