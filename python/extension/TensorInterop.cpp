//===- TensorInterop.cpp - torch::Tensor <-> turbine runtime tensors -------===//
#include "TensorInterop.h"

#include <c10/util/Exception.h>

#include <memory>

namespace turbine::torch_ext {

namespace {
struct DTypePair {
  c10::ScalarType torch;
  DType turbine;
};
constexpr DTypePair kDTypes[] = {
    {c10::ScalarType::Float, DType::f32},    {c10::ScalarType::Double, DType::f64},
    {c10::ScalarType::Half, DType::f16},     {c10::ScalarType::BFloat16, DType::bf16},
    {c10::ScalarType::Char, DType::i8},      {c10::ScalarType::Short, DType::i16},
    {c10::ScalarType::Int, DType::i32},      {c10::ScalarType::Long, DType::i64},
    {c10::ScalarType::Byte, DType::u8},      {c10::ScalarType::Bool, DType::i1},
};
} // namespace

DType toDType(c10::ScalarType type, const std::string &what) {
  for (const DTypePair &p : kDTypes)
    if (p.torch == type)
      return p.turbine;
  TORCH_CHECK(false, what, ": torch dtype ", c10::toString(type),
              " has no Turbine equivalent");
}

c10::ScalarType toScalarType(DType type, const std::string &what) {
  for (const DTypePair &p : kDTypes)
    if (p.turbine == type)
      return p.torch;
  TORCH_CHECK(false, what, ": Turbine dtype ", std::string(dtypeName(type)),
              " has no torch equivalent");
}

runtime::Tensor toRuntimeTensor(const at::Tensor &tensor, const std::string &what) {
  TORCH_CHECK(tensor.device().is_cpu(), what, ": expected a CPU tensor, got one on ",
              tensor.device().str());
  DType dtype = toDType(tensor.scalar_type(), what);
  // Keeps the (possibly new, contiguous) torch tensor alive with the view.
  auto holder = std::make_shared<at::Tensor>(tensor.contiguous());
  std::vector<int64_t> shape(holder->sizes().begin(), holder->sizes().end());
  void *data = holder->data_ptr();
  runtime::Result<runtime::Tensor> view = runtime::Tensor::wrap(
      dtype, std::move(shape), data, std::shared_ptr<const void>(holder, data));
  TORCH_CHECK(view.ok(), what, ": ", view.message());
  return std::move(*view);
}

at::Tensor toTorchTensor(const runtime::Tensor &tensor, const std::string &what) {
  c10::ScalarType type = toScalarType(tensor.dtype(), what);
  auto holder = new runtime::Tensor(tensor);
  std::vector<int64_t> shape = tensor.shape();
  return at::from_blob(
      holder->data(), shape, [holder](void *) { delete holder; },
      at::TensorOptions().dtype(type).device(at::kCPU));
}

} // namespace turbine::torch_ext
