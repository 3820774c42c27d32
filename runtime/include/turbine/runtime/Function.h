//===- Function.h - An entry function of a loaded module ------------------===//
//
// A Function describes its inputs and outputs (names, dtypes, shapes with -1
// for dynamic dims and their symbolic names) and runs its host program on a
// Device. Functions are cheap handles that keep their Module alive. A
// function that loads or stores mutable globals (usesState()) runs through
// an Instance (Instance.h), which holds that state; invoke() here refuses it.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_FUNCTION_H
#define TURBINE_RUNTIME_FUNCTION_H

#include "turbine/runtime/Device.h"
#include "turbine/runtime/Status.h"
#include "turbine/runtime/Tensor.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace turbine::runtime {

namespace detail {
struct LoadedModule;
}

/// Signature of one input or output.
struct TensorSignature {
  std::string name;
  DType dtype = DType::f32;
  /// -1 marks a dynamic dim.
  std::vector<int64_t> shape;
  /// Symbolic name of each dim ("batch"), or empty.
  std::vector<std::string> dimNames;

  /// "4x?x256xf32".
  std::string typeString() const;
};

/// One dispatch of a call, as a DispatchObserver sees it right after the
/// kernel ran (Function::invoke with an observer; `turbine bisect` uses it to
/// compare every kernel's results with a reference build's).
struct DispatchEvent {
  /// Position of this dispatch among the dispatches the call ran (0, 1, ...;
  /// a dispatch inside a host loop counts once per iteration).
  size_t index = 0;
  /// Position of the dispatch instruction in the host program.
  size_t instruction = 0;
  /// The kernel's symbol name in the artifact.
  std::string kernel;
  /// The buffers the kernel read, in binding order (views of the call's own
  /// registers: clone them to keep their values).
  std::vector<Tensor> inputs;
  /// The buffers it wrote: its results, freshly allocated for this dispatch,
  /// in binding order. The observer may overwrite their elements (same
  /// shape and dtype); later dispatches then read the new values.
  std::vector<Tensor> outputs;
};

/// Called after every dispatch of an observed call; an error stops the call
/// and is returned by invoke. Called on the invoking thread.
using DispatchObserver = std::function<Status(DispatchEvent &)>;

/// One entry function of a loaded Module.
class Function {
public:
  Function(std::shared_ptr<const detail::LoadedModule> module, size_t index);

  const std::string &name() const { return name_; }
  const std::vector<TensorSignature> &inputs() const { return inputs_; }
  const std::vector<TensorSignature> &outputs() const { return outputs_; }
  /// "(x: 4x?xf32, y: f32) -> (out: 4x?xf32)".
  std::string signatureString() const;

  /// Checks `inputs` against the signature (count, dtype, rank, static dims,
  /// agreement of dims that share a symbolic name).
  Status validateInputs(const std::vector<Tensor> &inputs) const;

  /// True when the function loads or stores a mutable global: it must be
  /// called through an Instance.
  bool usesState() const { return usesState_; }

  /// Validates the inputs, runs the host program on `device` and returns the
  /// results. Results own their storage (never alias inputs or parameters).
  /// An error for a function that usesState().
  Result<std::vector<Tensor>> invoke(Device &device,
                                     const std::vector<Tensor> &inputs) const;
  /// The same, calling `observer` after each dispatch (a debugging hook: it
  /// adds the cost of building each event; null means no observer).
  Result<std::vector<Tensor>> invoke(Device &device, const std::vector<Tensor> &inputs,
                                     const DispatchObserver &observer) const;

private:
  friend class Instance;
  std::shared_ptr<const detail::LoadedModule> module_;
  size_t index_;
  std::string name_;
  std::vector<TensorSignature> inputs_;
  std::vector<TensorSignature> outputs_;
  bool usesState_ = false;
};

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_FUNCTION_H
