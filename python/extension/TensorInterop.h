//===- TensorInterop.h - torch::Tensor <-> turbine runtime tensors ---------===//
//
// Contiguous CPU torch tensors become runtime tensors that alias their
// storage (no copy; the torch tensor is kept alive by the view); others are
// made contiguous first. Runtime results become torch tensors that alias the
// runtime's storage (kept alive by the torch tensor's deleter).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_PYTHON_EXTENSION_TENSORINTEROP_H
#define TURBINE_PYTHON_EXTENSION_TENSORINTEROP_H

#include "turbine/runtime/Tensor.h"

#include <torch/types.h>

#include <string>

namespace turbine::torch_ext {

/// The runtime dtype of a torch dtype; throws (c10::Error) for others.
DType toDType(c10::ScalarType type, const std::string &what);
/// The torch dtype of a runtime dtype; throws for unsigned types above 8 bits.
c10::ScalarType toScalarType(DType type, const std::string &what);

/// A runtime view of `tensor` (made contiguous when it is not). Throws for
/// non-CPU tensors and unsupported dtypes; `what` names it in messages.
runtime::Tensor toRuntimeTensor(const at::Tensor &tensor, const std::string &what);
/// A torch tensor aliasing `tensor`'s storage.
at::Tensor toTorchTensor(const runtime::Tensor &tensor, const std::string &what);

} // namespace turbine::torch_ext

#endif // TURBINE_PYTHON_EXTENSION_TENSORINTEROP_H
