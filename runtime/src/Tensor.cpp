//===- Tensor.cpp - Host tensor storage and views -------------------------===//
//
// Aligned allocation, wrapping of external memory, reshape views and deep
// copies. Storage lifetime is a shared_ptr<const void>; views compare storage
// by owner so aliasing can be detected.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Tensor.h"

#include "HostMemory.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace turbine::runtime {

Result<int64_t> elementCountOf(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d < 0) {
      std::string text;
      for (int64_t e : shape)
        text += (text.empty() ? "" : ", ") + std::to_string(e);
      return Status::error("invalid shape [" + text + "]: dim " +
                           std::to_string(i) + " is negative");
    }
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return Status::error("shape is too large (element count overflows)");
    count *= d;
  }
  return count;
}

std::string formatTensorType(DType dtype, const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t d : shape)
    text += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return text + std::string(dtypeName(dtype));
}

namespace {

/// Checks that `count` elements of `dtype` fit in memory limits.
Status checkByteSize(DType dtype, int64_t count) {
  if (count > static_cast<int64_t>(std::numeric_limits<int64_t>::max() /
                                   static_cast<int64_t>(dtypeSize(dtype))))
    return Status::error("tensor is too large (byte size overflows)");
  return Status::success();
}

} // namespace

Result<Tensor> Tensor::allocate(DType dtype, std::vector<int64_t> shape) {
  Result<int64_t> count = elementCountOf(shape);
  if (!count)
    return count.status();
  if (Status s = checkByteSize(dtype, *count); !s)
    return s;
  if (dtypeIsString(dtype)) {
    // The std::string objects are counted; the characters they hold later
    // are the caller's business.
    size_t objectBytes = static_cast<size_t>(*count) * sizeof(std::string);
    if (Status s = detail::reserveMemory(objectBytes, "a " + formatTensorType(dtype, shape) +
                                                          " tensor");
        !s)
      return s;
    std::string *strings = new (std::nothrow) std::string[static_cast<size_t>(*count)];
    if (!strings) {
      detail::releaseMemory(objectBytes);
      return Status::error("out of memory allocating a " +
                           formatTensorType(dtype, shape) + " tensor");
    }
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.elementCount_ = *count;
    t.data_ = strings;
    t.storage_ = std::shared_ptr<const void>(strings, [objectBytes](const void *p) {
      delete[] static_cast<std::string *>(const_cast<void *>(p));
      detail::releaseMemory(objectBytes);
    });
    return t;
  }
  size_t bytes = static_cast<size_t>(*count) * dtypeSize(dtype);
  size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (rounded == 0)
    rounded = kTensorAlignment;
  Result<void *> data =
      detail::allocateAligned(rounded, "a " + formatTensorType(dtype, shape) + " tensor");
  if (!data)
    return data.status();
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.elementCount_ = *count;
  t.data_ = *data;
  t.storage_ = std::shared_ptr<const void>(*data, [rounded](const void *p) {
    detail::freeAligned(const_cast<void *>(p), rounded);
  });
  return t;
}

Result<Tensor> Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  Result<Tensor> t = allocate(dtype, std::move(shape));
  if (t && !dtypeIsString(dtype)) // strings start empty
    std::memset(t->data(), 0, t->byteSize());
  return t;
}

Result<Tensor> Tensor::fromStrings(std::vector<int64_t> shape,
                                   std::vector<std::string> values) {
  Result<Tensor> t = allocate(DType::string, std::move(shape));
  if (!t)
    return t;
  if (static_cast<int64_t>(values.size()) != t->elementCount())
    return Status::error(t->typeString() + " needs " +
                         std::to_string(t->elementCount()) + " strings, got " +
                         std::to_string(values.size()));
  std::string *out = t->dataAs<std::string>();
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = std::move(values[i]);
  return t;
}

Result<Tensor> Tensor::wrap(DType dtype, std::vector<int64_t> shape, void *data,
                            std::shared_ptr<const void> keepAlive,
                            bool readOnly) {
  Result<int64_t> count = elementCountOf(shape);
  if (!count)
    return count.status();
  if (Status s = checkByteSize(dtype, *count); !s)
    return s;
  if (dtypeIsString(dtype))
    return Status::error("cannot wrap memory as a string tensor (string "
                         "tensors own their elements; use Tensor::fromStrings)");
  if (!data && *count != 0)
    return Status::error("cannot wrap a null pointer as a " +
                         formatTensorType(dtype, shape) + " tensor");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.elementCount_ = *count;
  t.data_ = data;
  // Without a keep-alive, use a non-owning handle so views still compare equal.
  t.storage_ = keepAlive ? std::move(keepAlive)
                         : std::shared_ptr<const void>(data, [](const void *) {});
  t.readOnly_ = readOnly;
  return t;
}

Result<Tensor> Tensor::fromBytes(DType dtype, std::vector<int64_t> shape,
                                 const void *bytes, size_t byteCount) {
  if (dtypeIsString(dtype))
    return Status::error("a string tensor cannot be made from raw bytes "
                         "(use Tensor::fromStrings)");
  Result<Tensor> t = allocate(dtype, std::move(shape));
  if (!t)
    return t;
  if (byteCount != t->byteSize())
    return Status::error("expected " + std::to_string(t->byteSize()) +
                         " bytes for " + t->typeString() + ", got " +
                         std::to_string(byteCount));
  if (byteCount)
    std::memcpy(t->data(), bytes, byteCount);
  return t;
}

Result<Tensor> Tensor::reshape(std::vector<int64_t> shape) const {
  Result<int64_t> count = elementCountOf(shape);
  if (!count)
    return count.status();
  if (*count != elementCount_)
    return Status::error("cannot reshape " + typeString() + " (" +
                         std::to_string(elementCount_) + " elements) to " +
                         formatTensorType(dtype_, shape) + " (" +
                         std::to_string(*count) + " elements)");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Result<Tensor> Tensor::clone() const {
  if (dtypeIsString(dtype_)) {
    const std::string *in = dataAs<std::string>();
    return fromStrings(shape_, std::vector<std::string>(in, in + elementCount_));
  }
  return fromBytes(dtype_, shape_, data_, byteSize());
}

bool Tensor::sharesStorageWith(const Tensor &other) const {
  if (!storage_ || !other.storage_)
    return false;
  return !storage_.owner_before(other.storage_) &&
         !other.storage_.owner_before(storage_);
}

} // namespace turbine::runtime
