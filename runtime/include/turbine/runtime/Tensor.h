//===- Tensor.h - A dense host tensor: dtype, shape, shared storage -------===//
//
// A Tensor is a cheap-to-copy view: an element type, a row-major shape and a
// pointer into reference-counted storage. Storage is either owned by the
// runtime (64-byte aligned, freed with the last view) or wraps memory the
// caller owns (no copy). Views made by reshape() share storage with their
// source; clone() makes an owning deep copy.
//
// String tensors (DType::string, ONNX's tensor(string)) hold one std::string
// (UTF-8 bytes) per element in runtime-owned storage: allocate() makes empty
// strings, fromStrings() takes values, dataAs<std::string>() reads and writes
// them. They cannot wrap caller memory or be built from raw bytes.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_TENSOR_H
#define TURBINE_RUNTIME_TENSOR_H

#include "turbine/artifact/DType.h"
#include "turbine/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace turbine::runtime {

using turbine::DType;

/// Alignment of every buffer the runtime allocates.
inline constexpr size_t kTensorAlignment = 64;

/// Number of elements of `shape`, or an error for negative dims or overflow.
Result<int64_t> elementCountOf(const std::vector<int64_t> &shape);
/// "4x3xf32"; a scalar prints as "f32".
std::string formatTensorType(DType dtype, const std::vector<int64_t> &shape);

/// A dense row-major host tensor backed by shared storage.
class Tensor {
public:
  /// An empty f32 scalar tensor with no storage (isValid() is false).
  Tensor() = default;

  /// Allocates uninitialized, 64-byte aligned, runtime-owned storage (for
  /// DType::string: empty strings).
  static Result<Tensor> allocate(DType dtype, std::vector<int64_t> shape);
  /// Allocates zero-filled storage.
  static Result<Tensor> zeros(DType dtype, std::vector<int64_t> shape);
  /// A string tensor holding `values` (row-major; the count must match).
  static Result<Tensor> fromStrings(std::vector<int64_t> shape,
                                    std::vector<std::string> values);
  /// Wraps caller memory without copying (not for DType::string). `keepAlive` (optional) is held as
  /// long as any view exists; without it the caller must keep `data` alive.
  static Result<Tensor> wrap(DType dtype, std::vector<int64_t> shape,
                             void *data,
                             std::shared_ptr<const void> keepAlive = nullptr,
                             bool readOnly = false);
  /// Allocates a tensor and copies `byteCount` bytes into it (must equal the
  /// tensor's byte size; not for DType::string).
  static Result<Tensor> fromBytes(DType dtype, std::vector<int64_t> shape,
                                  const void *bytes, size_t byteCount);

  bool isValid() const { return storage_ != nullptr || byteSize() == 0; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t elementCount() const { return elementCount_; }
  size_t byteSize() const {
    return static_cast<size_t>(elementCount_) * dtypeSize(dtype_);
  }
  /// True for views of constant data (artifact parameters).
  bool isReadOnly() const { return readOnly_; }

  void *data() { return data_; }
  const void *data() const { return data_; }
  template <typename T> T *dataAs() { return static_cast<T *>(data_); }
  template <typename T> const T *dataAs() const {
    return static_cast<const T *>(data_);
  }

  /// The same bytes viewed with another shape (element counts must match).
  Result<Tensor> reshape(std::vector<int64_t> shape) const;
  /// A deep copy into fresh, writable, runtime-owned storage.
  Result<Tensor> clone() const;
  /// True if both views keep the same storage alive.
  bool sharesStorageWith(const Tensor &other) const;
  /// "4x3xf32".
  std::string typeString() const { return formatTensorType(dtype_, shape_); }

private:
  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  int64_t elementCount_ = 1;
  void *data_ = nullptr;
  std::shared_ptr<const void> storage_;
  bool readOnly_ = false;
};

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_TENSOR_H
