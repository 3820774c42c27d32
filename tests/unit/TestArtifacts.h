//===- TestArtifacts.h - Hand-built artifacts for runtime tests ----------===//
//
// Builds artifact::Modules whose kernel library is the real shared object
// built from test_kernels.c, so the runtime can be tested without the
// compiler. Used by the unit tests and by the e2e helper that writes .tmod
// files for CLI tests.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TESTS_UNIT_TESTARTIFACTS_H
#define TURBINE_TESTS_UNIT_TESTARTIFACTS_H

#include "turbine/artifact/Module.h"

#include <fstream>
#include <sstream>
#include <string>

namespace turbine::testing {

using artifact::BinaryKind;
using artifact::Instruction;
using artifact::Opcode;

/// Bytes of the test kernel library (empty if it cannot be read).
inline std::string readKernelLibrary(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline Instruction makeConst(int32_t dst, int64_t value) {
  Instruction i;
  i.op = Opcode::Const;
  i.dst = dst;
  i.imm = value;
  return i;
}
inline Instruction makeDim(int32_t dst, int32_t buffer, int64_t dim) {
  Instruction i;
  i.op = Opcode::Dim;
  i.dst = dst;
  i.a = buffer;
  i.imm = dim;
  return i;
}
inline Instruction makeBinary(BinaryKind kind, int32_t dst, int32_t a, int32_t b) {
  Instruction i;
  i.op = Opcode::Binary;
  i.kind = kind;
  i.dst = dst;
  i.a = a;
  i.b = b;
  return i;
}
inline Instruction makeAlloc(int32_t dst, DType dtype, std::vector<int32_t> dims) {
  Instruction i;
  i.op = Opcode::Alloc;
  i.dst = dst;
  i.dtype = dtype;
  i.operands = std::move(dims);
  return i;
}
inline Instruction makeDispatch(int64_t kernel, int32_t wgX, int32_t wgY,
                                int32_t wgZ, std::vector<int32_t> bindings,
                                std::vector<int32_t> constants) {
  Instruction i;
  i.op = Opcode::Dispatch;
  i.imm = kernel;
  i.workgroups[0] = wgX;
  i.workgroups[1] = wgY;
  i.workgroups[2] = wgZ;
  i.bindings = std::move(bindings);
  i.operands = std::move(constants);
  return i;
}
/// idx[dst] = buf[buffer][indices...] read as `dtype`.
inline Instruction makeLoad(int32_t dst, int32_t buffer, DType dtype,
                            std::vector<int32_t> indices) {
  Instruction i;
  i.op = Opcode::Load;
  i.dst = dst;
  i.a = buffer;
  i.dtype = dtype;
  i.operands = std::move(indices);
  return i;
}
inline Instruction makeReturn(std::vector<int32_t> buffers) {
  Instruction i;
  i.op = Opcode::Return;
  i.operands = std::move(buffers);
  return i;
}

/// Move (index), MoveBuffer, Loop, BreakUnless, EndLoop.
inline Instruction makeMove(Opcode op, int32_t dst, int32_t a) {
  Instruction i;
  i.op = op;
  i.dst = dst;
  i.a = a;
  return i;
}
inline Instruction makeJump(Opcode op, int64_t target, int32_t condition = -1) {
  Instruction i;
  i.op = op;
  i.imm = target;
  i.a = condition;
  return i;
}

inline artifact::TensorType vectorType(const std::string &name, int64_t n,
                                       const std::string &dimName = "") {
  return artifact::TensorType{name, DType::f32, {n}, {dimName}};
}

/// Module with kernels test_add_f32, test_scale_f32, test_count_workgroups and
/// function "add": (x: ?xf32 [n], y: ?xf32 [n]) -> ?xf32, x + y computed with
/// `workgroups` workgroups.
inline artifact::Module makeAddModule(const std::string &library,
                                      int64_t workgroups = 4) {
  artifact::Module m;
  m.library = library;
  m.kernels = {"test_add_f32", "test_scale_f32", "test_count_workgroups"};
  artifact::Function f;
  f.name = "add";
  f.inputs = {vectorType("x", -1, "n"), vectorType("y", -1, "n")};
  f.outputs = {vectorType("sum", -1, "n")};
  f.numIndexRegisters = 3;
  f.numBufferRegisters = 3;
  f.code = {makeDim(0, 0, 0), makeConst(1, workgroups), makeConst(2, 1),
            makeAlloc(2, DType::f32, {0}),
            makeDispatch(0, 1, 2, 2, {0, 1, 2}, {0}), makeReturn({2})};
  m.functions.push_back(f);
  return m;
}

/// makeAddModule plus function "repeat_add": (x: ?xf32 [n], m: i64) -> acc,
/// acc = x, then m times acc = acc + x, as a host loop (loop at 6, its
/// break_unless at 9, end_loop at 14). Every iteration reads x, a register
/// defined before the loop.
inline artifact::Module makeLoopModule(const std::string &library) {
  artifact::Module m = makeAddModule(library);
  artifact::Function f;
  f.name = "repeat_add";
  f.inputs = {vectorType("x", -1, "n"), artifact::TensorType{"m", DType::i64, {}, {}}};
  f.outputs = {vectorType("acc", -1, "n")};
  f.numIndexRegisters = 6;
  f.numBufferRegisters = 5;
  // idx: 0 n, 1 one, 2 m, 3 i, 4 i < m, 5 zero; buf: 0 x, 1 m, 2 state,
  // 3 result, 4 new sum.
  f.code = {makeDim(0, 0, 0),
            makeConst(1, 1),
            makeConst(5, 0),
            makeLoad(2, 1, DType::i64, {}),
            makeMove(Opcode::Move, 3, 5),
            makeMove(Opcode::MoveBuffer, 2, 0),
            makeJump(Opcode::Loop, 14),
            makeBinary(BinaryKind::Slt, 4, 3, 2),
            makeMove(Opcode::MoveBuffer, 3, 2),
            makeJump(Opcode::BreakUnless, 14, 4),
            makeAlloc(4, DType::f32, {0}),
            makeDispatch(0, 1, 1, 1, {3, 0, 4}, {0}),
            makeBinary(BinaryKind::Add, 3, 3, 1),
            makeMove(Opcode::MoveBuffer, 2, 4),
            makeJump(Opcode::EndLoop, 6),
            makeReturn({3})};
  m.functions.push_back(f);
  return m;
}

inline Instruction makeGlobal(Opcode op, int64_t global, int32_t reg,
                              bool requiresInitialized = true) {
  Instruction i;
  i.op = op;
  i.imm = global;
  (op == Opcode::GlobalLoad ? i.dst : i.a) = reg;
  i.requiresInitialized = requiresInitialized;
  return i;
}

/// A stateful module (makeAddModule's kernels plus test_write_at_f32 at
/// index 3) with globals
///   0 `acc`: 4xf32, mutable, zero-filled
///   1 `cache`: 8xf32, mutable, uninitialized
///   2 `bias`: 4xf32, mutable, initial value parameter 0 = [1 2 3 4]
///   3 `scale`: 4xf32, immutable (parameter 1 = [2 2 2 2])
/// and functions
///   add(x, y) -> x + y                      stateless
///   accumulate(x: 4xf32) -> acc             acc += x in place, returns acc
///   write(x: 2xf32, pos: i64) -> ()         cache[pos:pos+2] = x in place,
///                                           pos checked by an assert first
///   read_cache() -> 8xf32                   the cache (must be initialized)
///   add_bias(x: 4xf32) -> x + bias
///   set_bias(x: 4xf32) -> ()                bias = x (a store of an input)
inline artifact::Module makeStateModule(const std::string &library) {
  artifact::Module m = makeAddModule(library);
  m.kernels.push_back("test_write_at_f32");
  auto f32Bytes = [](std::vector<float> v) {
    return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
  };
  m.paramData = f32Bytes({1, 2, 3, 4});
  m.paramData.resize(64, '\0');
  m.paramData += f32Bytes({2, 2, 2, 2});
  m.parameters = {artifact::Parameter{"bias.initial", DType::f32, {4}, 0, 16, false},
                  artifact::Parameter{"scale", DType::f32, {4}, 64, 16, false}};
  using artifact::GlobalInit;
  m.globals = {artifact::Global{"acc", DType::f32, {4}, true, GlobalInit::Zero, -1},
               artifact::Global{"cache", DType::f32, {8}, true, GlobalInit::Uninitialized, -1},
               artifact::Global{"bias", DType::f32, {4}, true, GlobalInit::Parameter, 0},
               artifact::Global{"scale", DType::f32, {4}, false, GlobalInit::Parameter, 1}};
  auto fn = [](std::string name, std::vector<artifact::TensorType> in,
               std::vector<artifact::TensorType> out, int32_t idx, int32_t buf,
               std::vector<Instruction> code) {
    artifact::Function f;
    f.name = std::move(name);
    f.inputs = std::move(in);
    f.outputs = std::move(out);
    f.numIndexRegisters = idx;
    f.numBufferRegisters = buf;
    f.code = std::move(code);
    return f;
  };
  // accumulate: idx 0 = 4, 1 = 1; buf 0 x, 1 acc.
  m.functions.push_back(fn("accumulate", {vectorType("x", 4)}, {vectorType("acc", 4)}, 2, 2,
                           {makeConst(0, 4), makeConst(1, 1),
                            makeGlobal(Opcode::GlobalLoad, 0, 1),
                            makeDispatch(0, 1, 1, 1, {1, 0, 1}, {0}),
                            makeGlobal(Opcode::GlobalStore, 0, 1), makeReturn({1})}));
  // write: idx 0 = 2, 1 = 1, 2 pos, 3 = 0, 4 = 8, 5 pos+2, 6 pos>=0,
  // 7 pos+2<=8, 8 both; buf 0 x, 1 pos, 2 cache.
  Instruction check;
  check.op = Opcode::Assert;
  check.a = 8;
  check.message = "write: position out of range";
  m.functions.push_back(fn(
      "write", {vectorType("x", 2), artifact::TensorType{"pos", DType::i64, {}, {}}}, {}, 9, 3,
      {makeConst(0, 2), makeConst(1, 1), makeConst(3, 0), makeConst(4, 8),
       makeLoad(2, 1, DType::i64, {}), makeBinary(BinaryKind::Add, 5, 2, 0),
       makeBinary(BinaryKind::Sge, 6, 2, 3), makeBinary(BinaryKind::Sle, 7, 5, 4),
       makeBinary(BinaryKind::And, 8, 6, 7), check,
       makeGlobal(Opcode::GlobalLoad, 1, 2, /*requiresInitialized=*/false),
       makeDispatch(3, 1, 1, 1, {0, 2}, {0, 2}), makeGlobal(Opcode::GlobalStore, 1, 2),
       makeReturn({})}));
  m.functions.push_back(fn("read_cache", {}, {vectorType("cache", 8)}, 0, 1,
                           {makeGlobal(Opcode::GlobalLoad, 1, 0), makeReturn({0})}));
  // add_bias: idx 0 = 4, 1 = 1; buf 0 x, 1 bias, 2 out.
  m.functions.push_back(fn("add_bias", {vectorType("x", 4)}, {vectorType("y", 4)}, 2, 3,
                           {makeConst(0, 4), makeConst(1, 1),
                            makeGlobal(Opcode::GlobalLoad, 2, 1),
                            makeAlloc(2, DType::f32, {0}),
                            makeDispatch(0, 1, 1, 1, {0, 1, 2}, {0}), makeReturn({2})}));
  m.functions.push_back(fn("set_bias", {vectorType("x", 4)}, {}, 0, 1,
                           {makeGlobal(Opcode::GlobalStore, 2, 0), makeReturn({})}));
  return m;
}

} // namespace turbine::testing

#endif // TURBINE_TESTS_UNIT_TESTARTIFACTS_H
