//===- DType.h - Element types shared by the artifact and the runtime -----===//
//
// The element types a tensor crossing the compiler/runtime boundary can have,
// with their names (as IREE spells them: f32, i64, i1, ...) and byte sizes.
// `i1` (bool) is stored one byte per element. `string` (ONNX's string
// tensors) holds variable-length UTF-8 byte strings: in the runtime one
// std::string object per element, owned by the tensor. Strings live on the
// host only: no kernel binding, parameter or raw-byte copy ever holds them.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_ARTIFACT_DTYPE_H
#define TURBINE_ARTIFACT_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace turbine {

enum class DType : uint8_t {
  f16, bf16, f32, f64,
  i1, i8, i16, i32, i64,
  u8, u16, u32, u64,
  string,
};

/// Name as written in signatures and on the command line ("f32", "i1", ...).
std::string_view dtypeName(DType t);
/// Parses a name produced by dtypeName; nullopt for anything else.
std::optional<DType> parseDType(std::string_view name);
/// Bytes per element in memory (i1 is one byte; a string element is one
/// std::string object, whose bytes live elsewhere: never copy it bytewise).
size_t dtypeSize(DType t);
/// True for DType::string.
bool dtypeIsString(DType t);
bool dtypeIsFloat(DType t);
bool dtypeIsSigned(DType t);

} // namespace turbine

#endif // TURBINE_ARTIFACT_DTYPE_H
