//===- Target.h - A code-generation target of the compiler ----------------===//
//
// Everything that differs between targets sits behind this interface, so a
// new target is a new folder under compiler/targets and one line in the
// registry (session/Targets.cpp), not edits across the phases:
//
//   global-opt   target-specific layouts (the CPU packs matmul operands and
//                convolution filters for its register tiles)
//   dispatch     the workgroup tiles of every dispatch region (how the host
//                sizes the grid and codegen tiles the kernel)
//   codegen      the pass pipeline taking the kernel container from tensors
//                to the target's lowered form
//   link         lowered kernels -> the artifact's native code
//
// The runtime runs an artifact on a device whose kind runs its target
// (artifact::Module::target). For target implementers: this header includes
// MLIR.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_TARGET_H
#define TURBINE_COMPILER_TARGET_H

#include "turbine/base/Status.h"
#include "turbine/compiler/Options.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mlir {
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace turbine::artifact {
struct Module;
}

namespace turbine::compiler {

/// How a kernel's iteration space is split over workgroups: tile sizes along
/// the dims of the value whose tiles a workgroup computes, and which of
/// those dims the x/y/z workgroup axes walk. Kernels stride over their tiles,
/// so any workgroup count is correct; the tiles set the granularity of
/// parallelism and what codegen tiles by.
struct WorkgroupTiling {
  /// Tile size per dim; 0 = the dim is not tiled.
  llvm::SmallVector<int64_t> tileSizes;
  /// The dim walked by workgroup axis x, y, z; -1 = axis unused.
  int64_t gridDims[3] = {-1, -1, -1};
};

class Target {
public:
  virtual ~Target() = default;
  /// The name compile options and artifacts use ("cpu").
  virtual std::string_view name() const = 0;

  /// Passes appended to the global-opt phase (layouts for this target).
  virtual void buildGlobalOptPasses(mlir::OpPassManager &pm,
                                    const CompileOptions &options) const = 0;
  /// Columns per block of group-quantized weights (turbine-quantize-weights'
  /// `column-block`, WeightQuantization.h): the width of this target's GEMV
  /// tile, so that a tile reads one contiguous stream.
  virtual int64_t quantizedWeightColumns(const CompileOptions &) const { return 128; }
  /// The name of a kernel whose root is `op`, for ops only this target makes
  /// (DispatchNames.h has the forms, e.g. `conv2d_3x3s1_56x56x64x64_f32`);
  /// empty for everything else.
  virtual std::string describeKernelRoot(mlir::Operation *op) const = 0;
  /// The workgroup tiles of a dispatch region: `regionOps` in block order,
  /// `tiled` the value whose tiles workgroups compute (its first result, or
  /// what a padded result pads), for the CPU `options` names.
  virtual WorkgroupTiling workgroupTiling(llvm::ArrayRef<mlir::Operation *> regionOps,
                                          mlir::Value tiled,
                                          const CompileOptions &options) const = 0;
  /// The codegen phase, on the kernel container (a nested module pass
  /// manager).
  virtual Status buildCodegenPasses(mlir::OpPassManager &kernelsPm,
                                    const CompileOptions &options) const = 0;
  /// Whether the codegen pipeline transforms each kernel on its own (no pass
  /// reads or writes across kernels, symbols a pass adds are private to the
  /// kernels using them): then the session splits the kernel container into
  /// sibling containers and runs the pipeline on them in parallel.
  virtual bool codegenPerKernel() const { return false; }
  /// The link phase's kernel half: the lowered kernel container into
  /// `out`'s native code (`out.library`, the kernel symbols).
  virtual Status emitKernels(mlir::ModuleOp kernels, const CompileOptions &options,
                             artifact::Module &out) const = 0;
};

/// The registered target named `name`, or null.
const Target *findTarget(std::string_view name);
/// Names of all registered targets, in registration order.
std::vector<std::string> targetNames();

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_TARGET_H
