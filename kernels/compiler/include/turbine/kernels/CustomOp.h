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
// In compiled models: CustomOpCalls.h. Not yet: hand-written MLIR bodies,
// ONNX custom-domain nodes.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_CUSTOMOP_H
#define TURBINE_KERNELS_CUSTOMOP_H

#include "turbine/kernels/Launch.h"

#include <functional>
#include <memory>

namespace turbine::kernels {

/// What select() decides for one call.
struct CustomOpSelection {
  /// Shape and dtype of each result, in order.
  std::vector<BufferSignature> results;
  /// Symbol values the kernel is specialized on (beyond the buffer dims).
  Bindings symbols;
};

/// A named op whose body is a kernel.
class CustomOp {
public:
  virtual ~CustomOp() = default;
  virtual const std::string &name() const = 0;
  /// Checks `args` and fills `out`; an error explains what is wrong.
  virtual Status select(const std::vector<BufferSignature> &args,
                        CustomOpSelection &out) const = 0;
  /// Traces the kernel for `selection` (buffers: args, then results).
  virtual Result<Kernel> generate(const CustomOpSelection &selection) const = 0;
};

/// A CustomOp from two functions.
std::shared_ptr<const CustomOp> makeCustomOp(
    std::string name,
    std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
    std::function<Result<Kernel>(const CustomOpSelection &)> generate);

/// Registers `op` under its name; an error if the name is taken.
Status registerCustomOp(std::shared_ptr<const CustomOp> op);
/// The op registered as `name`, or null.
std::shared_ptr<const CustomOp> lookupCustomOp(const std::string &name);

/// Runs custom op `name` on `args` and returns its results (new tensors).
Result<std::vector<runtime::Tensor>>
callCustomOp(const std::string &name, const std::vector<runtime::Tensor> &args,
             runtime::Device *device = nullptr);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_CUSTOMOP_H
