//===- Function.cpp - Entry function reflection and input checks ---------===//
//
// Converts the artifact's signature into TensorSignature, validates inputs
// against it with messages that show expected and actual types, and hands
// valid calls to the host-program interpreter.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Function.h"

#include "HostProgram.h"
#include "InstanceState.h"
#include "LoadedModule.h"

#include <exception>
#include <map>

namespace turbine::runtime {

std::string TensorSignature::typeString() const {
  return formatTensorType(dtype, shape);
}

namespace {
TensorSignature toSignature(const artifact::TensorType &t) {
  return TensorSignature{t.name, t.dtype, t.shape, t.dimNames};
}

std::string describeArgument(const char *kind, size_t i,
                             const TensorSignature &sig) {
  return std::string(kind) + " " + std::to_string(i) +
         (sig.name.empty() ? "" : " ('" + sig.name + "')");
}
} // namespace

Function::Function(std::shared_ptr<const detail::LoadedModule> module,
                   size_t index)
    : module_(std::move(module)), index_(index) {
  const artifact::Function &f = module_->artifact.functions[index_];
  name_ = f.name;
  for (const artifact::TensorType &t : f.inputs)
    inputs_.push_back(toSignature(t));
  for (const artifact::TensorType &t : f.outputs)
    outputs_.push_back(toSignature(t));
  usesState_ = detail::usesModuleState(*module_, index_);
}

std::string Function::signatureString() const {
  auto list = [](const std::vector<TensorSignature> &sigs) {
    std::string text;
    for (const TensorSignature &s : sigs)
      text += (text.empty() ? "" : ", ") + (s.name.empty() ? "" : s.name + ": ") +
              s.typeString();
    return "(" + text + ")";
  };
  return list(inputs_) + " -> " + list(outputs_);
}

Status Function::validateInputs(const std::vector<Tensor> &inputs) const {
  if (inputs.size() != inputs_.size())
    return Status::error("function '" + name_ + "' expects " +
                         std::to_string(inputs_.size()) + " input" +
                         (inputs_.size() == 1 ? "" : "s") + ", got " +
                         std::to_string(inputs.size()));
  // Dynamic dims that share a symbolic name must agree across inputs.
  std::map<std::string, std::pair<int64_t, std::string>> symbolValues;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSignature &sig = inputs_[i];
    const Tensor &t = inputs[i];
    std::string what = describeArgument("input", i, sig);
    if (!t.isValid())
      return Status::error(what + ": tensor has no storage");
    // "expected 4x?x256xf32 (dim 2 is 256), got 4x3x255xf32"
    auto mismatch = [&](const std::string &detail) {
      return Status::error(what + ": expected " + sig.typeString() + " (" + detail +
                           "), got " + t.typeString());
    };
    if (t.dtype() != sig.dtype)
      return mismatch("dtype " + std::string(dtypeName(sig.dtype)));
    if (t.rank() != sig.shape.size())
      return mismatch("rank " + std::to_string(sig.shape.size()));
    for (size_t d = 0; d < sig.shape.size(); ++d) {
      if (sig.shape[d] >= 0 && sig.shape[d] != t.shape()[d])
        return mismatch("dim " + std::to_string(d) + " is " +
                        std::to_string(sig.shape[d]));
      if (sig.shape[d] >= 0 || d >= sig.dimNames.size() || sig.dimNames[d].empty())
        continue;
      auto [it, inserted] = symbolValues.emplace(
          sig.dimNames[d],
          std::make_pair(t.shape()[d], what + " dim " + std::to_string(d)));
      if (!inserted && it->second.first != t.shape()[d])
        return Status::error(what + ": dim " + std::to_string(d) + " ('" +
                             sig.dimNames[d] + "') is " +
                             std::to_string(t.shape()[d]) + " but " +
                             it->second.second + " is " +
                             std::to_string(it->second.first));
    }
  }
  return Status::success();
}

Result<std::vector<Tensor>> Function::invoke(Device &device,
                                             const std::vector<Tensor> &inputs) const {
  return invoke(device, inputs, nullptr);
}

Result<std::vector<Tensor>> Function::invoke(Device &device, const std::vector<Tensor> &inputs,
                                             const DispatchObserver &observer) const {
  try {
    if (usesState_) {
      std::string names;
      const artifact::Module &a = module_->artifact;
      for (const artifact::Instruction &inst : a.functions[index_].code) {
        if (inst.op != artifact::Opcode::GlobalLoad && inst.op != artifact::Opcode::GlobalStore)
          continue;
        std::string name = "'" + a.globals[static_cast<size_t>(inst.imm)].name + "'";
        if (names.find(name) == std::string::npos)
          names += (names.empty() ? "" : ", ") + name;
      }
      return Status::error("function '" + name_ + "' uses module state (globals " + names +
                           "): call it through an Instance (Module::createInstance())");
    }
    if (Status s = validateInputs(inputs); !s)
      return s;
    return detail::runHostProgram(*module_, module_->artifact.functions[index_],
                                  device, inputs, nullptr, observer ? &observer : nullptr);
  } catch (const std::exception &e) {
    // Only allocation failures can get here; report them as values.
    return Status::error("function '" + name_ + "': " + e.what());
  }
}

} // namespace turbine::runtime
