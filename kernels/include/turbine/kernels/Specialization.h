//===- Specialization.h - Binding a kernel's symbols to concrete values ---===//
//
// A kernel is specialized for concrete buffer shapes and explicit symbol
// values (tile sizes): symbols that are a whole buffer dim are bound from the
// buffer's shape, the rest must be given. Specialization then evaluates every
// shape in the kernel and checks what tracing deferred, so the interpreter
// and the compiler work on concrete sizes only. Errors name the kernel and
// the buffer or op: "kernel 'gemm': op #5 'load' on buffer 'a': unbound
// symbol 'BLOCK_K'".
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_SPECIALIZATION_H
#define TURBINE_KERNELS_SPECIALIZATION_H

#include "turbine/kernels/KernelGraph.h"

#include <array>

namespace turbine::kernels {

/// Shape and dtype of an actual buffer argument.
struct BufferSignature {
  std::vector<int64_t> shape;
  DType dtype = DType::f32;
};

/// A kernel with every symbol bound.
struct Specialization {
  const Kernel *kernel = nullptr;
  Bindings symbols;
  /// Grid size per axis (missing axes are 1).
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::vector<std::vector<int64_t>> bufferShapes;
  /// Concrete shape of every value (indexed by value id).
  std::vector<std::vector<int64_t>> valueShapes;

  /// "gemm[M=64,N=64,K=32,BLOCK_M=16,...]": identifies the specialization.
  std::string key() const;
};

/// Binds `kernel`'s symbols from `buffers` (in declaration order) and
/// `explicitSymbols`, then checks and evaluates every shape. The returned
/// specialization points at `kernel`, which must outlive it.
Result<Specialization> specialize(const Kernel &kernel,
                                  const std::vector<BufferSignature> &buffers,
                                  const Bindings &explicitSymbols);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_SPECIALIZATION_H
