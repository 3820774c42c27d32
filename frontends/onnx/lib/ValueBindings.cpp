//===- ValueBindings.cpp - sequences, optionals and whole-value copies ----===//
//
// The part of ImportContext that holds ONNX sequences and optionals (lists
// of tensor values known at import time) and copies everything recorded
// for one name to another: subgraph inputs and outputs, loop-carried
// values and Identity on non-tensors go through capture()/bind(), so a
// constant stays a constant and a shape computation stays symbolic across
// a subgraph boundary.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {

void ImportContext::setSequence(const std::string &name, SequenceValue sequence) {
  values.erase(name);
  constants.erase(name);
  shapeTensors.erase(name);
  optionals.erase(name);
  sequences[name] = std::move(sequence);
}

void ImportContext::setOptional(const std::string &name, OptionalValue optional) {
  values.erase(name);
  constants.erase(name);
  shapeTensors.erase(name);
  sequences.erase(name);
  optionals[name] = std::move(optional);
}

ValueBinding ImportContext::capture(const std::string &name) const {
  ValueBinding binding;
  binding.onnxType = onnxType(name);
  if (auto it = sequences.find(name); it != sequences.end()) {
    binding.kind = ValueBinding::Kind::Sequence;
    binding.sequence = it->second;
  } else if (auto it = optionals.find(name); it != optionals.end()) {
    binding.kind = ValueBinding::Kind::Optional;
    binding.optional = it->second;
  } else if (auto it = constants.find(name); it != constants.end()) {
    binding.kind = ValueBinding::Kind::Constant;
    binding.constant = it->second;
  } else if (auto it = shapeTensors.find(name); it != shapeTensors.end()) {
    binding.kind = ValueBinding::Kind::Shape;
    binding.shape = it->second;
  } else if (auto it = values.find(name); it != values.end()) {
    binding.kind = ValueBinding::Kind::Tensor;
    binding.tensor = it->second;
  }
  return binding;
}

void ImportContext::bind(const std::string &name, const ValueBinding &binding) {
  values.erase(name);
  constants.erase(name);
  shapeTensors.erase(name);
  sequences.erase(name);
  optionals.erase(name);
  switch (binding.kind) {
  case ValueBinding::Kind::Missing: break;
  case ValueBinding::Kind::Tensor: values[name] = binding.tensor; break;
  case ValueBinding::Kind::Constant: constants[name] = binding.constant; break;
  case ValueBinding::Kind::Shape: shapeTensors[name] = binding.shape; break;
  case ValueBinding::Kind::Sequence: sequences[name] = binding.sequence; break;
  case ValueBinding::Kind::Optional: optionals[name] = binding.optional; break;
  }
  if (binding.onnxType)
    setOnnxType(name, *binding.onnxType);
}

} // namespace turbine::onnx_frontend
