//===- DType.cpp - Element type names and sizes ---------------------------===//
//
// The table behind dtypeName/parseDType/dtypeSize: one row per DType, so the
// artifact reader, the runtime and the tools agree on every spelling.
//===----------------------------------------------------------------------===//
#include "turbine/artifact/DType.h"

#include <string>

namespace turbine {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
  bool isFloat;
  bool isSigned;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::f16, "f16", 2, true, true},   {DType::bf16, "bf16", 2, true, true},
    {DType::f32, "f32", 4, true, true},   {DType::f64, "f64", 8, true, true},
    {DType::i1, "i1", 1, false, false},   {DType::i8, "i8", 1, false, true},
    {DType::i16, "i16", 2, false, true},  {DType::i32, "i32", 4, false, true},
    {DType::i64, "i64", 8, false, true},  {DType::u8, "u8", 1, false, false},
    {DType::u16, "u16", 2, false, false}, {DType::u32, "u32", 4, false, false},
    {DType::u64, "u64", 8, false, false},
    {DType::string, "string", sizeof(std::string), false, false},
};

const DTypeInfo *lookup(DType t) {
  for (const DTypeInfo &info : kDTypes)
    if (info.type == t)
      return &info;
  return nullptr;
}

} // namespace

std::string_view dtypeName(DType t) {
  const DTypeInfo *info = lookup(t);
  return info ? info->name : std::string_view("<invalid dtype>");
}

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (info.name == name)
      return info.type;
  return std::nullopt;
}

size_t dtypeSize(DType t) {
  const DTypeInfo *info = lookup(t);
  return info ? info->size : 0;
}

bool dtypeIsFloat(DType t) {
  const DTypeInfo *info = lookup(t);
  return info && info->isFloat;
}

bool dtypeIsString(DType t) { return t == DType::string; }

bool dtypeIsSigned(DType t) {
  const DTypeInfo *info = lookup(t);
  return info && info->isSigned;
}

} // namespace turbine
