//===- Instance.h - Module state: one set of mutable globals --------------===//
//
// A module's mutable globals (a KV cache, a sequence length: see
// artifact/Module.h, `Global`) do not live in the Module: a loaded Module is
// immutable and shared, and its state lives in Instances, created from it
// with Module::createInstance(). One loaded artifact thus serves several
// independent sequences at once, one Instance each, the way an IREE VM
// context holds a module's globals.
//
//   auto instance = (*module)->createInstance();          // globals at their initial values
//   auto prefill = (*module)->lookupFunction("prefill");
//   auto logits = (*instance)->invoke(*prefill, **device, {tokens});
//   auto next = (*instance)->invoke("decode", **device, {token, position});
//   (*instance)->reset();                                   // a new sequence
//
// Ownership: an Instance keeps its Module's code, kernels and parameters
// alive (it may outlive the Module object) and owns the storage of every
// mutable global: created at instance creation (zero-filled, a copy of the
// initial value's parameter, or, for an uninitialized global, zero-filled
// but marked unset), replaced or updated in place by the functions' stores.
// Results never alias that storage (they are copied when they would).
//
// Threads: an Instance runs one call at a time. A call made while another
// call on the same Instance is running (from another thread) fails with an
// error instead of racing; calls on different Instances of one Module may
// run concurrently from any threads. readGlobal / writeGlobal / reset are
// calls too. Function::invoke (no instance) runs only stateless functions:
// a function that loads or stores a mutable global names them in an error.
//
// Errors: reading an uninitialized global before any store ("decode before
// prefill") fails the call with an error naming the global and the
// function; a failed call leaves the state as the instructions before the
// failure left it (the host program's asserts come before the stores they
// guard, so a rejected position changes nothing).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_INSTANCE_H
#define TURBINE_RUNTIME_INSTANCE_H

#include "turbine/runtime/Device.h"
#include "turbine/runtime/Function.h"
#include "turbine/runtime/Status.h"
#include "turbine/runtime/Tensor.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace turbine::runtime {

namespace detail {
struct LoadedModule;
struct InstanceState;
} // namespace detail

/// Reflection of one module global.
struct GlobalSignature {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  /// Mutable globals are per-instance state; immutable ones are parameters.
  bool isMutable = true;
  /// "zero", "parameter" (a copy of a parameter) or "uninitialized".
  std::string initialValue;

  /// "1x4x512x64xf32".
  std::string typeString() const;
};

/// The state of one sequence: a value for every mutable global of a Module.
class Instance {
public:
  ~Instance();
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;

  /// Where the module came from (its label).
  const std::string &label() const;

  /// Validates the inputs and runs `function` (a function of this
  /// instance's module) with this instance's globals. Stateless functions
  /// run too.
  Result<std::vector<Tensor>> invoke(const Function &function, Device &device,
                                     const std::vector<Tensor> &inputs);
  /// Same, looking the function up by name.
  Result<std::vector<Tensor>> invoke(const std::string &functionName, Device &device,
                                     const std::vector<Tensor> &inputs);

  /// Puts every mutable global back to its initial value (uninitialized
  /// ones become unset again).
  Status reset();

  /// A copy of the current value of mutable global `name`; an error for an
  /// unknown or immutable name, or an uninitialized global never stored.
  Result<Tensor> readGlobal(const std::string &name);
  /// Sets mutable global `name` to a copy of `value` (its dtype and shape
  /// must be the global's); it counts as initialized from then on.
  Status writeGlobal(const std::string &name, const Tensor &value);
  /// True once mutable global `name` has a value (always, unless it is
  /// uninitialized and was never stored); false for unknown names.
  bool isInitialized(const std::string &name) const;

private:
  friend class Module;
  Instance(std::shared_ptr<const detail::LoadedModule> module,
           std::unique_ptr<detail::InstanceState> state);
  /// Marks the instance busy for one call; an error if it already is.
  Status enter(const std::string &what);
  void leave();
  Result<size_t> mutableGlobalIndex(const std::string &name) const;

  std::shared_ptr<const detail::LoadedModule> module_;
  std::unique_ptr<detail::InstanceState> state_;
  std::atomic<bool> busy_{false};
};

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_INSTANCE_H
