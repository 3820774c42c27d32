//===- HostStringOps.h - The host program's string opcodes (internal) ----===//
//
// Runs one string_normalize / to_string / from_string instruction of a host
// program (artifact/Module.h) on its operand buffer; StringOps.cpp.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_HOSTSTRINGOPS_H
#define TURBINE_RUNTIME_SRC_HOSTSTRINGOPS_H

#include "turbine/artifact/Module.h"
#include "turbine/runtime/Tensor.h"

namespace turbine::runtime::detail {

/// The result of string instruction `inst` applied to `operand` (buf[a]).
Result<Tensor> runStringInstruction(const artifact::Instruction &inst,
                                    const Tensor &operand);

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_HOSTSTRINGOPS_H
