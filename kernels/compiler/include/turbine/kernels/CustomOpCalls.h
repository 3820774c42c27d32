//===- CustomOpCalls.h - Custom ops inside compiled models -----------------===//
//
// A model (MLIR on tensors, as the frontends or a C++ builder produce it)
// uses a registered custom op (CustomOp.h) by calling a declaration that
// names it:
//
//   func.func private @my_softmax(tensor<4x100xf32>) -> tensor<4x100xf32>
//       attributes {turbine.custom_op = "test.softmax"}
//   ...
//   %y = func.call @my_softmax(%x) : (tensor<4x100xf32>) -> tensor<4x100xf32>
//
// expandCustomOpCalls runs the op's select step on the call's (static)
// tensor types and its attributes (`turbine.custom_op_attributes`, a
// dictionary of numbers, e.g. {eps = 1.0e-05 : f64}), checks the call's result types against the selection,
// generates and specializes the kernel, puts it (vector level) into the
// module's kernel container and replaces the call by a `turbine.dispatch`
// of it over the kernel's grid. The compiler's phases then leave that
// dispatch alone and lower the kernel with the others: the custom op is its
// own dispatch in the artifact. A compile session runs it as the pass
// turbine-expand-custom-ops, first in the dispatch phase, once
// createCustomOpExtension() is added to it (so the input and global-opt
// phases show the readable calls). Includes no MLIR header beyond forward
// declarations.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_CUSTOMOPCALLS_H
#define TURBINE_KERNELS_CUSTOMOPCALLS_H

#include "turbine/kernels/CustomOp.h"

#include <memory>

namespace mlir {
class ModuleOp;
}

namespace turbine::compiler {
class PipelineExtension;
}

namespace turbine::kernels {

/// Attribute on a function declaration naming the custom op it stands for.
inline constexpr const char *kCustomOpAttr = "turbine.custom_op";
/// Optional attribute on a call: a dictionary of numbers, the call's scalar
/// arguments (CustomOpSelection::attributes), e.g. `{eps = 1.0e-05 : f64}`.
inline constexpr const char *kCustomOpAttributesAttr = "turbine.custom_op_attributes";

/// Replaces every call of a custom-op declaration in `module` by a dispatch
/// of the op's kernel; the declarations are removed. Errors name the op, the
/// call's location and what is wrong (unregistered op, dynamic shapes,
/// result types that disagree with select, inout buffers).
Status expandCustomOpCalls(mlir::ModuleOp module);

/// The compile-session extension that runs expandCustomOpCalls at the start
/// of the dispatch phase (Session::addExtension). Registers the kernel
/// library's ops (LibraryOps.h) first, so their calls are known.
Result<std::shared_ptr<const compiler::PipelineExtension>> createCustomOpExtension();

/// Registers turbine-expand-custom-ops with MLIR's pass registry (turbine-opt).
void registerCustomOpPasses();

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_CUSTOMOPCALLS_H
