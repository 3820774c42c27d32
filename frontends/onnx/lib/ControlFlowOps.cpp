//===- ControlFlowOps.cpp - ONNX If, Loop, Scan and SequenceMap -----------===//
//
// Subgraphs are imported inline (importGraphNodes) into the entry function;
// ONNX subgraphs have no side effects, so this is exact:
// - If: a condition known at import time imports the chosen branch only; a
//   run-time condition imports both and selects each output elementwise,
//   which needs both branches to produce the same types (else an error).
// - Loop: unrolled while the trip count and the condition are known at
//   import time (constants, or computed from import-time values in the
//   body); loop-carried values keep their import-time form between copies
//   (a constant stays a constant), scan outputs are stacked on a new axis 0.
//   A run-time condition with an import-time trip count (and no scan
//   outputs) keeps unrolling up to the trip count and updates the carried
//   values only while the condition holds (elementwise selects).
// - Loop with a run-time trip count, a run-time condition and no trip count
//   or with scan outputs (known up front, or found while unrolling: what was
//   unrolled is dropped), or more than kMaxUnrolledIterations iterations: an
//   scf.while in the host function (convertLoopAtRunTime), which the host
//   program runs with its loop opcodes. Its loop-carried values must keep
//   their types; sequences and optionals cannot be carried (errors).
// - Scan (opset 8 with its batch axis, 9+): unrolled over the static length
//   of the scan axis.
// - SequenceMap: the body once per element of the (import-time) sequence.
// At most kMaxUnrolledIterations copies of a body are made, and at most
// kMaxTotalUnrolledCopies for the whole model (nested loops multiply):
// beyond that a Loop becomes a host loop, and Scan / SequenceMap an error.
//===----------------------------------------------------------------------===//
#include "ComposedOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <memory>
#include <set>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

FailureOr<const onnx::GraphProto *> graphAttr(ImportContext &ctx, const onnx::NodeProto &node,
                                              const std::string &name) {
  const onnx::AttributeProto *attr = ctx.attr(node, name);
  if (!attr || !attr->has_g())
    return ctx.fail(node, "has no subgraph attribute '" + name + "'");
  return &attr->g();
}

/// Imports `body` (its initializers, then its nodes) and captures its outputs.
FailureOr<std::vector<ValueBinding>> runBody(ImportContext &ctx, const onnx::NodeProto &node,
                                             const onnx::GraphProto &body) {
  Location outerLoc = ctx.loc;
  for (const onnx::TensorProto &init : body.initializer()) {
    std::string error;
    auto attr = convertTensorProto(ctx.context, init, error);
    if (failed(attr))
      return ctx.fail(node, "subgraph initializer: " + error);
    ctx.setConstant(init.name(), *attr);
    ctx.setOnnxType(init.name(), init.data_type());
  }
  if (failed(importGraphNodes(ctx, body)))
    return failure();
  ctx.loc = outerLoc;
  std::vector<ValueBinding> outputs;
  for (const onnx::ValueInfoProto &out : body.output()) {
    ValueBinding binding = ctx.capture(out.name());
    if (binding.kind == ValueBinding::Kind::Missing)
      return ctx.fail(node, "subgraph output '" + out.name() + "' is never produced");
    outputs.push_back(binding);
  }
  return outputs;
}

void bindBodyInput(ImportContext &ctx, const onnx::GraphProto &body, int i,
                   const ValueBinding &binding) {
  if (i < body.input_size() && !body.input(i).name().empty())
    ctx.bind(body.input(i).name(), binding);
}

ValueBinding constantBinding(DenseElementsAttr attr) {
  ValueBinding b;
  b.kind = ValueBinding::Kind::Constant;
  b.constant = attr;
  return b;
}

ValueBinding tensorBinding(Value v, std::optional<int> onnxType = std::nullopt) {
  ValueBinding b;
  b.kind = ValueBinding::Kind::Tensor;
  b.tensor = v;
  b.onnxType = onnxType;
  return b;
}

/// A body input declared with a rank, or a static size, other than the
/// value it receives has: ONNX infers the body (and the node's outputs) from
/// the declaration, the import from the value, so the two would disagree
/// (found by the onnx fuzzer: an Identity of such an input as a scan or loop
/// output; a state declared [2] that received a [?] and was added to slices
/// of 112). A size declared where the value's is dynamic refines the value:
/// checked at run time, then static. Returns the type body input `i` takes.
FailureOr<RankedTensorType> declaredType(ImportContext &ctx, const onnx::NodeProto &node,
                                         const onnx::GraphProto &body, int i,
                                         RankedTensorType received) {
  const onnx::ValueInfoProto &input = body.input(i);
  if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape())
    return received;
  const auto &dims = input.type().tensor_type().shape().dim();
  if (dims.size() != received.getRank())
    return ctx.fail(node, "body input '" + input.name() + "' is declared with rank " +
                              std::to_string(dims.size()) + " but receives a rank-" +
                              std::to_string(received.getRank()) + " tensor");
  SmallVector<int64_t> shape(received.getShape());
  for (int d = 0; d < dims.size(); ++d) {
    if (!dims[d].has_dim_value() || dims[d].dim_value() < 0)
      continue;
    if (!received.isDynamicDim(d) && shape[d] != dims[d].dim_value())
      return ctx.fail(node, "body input '" + input.name() + "' is declared with size " +
                                std::to_string(dims[d].dim_value()) + " along dim " +
                                std::to_string(d) + " but receives size " +
                                std::to_string(shape[d]));
    shape[d] = dims[d].dim_value();
  }
  return RankedTensorType::get(shape, received.getElementType());
}

/// `value` as `type` (the same but for static sizes where its are dynamic,
/// from declaredType) for body input i; a scan input's dim `scanAxis` is not
/// the body's.
FailureOr<Value> refineToDeclared(ImportContext &ctx, const onnx::NodeProto &node,
                                  const onnx::GraphProto &body, int i, Value value,
                                  RankedTensorType type, int64_t scanAxis = -1) {
  auto valueType = cast<RankedTensorType>(value.getType());
  if (valueType == type)
    return value;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!valueType.isDynamicDim(d))
      continue;
    int64_t bodyDim = scanAxis >= 0 && d > scanAxis ? d - 1 : d;
    Value size = tensor::DimOp::create(ctx.builder, ctx.loc, value, d);
    if (failed(ctx.check(node,
                         ctx.compare(arith::CmpIPredicate::eq, size,
                                     ctx.builder.getIndexAttr(type.getDimSize(d))),
                         "body input '" + body.input(i).name() + "' is declared with size " +
                             std::to_string(type.getDimSize(d)) + " along dim " +
                             std::to_string(bodyDim))))
      return failure();
  }
  return Value(tensor::CastOp::create(ctx.builder, ctx.loc, type, value));
}

/// A tensor or constant bound to body input i, checked against (and a
/// tensor refined to) the input's declaration; other bindings as they are.
LogicalResult conformToDeclaration(ImportContext &ctx, const onnx::NodeProto &node,
                                   const onnx::GraphProto &body, int i, ValueBinding &binding) {
  if (binding.kind == ValueBinding::Kind::Tensor && binding.tensor) {
    auto type = dyn_cast<RankedTensorType>(binding.tensor.getType());
    if (!type)
      return success();
    auto declared = declaredType(ctx, node, body, i, type);
    if (failed(declared))
      return failure();
    auto refined = refineToDeclared(ctx, node, body, i, binding.tensor, *declared);
    if (failed(refined))
      return failure();
    binding.tensor = *refined;
  } else if (binding.kind == ValueBinding::Kind::Constant && binding.constant) {
    auto type = dyn_cast<RankedTensorType>(binding.constant.getType());
    if (type && failed(declaredType(ctx, node, body, i, type)))
      return failure();
  }
  return success();
}

/// The import-time truth value of a binding, if it has one.
std::optional<int64_t> importTimeValue(ImportContext &ctx, const ValueBinding &binding) {
  if (binding.kind != ValueBinding::Kind::Constant && binding.kind != ValueBinding::Kind::Shape)
    return std::nullopt;
  std::string name = temporaryName(ctx);
  ctx.bind(name, binding);
  return importTimeScalar(ctx, name);
}

LogicalResult convertIf(ImportContext &ctx, const onnx::NodeProto &node) {
  auto thenBranch = graphAttr(ctx, node, "then_branch");
  auto elseBranch = graphAttr(ctx, node, "else_branch");
  if (failed(thenBranch) || failed(elseBranch))
    return failure();
  if (std::optional<int64_t> cond = importTimeScalar(ctx, node.input(0))) {
    auto outputs = runBody(ctx, node, **(*cond ? thenBranch : elseBranch));
    if (failed(outputs))
      return failure();
    for (auto [k, out] : llvm::enumerate(node.output()))
      if (k < outputs->size() && !out.empty())
        ctx.bind(out, (*outputs)[k]);
    return success();
  }
  auto cond = scalarTensor(ctx, node, node.input(0));
  if (failed(cond))
    return failure();
  // Another type made IR that did not verify (regress-if-float-cond).
  if (!cast<RankedTensorType>(cond->getType()).getElementType().isInteger(1))
    return ctx.fail(node, "cond must be a bool tensor");
  auto thenOutputs = runBody(ctx, node, **thenBranch);
  if (failed(thenOutputs))
    return failure();
  auto elseOutputs = runBody(ctx, node, **elseBranch);
  if (failed(elseOutputs))
    return failure();
  for (auto [k, out] : llvm::enumerate(node.output())) {
    if (out.empty() || k >= thenOutputs->size() || k >= elseOutputs->size())
      continue;
    auto selected = selectBindings(ctx, node, *cond, (*thenOutputs)[k], (*elseOutputs)[k],
                                   "output '" + out + "' (run-time condition '" +
                                       node.input(0) + "')");
    if (failed(selected))
      return failure();
    ctx.bind(out, *selected);
  }
  return success();
}

/// Min(v, bound - 1) clamped at 0: an in-bounds index into a dim of size
/// `bound` >= 1 (see the scan accumulators below).
Value clampToDim(OpBuilder &b, Location l, Value v, Value bound) {
  Value one = arith::ConstantIndexOp::create(b, l, 1);
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value last = arith::SubIOp::create(b, l, bound, one);
  return arith::MaxSIOp::create(b, l, arith::MinSIOp::create(b, l, v, last), zero);
}

/// Loop whose trip count or condition is run-time data: one scf.while in the
/// host function (the host program runs it with its loop opcodes; the body's
/// linalg ops become dispatches inside the loop like any others).
///   iter_args: iteration number (index), condition (i1), the loop-carried
///   tensors, and one accumulator per scan output;
///   before: continue while cond && (no M || i < M);
///   after: the body, imported once into the region with its iteration
///   number bound as a host index value and its condition input as true
///   (the body only runs while the condition holds).
/// A scan accumulator holds 1 + (iterations so far) rows: row 0 is a dummy
/// so that it is never empty (its dynamic slice dims start at 1), which
/// keeps every clamped read of it in bounds; each iteration writes a new
/// accumulator with the slice appended (one gather-style generic), and the
/// scan output is rows 1..k after the loop. Copying the accumulator each
/// iteration costs O(k * slice) per iteration. Slices must keep their shape
/// from one iteration to the next (a run-time check).
LogicalResult convertLoopAtRunTime(ImportContext &ctx, const onnx::NodeProto &node,
                                   const onnx::GraphProto &body, int numCarried,
                                   int numScanOutputs) {
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  Type indexType = b.getIndexType();
  auto readScalar = [&](int input, const std::string &what) -> FailureOr<Value> {
    auto shape = ctx.getShapeOperand(node, input, what);
    if (failed(shape))
      return failure();
    if (shape->elements.size() != 1)
      return ctx.fail(node, what + " ('" + node.input(input) + "') must hold one element");
    return ctx.toIndexValue(ctx.toFoldResult(shape->elements[0]));
  };
  Value tripCount;
  if (ImportContext::hasInput(node, 0)) {
    auto m = readScalar(0, "the trip count M");
    if (failed(m))
      return failure();
    tripCount = *m;
  }
  Value condition = arith::ConstantIntOp::create(b, loc, 1, 1);
  if (ImportContext::hasInput(node, 1)) {
    auto c = readScalar(1, "the condition cond");
    if (failed(c))
      return failure();
    condition = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, *c,
                                      arith::ConstantIndexOp::create(b, loc, 0));
  }
  SmallVector<Value> inits;
  for (int k = 0; k < numCarried; ++k) {
    const std::string &in = node.input(2 + k);
    if (in.empty() || ctx.lookupSequence(in) || ctx.lookupOptional(in))
      return ctx.unsupported(node, "loop-carried value '" + (in.empty() ? std::string("(none)") : in) +
                                       "' is a sequence, an optional or missing; a Loop run at "
                                       "run time carries tensors only");
    auto v = ctx.getTensor(node, in);
    if (failed(v))
      return failure();
    ValueBinding init = tensorBinding(*v);
    if (failed(conformToDeclaration(ctx, node, body, 2 + k, init)))
      return failure();
    inits.push_back(init.tensor);
  }

  // The body, imported into the after block before the loop op exists (the
  // accumulator types depend on the body's scan outputs).
  OpBuilder::InsertPoint outside = b.saveInsertionPoint();
  ImportContext::Scope scope = ctx.saveScope();
  auto after = std::make_unique<Block>();
  Value iteration = after->addArgument(indexType, loc);
  for (Value init : inits)
    after->addArgument(init.getType(), loc);
  b.setInsertionPointToStart(after.get());
  if (body.input_size() > 0 && !body.input(0).name().empty()) {
    ShapeTensor iterationNumber;
    iterationNumber.isScalar = true;
    iterationNumber.elementType = b.getI64Type();
    iterationNumber.elements.push_back(SymDim::of(iteration));
    ctx.setShapeTensor(body.input(0).name(), iterationNumber);
  }
  bindBodyInput(ctx, body, 1, constantBinding(boolConstant(ctx, true)));
  for (int k = 0; k < numCarried; ++k)
    bindBodyInput(ctx, body, 2 + k, tensorBinding(after->getArgument(1 + k)));
  auto fail = [&]() {
    ctx.restoreScope(std::move(scope));
    b.restoreInsertionPoint(outside);
    return failure();
  };
  auto outputs = runBody(ctx, node, body);
  if (failed(outputs))
    return fail();
  ctx.loc = loc;
  // The next condition, as an i1 host value.
  Value nextCondition;
  if (std::optional<int64_t> known = importTimeValue(ctx, (*outputs)[0])) {
    nextCondition = arith::ConstantIntOp::create(b, loc, *known != 0, 1);
  } else {
    auto t = bindingTensor(ctx, node, (*outputs)[0]);
    if (failed(t))
      return fail();
    Value scalar = *t;
    auto type = cast<RankedTensorType>(scalar.getType());
    if (!type.hasStaticShape() || type.getNumElements() != 1)
    {
      (void)ctx.fail(node, "the body's condition output must hold one element");
      return fail();
    }
    if (type.getRank() != 0)
      scalar = ctx.reshape(scalar, {});
    ShapeTensor read = ctx.readAtRunTime(scalar);
    nextCondition = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          ctx.toIndexValue(ctx.toFoldResult(read.elements[0])),
                                          arith::ConstantIndexOp::create(b, loc, 0));
  }
  SmallVector<Value> yielded;
  yielded.push_back(arith::AddIOp::create(b, loc, iteration, arith::ConstantIndexOp::create(b, loc, 1)));
  yielded.push_back(nextCondition);
  for (int k = 0; k < numCarried; ++k) {
    auto v = bindingTensor(ctx, node, (*outputs)[1 + k]);
    if (failed(v))
      return fail();
    Type want = inits[k].getType();
    Value out = *v;
    if (out.getType() != want) {
      if (!tensor::CastOp::areCastCompatible(out.getType(), want)) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << inits[k].getType() << " on entry but " << out.getType() << " after an iteration";
        (void)ctx.unsupported(node, "loop-carried value '" + body.output(1 + k).name() +
                                        "' changes type or shape between iterations (" + text +
                                        "); a Loop run at run time needs fixed types");
        return fail();
      }
      out = tensor::CastOp::create(b, loc, want, out);
    }
    yielded.push_back(out);
  }
  SmallVector<Value> accumulatorInits;
  for (int k = 0; k < numScanOutputs; ++k) {
    auto v = bindingTensor(ctx, node, (*outputs)[1 + numCarried + k]);
    if (failed(v))
      return fail();
    Value slice = *v;
    auto sliceType = cast<RankedTensorType>(slice.getType());
    int64_t rank = sliceType.getRank() + 1;
    SmallVector<int64_t> accShape{ShapedType::kDynamic};
    accShape.append(sliceType.getShape().begin(), sliceType.getShape().end());
    auto accType = RankedTensorType::get(accShape, sliceType.getElementType());
    Value acc = after->addArgument(accType, loc);
    // Run-time check: the slice has the shape of the earlier ones.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, iteration,
                                        arith::ConstantIndexOp::create(b, loc, 0));
    for (int64_t d = 0; d < sliceType.getRank(); ++d) {
      if (!sliceType.isDynamicDim(d))
        continue;
      Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         tensor::DimOp::create(b, loc, acc, d + 1),
                                         tensor::DimOp::create(b, loc, slice, d));
      if (failed(ctx.check(node, ctx.either(first, same),
                           "scan output '" + body.output(1 + numCarried + k).name() +
                               "' changes shape between iterations")))
        return fail();
    }
    SmallVector<OpFoldResult> sizes{
        (Value)arith::AddIOp::create(b, loc, iteration, arith::ConstantIndexOp::create(b, loc, 2))};
    for (int64_t d = 0; d < sliceType.getRank(); ++d)
      sizes.push_back(sliceType.isDynamicDim(d) ? OpFoldResult(tensor::DimOp::create(b, loc, slice, d).getResult())
                                                : OpFoldResult(b.getIndexAttr(sliceType.getDimSize(d))));
    Value init = ctx.empty(sizes, sliceType.getElementType());
    SmallVector<AffineExpr> sliceDims;
    for (int64_t d = 1; d < rank; ++d)
      sliceDims.push_back(b.getAffineDimExpr(d));
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, sliceDims, b.getContext()),
                                b.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    Value newRow = yielded.front(); // iteration + 1
    auto append = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{slice}, ValueRange{init}, maps, iterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          SmallVector<Value> idx;
          for (int64_t d = 0; d < rank; ++d)
            idx.push_back(clampToDim(nb, l, linalg::IndexOp::create(nb, l, d),
                                     tensor::DimOp::create(nb, l, acc, d)));
          Value old = tensor::ExtractOp::create(nb, l, acc, idx);
          Value isNew = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                              linalg::IndexOp::create(nb, l, 0), newRow);
          linalg::YieldOp::create(nb, l, arith::SelectOp::create(nb, l, isNew, args[0], old).getResult());
        });
    yielded.push_back(tensor::CastOp::create(b, loc, accType, append.getResult(0)));
    // The accumulator on entry: the dummy row, dynamic slice dims 1.
    OpBuilder::InsertPoint inBody = b.saveInsertionPoint();
    b.restoreInsertionPoint(outside);
    SmallVector<OpFoldResult> initSizes{b.getIndexAttr(1)};
    for (int64_t d = 0; d < sliceType.getRank(); ++d)
      initSizes.push_back(b.getIndexAttr(sliceType.isDynamicDim(d) ? 1 : sliceType.getDimSize(d)));
    Value accInit = tensor::EmptyOp::create(b, loc, initSizes, sliceType.getElementType());
    accumulatorInits.push_back(tensor::CastOp::create(b, loc, accType, accInit));
    outside = b.saveInsertionPoint();
    b.restoreInsertionPoint(inBody);
  }
  scf::YieldOp::create(b, loc, yielded);
  ctx.restoreScope(std::move(scope));
  b.restoreInsertionPoint(outside);

  // The loop op: before block tests the condition and the trip count.
  SmallVector<Value> whileInits{arith::ConstantIndexOp::create(b, loc, 0), condition};
  whileInits.append(inits.begin(), inits.end());
  whileInits.append(accumulatorInits.begin(), accumulatorInits.end());
  SmallVector<Type> resultTypes;
  for (BlockArgument arg : after->getArguments())
    resultTypes.push_back(arg.getType());
  auto loop = scf::WhileOp::create(b, loc, resultTypes, whileInits);
  Block *before = new Block();
  loop.getBefore().push_back(before);
  for (Value v : whileInits)
    before->addArgument(v.getType(), loc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(before);
    Value go = before->getArgument(1);
    if (tripCount)
      go = arith::AndIOp::create(b, loc, go,
                                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                                       before->getArgument(0), tripCount));
    SmallVector<Value> forwarded{before->getArgument(0)};
    for (unsigned i = 2; i < before->getNumArguments(); ++i)
      forwarded.push_back(before->getArgument(i));
    scf::ConditionOp::create(b, loc, go, forwarded);
  }
  loop.getAfter().push_back(after.release());

  for (int k = 0; k < numCarried; ++k)
    if (k < node.output_size() && !node.output(k).empty())
      ctx.setValue(node.output(k), loop.getResult(1 + k));
  Value count = loop.getResult(0);
  for (int k = 0; k < numScanOutputs; ++k) {
    int out = numCarried + k;
    if (out >= node.output_size() || node.output(out).empty())
      continue;
    Value acc = loop.getResult(1 + numCarried + k);
    auto accType = cast<RankedTensorType>(acc.getType());
    int64_t rank = accType.getRank();
    SmallVector<OpFoldResult> sizes{count};
    for (int64_t d = 1; d < rank; ++d)
      sizes.push_back(accType.isDynamicDim(d) ? OpFoldResult(tensor::DimOp::create(b, loc, acc, d).getResult())
                                              : OpFoldResult(b.getIndexAttr(accType.getDimSize(d))));
    Value init = ctx.empty(sizes, accType.getElementType());
    SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto rows = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
        [&](OpBuilder &nb, Location l, ValueRange) {
          SmallVector<Value> idx;
          for (int64_t d = 0; d < rank; ++d)
            idx.push_back(linalg::IndexOp::create(nb, l, d));
          idx[0] = arith::AddIOp::create(nb, l, idx[0], arith::ConstantIndexOp::create(nb, l, 1));
          linalg::YieldOp::create(nb, l, tensor::ExtractOp::create(nb, l, acc, idx).getResult());
        });
    ctx.setValue(node.output(out), rows.getResult(0));
  }
  return success();
}

LogicalResult unrollLoop(ImportContext &ctx, const onnx::NodeProto &node,
                         const onnx::GraphProto &body, int numCarried, int numScanOutputs,
                         std::optional<int64_t> tripCount, bool hostLoopCanTakeOver,
                         bool &hostLoopTakesOver);

LogicalResult convertLoop(ImportContext &ctx, const onnx::NodeProto &node) {
  auto bodyAttr = graphAttr(ctx, node, "body");
  if (failed(bodyAttr))
    return failure();
  const onnx::GraphProto &body = **bodyAttr;
  int numCarried = node.input_size() - 2;
  if (numCarried < 0)
    return ctx.fail(node, "expects at least 2 inputs (M, cond)");
  int numScanOutputs = body.output_size() - 1 - numCarried;
  if (body.input_size() != numCarried + 2 || numScanOutputs < 0)
    return ctx.fail(node, "body has " + std::to_string(body.input_size()) + " inputs and " +
                              std::to_string(body.output_size()) + " outputs for " +
                              std::to_string(numCarried) + " loop-carried values");
  std::optional<int64_t> tripCount;
  if (ImportContext::hasInput(node, 0))
    tripCount = importTimeScalar(ctx, node.input(0));
  std::optional<int64_t> initialCondition =
      ImportContext::hasInput(node, 1) ? importTimeScalar(ctx, node.input(1)) : 1;
  // Run-time trip count, a run-time condition that unrolling cannot bound
  // (no M, or scan outputs), or too many iterations to unroll: a loop in
  // the host program.
  if ((ImportContext::hasInput(node, 0) && !tripCount) ||
      (!initialCondition && (!tripCount || numScanOutputs > 0)) ||
      (tripCount && *tripCount > kMaxUnrolledIterations && initialCondition.value_or(1)) ||
      (tripCount && ctx.unrolledCopies + *tripCount > kMaxTotalUnrolledCopies &&
       initialCondition.value_or(1)))
    return convertLoopAtRunTime(ctx, node, body, numCarried, numScanOutputs);
  // Otherwise unroll; if the condition turns out to be run-time data that
  // unrolling cannot bound, drop what unrolling emitted (it was appended to
  // the current block and bound names only) and make a host loop.
  Block *block = ctx.builder.getInsertionBlock();
  bool atEnd = ctx.builder.getInsertionPoint() == block->end();
  Operation *lastBefore = block->empty() ? nullptr : &block->back();
  ImportContext::Scope scope = ctx.saveScope();
  std::string errorBefore = ctx.error;
  bool hostLoopTakesOver = false;
  bool tensorsOnly = true;
  for (int k = 0; k < numCarried; ++k) {
    const std::string &in = node.input(2 + k);
    tensorsOnly &= !in.empty() && !ctx.lookupSequence(in) && !ctx.lookupOptional(in);
  }
  if (succeeded(unrollLoop(ctx, node, body, numCarried, numScanOutputs, tripCount,
                           atEnd && tensorsOnly, hostLoopTakesOver)))
    return success();
  if (!hostLoopTakesOver)
    return failure();
  while (!block->empty() && &block->back() != lastBefore) {
    block->back().dropAllUses();
    block->back().erase();
  }
  ctx.restoreScope(std::move(scope));
  ctx.error = errorBefore;
  return convertLoopAtRunTime(ctx, node, body, numCarried, numScanOutputs);
}

/// Loop unrolled at import time (see the file comment). When
/// `hostLoopCanTakeOver` and the condition turns out to be run-time data
/// that no trip count bounds (or with scan outputs), fails with
/// `hostLoopTakesOver` set and no error recorded.
LogicalResult unrollLoop(ImportContext &ctx, const onnx::NodeProto &node,
                         const onnx::GraphProto &body, int numCarried, int numScanOutputs,
                         std::optional<int64_t> tripCount, bool hostLoopCanTakeOver,
                         bool &hostLoopTakesOver) {
  // The condition is import-time (`condition`) until it depends on run-time
  // data; from then on `active` holds it as a rank-0 i1 tensor and every
  // further iteration updates the carried values only where it is true
  // (exact, since the body has no side effects), up to the trip count.
  int64_t condition = 1;
  std::optional<Value> active;
  auto needsBound = [&](const std::string &what) -> LogicalResult {
    if ((!tripCount || numScanOutputs > 0) && hostLoopCanTakeOver) {
      hostLoopTakesOver = true;
      return failure();
    }
    if (!tripCount)
      return ctx.unsupported(node, what + " is run-time data and no trip count M bounds the "
                                          "loop; Loop is unrolled at import time, so M or the "
                                          "condition must be known then");
    if (numScanOutputs > 0)
      return ctx.unsupported(node, what + " is run-time data, so the number of scan outputs "
                                          "is not known at import time");
    return success();
  };
  if (ImportContext::hasInput(node, 1)) {
    if (std::optional<int64_t> cond = importTimeScalar(ctx, node.input(1))) {
      condition = *cond;
    } else {
      if (failed(needsBound("the initial condition ('" + node.input(1) + "')")))
        return failure();
      auto condTensor = scalarTensor(ctx, node, node.input(1));
      if (failed(condTensor))
        return failure();
      if (!cast<RankedTensorType>(condTensor->getType()).getElementType().isInteger(1))
        return ctx.fail(node, "cond must be a bool tensor");
      active = *condTensor;
    }
  }
  std::vector<ValueBinding> carried;
  for (int k = 0; k < numCarried; ++k) {
    const std::string &in = node.input(2 + k);
    if (in.empty()) {
      OptionalValue none;
      ValueBinding b;
      b.kind = ValueBinding::Kind::Optional;
      b.optional = none;
      carried.push_back(b);
    } else {
      carried.push_back(ctx.capture(in));
    }
  }
  std::vector<std::vector<Value>> scans(numScanOutputs);
  int64_t iteration = 0;
  for (; condition && (!tripCount || iteration < *tripCount); ++iteration) {
    if (iteration >= kMaxUnrolledIterations)
      return ctx.unsupported(node, "more than " + std::to_string(kMaxUnrolledIterations) +
                                       " iterations to unroll");
    if (++ctx.unrolledCopies > kMaxTotalUnrolledCopies) {
      if (hostLoopCanTakeOver) {
        hostLoopTakesOver = true;
        return failure();
      }
      return ctx.unsupported(node, "unrolling it would make the model's loops more than " +
                                       std::to_string(kMaxTotalUnrolledCopies) +
                                       " body copies in all (nested loops multiply)");
    }
    bindBodyInput(ctx, body, 0, constantBinding(i64Constant(ctx, {iteration}, true)));
    bindBodyInput(ctx, body, 1,
                  active ? tensorBinding(*active) : constantBinding(boolConstant(ctx, true)));
    for (int k = 0; k < numCarried; ++k) {
      if (failed(conformToDeclaration(ctx, node, body, 2 + k, carried[k])))
        return failure();
      bindBodyInput(ctx, body, 2 + k, carried[k]);
    }
    auto outputs = runBody(ctx, node, body);
    if (failed(outputs))
      return failure();
    for (int k = 0; k < numCarried; ++k) {
      if (!active) {
        carried[k] = (*outputs)[1 + k];
        continue;
      }
      auto kept = selectBindings(ctx, node, *active, (*outputs)[1 + k], carried[k],
                                 "loop-carried value '" + body.output(1 + k).name() +
                                     "' (run-time loop condition)");
      if (failed(kept))
        return failure();
      carried[k] = *kept;
    }
    for (int k = 0; k < numScanOutputs; ++k) {
      auto v = bindingTensor(ctx, node, (*outputs)[1 + numCarried + k]);
      if (failed(v))
        return failure();
      scans[k].push_back(*v);
    }
    std::optional<int64_t> next = active ? std::nullopt : importTimeValue(ctx, (*outputs)[0]);
    if (next) {
      condition = *next;
      continue;
    }
    if (failed(needsBound("the body's condition output '" + body.output(0).name() + "'")))
      return failure();
    auto nextTensor = bindingTensor(ctx, node, (*outputs)[0]);
    if (failed(nextTensor))
      return failure();
    Value nextScalar = *nextTensor;
    if (cast<RankedTensorType>(nextScalar.getType()).getRank() != 0)
      nextScalar = ctx.reshape(nextScalar, {});
    if (!active) {
      active = nextScalar;
      continue;
    }
    auto both = ctx.elementwise(node, {*active, nextScalar}, ctx.builder.getI1Type(),
                                [](OpBuilder &b, Location l, ValueRange args) -> Value {
                                  return arith::AndIOp::create(b, l, args[0], args[1]);
                                });
    if (failed(both))
      return failure();
    active = *both;
  }
  for (int k = 0; k < numCarried; ++k)
    if (k < node.output_size() && !node.output(k).empty())
      ctx.bind(node.output(k), carried[k]);
  for (int k = 0; k < numScanOutputs; ++k) {
    int out = numCarried + k;
    if (out >= node.output_size() || node.output(out).empty())
      continue;
    if (scans[k].empty())
      return ctx.unsupported(node, "scan output '" + node.output(out) +
                                       "' of a loop that runs zero times");
    auto stacked = stack(ctx, node, scans[k], 0);
    if (failed(stacked))
      return failure();
    ctx.setValue(node.output(out), *stacked);
  }
  return success();
}

/// One Scan over `states` and `scanInputs` (no batch axis).
LogicalResult scanOnce(ImportContext &ctx, const onnx::NodeProto &node, const onnx::GraphProto &body,
                       std::vector<ValueBinding> states, ArrayRef<Value> scanInputs,
                       ArrayRef<int64_t> inputAxes, ArrayRef<int64_t> inputDirections,
                       ArrayRef<int64_t> outputAxes, ArrayRef<int64_t> outputDirections,
                       std::vector<Value> &finalStates, std::vector<Value> &scanOutputs) {
  int numStates = static_cast<int>(states.size());
  int numScanInputs = static_cast<int>(scanInputs.size());
  int numScanOutputs = body.output_size() - numStates;
  if (body.input_size() != numStates + numScanInputs || numScanOutputs < 0)
    return ctx.fail(node, "body inputs/outputs do not match the Scan's states and scan inputs");
  std::optional<int64_t> length;
  for (int j = 0; j < numScanInputs; ++j) {
    auto type = cast<RankedTensorType>(scanInputs[j].getType());
    if (type.getRank() == 0) // normalizeAxis accepts axis 0 of a scalar (regress-scan-scalar-input)
      return ctx.fail(node, "scan input " + std::to_string(j) + " is a rank-0 tensor: nothing to scan");
    auto axis = normalizeAxis(inputAxes[j], type.getRank());
    if (!axis)
      return ctx.fail(node, "scan_input_axes is out of range");
    if (type.isDynamicDim(*axis))
      return ctx.unsupported(node, "scan input " + std::to_string(j) +
                                       " has a dynamic length along its scan axis; Scan is "
                                       "unrolled at import time over a static length");
    length = type.getDimSize(*axis);
  }
  if (!length)
    return ctx.fail(node, "has no scan inputs");
  // (Found by the onnx fuzzer: the scan outputs of no iteration were read.)
  if (*length == 0)
    return ctx.unsupported(node, "the scan inputs have length 0 along the scan axis");
  if (*length > kMaxUnrolledIterations)
    return ctx.unsupported(node, "more than " + std::to_string(kMaxUnrolledIterations) +
                                     " iterations to unroll");
  if ((ctx.unrolledCopies += *length) > kMaxTotalUnrolledCopies)
    return ctx.unsupported(node, "unrolling it would make the model's loops more than " +
                                     std::to_string(kMaxTotalUnrolledCopies) +
                                     " body copies in all (nested loops multiply)");
  for (int k = 0; k < numStates; ++k)
    if (failed(conformToDeclaration(ctx, node, body, k, states[k])))
      return failure();
  std::vector<Value> inputs(scanInputs.begin(), scanInputs.end());
  for (int j = 0; j < numScanInputs; ++j) {
    auto type = cast<RankedTensorType>(inputs[j].getType());
    int64_t axis = *normalizeAxis(inputAxes[j], type.getRank());
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape.erase(sliceShape.begin() + axis);
    auto declared = declaredType(ctx, node, body, numStates + j,
                                 RankedTensorType::get(sliceShape, type.getElementType()));
    if (failed(declared))
      return failure();
    SmallVector<int64_t> shape(declared->getShape());
    shape.insert(shape.begin() + axis, type.getDimSize(axis));
    auto refined = refineToDeclared(ctx, node, body, numStates + j, inputs[j],
                                    RankedTensorType::get(shape, type.getElementType()), axis);
    if (failed(refined))
      return failure();
    inputs[j] = *refined;
  }
  std::vector<std::vector<Value>> scans(numScanOutputs);
  for (int64_t t = 0; t < *length; ++t) {
    for (int k = 0; k < numStates; ++k)
      bindBodyInput(ctx, body, k, states[k]);
    for (int j = 0; j < numScanInputs; ++j) {
      auto type = cast<RankedTensorType>(inputs[j].getType());
      int64_t axis = *normalizeAxis(inputAxes[j], type.getRank());
      int64_t index = inputDirections[j] ? *length - 1 - t : t;
      auto slice = sliceAt(ctx, node, inputs[j], index, axis);
      if (failed(slice))
        return failure();
      bindBodyInput(ctx, body, numStates + j, tensorBinding(*slice));
    }
    auto outputs = runBody(ctx, node, body);
    if (failed(outputs))
      return failure();
    for (int k = 0; k < numStates; ++k)
      states[k] = (*outputs)[k];
    for (int k = 0; k < numScanOutputs; ++k) {
      auto v = bindingTensor(ctx, node, (*outputs)[numStates + k]);
      if (failed(v))
        return failure();
      scans[k].push_back(*v);
    }
  }
  finalStates.clear();
  for (const ValueBinding &s : states) {
    auto v = bindingTensor(ctx, node, s);
    if (failed(v))
      return failure();
    finalStates.push_back(*v);
  }
  scanOutputs.clear();
  for (int k = 0; k < numScanOutputs; ++k) {
    if (outputDirections[k])
      std::reverse(scans[k].begin(), scans[k].end());
    int64_t rank = cast<RankedTensorType>(scans[k].front().getType()).getRank() + 1;
    auto axis = normalizeAxis(outputAxes[k], rank);
    if (!axis)
      return ctx.fail(node, "scan_output_axes is out of range");
    auto stacked = stack(ctx, node, scans[k], *axis);
    if (failed(stacked))
      return failure();
    scanOutputs.push_back(*stacked);
  }
  return success();
}

/// An ints attribute of `count` entries, `def` where absent.
FailureOr<std::vector<int64_t>> intsOr(ImportContext &ctx, const onnx::NodeProto &node,
                                       const std::string &name, size_t count, int64_t def) {
  std::optional<std::vector<int64_t>> values = ctx.intsAttr(node, name);
  if (!values)
    return std::vector<int64_t>(count, def);
  if (values->size() != count)
    return ctx.fail(node, "attribute '" + name + "' has " + std::to_string(values->size()) +
                              " entries, expected " + std::to_string(count));
  return *values;
}

LogicalResult convertScan(ImportContext &ctx, const onnx::NodeProto &node) {
  auto bodyAttr = graphAttr(ctx, node, "body");
  if (failed(bodyAttr))
    return failure();
  const onnx::GraphProto &body = **bodyAttr;
  bool batched = ctx.opset < 9; // Scan-8: input 0 is sequence_lens, axis 0 is the batch
  int first = batched ? 1 : 0;
  int numScanInputs = static_cast<int>(ctx.intAttr(node, "num_scan_inputs", 0));
  int numStates = node.input_size() - first - numScanInputs;
  int numScanOutputs = body.output_size() - numStates;
  if (numScanInputs <= 0 || numStates < 0 || numScanOutputs < 0)
    return ctx.fail(node, "num_scan_inputs does not match the inputs and the body");
  auto inputAxes = intsOr(ctx, node, "scan_input_axes", numScanInputs, 0);
  auto inputDirections = intsOr(ctx, node, batched ? "directions" : "scan_input_directions",
                                numScanInputs, 0);
  auto outputAxes = intsOr(ctx, node, "scan_output_axes", numScanOutputs, 0);
  auto outputDirections = intsOr(ctx, node, "scan_output_directions", numScanOutputs, 0);
  if (failed(inputAxes) || failed(inputDirections) || failed(outputAxes) ||
      failed(outputDirections))
    return failure();
  std::vector<ValueBinding> states;
  for (int k = 0; k < numStates; ++k)
    states.push_back(ctx.capture(node.input(first + k)));
  std::vector<Value> scanInputs;
  for (int j = 0; j < numScanInputs; ++j) {
    auto v = ctx.getTensor(node, node.input(first + numStates + j));
    if (failed(v))
      return failure();
    scanInputs.push_back(*v);
  }
  std::vector<Value> finalStates, scanOutputs;
  if (!batched) {
    if (failed(scanOnce(ctx, node, body, states, scanInputs, *inputAxes, *inputDirections,
                        *outputAxes, *outputDirections, finalStates, scanOutputs)))
      return failure();
  } else {
    if (ImportContext::hasInput(node, 0))
      return ctx.unsupported(node, "sequence_lens is given; only full-length sequences are "
                                   "supported");
    // Axis 0 of every state and scan input is the batch (found by the onnx
    // fuzzer: a rank-0 state was sliced along a dim it does not have).
    auto type = cast<RankedTensorType>(scanInputs[0].getType());
    if (type.getRank() == 0 || type.isDynamicDim(0))
      return type.getRank() == 0
                 ? ctx.fail(node, "scan input 0 is a rank-0 tensor: Scan-8's axis 0 is the batch")
                 : ctx.unsupported(node, "the batch size is dynamic; Scan-8 is unrolled per batch");
    for (int k = 0; k < numStates; ++k) {
      auto whole = bindingTensor(ctx, node, states[k]);
      if (failed(whole))
        return failure();
      auto stateType = cast<RankedTensorType>(whole->getType());
      if (stateType.getRank() == 0 ||
          (!stateType.isDynamicDim(0) && stateType.getDimSize(0) != type.getDimSize(0)))
        return ctx.fail(node, "state " + std::to_string(k) +
                                  " does not have the scan inputs' batch size along axis 0");
    }
    for (Value v : scanInputs) {
      auto inputType = cast<RankedTensorType>(v.getType());
      if (inputType.getRank() == 0 ||
          (!inputType.isDynamicDim(0) && inputType.getDimSize(0) != type.getDimSize(0)))
        return ctx.fail(node, "the scan inputs do not share one batch size along axis 0");
    }
    std::vector<std::vector<Value>> stateParts(numStates), scanParts(numScanOutputs);
    for (int64_t b = 0; b < type.getDimSize(0); ++b) {
      std::vector<ValueBinding> batchStates;
      for (int k = 0; k < numStates; ++k) {
        auto whole = bindingTensor(ctx, node, states[k]);
        if (failed(whole))
          return failure();
        auto part = sliceAt(ctx, node, *whole, b, 0);
        if (failed(part))
          return failure();
        batchStates.push_back(tensorBinding(*part));
      }
      std::vector<Value> batchInputs;
      for (Value v : scanInputs) {
        auto part = sliceAt(ctx, node, v, b, 0);
        if (failed(part))
          return failure();
        batchInputs.push_back(*part);
      }
      std::vector<Value> partStates, partScans;
      if (failed(scanOnce(ctx, node, body, batchStates, batchInputs, *inputAxes, *inputDirections,
                          *outputAxes, *outputDirections, partStates, partScans)))
        return failure();
      for (int k = 0; k < numStates; ++k)
        stateParts[k].push_back(partStates[k]);
      for (int k = 0; k < numScanOutputs; ++k)
        scanParts[k].push_back(partScans[k]);
    }
    for (auto *parts : {&stateParts, &scanParts})
      for (const std::vector<Value> &p : *parts) {
        auto stacked = stack(ctx, node, p, 0);
        if (failed(stacked))
          return failure();
        (parts == &stateParts ? finalStates : scanOutputs).push_back(*stacked);
      }
  }
  for (int k = 0; k < numStates; ++k)
    if (k < node.output_size() && !node.output(k).empty())
      ctx.setValue(node.output(k), finalStates[k]);
  for (int k = 0; k < numScanOutputs; ++k)
    if (numStates + k < node.output_size() && !node.output(numStates + k).empty())
      ctx.setValue(node.output(numStates + k), scanOutputs[k]);
  return success();
}

LogicalResult convertSequenceMap(ImportContext &ctx, const onnx::NodeProto &node) {
  auto bodyAttr = graphAttr(ctx, node, "body");
  if (failed(bodyAttr))
    return failure();
  const onnx::GraphProto &body = **bodyAttr;
  const SequenceValue *input = ctx.lookupSequence(node.input(0));
  if (!input)
    return ctx.fail(node, "input '" + node.input(0) + "' is not a sequence");
  for (const std::string &in : node.input())
    if (const SequenceValue *seq = ctx.lookupSequence(in))
      if (failed(requireElements(ctx, node, in, *seq)))
        return failure();
  size_t length = input->elements.size();
  if (length > static_cast<size_t>(kMaxUnrolledIterations))
    return ctx.unsupported(node, "more than " + std::to_string(kMaxUnrolledIterations) +
                                     " elements to map");
  if ((ctx.unrolledCopies += static_cast<int64_t>(length)) > kMaxTotalUnrolledCopies)
    return ctx.unsupported(node, "mapping it would make the model's loops more than " +
                                     std::to_string(kMaxTotalUnrolledCopies) +
                                     " body copies in all (nested loops multiply)");
  if (body.input_size() != node.input_size())
    return ctx.fail(node, "the body takes " + std::to_string(body.input_size()) +
                              " inputs but the node has " + std::to_string(node.input_size()));
  std::vector<SequenceValue> results(body.output_size());
  for (size_t i = 0; i < length; ++i) {
    for (int j = 0; j < node.input_size(); ++j) {
      const std::string &in = node.input(j);
      if (const SequenceValue *seq = ctx.lookupSequence(in)) {
        if (seq->elements.size() != length)
          return ctx.fail(node, "sequence inputs have different lengths");
        ValueBinding element = tensorBinding(seq->elements[i], ctx.onnxType(in));
        if (failed(conformToDeclaration(ctx, node, body, j, element)))
          return failure();
        bindBodyInput(ctx, body, j, element);
      } else {
        ValueBinding value = ctx.capture(in);
        if (failed(conformToDeclaration(ctx, node, body, j, value)))
          return failure();
        bindBodyInput(ctx, body, j, value);
      }
    }
    auto outputs = runBody(ctx, node, body);
    if (failed(outputs))
      return failure();
    for (int k = 0; k < body.output_size(); ++k) {
      auto v = bindingTensor(ctx, node, (*outputs)[k]);
      if (failed(v))
        return failure();
      results[k].elements.push_back(*v);
      if ((*outputs)[k].onnxType)
        results[k].onnxElementType = *(*outputs)[k].onnxType;
    }
  }
  for (int k = 0; k < body.output_size() && k < node.output_size(); ++k)
    ctx.setSequence(node.output(k), results[k]);
  return success();
}

} // namespace

bool foldImportTimeCondition(ImportContext &ctx, const onnx::NodeProto &node) {
  static const std::set<std::string> foldable = {
      "Not", "And", "Or", "Xor", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"};
  const std::string &op = node.op_type();
  if (!foldable.count(op) || node.output_size() != 1 || node.input_size() < 1)
    return false;
  std::vector<int64_t> args;
  bool scalar = true;
  for (const std::string &in : node.input()) {
    auto attr = ctx.getConstant(in);
    std::optional<int64_t> v = importTimeScalar(ctx, in);
    if (!v)
      return false;
    if (attr && attr->getElementType().isIntOrIndex() == false)
      return false;
    if (auto shape = ctx.getShapeTensor(in); shape && !shape->isScalar)
      scalar = false;
    else if (attr && attr->getType().getRank() != 0)
      scalar = false;
    args.push_back(*v);
  }
  bool result;
  if (op == "Not") result = args[0] == 0;
  else if (args.size() != 2) return false;
  else if (op == "And") result = args[0] && args[1];
  else if (op == "Or") result = args[0] || args[1];
  else if (op == "Xor") result = (args[0] != 0) != (args[1] != 0);
  else if (op == "Equal") result = args[0] == args[1];
  else if (op == "Less") result = args[0] < args[1];
  else if (op == "LessOrEqual") result = args[0] <= args[1];
  else if (op == "Greater") result = args[0] > args[1];
  else result = args[0] >= args[1];
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(1);
  auto type = RankedTensorType::get(shape, ctx.builder.getI1Type());
  ctx.setConstant(node.output(0), DenseElementsAttr::get(type, ArrayRef<bool>{result}));
  return true;
}

void registerControlFlowOps(OpRegistry &r) {
  r.add("If", convertIf);
  r.add("Loop", convertLoop);
  r.add("Scan", convertScan, 8);
  r.add("SequenceMap", convertSequenceMap, 17);
}

} // namespace turbine::onnx_frontend
