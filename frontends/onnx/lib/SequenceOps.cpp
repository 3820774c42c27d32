//===- SequenceOps.cpp - ONNX sequence and optional ops -------------------===//
//
// A sequence is an import-time list of tensor values (ImportContext::
// setSequence): SequenceConstruct/Empty/Insert/Erase/At/Length,
// SplitToSequence and ConcatFromSequence edit or read that list, so the
// length of every sequence is known at import time. A position known at
// import time picks an element directly; a run-time position (a graph
// input) selects among the candidates elementwise, which needs them all to
// have the same type (else an error naming the node). An out-of-range
// run-time position is not diagnosed: it selects the last candidate.
// Optionals are "none or a value" (Optional, OptionalHasElement,
// OptionalGetElement).
//===----------------------------------------------------------------------===//
#include "ComposedOps.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

/// Input `i` as a sequence; unless `lengthOnly`, its elements must be known.
FailureOr<const SequenceValue *> sequenceInput(ImportContext &ctx, const onnx::NodeProto &node,
                                               int i, bool lengthOnly = false) {
  if (!ImportContext::hasInput(node, i))
    return ctx.fail(node, "expects a sequence as input " + std::to_string(i));
  const SequenceValue *seq = ctx.lookupSequence(node.input(i));
  if (!seq)
    return ctx.fail(node, "input '" + node.input(i) + "' is not a sequence");
  if (!lengthOnly && failed(requireElements(ctx, node, node.input(i), *seq)))
    return failure();
  return seq;
}

/// Normalizes an import-time position against `length` (ONNX allows
/// [-length, length - 1], or up to `length` for insertion).
FailureOr<int64_t> normalizePosition(ImportContext &ctx, const onnx::NodeProto &node,
                                     int64_t position, int64_t length, bool insertion) {
  int64_t upper = insertion ? length : length - 1;
  if (position < -length || position > upper)
    return ctx.fail(node, "position " + std::to_string(position) +
                              " is out of range for a sequence of length " +
                              std::to_string(length));
  return position < 0 ? position + length : position;
}

LogicalResult convertSequenceEmpty(ImportContext &ctx, const onnx::NodeProto &node) {
  SequenceValue seq;
  seq.onnxElementType = static_cast<int>(ctx.intAttr(node, "dtype", onnx::TensorProto::FLOAT));
  ctx.setSequence(node.output(0), seq);
  return success();
}

LogicalResult convertSequenceConstruct(ImportContext &ctx, const onnx::NodeProto &node) {
  SequenceValue seq;
  for (const std::string &in : node.input()) {
    auto v = ctx.getTensor(node, in);
    if (failed(v))
      return failure();
    seq.elements.push_back(*v);
    if (auto t = ctx.onnxType(in))
      seq.onnxElementType = *t;
  }
  ctx.setSequence(node.output(0), seq);
  return success();
}

LogicalResult convertSequenceLength(ImportContext &ctx, const onnx::NodeProto &node) {
  auto seq = sequenceInput(ctx, node, 0, /*lengthOnly=*/true);
  if (failed(seq))
    return failure();
  ctx.setConstant(node.output(0), i64Constant(ctx, {(*seq)->length()}, true));
  return success();
}

LogicalResult convertSequenceAt(ImportContext &ctx, const onnx::NodeProto &node) {
  auto seq = sequenceInput(ctx, node, 0);
  if (failed(seq))
    return failure();
  const std::vector<Value> &elements = (*seq)->elements;
  int64_t length = static_cast<int64_t>(elements.size());
  if (length == 0)
    return ctx.fail(node, "SequenceAt on an empty sequence");
  if (auto position = importTimeScalar(ctx, node.input(1))) {
    auto k = normalizePosition(ctx, node, *position, length, false);
    if (failed(k))
      return failure();
    ctx.setValue(node.output(0), elements[*k]);
    return success();
  }
  auto position = scalarTensor(ctx, node, node.input(1));
  if (failed(position))
    return failure();
  Value result = elements.back();
  for (int64_t k = length - 2; k >= 0; --k) {
    auto isK = positionTest(ctx, node, *position, length, k);
    if (failed(isK))
      return failure();
    auto selected = selectByCondition(ctx, node, *isK, elements[k], result,
                                      "the element at run-time position '" + node.input(1) + "'");
    if (failed(selected))
      return failure();
    result = *selected;
  }
  ctx.setValue(node.output(0), result);
  return success();
}

LogicalResult convertSequenceInsert(ImportContext &ctx, const onnx::NodeProto &node) {
  auto seq = sequenceInput(ctx, node, 0);
  if (failed(seq))
    return failure();
  auto tensor = ctx.getTensor(node, node.input(1));
  if (failed(tensor))
    return failure();
  SequenceValue result = **seq;
  if (auto t = ctx.onnxType(node.input(1)))
    result.onnxElementType = *t;
  int64_t length = static_cast<int64_t>(result.elements.size());
  std::optional<int64_t> position =
      ImportContext::hasInput(node, 2) ? importTimeScalar(ctx, node.input(2)) : length;
  if (position) {
    auto k = normalizePosition(ctx, node, *position, length, true);
    if (failed(k))
      return failure();
    result.elements.insert(result.elements.begin() + *k, *tensor);
    ctx.setSequence(node.output(0), result);
    return success();
  }
  // Run-time position p: element j is s[j] for j < p, the tensor at p and
  // s[j - 1] after it.
  auto p = scalarTensor(ctx, node, node.input(2));
  if (failed(p))
    return failure();
  const std::string what = "the sequence element at run-time insert position '" +
                           node.input(2) + "'";
  const std::vector<Value> &old = (**seq).elements;
  std::vector<Value> elements;
  for (int64_t j = 0; j <= length; ++j) {
    if (length == 0) {
      elements.push_back(*tensor);
      break;
    }
    // Without the insertion at j: s[j] when p > j, else s[j - 1].
    Value base = j == 0 ? old[0] : old[j - 1];
    if (j > 0 && j < length) {
      auto before = positionTest(ctx, node, *p, length, j, /*greater=*/true);
      if (failed(before))
        return failure();
      auto shifted = selectByCondition(ctx, node, *before, old[j], old[j - 1], what);
      if (failed(shifted))
        return failure();
      base = *shifted;
    }
    auto isJ = positionTest(ctx, node, *p, length, j);
    if (failed(isJ))
      return failure();
    auto chosen = selectByCondition(ctx, node, *isJ, *tensor, base, what);
    if (failed(chosen))
      return failure();
    elements.push_back(*chosen);
  }
  result.elements = elements;
  ctx.setSequence(node.output(0), result);
  return success();
}

LogicalResult convertSequenceErase(ImportContext &ctx, const onnx::NodeProto &node) {
  auto seq = sequenceInput(ctx, node, 0);
  if (failed(seq))
    return failure();
  SequenceValue result = **seq;
  int64_t length = static_cast<int64_t>(result.elements.size());
  if (length == 0)
    return ctx.fail(node, "SequenceErase on an empty sequence");
  std::optional<int64_t> position =
      ImportContext::hasInput(node, 1) ? importTimeScalar(ctx, node.input(1)) : -1;
  if (position) {
    auto k = normalizePosition(ctx, node, *position, length, false);
    if (failed(k))
      return failure();
    result.elements.erase(result.elements.begin() + *k);
    ctx.setSequence(node.output(0), result);
    return success();
  }
  // Run-time position p: element j is s[j] for j < p, else s[j + 1].
  auto p = scalarTensor(ctx, node, node.input(1));
  if (failed(p))
    return failure();
  std::vector<Value> elements;
  for (int64_t j = 0; j + 1 < length; ++j) {
    auto keeps = positionTest(ctx, node, *p, length, j, /*greater=*/true);
    if (failed(keeps))
      return failure();
    auto chosen = selectByCondition(ctx, node, *keeps, (**seq).elements[j],
                                    (**seq).elements[j + 1],
                                    "the sequence element after run-time erase position '" +
                                        node.input(1) + "'");
    if (failed(chosen))
      return failure();
    elements.push_back(*chosen);
  }
  result.elements = elements;
  ctx.setSequence(node.output(0), result);
  return success();
}

LogicalResult convertSplitToSequence(ImportContext &ctx, const onnx::NodeProto &node) {
  auto input = ctx.getTensor(node, node.input(0));
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", 0), type.getRank());
  if (!axis)
    return ctx.fail(node, "axis is out of range");
  bool keepDims = ctx.intAttr(node, "keepdims", 1) != 0;
  std::optional<int64_t> dimSize;
  if (!type.isDynamicDim(*axis))
    dimSize = type.getDimSize(*axis);
  std::vector<int64_t> lengths;
  bool hasSplit = ImportContext::hasInput(node, 1);
  if (hasSplit) {
    auto split = ctx.getShapeTensor(node.input(1));
    if (auto constant = ctx.getConstant(node.input(1));
        !split && constant && constant->getElementType().isInteger() &&
        constant->getType().getRank() == 1) {
      split = ShapeTensor{};
      split->elementType = constant->getElementType();
      for (const APInt &v : constant->getValues<APInt>())
        split->elements.push_back(SymDim::of(v.getSExtValue()));
    }
    if (!split || llvm::any_of(split->elements, [](const SymDim &d) { return !d.isConstant(); })) {
      // Run-time sizes: a 1-D split of static length still fixes the number
      // of pieces, which is all SequenceLength needs.
      Value splitValue = ctx.lookupValue(node.input(1));
      auto splitType = splitValue ? dyn_cast<RankedTensorType>(splitValue.getType())
                                  : RankedTensorType();
      if (!splitType || splitType.getRank() != 1 || splitType.isDynamicDim(0))
        return ctx.unsupported(node, "input 'split' ('" + node.input(1) +
                                         "') is run-time data; the number of pieces must be "
                                         "known at import time");
      SequenceValue seq;
      seq.onnxElementType = ctx.onnxType(node.input(0)).value_or(0);
      seq.elementsUnavailable = "their sizes come from run-time input 'split' ('" +
                                node.input(1) + "') of SplitToSequence node '" + node.name() +
                                "'";
      seq.knownLength = splitType.getDimSize(0);
      ctx.setSequence(node.output(0), seq);
      return success();
    }
    if (split->isScalar) {
      int64_t chunk = split->elements[0].constant;
      if (!dimSize)
        return ctx.unsupported(node, "the split axis has a dynamic size");
      if (chunk <= 0)
        return ctx.fail(node, "split must be positive");
      for (int64_t start = 0; start < *dimSize; start += chunk)
        lengths.push_back(std::min(chunk, *dimSize - start));
    } else {
      for (const SymDim &d : split->elements)
        lengths.push_back(d.constant);
    }
  } else {
    if (!dimSize)
      return ctx.unsupported(node, "the split axis has a dynamic size, so the number of "
                                   "pieces is not known at import time");
    lengths.assign(static_cast<size_t>(*dimSize), 1);
  }
  SequenceValue seq;
  if (auto t = ctx.onnxType(node.input(0)))
    seq.onnxElementType = *t;
  std::string data = bindTemporary(ctx, *input);
  std::string axes = bindTemporary(ctx, i64Constant(ctx, {*axis}));
  int64_t start = 0;
  for (int64_t length : lengths) {
    if (!hasSplit && !keepDims) {
      auto piece = sliceAt(ctx, node, *input, start, *axis);
      if (failed(piece))
        return failure();
      seq.elements.push_back(*piece);
    } else {
      std::string starts = bindTemporary(ctx, i64Constant(ctx, {start}));
      std::string ends = bindTemporary(ctx, i64Constant(ctx, {start + length}));
      auto out = callOpHandler(ctx, node, "Slice", {data, starts, ends, axes});
      if (failed(out))
        return failure();
      auto piece = ctx.getTensor(node, *out);
      if (failed(piece))
        return failure();
      seq.elements.push_back(*piece);
    }
    start += length;
  }
  ctx.setSequence(node.output(0), seq);
  return success();
}

LogicalResult convertConcatFromSequence(ImportContext &ctx, const onnx::NodeProto &node) {
  auto seq = sequenceInput(ctx, node, 0);
  if (failed(seq))
    return failure();
  if ((*seq)->elements.empty())
    return ctx.fail(node, "ConcatFromSequence of an empty sequence");
  auto first = cast<RankedTensorType>((*seq)->elements.front().getType());
  bool newAxis = ctx.intAttr(node, "new_axis", 0) != 0;
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", 0), first.getRank() + (newAxis ? 1 : 0));
  if (!axis)
    return ctx.fail(node, "axis is out of range");
  auto result = newAxis ? stack(ctx, node, (*seq)->elements, *axis)
                        : concatenate(ctx, node, (*seq)->elements, *axis);
  if (failed(result))
    return failure();
  ctx.setValue(node.output(0), *result);
  return success();
}

LogicalResult convertOptional(ImportContext &ctx, const onnx::NodeProto &node) {
  OptionalValue optional;
  if (ImportContext::hasInput(node, 0)) {
    const std::string &in = node.input(0);
    optional.hasElement = true;
    if (const SequenceValue *seq = ctx.lookupSequence(in)) {
      optional.isSequence = true;
      optional.sequence = *seq;
      optional.onnxElementType = seq->onnxElementType;
    } else {
      auto v = ctx.getTensor(node, in);
      if (failed(v))
        return failure();
      optional.tensor = *v;
      optional.onnxElementType = ctx.onnxType(in).value_or(0);
    }
  } else if (const onnx::AttributeProto *type = ctx.attr(node, "type")) {
    const onnx::TypeProto &tp = type->tp();
    optional.isSequence = tp.has_sequence_type();
    if (tp.has_tensor_type())
      optional.onnxElementType = tp.tensor_type().elem_type();
    else if (tp.has_sequence_type() && tp.sequence_type().elem_type().has_tensor_type())
      optional.onnxElementType = tp.sequence_type().elem_type().tensor_type().elem_type();
  }
  ctx.setOptional(node.output(0), optional);
  return success();
}

LogicalResult convertOptionalHasElement(ImportContext &ctx, const onnx::NodeProto &node) {
  bool has = false;
  if (ImportContext::hasInput(node, 0)) {
    const OptionalValue *optional = ctx.lookupOptional(node.input(0));
    has = optional ? optional->hasElement : true; // opset 18: a tensor or sequence
  }
  ctx.setConstant(node.output(0), boolConstant(ctx, has));
  return success();
}

LogicalResult convertOptionalGetElement(ImportContext &ctx, const onnx::NodeProto &node) {
  const OptionalValue *optional = ctx.lookupOptional(node.input(0));
  if (!optional) { // opset 18: a tensor or sequence is returned as is
    ctx.bind(node.output(0), ctx.capture(node.input(0)));
    return success();
  }
  if (!optional->hasElement)
    return ctx.fail(node, "input '" + node.input(0) + "' is an empty optional");
  if (optional->isSequence) {
    ctx.setSequence(node.output(0), optional->sequence);
  } else {
    ctx.setValue(node.output(0), optional->tensor);
    if (optional->onnxElementType)
      ctx.setOnnxType(node.output(0), optional->onnxElementType);
  }
  return success();
}

} // namespace

void registerSequenceOps(OpRegistry &r) {
  r.add("SequenceEmpty", convertSequenceEmpty, 11);
  r.add("SequenceConstruct", convertSequenceConstruct, 11);
  r.add("SequenceLength", convertSequenceLength, 11);
  r.add("SequenceAt", convertSequenceAt, 11);
  r.add("SequenceInsert", convertSequenceInsert, 11);
  r.add("SequenceErase", convertSequenceErase, 11);
  r.add("SplitToSequence", convertSplitToSequence, 11);
  r.add("ConcatFromSequence", convertConcatFromSequence, 11);
  r.add("Optional", convertOptional, 15);
  r.add("OptionalHasElement", convertOptionalHasElement, 15);
  r.add("OptionalGetElement", convertOptionalGetElement, 15);
}

} // namespace turbine::onnx_frontend
