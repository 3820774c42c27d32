//===- BufferReleasePlan.cpp - Last uses of buffer registers -------------===//
#include "BufferReleasePlan.h"

#include <algorithm>

namespace turbine::runtime::detail {

using artifact::Instruction;
using artifact::Opcode;

namespace {

/// Calls `use(reg)` for every buffer register `inst` reads or defines.
/// Returns false for an opcode whose buffer operands are not known here.
template <typename Fn> bool forEachBuffer(const Instruction &inst, Fn use) {
  switch (inst.op) {
  case Opcode::Const:
  case Opcode::Binary:
  case Opcode::Select:
  case Opcode::Assert:
    return true;
  case Opcode::Dim:
  case Opcode::Load:
    use(inst.a);
    return true;
  case Opcode::Alloc:
  case Opcode::Param:
  case Opcode::GlobalLoad:
    use(inst.dst);
    return true;
  case Opcode::GlobalStore:
    use(inst.a);
    return true;
  case Opcode::Reshape:
  case Opcode::MoveBuffer:
  case Opcode::StringNormalize:
  case Opcode::ToString:
  case Opcode::FromString:
    use(inst.a);
    use(inst.dst);
    return true;
  case Opcode::Dispatch:
    for (int32_t r : inst.bindings)
      use(r);
    return true;
  case Opcode::Return:
  case Opcode::Move:
  case Opcode::Loop:
  case Opcode::BreakUnless:
  case Opcode::EndLoop:
    return true;
  default:
    return false;
  }
}

} // namespace

BufferReleasePlan planBufferReleases(const artifact::Function &function) {
  const std::vector<Instruction> &code = function.code;
  const size_t registers =
      function.numBufferRegisters > 0 ? size_t(function.numBufferRegisters) : 0;
  constexpr int64_t kNever = -2;
  std::vector<int64_t> firstUse(registers, kNever), lastUse(registers, kNever);
  // Inputs are set on entry (position -1).
  for (size_t r = 0; r < function.inputs.size() && r < registers; ++r)
    firstUse[r] = lastUse[r] = -1;
  std::vector<bool> returned(registers, false);
  for (size_t pc = 0; pc < code.size(); ++pc) {
    bool known = forEachBuffer(code[pc], [&](int32_t r) {
      if (r < 0 || size_t(r) >= registers)
        return;
      if (firstUse[r] == kNever)
        firstUse[r] = int64_t(pc);
      lastUse[r] = int64_t(pc);
    });
    if (!known)
      return {};
    if (code[pc].op == Opcode::Return)
      for (int32_t r : code[pc].operands)
        if (r >= 0 && size_t(r) < registers)
          returned[r] = true;
  }
  // Input registers are dropped after their last use like any other: the
  // caller still holds the tensors, so only this call's reference goes. A
  // register live around a loop's back edge is dropped when the loop exits
  // (the interpreter runs an end_loop's releases only then).
  // artifact::releasePositionAcrossLoops looks at every loop for every
  // register; with the nesting tree it is a walk up from the innermost
  // loop holding the last use (the loops holding it but not the first use,
  // the only ones that move the release), so a hostile artifact with many
  // loops and registers cannot make loading quadratic.
  const std::vector<artifact::LoopBracket> loops = artifact::loopBrackets(function);
  std::vector<int32_t> parent(loops.size(), -1), innermost(code.size(), -1);
  {
    std::vector<int32_t> open;
    size_t next = 0;
    for (size_t pc = 0; pc < code.size(); ++pc) {
      if (next < loops.size() && loops[next].begin == int64_t(pc)) {
        parent[next] = open.empty() ? -1 : open.back();
        open.push_back(int32_t(next++));
      }
      innermost[pc] = open.empty() ? -1 : open.back();
      if (!open.empty() && loops[size_t(open.back())].end == int64_t(pc))
        open.pop_back();
    }
  }
  auto releasePosition = [&](int64_t first, int64_t last) {
    int64_t release = last;
    for (int32_t l = innermost[size_t(last)];
         l >= 0 && !(first >= loops[size_t(l)].begin && first <= loops[size_t(l)].end);
         l = parent[size_t(l)])
      release = std::max(release, loops[size_t(l)].end);
    return release;
  };
  BufferReleasePlan plan;
  std::vector<std::vector<int32_t>> at(code.size());
  for (size_t r = 0; r < registers; ++r) {
    if (lastUse[r] < 0 || returned[r])
      continue;
    int64_t position = releasePosition(firstUse[r], lastUse[r]);
    if (position >= 0 && size_t(position) < code.size())
      at[size_t(position)].push_back(int32_t(r));
  }
  plan.begin.reserve(code.size() + 1);
  for (const std::vector<int32_t> &regs : at) {
    plan.begin.push_back(uint32_t(plan.registers.size()));
    plan.registers.insert(plan.registers.end(), regs.begin(), regs.end());
  }
  plan.begin.push_back(uint32_t(plan.registers.size()));
  return plan;
}

} // namespace turbine::runtime::detail
