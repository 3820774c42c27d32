//===- ParameterNames.cpp - Keep frontend parameter names through rewrites ===//
//
// See ParameterNames.h.
//===----------------------------------------------------------------------===//
#include "global-opt/ParameterNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

/// A key for a non-splat dense constant's element type and bytes (equal for
/// a reshaped copy), or nothing.
std::optional<llvm::hash_code> contentKey(arith::ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense || dense.isSplat())
    return std::nullopt;
  ArrayRef<char> raw = dense.getRawData();
  return llvm::hash_combine(dense.getElementType().getAsOpaquePointer(),
                            llvm::hash_combine_range(raw.begin(), raw.end()));
}

} // namespace

void deriveParameterName(Operation *source, Operation *derived,
                         llvm::StringRef suffix) {
  if (!source || !derived)
    return;
  if (auto name = source->getAttrOfType<StringAttr>(kParamNameAttr))
    derived->setAttr(kParamNameAttr,
                     StringAttr::get(derived->getContext(), name.getValue() + suffix));
}

ReshapedConstantNames::ReshapedConstantNames(ModuleOp module) {
  module.walk([&](arith::ConstantOp op) {
    auto name = op->getAttrOfType<StringAttr>(kParamNameAttr);
    if (!name)
      return;
    if (std::optional<llvm::hash_code> key = contentKey(op))
      namesByContent_.try_emplace(*key, name.str());
  });
}

void ReshapedConstantNames::restore(ModuleOp module) const {
  if (namesByContent_.empty())
    return;
  module.walk([&](arith::ConstantOp op) {
    if (op->hasAttr(kParamNameAttr))
      return;
    std::optional<llvm::hash_code> key = contentKey(op);
    auto it = key ? namesByContent_.find(*key) : namesByContent_.end();
    if (it == namesByContent_.end())
      return;
    std::string name = it->second + ".reshape(";
    auto type = cast<ShapedType>(op.getType());
    for (int64_t i = 0; i < type.getRank(); ++i)
      name += (i ? "," : "") + std::to_string(type.getDimSize(i));
    op->setAttr(kParamNameAttr, StringAttr::get(op->getContext(), name + ")"));
  });
}

} // namespace turbine::compiler
