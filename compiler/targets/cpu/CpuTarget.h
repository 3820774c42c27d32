//===- CpuTarget.h - The x86-64 CPU target --------------------------------===//
#ifndef TURBINE_COMPILER_CPU_CPUTARGET_H
#define TURBINE_COMPILER_CPU_CPUTARGET_H

#include "turbine/compiler/Target.h"

#include <memory>

namespace turbine::compiler {

/// Kernels as native code for the compiling machine's CPU (or
/// CompileOptions::targetCpu): AVX-512 register tiles where the CPU has
/// them, one ELF shared object per artifact.
std::unique_ptr<Target> createCpuTarget();

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_CPUTARGET_H
