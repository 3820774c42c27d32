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

/// A kernel with every symbol bound. Dynamic symbols (Kernel::dynamicSymbols)
/// are bound too (the interpreter needs their values) but are not part of
/// the key: every value shares one compiled kernel.
struct Specialization {
  const Kernel *kernel = nullptr;
  Bindings symbols;
  /// Grid size per axis (missing axes are 1).
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::vector<std::vector<int64_t>> bufferShapes;
  /// Concrete shape of every value (indexed by value id).
  std::vector<std::vector<int64_t>> valueShapes;

  /// "gemm[M=64,N=64,K=32,BLOCK_M=16,...]": identifies the specialization
  /// (what compiled code depends on); dynamic symbols show as "N=?".
  std::string key() const;
  /// True if dim `dim` of buffer `buffer` depends on a dynamic symbol (the
  /// compiled kernel reads it at run time).
  bool isDynamicDim(size_t buffer, size_t dim) const;
};

/// Binds `kernel`'s symbols from `buffers` (in declaration order) and
/// `explicitSymbols`, then checks and evaluates every shape. The returned
/// specialization points at `kernel`, which must outlive it.
Result<Specialization> specialize(const Kernel &kernel,
                                  const std::vector<BufferSignature> &buffers,
                                  const Bindings &explicitSymbols);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_SPECIALIZATION_H
