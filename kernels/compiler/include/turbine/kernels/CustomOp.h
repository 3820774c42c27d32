//===- CustomOp.h - Named custom ops backed by kernels (select/generate) --===//
//
// As iree-turbine's CustomOp: a custom op has a name and two steps.
//  * select(args) checks the argument types and decides the result shapes
//    and dtypes and the symbol values the kernel is specialized on (dims
//    that specialize, tile sizes);
//  * generate(selection) traces the kernel for that selection; its buffers
//    are the arguments (inputs) followed by the results (outputs).
//
// Registered ops are called eagerly with callCustomOp: select -> generate
// (cached per op and selection) -> launch (compiled, cached; Launch.h).
// The body may instead be a hand-written MLIR kernel function
// (makeMLIRCustomOp). In compiled models and from ONNX custom-domain nodes:
// CustomOpCalls.h.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_CUSTOMOP_H
#define TURBINE_KERNELS_CUSTOMOP_H

#include "turbine/kernels/Launch.h"

#include <array>
#include <functional>
#include <map>
#include <memory>

namespace turbine::kernels {

/// What select() decides for one call.
struct CustomOpSelection {
  /// The call's tensor arguments (set by the caller before select), for
  /// generate steps whose kernel depends on them (e.g. the input dtype).
  std::vector<BufferSignature> arguments;
  /// Scalar arguments of the call (e.g. layer_norm's eps), by name, set by
  /// the caller before select (callCustomOp's `attributes`; in a model the
  /// call's `turbine.custom_op_attributes` dictionary). select may check
  /// them; generate reads them. Part of the kernel cache key.
  std::map<std::string, double> attributes;
  /// Shape and dtype of each result, in order.
  std::vector<BufferSignature> results;
  /// Symbol values the kernel is specialized on (beyond the buffer dims).
  Bindings symbols;
};

/// A hand-written kernel: one function in MLIR,
///   func.func @kernel(%state: !llvm.ptr, %x: index, %y: index, %z: index)
/// using `turbine.binding %state[i] : memref<...>` for the arguments, then the
/// results (static shapes), `%x %y %z` as the workgroup id, at the vector
/// level or below (arith, math, scf, memref, vector), run over `grid`.
struct MLIRKernelBody {
  std::string function;
  std::array<int64_t, 3> grid = {1, 1, 1};
};

/// A named op whose body is a kernel (traced, or hand-written MLIR at the
/// vector level), or a function on tensors the compiler fuses like any other
/// op (hasTensorBody).
class CustomOp {
public:
  virtual ~CustomOp() = default;
  virtual const std::string &name() const = 0;
  /// Checks `args` and fills `out`; an error explains what is wrong.
  virtual Status select(const std::vector<BufferSignature> &args,
                        CustomOpSelection &out) const = 0;
  /// Traces the kernel for `selection` (buffers: args, then results).
  virtual Result<Kernel> generate(const CustomOpSelection &selection) const = 0;
  /// True if the body is hand-written MLIR (generateMLIR) instead.
  virtual bool hasMLIRBody() const { return false; }
  virtual Result<MLIRKernelBody>
  generateMLIR(const std::vector<BufferSignature> &args,
               const CustomOpSelection &selection) const {
    (void)args;
    (void)selection;
    return Status::error("custom op '" + name() + "' has no MLIR body");
  }
  /// True if the body is a function on tensors (generateTensorFunction):
  ///   func.func @any_name(%a: tensor<4x8xf32>, ...) -> (tensor<...>, ...)
  /// in upstream dialects (linalg, tensor, arith, math, tosa) with the
  /// call's static argument types and the selected result types. In a model
  /// its body replaces the call (inlined), so dispatch formation fuses it
  /// with its neighbours; eagerly it is compiled as a model of its own.
  virtual bool hasTensorBody() const { return false; }
  virtual Result<std::string>
  generateTensorFunction(const std::vector<BufferSignature> &args,
                         const CustomOpSelection &selection) const {
    (void)args;
    (void)selection;
    return Status::error("custom op '" + name() + "' has no tensor-level body");
  }
};

/// A CustomOp from two functions.
std::shared_ptr<const CustomOp> makeCustomOp(
    std::string name,
    std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
    std::function<Result<Kernel>(const CustomOpSelection &)> generate);

/// A CustomOp whose body is hand-written MLIR.
std::shared_ptr<const CustomOp> makeMLIRCustomOp(
    std::string name,
    std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
    std::function<Result<MLIRKernelBody>(const std::vector<BufferSignature> &,
                                         const CustomOpSelection &)> generate);

/// A CustomOp whose body is a function on tensors (CustomOp::hasTensorBody).
std::shared_ptr<const CustomOp> makeTensorCustomOp(
    std::string name,
    std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
    std::function<Result<std::string>(const std::vector<BufferSignature> &,
                                      const CustomOpSelection &)> generate);

/// The module text that runs `body` as @main(args) -> results (eager calls
/// compile it with compileKernelModuleText).
std::string mlirBodyModule(const MLIRKernelBody &body,
                           const std::vector<BufferSignature> &args,
                           const std::vector<BufferSignature> &results);

/// Registers `op` under its name; an error if the name is taken.
Status registerCustomOp(std::shared_ptr<const CustomOp> op);
/// Removes the op registered as `name` (and the kernels generated for it);
/// false if there was none. For front ends whose ops can be redefined (a
/// Python class registered again).
bool unregisterCustomOp(const std::string &name);
/// The names of the registered ops, sorted.
std::vector<std::string> registeredCustomOps();
/// The op registered as `name`, or null.
std::shared_ptr<const CustomOp> lookupCustomOp(const std::string &name);

/// Runs custom op `name` on `args` and returns its results (new tensors).
/// `attributes` are the call's scalar arguments (CustomOpSelection).
Result<std::vector<runtime::Tensor>>
callCustomOp(const std::string &name, const std::vector<runtime::Tensor> &args,
             runtime::Device *device = nullptr,
             const std::map<std::string, double> &attributes = {});

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_CUSTOMOP_H
