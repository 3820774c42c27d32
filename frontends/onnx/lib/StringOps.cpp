//===- StringOps.cpp - ONNX string tensors -> the turbine host string ops -===//
//
// ONNX tensor(string) values become tensors of !turbine.string (the turbine
// dialect's element type; upstream MLIR has none). They never enter a
// kernel: StringNormalizer becomes turbine.string_normalize, Cast and
// CastLike to or from STRING become turbine.to_string / turbine.from_string,
// all run by the host program (the runtime's StringOps). Identity forwards
// them. Any other op given a string tensor is refused up front
// (checkStringOperands), naming the op, node, opset and input, instead of
// building kernels on strings. String constants (initializers, Constant)
// are refused in convertTensorProto.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

using namespace mlir;

namespace turbine::onnx_frontend {

bool isStringElementType(Type type) { return isa<compiler::StringType>(type); }

Type convertValueElementType(MLIRContext &context, int onnxType) {
  if (onnxType == onnx::TensorProto::STRING)
    return compiler::StringType::get(&context);
  return convertElementType(context, onnxType);
}

namespace {

bool holdsStrings(Value v) {
  auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
  return type && isStringElementType(type.getElementType());
}

/// Ops that take string tensors: their handlers emit the host string ops.
bool takesStrings(const std::string &opType) {
  return opType == "StringNormalizer" || opType == "Cast" || opType == "CastLike" ||
         opType == "Identity";
}

LogicalResult convertStringNormalizer(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (!isStringElementType(type.getElementType()))
    return ctx.fail(node, "input X must be a string tensor");
  // A dynamic leading dim of a 2-D input is checked to be 1 at run time.
  if (!(type.getRank() == 1 ||
        (type.getRank() == 2 && (type.getDimSize(0) == 1 || type.isDynamicDim(0)))))
    return ctx.fail(node, "input X must be [C] or [1, C] (ONNX allows no other shape)");
  std::string action = ctx.stringAttr(node, "case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return ctx.fail(node, "case_change_action must be NONE, LOWER or UPPER, got '" + action + "'");
  SmallVector<StringRef> stopwords;
  if (const onnx::AttributeProto *a = ctx.attr(node, "stopwords"))
    for (const std::string &word : a->strings())
      stopwords.push_back(word);
  bool caseSensitive = ctx.intAttr(node, "is_case_sensitive", 0) != 0;
  std::string locale = ctx.stringAttr(node, "locale", "");
  // The result's last dim counts the words kept: known only when nothing can
  // be removed (no stopwords, C > 0).
  SmallVector<int64_t> shape(type.getShape());
  if (shape.size() == 2)
    shape[0] = 1;
  int64_t c = shape.back();
  if (!stopwords.empty() || c == 0)
    shape.back() = ShapedType::kDynamic;
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  OpBuilder &b = ctx.builder;
  Value result = compiler::StringNormalizeOp::create(
      b, ctx.loc, resultType, *x, b.getStringAttr(action), b.getBoolAttr(caseSensitive),
      b.getStrArrayAttr(stopwords), b.getStringAttr(locale));
  ctx.setValue(node.output(0), result);
  ctx.setOnnxType(node.output(0), onnx::TensorProto::STRING);
  return success();
}

} // namespace

LogicalResult checkStringOperands(ImportContext &ctx, const onnx::NodeProto &node) {
  if (takesStrings(node.op_type()))
    return success();
  for (const std::string &in : node.input()) {
    if (in.empty())
      continue;
    bool strings = holdsStrings(ctx.lookupValue(in)) ||
                   ctx.onnxType(in) == std::optional<int>(onnx::TensorProto::STRING);
    if (const SequenceValue *sequence = ctx.lookupSequence(in))
      for (Value element : sequence->elements)
        strings |= holdsStrings(element);
    if (const OptionalValue *optional = ctx.lookupOptional(in))
      strings |= holdsStrings(optional->tensor);
    if (strings)
      return ctx.unsupported(node, "input '" + in + "' holds strings, which only StringNormalizer, "
                                   "Cast, CastLike and Identity take (string tensors run on the "
                                   "host, never in kernels)");
  }
  return success();
}

LogicalResult convertStringCast(ImportContext &ctx, const onnx::NodeProto &node, Value input,
                                int targetOnnxType) {
  OpBuilder &b = ctx.builder;
  auto type = cast<RankedTensorType>(input.getType());
  bool fromString = isStringElementType(type.getElementType());
  bool toString = targetOnnxType == onnx::TensorProto::STRING;
  Value result;
  if (fromString && toString) {
    result = input;
  } else if (toString) {
    auto op = compiler::ToStringOp::create(
        b, ctx.loc, RankedTensorType::get(type.getShape(), compiler::StringType::get(&ctx.context)),
        input);
    if (ctx.isUnsigned(node.input(0)))
      op.setIsUnsigned(true);
    result = op;
  } else {
    Type target = convertElementType(ctx.context, targetOnnxType);
    if (!target)
      return ctx.unsupported(node, "target type " + std::to_string(targetOnnxType) +
                                       " is not supported");
    auto op = compiler::FromStringOp::create(b, ctx.loc,
                                             RankedTensorType::get(type.getShape(), target), input);
    if (ImportContext::isUnsignedOnnxType(targetOnnxType))
      op.setIsUnsigned(true);
    result = op;
  }
  ctx.setValue(node.output(0), result);
  ctx.setOnnxType(node.output(0), targetOnnxType);
  return success();
}

void registerStringOps(OpRegistry &r) { r.add("StringNormalizer", convertStringNormalizer, 10); }

} // namespace turbine::onnx_frontend
