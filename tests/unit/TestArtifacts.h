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

} // namespace turbine::testing

#endif // TURBINE_TESTS_UNIT_TESTARTIFACTS_H
