//===- DispatchNames.h - Kernel names that say what the kernel computes ---===//
//
// Dispatch formation names every kernel after its root op and shapes, the
// way IREE names dispatches, so a profile reads `matmul_128x768x768_f32`
// rather than `main_dispatch_152`:
//
//   matmul_MxNxK_T              batch_matmul_BxMxNxK_T
//   conv2d_KHxKWsS_OHxOWxCxF_T  depthwise_conv2d_KHxKWsS_OHxOWxC_T
//   maxpool_KHxKWsS_OHxOWxC_T   sumpool_...
//   reduce_<sum|max|min|prod>_<loop ranges>_T
//   pad_<shape>_T  transpose_<shape>_T  fill_<shape>_T  elementwise_<shape>_T
//   attention_BxHxTxD_kvKH_T   (turbine.attention: query shape, KV heads)
//
// Dynamic sizes print as `D`; T is the root's result element type. A
// target names the ops only it makes (Target::describeKernelRoot), e.g. the
// CPU target's packed convolutions as conv2d_... and matmuls by GGUF or
// group-quantized weights by the weights' type, `matmul_32x2048x768_q4_0`,
// `matmul_1x768x768_int4`. Names are made unique in the kernel container by
// a `_N` suffix.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_DISPATCH_DISPATCHNAMES_H
#define TURBINE_COMPILER_DISPATCH_DISPATCHNAMES_H

#include "turbine/compiler/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace turbine::compiler {

/// The name of a region's kernel (before uniquing), from its ops in block
/// order; ops only `target` makes are named by it.
std::string describeDispatchRegion(llvm::ArrayRef<mlir::Operation *> regionOps,
                                   const Target &target);

/// "128x768" for {128, 768}; a dynamic extent prints as D; rank 0 "scalar".
std::string formatExtents(llvm::ArrayRef<int64_t> extents);
/// The element type of `op`'s first result, as MLIR prints it ("f32").
std::string resultElementTypeName(mlir::Operation *op);

/// `base`, or `base_1`, `base_2`, ... : the first not yet in `kernels` (the
/// kernel container's symbol table).
std::string uniqueKernelName(const mlir::SymbolTable &kernels, const std::string &base);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_DISPATCH_DISPATCHNAMES_H
