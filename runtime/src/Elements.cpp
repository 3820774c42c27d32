//===- Elements.cpp - Reading and writing single elements of any dtype ---===//
//
// One switch over DType per direction, used by text parsing and printing,
// .npy conversion and result comparison.
//===----------------------------------------------------------------------===//
#include "Elements.h"

#include "Float16.h"
#include "turbine/runtime/TensorFormat.h"

namespace turbine::runtime {

namespace {
template <typename T> T load(const Tensor &t, int64_t i) {
  T value;
  std::memcpy(&value, t.dataAs<char>() + i * sizeof(T), sizeof(T));
  return value;
}
template <typename T> void store(Tensor &t, int64_t i, T value) {
  std::memcpy(t.dataAs<char>() + i * sizeof(T), &value, sizeof(T));
}
} // namespace

double elementAsDouble(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::f16: return detail::halfToFloat(load<uint16_t>(t, i));
  case DType::bf16: return detail::bf16ToFloat(load<uint16_t>(t, i));
  case DType::f32: return load<float>(t, i);
  case DType::f64: return load<double>(t, i);
  case DType::i1: return load<uint8_t>(t, i) != 0;
  case DType::i8: return load<int8_t>(t, i);
  case DType::i16: return load<int16_t>(t, i);
  case DType::i32: return load<int32_t>(t, i);
  case DType::i64: return static_cast<double>(load<int64_t>(t, i));
  case DType::u8: return load<uint8_t>(t, i);
  case DType::u16: return load<uint16_t>(t, i);
  case DType::u32: return load<uint32_t>(t, i);
  case DType::u64: return static_cast<double>(load<uint64_t>(t, i));
  case DType::string: return 0; // not a number: callers check the dtype
  }
  return 0;
}

int64_t elementAsInt(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::f16:
  case DType::bf16:
  case DType::f32:
  case DType::f64: return static_cast<int64_t>(elementAsDouble(t, i));
  case DType::i1: return load<uint8_t>(t, i) != 0;
  case DType::i8: return load<int8_t>(t, i);
  case DType::i16: return load<int16_t>(t, i);
  case DType::i32: return load<int32_t>(t, i);
  case DType::i64: return load<int64_t>(t, i);
  case DType::u8: return load<uint8_t>(t, i);
  case DType::u16: return load<uint16_t>(t, i);
  case DType::u32: return load<uint32_t>(t, i);
  case DType::u64: return static_cast<int64_t>(load<uint64_t>(t, i));
  case DType::string: return 0; // not a number: callers check the dtype
  }
  return 0;
}

namespace detail {

void storeFloatElement(Tensor &t, int64_t i, double v) {
  switch (t.dtype()) {
  case DType::f16: store(t, i, floatToHalf(static_cast<float>(v))); return;
  case DType::bf16: store(t, i, floatToBf16(static_cast<float>(v))); return;
  case DType::f32: store(t, i, static_cast<float>(v)); return;
  case DType::f64: store(t, i, v); return;
  default: storeIntElement(t, i, static_cast<int64_t>(v)); return;
  }
}

void storeIntElement(Tensor &t, int64_t i, int64_t v) {
  switch (t.dtype()) {
  case DType::f16:
  case DType::bf16:
  case DType::f32:
  case DType::f64: storeFloatElement(t, i, static_cast<double>(v)); return;
  case DType::i1: store(t, i, static_cast<uint8_t>(v != 0)); return;
  case DType::i8: store(t, i, static_cast<int8_t>(v)); return;
  case DType::i16: store(t, i, static_cast<int16_t>(v)); return;
  case DType::i32: store(t, i, static_cast<int32_t>(v)); return;
  case DType::i64: store(t, i, v); return;
  case DType::u8: store(t, i, static_cast<uint8_t>(v)); return;
  case DType::u16: store(t, i, static_cast<uint16_t>(v)); return;
  case DType::u32: store(t, i, static_cast<uint32_t>(v)); return;
  case DType::u64: store(t, i, static_cast<uint64_t>(v)); return;
  case DType::string: return; // not a number: callers check the dtype
  }
}

} // namespace detail
} // namespace turbine::runtime
