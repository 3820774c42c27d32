//===- LibraryOps.h - The kernel library's kernels as named custom ops ----===//
//
// The kernels of KernelLibrary.h as custom ops (CustomOp.h), so that one
// definition serves every way of calling them: eagerly (callCustomOp; the
// torch ops torch.ops.turbine.* in python/extension) and inside compiled
// models (a call of a declaration tagged turbine.custom_op = "turbine.<op>",
// which the TorchScript frontend emits for `turbine::<op>` nodes and the ONNX
// frontend for nodes of domain "turbine"; CustomOpCalls.h). select checks
// ranks, dtypes and shapes and picks the tile sizes:
//
//   turbine.softmax(x: [M, N] f32) -> [M, N] f32            rows; BLOCK_N >= N
//   turbine.layer_norm(x: [M, N] f32, weight: [N] f32, bias: [N] f32)
//       -> [M, N] f32          attribute eps (default 1e-5) over the rows
//   turbine.matmul(a: [M, K], b: [K, N]) -> [M, N] f32      a, b both f32 or f16
//   turbine.attention(q: [B, S, D], k: [B, T, D], v: [B, T, D]) -> [B, S, D] f32
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_LIBRARYOPS_H
#define TURBINE_KERNELS_LIBRARYOPS_H

#include "turbine/kernels/CustomOp.h"

namespace turbine::kernels {

/// Registers the ops above (once per process; later calls do nothing).
/// An error only if another op already took one of the names.
Status registerLibraryOps();

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_LIBRARYOPS_H
