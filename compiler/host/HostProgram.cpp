//===- HostProgram.cpp - Host functions -> the artifact's register program ===//
//
// After dispatch formation a host function holds only shape arithmetic,
// reshapes, constants, turbine.dispatch ops and host loops (scf.while, which
// become loop / break_unless / end_loop brackets with moves between their
// state registers). This file turns each into the
// runtime's register program (artifact/Module.h): every index SSA value gets
// an index register, every tensor a buffer register; dense constants become
// parameters stored in the artifact. affine.apply ops (shape arithmetic left
// by reshape folding, e.g. batch * 128 rows) are expanded to arith first.
//
// Module state: every ml_program.global left after the input phase (mutable
// ones, and immutable `#ml_program.extern` parameters) becomes an entry of
// the artifact's globals table: a mutable global's initial value is zero (a
// splat zero, not stored), a parameter holding its value, or uninitialized
// (`#ml_program.extern` or no value); an immutable one is an external
// parameter bound by name at load and read with Param. global_load of a
// mutable global becomes GlobalLoad (a view of the instance's storage; a
// load marked turbine.update_only does not require the global to be
// initialized), global_store becomes GlobalStore, and a dispatch's
// `in_place` results take their operand's register (the kernel wrote that
// storage: no allocation, and the store back is a no-op at run time).
//===----------------------------------------------------------------------===//
#include "host/HostProgram.h"

#include "dispatch/SliceUpdates.h"

#include "global-opt/ParameterNames.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinDialect.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <set>

using namespace mlir;
namespace art = turbine::artifact;

namespace turbine::compiler {
namespace {

std::optional<DType> toDType(Type type) {
  if (isa<StringType>(type))
    return DType::string;
  if (type.isF16())
    return DType::f16;
  if (type.isBF16())
    return DType::bf16;
  if (type.isF32())
    return DType::f32;
  if (type.isF64())
    return DType::f64;
  if (auto i = dyn_cast<IntegerType>(type)) {
    bool isUnsigned = i.isUnsigned();
    switch (i.getWidth()) {
    case 1:
      return DType::i1;
    case 8:
      return isUnsigned ? DType::u8 : DType::i8;
    case 16:
      return isUnsigned ? DType::u16 : DType::i16;
    case 32:
      return isUnsigned ? DType::u32 : DType::i32;
    case 64:
      return isUnsigned ? DType::u64 : DType::i64;
    }
  }
  return std::nullopt;
}

/// Raw little-endian bytes of a dense constant, one byte per i1.
std::optional<std::string> constantBytes(Attribute value) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    return std::string(data.begin(), data.end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return std::nullopt;
  auto type = cast<ShapedType>(dense.getType());
  int64_t count = type.getNumElements();
  if (type.getElementType().isInteger(1)) {
    std::string bytes;
    bytes.reserve(count);
    for (bool b : dense.getValues<bool>())
      bytes.push_back(b ? 1 : 0);
    return bytes;
  }
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::string(raw.begin(), raw.end());
  std::string bytes;
  bytes.reserve(raw.size() * count);
  for (int64_t i = 0; i < count; ++i)
    bytes.append(raw.begin(), raw.end());
  return bytes;
}

/// Where each ml_program.global went: an index into the artifact's globals,
/// and for an immutable one the parameter it reads.
struct GlobalSlot {
  int64_t global = -1;
  int64_t parameter = -1; ///< immutable: read with Param
};

class HostProgramBuilder {
public:
  HostProgramBuilder(art::Module &artifact,
                     const llvm::StringMap<int64_t> &kernelIndex,
                     const llvm::StringMap<GlobalSlot> &globals)
      : artifact(artifact), kernelIndex(kernelIndex), globals(globals) {}

  LogicalResult build(func::FuncOp func, art::Function &out);

private:
  int32_t indexReg(Value v) {
    auto it = indexRegs.find(v);
    if (it != indexRegs.end())
      return it->second;
    return indexRegs[v] = numIndex++;
  }
  int32_t newBuffer(Value v) { return bufferRegs[v] = numBuffer++; }
  int32_t constant(int64_t value) {
    auto it = constants.find(value);
    if (it != constants.end())
      return it->second;
    art::Instruction inst;
    inst.op = art::Opcode::Const;
    inst.dst = numIndex++;
    inst.imm = value;
    code->push_back(inst);
    return constants[value] = inst.dst;
  }
  FailureOr<int32_t> buffer(Operation *user, Value v) {
    auto it = bufferRegs.find(v);
    if (it == bufferRegs.end())
      return user->emitError("host program: tensor operand is not available "
                             "on the host");
    return it->second;
  }
  int32_t dimOf(int32_t bufferReg, int64_t axis) {
    art::Instruction inst;
    inst.op = art::Opcode::Dim;
    inst.dst = numIndex++;
    inst.a = bufferReg;
    inst.imm = axis;
    code->push_back(inst);
    return inst.dst;
  }
  LogicalResult visit(Operation *op);
  void retagReturnedBuffers(art::Function &function);
  LogicalResult visitConstant(arith::ConstantOp op);
  LogicalResult visitReshape(Operation *op, Value source, Value result);
  LogicalResult visitDispatch(DispatchOp op);
  LogicalResult visitExtract(tensor::ExtractOp op);
  LogicalResult visitIntegerCast(Operation *op);
  LogicalResult visitStringOp(Operation *op);
  LogicalResult visitWhile(scf::WhileOp op);
  LogicalResult visitGlobal(Operation *op);
  /// A register for `v` (index or buffer by its type), set by Move or
  /// MoveBuffer from `source`'s register when `source` is given.
  FailureOr<int32_t> loopRegister(Operation *user, Value v);
  void emitMove(Value dst, int32_t dstReg, Value source);
  int32_t binary(art::BinaryKind kind, int32_t a, int32_t b) {
    art::Instruction inst;
    inst.op = art::Opcode::Binary;
    inst.kind = kind;
    inst.dst = numIndex++;
    inst.a = a;
    inst.b = b;
    code->push_back(inst);
    return inst.dst;
  }

  art::Module &artifact;
  const llvm::StringMap<int64_t> &kernelIndex;
  const llvm::StringMap<GlobalSlot> &globals;
  std::vector<art::Instruction> *code = nullptr;
  DenseMap<Value, int32_t> indexRegs, bufferRegs;
  std::map<int64_t, int32_t> constants;
  int32_t numIndex = 0, numBuffer = 0;
};

art::TensorType signatureOf(Type type, DictionaryAttr attrs, int index,
                            const char *prefix) {
  art::TensorType t;
  auto tensor = cast<RankedTensorType>(type);
  t.dtype = *toDType(tensor.getElementType());
  for (int64_t d : tensor.getShape())
    t.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  t.name = std::string(prefix) + std::to_string(index);
  t.dimNames.assign(tensor.getRank(), "");
  if (attrs) {
    if (auto name = attrs.getAs<StringAttr>("turbine.name"))
      t.name = name.str();
    // Signless integers carry their signedness here (e.g. ONNX uint8).
    if (auto dtype = attrs.getAs<StringAttr>("turbine.dtype"))
      if (std::optional<DType> parsed = parseDType(dtype.getValue()))
        if (dtypeSize(*parsed) == dtypeSize(t.dtype))
          t.dtype = *parsed;
    if (auto dims = attrs.getAs<ArrayAttr>("turbine.dims"))
      for (auto [i, d] : llvm::enumerate(dims))
        if (auto s = dyn_cast<StringAttr>(d); s && i < t.dimNames.size())
          t.dimNames[i] = s.str();
  }
  return t;
}

LogicalResult HostProgramBuilder::build(func::FuncOp func, art::Function &out) {
  out.name = func.getSymName().str();
  code = &out.code;
  FunctionType type = func.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    if (!isa<RankedTensorType>(t) || !toDType(cast<ShapedType>(t).getElementType()))
      return func.emitError("host program: argument ")
             << i << " has unsupported type " << t;
    out.inputs.push_back(signatureOf(t, func.getArgAttrDict(i), i, "input"));
    newBuffer(func.getArgument(i));
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    if (!isa<RankedTensorType>(t) || !toDType(cast<ShapedType>(t).getElementType()))
      return func.emitError("host program: result ")
             << i << " has unsupported type " << t;
    out.outputs.push_back(
        signatureOf(t, func.getResultAttrDict(i), i, "output"));
  }
  for (Operation &op : func.getBody().front())
    if (failed(visit(&op)))
      return failure();
  retagReturnedBuffers(out);
  out.numIndexRegisters = numIndex;
  out.numBufferRegisters = numBuffer;
  return success();
}

/// MLIR integers are signless: a result the signature calls u8 is computed
/// in an i8 buffer. Give the allocations behind each result (through any
/// reshapes, and through the moves of a host loop, whose registers have one
/// definition per path into them) the signature's dtype when the two have
/// the same size.
void HostProgramBuilder::retagReturnedBuffers(art::Function &function) {
  std::vector<art::Instruction> &insts = function.code;
  std::set<int32_t> visited;
  std::function<void(int32_t, DType)> retag = [&](int32_t reg, DType wanted) {
    if (!visited.insert(reg).second)
      return;
    for (art::Instruction &def : insts) {
      if (def.dst != reg)
        continue;
      if (def.op == art::Opcode::Alloc) {
        if (def.dtype != wanted && dtypeSize(def.dtype) == dtypeSize(wanted))
          def.dtype = wanted;
      } else if (def.op == art::Opcode::Reshape || def.op == art::Opcode::MoveBuffer) {
        retag(def.a, wanted);
      }
    }
  };
  for (const art::Instruction &ret : insts) {
    if (ret.op != art::Opcode::Return)
      continue;
    for (size_t i = 0; i < ret.operands.size() && i < function.outputs.size(); ++i) {
      visited.clear();
      retag(ret.operands[i], function.outputs[i].dtype);
    }
  }
}

LogicalResult HostProgramBuilder::visitConstant(arith::ConstantOp op) {
  Attribute value = op.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(value)) {
    // Index registers hold i1 as 0 or 1 (as comparisons produce), other
    // integers sign-extended: `true` is 1, not -1.
    indexRegs[op.getResult()] =
        constant(integer.getType().isInteger(1)
                     ? static_cast<int64_t>(integer.getValue().getZExtValue())
                     : integer.getValue().getSExtValue());
    return success();
  }
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!type)
    return op.emitError("host program: unsupported scalar constant ") << value;
  std::optional<DType> dtype = toDType(type.getElementType());
  std::optional<std::string> bytes = constantBytes(value);
  if (!dtype || !bytes)
    return op.emitError("host program: unsupported constant of type ") << type;
  art::Parameter param;
  param.name = "constant_" + std::to_string(artifact.parameters.size());
  // A frontend's name for the tensor (e.g. the state_dict key), if unused.
  if (auto name = op->getAttrOfType<StringAttr>(kParamNameAttr))
    if (llvm::none_of(artifact.parameters,
                      [&](const art::Parameter &p) { return p.name == name.getValue(); }))
      param.name = name.str();
  param.dtype = *dtype;
  param.shape.assign(type.getShape().begin(), type.getShape().end());
  while (artifact.paramData.size() % 64)
    artifact.paramData.push_back('\0');
  param.offset = artifact.paramData.size();
  param.size = bytes->size();
  artifact.paramData += *bytes;
  artifact.parameters.push_back(param);
  art::Instruction inst;
  inst.op = art::Opcode::Param;
  inst.dst = newBuffer(op.getResult());
  inst.imm = artifact.parameters.size() - 1;
  code->push_back(inst);
  return success();
}

LogicalResult HostProgramBuilder::visitReshape(Operation *op, Value source,
                                               Value result) {
  FailureOr<int32_t> src = buffer(op, source);
  if (failed(src))
    return failure();
  auto type = cast<RankedTensorType>(result.getType());
  art::Instruction inst;
  inst.op = art::Opcode::Reshape;
  inst.a = *src;
  // Dynamic result dims, per op kind.
  SmallVector<int32_t> dims;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    for (OpFoldResult size : expand.getMixedOutputShape()) {
      if (auto attr = dyn_cast<Attribute>(size))
        dims.push_back(constant(cast<IntegerAttr>(attr).getInt()));
      else
        dims.push_back(indexReg(cast<Value>(size)));
    }
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (auto [i, group] : llvm::enumerate(collapse.getReassociationIndices())) {
      if (!type.isDynamicDim(i)) {
        dims.push_back(constant(type.getDimSize(i)));
        continue;
      }
      int32_t product = -1;
      for (int64_t d : group) {
        int32_t dim = dimOf(*src, d);
        if (product < 0) {
          product = dim;
          continue;
        }
        art::Instruction mul;
        mul.op = art::Opcode::Binary;
        mul.kind = art::BinaryKind::Mul;
        mul.dst = numIndex++;
        mul.a = product;
        mul.b = dim;
        code->push_back(mul);
        product = mul.dst;
      }
      dims.push_back(product);
    }
  } else { // tensor.cast: same dims as the source.
    for (int64_t i = 0; i < type.getRank(); ++i)
      dims.push_back(type.isDynamicDim(i) ? dimOf(*src, i)
                                          : constant(type.getDimSize(i)));
  }
  inst.operands.assign(dims.begin(), dims.end());
  inst.dst = newBuffer(result);
  code->push_back(inst);
  return success();
}

LogicalResult HostProgramBuilder::visitDispatch(DispatchOp op) {
  auto it = kernelIndex.find(op.getKernel());
  if (it == kernelIndex.end())
    return op.emitError("host program: unknown kernel ") << op.getKernel();
  art::Instruction dispatch;
  dispatch.op = art::Opcode::Dispatch;
  dispatch.imm = it->second;
  for (int axis = 0; axis < 3; ++axis)
    dispatch.workgroups[axis] = indexReg(op.getWorkgroups()[axis]);
  for (Value arg : op.getArgs()) {
    FailureOr<int32_t> reg = buffer(op, arg);
    if (failed(reg))
      return failure();
    dispatch.bindings.push_back(*reg);
  }
  auto resultDim = op.getResultDims().begin();
  for (auto [i, result] : llvm::enumerate(op.getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    if (i < op.getInPlace().size()) {
      // Written in place: the result is its in_place operand's storage.
      FailureOr<int32_t> reg = buffer(op, op.getInPlace()[i]);
      if (failed(reg))
        return failure();
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          ++resultDim;
      bufferRegs[result] = *reg;
      dispatch.bindings.push_back(*reg);
      continue;
    }
    art::Instruction alloc;
    alloc.op = art::Opcode::Alloc;
    alloc.dtype = *toDType(type.getElementType());
    for (int64_t i = 0; i < type.getRank(); ++i)
      alloc.operands.push_back(type.isDynamicDim(i)
                                   ? indexReg(*resultDim++)
                                   : constant(type.getDimSize(i)));
    alloc.dst = newBuffer(result);
    code->push_back(alloc);
    dispatch.bindings.push_back(alloc.dst);
  }
  for (Value c : op.getConstants())
    dispatch.operands.push_back(indexReg(c));
  code->push_back(dispatch);
  return success();
}

/// Index registers hold every integer value sign-extended to 64 bits (i1:
/// 0 or 1, as comparisons produce). Widening a signed value or casting
/// between index and i64 is a copy; zero-extension masks, truncation
/// re-sign-extends from the narrower width.
LogicalResult HostProgramBuilder::visitIntegerCast(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  auto widthOf = [](Type t) -> unsigned {
    return t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
  };
  unsigned inWidth = widthOf(in.getType()), outWidth = widthOf(out.getType());
  int32_t src = indexReg(in);
  bool zeroExtend = isa<arith::IndexCastUIOp, arith::ExtUIOp>(op);
  if (zeroExtend && inWidth > 1 && inWidth < 64 && outWidth > inWidth) {
    indexRegs[out] = binary(art::BinaryKind::And, src,
                            constant((int64_t(1) << inWidth) - 1));
    return success();
  }
  if (!zeroExtend && inWidth == 1 && outWidth > 1) {
    // Sign-extending i1 true gives -1.
    indexRegs[out] = binary(art::BinaryKind::Sub, constant(0), src);
    return success();
  }
  if (outWidth < inWidth && outWidth > 1 && outWidth < 64) {
    int32_t shift = constant(64 - outWidth);
    indexRegs[out] = binary(art::BinaryKind::ShrS,
                            binary(art::BinaryKind::Shl, src, shift), shift);
    return success();
  }
  if (outWidth == 1 && inWidth > 1) {
    indexRegs[out] = binary(art::BinaryKind::And, src, constant(1));
    return success();
  }
  indexRegs[out] = src;
  return success();
}

/// tensor.extract of an integer element of a host-visible tensor (an
/// argument, a parameter or a dispatch result): the shape-determining values
/// that are only known at run time (a Reshape target shape that is a graph
/// input, a Range count computed by a kernel).
LogicalResult HostProgramBuilder::visitExtract(tensor::ExtractOp op) {
  Type elementType = op.getResult().getType();
  if (!elementType.isIntOrIndex())
    return op.emitError("host program: tensor.extract of a ")
           << elementType << " element cannot run on the host (only integer "
           << "elements are read into index registers)";
  FailureOr<int32_t> src = buffer(op, op.getTensor());
  if (failed(src))
    return failure();
  art::Instruction inst;
  inst.op = art::Opcode::Load;
  inst.a = *src;
  std::optional<DType> dtype =
      elementType.isIndex() ? std::optional<DType>(DType::i64) : toDType(elementType);
  if (!dtype)
    return op.emitError("host program: cannot load elements of type ") << elementType;
  inst.dtype = *dtype;
  for (Value i : op.getIndices())
    inst.operands.push_back(indexReg(i));
  inst.dst = indexReg(op.getResult());
  code->push_back(inst);
  return success();
}

/// The host string ops: one instruction each, buf[dst] = op(buf[a]).
LogicalResult HostProgramBuilder::visitStringOp(Operation *op) {
  FailureOr<int32_t> src = buffer(op, op->getOperand(0));
  if (failed(src))
    return failure();
  art::Instruction inst;
  inst.a = *src;
  // The numeric side's dtype, unsigned when the op says so (MLIR integers
  // are signless).
  auto numericDType = [&](Value v, bool isUnsigned) {
    DType t = *toDType(cast<RankedTensorType>(v.getType()).getElementType());
    if (isUnsigned && !dtypeIsFloat(t) && t != DType::i1)
      t = *parseDType("u" + std::to_string(dtypeSize(t) * 8));
    return t;
  };
  if (auto normalize = dyn_cast<StringNormalizeOp>(op)) {
    inst.op = art::Opcode::StringNormalize;
    StringRef action = normalize.getCaseChange();
    inst.caseChange = action == "LOWER"   ? art::StringCase::Lower
                      : action == "UPPER" ? art::StringCase::Upper
                                          : art::StringCase::None;
    inst.caseSensitive = normalize.getCaseSensitive();
    for (Attribute word : normalize.getStopwords())
      inst.strings.push_back(cast<StringAttr>(word).str());
    inst.locale = normalize.getLocale().str();
  } else if (auto toString = dyn_cast<ToStringOp>(op)) {
    inst.op = art::Opcode::ToString;
    inst.dtype = numericDType(toString.getInput(), toString.getIsUnsigned());
  } else {
    auto fromString = cast<FromStringOp>(op);
    inst.op = art::Opcode::FromString;
    inst.dtype = numericDType(fromString.getResult(), fromString.getIsUnsigned());
  }
  inst.dst = newBuffer(op->getResult(0));
  code->push_back(inst);
  return success();
}

FailureOr<int32_t> HostProgramBuilder::loopRegister(Operation *user, Value v) {
  if (isa<RankedTensorType>(v.getType()))
    return bufferRegs[v] = numBuffer++;
  if (v.getType().isIntOrIndex())
    return indexRegs[v] = numIndex++;
  return user->emitError("host program: a loop cannot carry a value of type ")
         << v.getType();
}

void HostProgramBuilder::emitMove(Value dst, int32_t dstReg, Value source) {
  art::Instruction move;
  move.dst = dstReg;
  if (isa<RankedTensorType>(dst.getType())) {
    move.op = art::Opcode::MoveBuffer;
    move.a = bufferRegs.lookup(source);
  } else {
    move.op = art::Opcode::Move;
    move.a = indexReg(source);
  }
  code->push_back(move);
}

/// scf.while as a structured loop:
///   move state <- inits
///   loop
///     (before region)  move results <- condition args; break_unless cond
///     (after region, its arguments are the result registers)
///     move state <- yielded values
///   end_loop
/// No move reads a register another move of the same group writes: the
/// before region's arguments (state) are not visible in the after region and
/// vice versa, so the groups need no temporaries.
LogicalResult HostProgramBuilder::visitWhile(scf::WhileOp op) {
  Block &before = op.getBefore().front(), &after = op.getAfter().front();
  for (auto [init, arg] : llvm::zip(op.getInits(), before.getArguments())) {
    if (isa<RankedTensorType>(init.getType()) && failed(buffer(op, init)))
      return failure();
    FailureOr<int32_t> reg = loopRegister(op, arg);
    if (failed(reg))
      return failure();
    emitMove(arg, *reg, init);
  }
  SmallVector<int32_t> resultRegs;
  for (auto [result, arg] : llvm::zip(op.getResults(), after.getArguments())) {
    FailureOr<int32_t> reg = loopRegister(op, result);
    if (failed(reg))
      return failure();
    resultRegs.push_back(*reg);
    if (isa<RankedTensorType>(arg.getType()))
      bufferRegs[arg] = *reg;
    else
      indexRegs[arg] = *reg;
  }
  // Constants first emitted inside the loop are not visible after it (they
  // would be unset when the body runs zero times).
  std::map<int64_t, int32_t> outerConstants = constants;
  size_t loopStart = code->size();
  art::Instruction loop;
  loop.op = art::Opcode::Loop;
  code->push_back(loop);
  for (Operation &inner : before.without_terminator())
    if (failed(visit(&inner)))
      return failure();
  auto condition = cast<scf::ConditionOp>(before.getTerminator());
  for (auto [arg, reg] : llvm::zip(condition.getArgs(), resultRegs)) {
    if (isa<RankedTensorType>(arg.getType()) && failed(buffer(condition, arg)))
      return failure();
    emitMove(arg, reg, arg);
  }
  size_t breakPos = code->size();
  art::Instruction breakUnless;
  breakUnless.op = art::Opcode::BreakUnless;
  breakUnless.a = indexReg(condition.getCondition());
  code->push_back(breakUnless);
  for (Operation &inner : after.without_terminator())
    if (failed(visit(&inner)))
      return failure();
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  for (auto [value, arg] : llvm::zip(yield.getResults(), before.getArguments())) {
    if (isa<RankedTensorType>(value.getType()) && failed(buffer(yield, value)))
      return failure();
    emitMove(arg, isa<RankedTensorType>(arg.getType()) ? bufferRegs[arg] : indexRegs[arg],
             value);
  }
  art::Instruction end;
  end.op = art::Opcode::EndLoop;
  end.imm = static_cast<int64_t>(loopStart);
  code->push_back(end);
  (*code)[loopStart].imm = static_cast<int64_t>(code->size() - 1);
  (*code)[breakPos].imm = static_cast<int64_t>(code->size() - 1);
  constants = std::move(outerConstants);
  return success();
}

LogicalResult HostProgramBuilder::visitGlobal(Operation *op) {
  auto symbol = op->getAttrOfType<SymbolRefAttr>("global");
  auto it = symbol ? globals.find(symbol.getLeafReference().getValue()) : globals.end();
  if (it == globals.end())
    return op->emitError("host program: unknown global ") << symbol;
  const GlobalSlot &slot = it->second;
  art::Instruction inst;
  if (auto store = dyn_cast<ml_program::GlobalStoreOp>(op)) {
    if (slot.parameter >= 0)
      return op->emitError("host program: store into immutable global ") << symbol;
    FailureOr<int32_t> reg = buffer(op, store.getValue());
    if (failed(reg))
      return failure();
    inst.op = art::Opcode::GlobalStore;
    inst.a = *reg;
    inst.imm = slot.global;
    code->push_back(inst);
    return success();
  }
  if (slot.parameter >= 0) {
    inst.op = art::Opcode::Param;
    inst.imm = slot.parameter;
  } else {
    inst.op = art::Opcode::GlobalLoad;
    inst.imm = slot.global;
    inst.requiresInitialized = !op->hasAttr(kUpdateOnlyAttr);
  }
  inst.dst = newBuffer(op->getResult(0));
  code->push_back(inst);
  return success();
}

std::optional<art::BinaryKind> binaryKind(Operation *op) {
  using K = art::BinaryKind;
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq: return K::Eq;
    case arith::CmpIPredicate::ne: return K::Ne;
    case arith::CmpIPredicate::slt: return K::Slt;
    case arith::CmpIPredicate::sle: return K::Sle;
    case arith::CmpIPredicate::sgt: return K::Sgt;
    case arith::CmpIPredicate::sge: return K::Sge;
    case arith::CmpIPredicate::ult: return K::Ult;
    case arith::CmpIPredicate::ule: return K::Ule;
    case arith::CmpIPredicate::ugt: return K::Ugt;
    case arith::CmpIPredicate::uge: return K::Uge;
    }
  }
  return llvm::TypeSwitch<Operation *, std::optional<K>>(op)
      .Case<arith::AddIOp>([](auto) { return K::Add; })
      .Case<arith::SubIOp>([](auto) { return K::Sub; })
      .Case<arith::MulIOp>([](auto) { return K::Mul; })
      .Case<arith::DivSIOp>([](auto) { return K::DivS; })
      .Case<arith::DivUIOp>([](auto) { return K::DivU; })
      .Case<arith::CeilDivSIOp>([](auto) { return K::CeilDivS; })
      .Case<arith::FloorDivSIOp>([](auto) { return K::FloorDivS; })
      .Case<arith::RemSIOp>([](auto) { return K::RemS; })
      .Case<arith::RemUIOp>([](auto) { return K::RemU; })
      .Case<arith::MinSIOp>([](auto) { return K::MinS; })
      .Case<arith::MaxSIOp>([](auto) { return K::MaxS; })
      .Case<arith::MinUIOp>([](auto) { return K::MinU; })
      .Case<arith::MaxUIOp>([](auto) { return K::MaxU; })
      .Case<arith::AndIOp>([](auto) { return K::And; })
      .Case<arith::OrIOp>([](auto) { return K::Or; })
      .Case<arith::XOrIOp>([](auto) { return K::Xor; })
      .Case<arith::ShLIOp>([](auto) { return K::Shl; })
      .Case<arith::ShRSIOp>([](auto) { return K::ShrS; })
      .Case<arith::ShRUIOp>([](auto) { return K::ShrU; })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult HostProgramBuilder::visit(Operation *op) {
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return visitConstant(c);
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    std::optional<int64_t> axis = dim.getConstantIndex();
    FailureOr<int32_t> src = buffer(op, dim.getSource());
    if (!axis || failed(src))
      return op->emitError("host program: tensor.dim needs a constant index");
    indexRegs[dim.getResult()] = dimOf(*src, *axis);
    return success();
  }
  if (std::optional<art::BinaryKind> kind = binaryKind(op)) {
    art::Instruction inst;
    inst.op = art::Opcode::Binary;
    inst.kind = *kind;
    inst.a = indexReg(op->getOperand(0));
    inst.b = indexReg(op->getOperand(1));
    inst.dst = indexReg(op->getResult(0));
    code->push_back(inst);
    return success();
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp>(op))
    return visitIntegerCast(op);
  if (auto extract = dyn_cast<tensor::ExtractOp>(op))
    return visitExtract(extract);
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    if (!select.getType().isIntOrIndex())
      return op->emitError("host program: select on ") << select.getType();
    art::Instruction inst;
    inst.op = art::Opcode::Select;
    inst.a = indexReg(select.getCondition());
    inst.b = indexReg(select.getTrueValue());
    inst.c = indexReg(select.getFalseValue());
    inst.dst = indexReg(select.getResult());
    code->push_back(inst);
    return success();
  }
  if (auto assertOp = dyn_cast<cf::AssertOp>(op)) {
    art::Instruction inst;
    inst.op = art::Opcode::Assert;
    inst.a = indexReg(assertOp.getArg());
    inst.message = assertOp.getMsg().str();
    code->push_back(inst);
    return success();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return visitReshape(op, expand.getSrc(), expand.getResult());
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return visitReshape(op, collapse.getSrc(), collapse.getResult());
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return visitReshape(op, cast.getSource(), cast.getResult());
  if (auto dispatch = dyn_cast<DispatchOp>(op))
    return visitDispatch(dispatch);
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    return visitWhile(loop);
  if (isa<ml_program::GlobalLoadOp, ml_program::GlobalLoadConstOp, ml_program::GlobalStoreOp>(op))
    return visitGlobal(op);
  if (isa<StringNormalizeOp, ToStringOp, FromStringOp>(op))
    return visitStringOp(op);
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    art::Instruction alloc;
    alloc.op = art::Opcode::Alloc;
    auto type = empty.getType();
    alloc.dtype = *toDType(type.getElementType());
    auto dynamic = empty.getDynamicSizes().begin();
    for (int64_t i = 0; i < type.getRank(); ++i)
      alloc.operands.push_back(type.isDynamicDim(i)
                                   ? indexReg(*dynamic++)
                                   : constant(type.getDimSize(i)));
    alloc.dst = newBuffer(empty.getResult());
    code->push_back(alloc);
    return success();
  }
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    art::Instruction inst;
    inst.op = art::Opcode::Return;
    for (Value v : ret.getOperands()) {
      FailureOr<int32_t> reg = buffer(op, v);
      if (failed(reg))
        return failure();
      inst.operands.push_back(*reg);
    }
    code->push_back(inst);
    return success();
  }
  return op->emitError("host program: '")
         << op->getName() << "' cannot run on the host (it was not placed "
         << "in a dispatch region)";
}

/// Appends `bytes` as a parameter; returns its index.
int64_t addParameter(art::Module &out, std::string name, DType dtype, ArrayRef<int64_t> shape,
                     const std::string *bytes) {
  art::Parameter param;
  param.name = std::move(name);
  param.dtype = dtype;
  param.shape.assign(shape.begin(), shape.end());
  if (bytes) {
    while (out.paramData.size() % 64)
      out.paramData.push_back('\0');
    param.offset = out.paramData.size();
    param.size = bytes->size();
    out.paramData += *bytes;
  } else {
    param.external = true;
    param.size = dtypeSize(dtype);
    for (int64_t d : shape)
      param.size *= static_cast<uint64_t>(d);
  }
  out.parameters.push_back(std::move(param));
  return static_cast<int64_t>(out.parameters.size()) - 1;
}

/// True for a splat zero (all bytes zero).
bool isZeroSplat(Attribute value) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || !dense.isSplat())
    return false;
  return llvm::all_of(dense.getRawData(), [](char c) { return c == 0; });
}

/// The artifact's globals table (see the file comment).
LogicalResult buildGlobals(ModuleOp module, art::Module &out,
                           llvm::StringMap<GlobalSlot> &slots) {
  for (auto global : module.getOps<ml_program::GlobalOp>()) {
    auto type = dyn_cast<RankedTensorType>(global.getType());
    std::optional<DType> dtype = type ? toDType(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !dtype || *dtype == DType::string)
      return global.emitError("host program: global '")
             << global.getSymName() << "' has unsupported type " << global.getType();
    art::Global g;
    g.name = global.getSymName().str();
    g.dtype = *dtype;
    g.shape.assign(type.getShape().begin(), type.getShape().end());
    g.isMutable = global.getIsMutable();
    std::string paramName = g.name;
    if (auto name = global->getAttrOfType<StringAttr>(kParamNameAttr))
      paramName = name.str();
    Attribute value = global.getValueAttr();
    GlobalSlot slot;
    if (g.isMutable) {
      if (!value || isa<ml_program::ExternAttr>(value)) {
        g.init = art::GlobalInit::Uninitialized;
      } else if (isZeroSplat(value)) {
        g.init = art::GlobalInit::Zero;
      } else {
        std::optional<std::string> bytes = constantBytes(value);
        if (!bytes)
          return global.emitError("host program: cannot store the initial value of global '")
                 << g.name << "'";
        g.init = art::GlobalInit::Parameter;
        g.parameter = addParameter(out, "initial." + paramName, *dtype, type.getShape(), &*bytes);
      }
    } else {
      std::optional<std::string> bytes;
      if (value && !isa<ml_program::ExternAttr>(value)) {
        bytes = constantBytes(value);
        if (!bytes)
          return global.emitError("host program: cannot store the value of global '")
                 << g.name << "'";
      }
      g.init = art::GlobalInit::Parameter;
      g.parameter =
          addParameter(out, paramName, *dtype, type.getShape(), bytes ? &*bytes : nullptr);
      // A GGUF tensor's raw blocks (turbine-bind-gguf-weights): the runtime
      // binds only a tensor of this ggml type and logical shape.
      if (auto ggml = global->getAttrOfType<StringAttr>("turbine.ggml_type")) {
        art::Parameter &param = out.parameters[g.parameter];
        param.ggmlType = ggml.str();
        if (auto shape = global->getAttrOfType<DenseI64ArrayAttr>("turbine.ggml_shape"))
          param.ggmlShape.assign(shape.asArrayRef().begin(), shape.asArrayRef().end());
      }
      slot.parameter = g.parameter;
    }
    slot.global = static_cast<int64_t>(out.globals.size());
    slots[g.name] = slot;
    out.globals.push_back(std::move(g));
  }
  return success();
}

/// Replaces each affine.apply in `func` by the arith ops that compute it.
LogicalResult expandAffineApplies(func::FuncOp func) {
  SmallVector<affine::AffineApplyOp> applies;
  func.walk([&](affine::AffineApplyOp op) { applies.push_back(op); });
  OpBuilder builder(func.getContext());
  for (affine::AffineApplyOp op : applies) {
    builder.setInsertionPoint(op);
    std::optional<SmallVector<Value, 8>> expanded = affine::expandAffineMap(
        builder, op.getLoc(), op.getAffineMap(), op.getMapOperands());
    if (!expanded || expanded->size() != 1)
      return op.emitError("host program: cannot expand this affine.apply into arith ops");
    op.getResult().replaceAllUsesWith(expanded->front());
    op.erase();
  }
  return success();
}

} // namespace

LogicalResult buildHostPrograms(ModuleOp module, art::Module &out) {
  llvm::StringMap<int64_t> kernelIndex;
  if (ModuleOp kernels = getKernelsModule(module, /*create=*/false)) {
    for (Operation &op : kernels.getBody()->getOperations()) {
      auto symbol = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (!symbol || !op.hasAttr(kKernelAttr))
        continue;
      kernelIndex[symbol.getValue()] = out.kernels.size();
      out.kernels.push_back(symbol.str());
    }
  }
  llvm::StringMap<GlobalSlot> globals;
  if (failed(buildGlobals(module, out, globals)))
    return failure();
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration() || func.isPrivate())
      continue;
    if (failed(expandAffineApplies(func)))
      return failure();
    HostProgramBuilder builder(out, kernelIndex, globals);
    out.functions.emplace_back();
    if (failed(builder.build(func, out.functions.back())))
      return failure();
  }
  return success();
}

} // namespace turbine::compiler
