//===- TurbineOps.cpp - turbine:: torch ops -> custom-op calls -------------===//
//
// A node calling one of Turbine's own torch operators (TurbineTorchOps.h,
// e.g. `turbine::softmax` from torch.ops.turbine.softmax) becomes a call of a
// private declaration tagged `turbine.custom_op = "turbine.<name>"`, the
// form the ONNX frontend uses for custom-domain nodes; the compiler driver's
// expandCustomOpCalls (kernels/) replaces it by a dispatch of the kernel
// library's kernel, specialized to the call's shapes. Tensor arguments are
// the call's operands; number arguments go into the call's
// `turbine.custom_op_attributes` dictionary under their schema names
// (layer_norm's eps). The kernels are specialized to static shapes, so a
// tensor argument with a dynamic dim is an error naming the op, the argument
// and the dim. Ops defined outside the importer (Python CustomOp classes;
// ImportOptions::customOpName) take the same path, typed by the caller's
// customOpResultTypes (the op's select step) instead of a fixed shape rule.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "turbine/frontends/torch/TurbineTorchOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

/// Argument names of a schema "ns::name(Tensor x, float eps=1e-05) -> Tensor".
std::vector<std::string> argumentNames(const std::string &schema) {
  std::vector<std::string> names;
  size_t open = schema.find('('), close = schema.find(')');
  if (open == std::string::npos || close == std::string::npos)
    return names;
  std::string list = schema.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    std::string arg = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    arg = arg.substr(0, arg.find('='));
    size_t last = arg.find_last_not_of(' ');
    size_t space = arg.rfind(' ', last);
    names.push_back(arg.substr(space == std::string::npos ? 0 : space + 1,
                               last - (space == std::string::npos ? 0 : space + 1) + 1));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return names;
}

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// The private declaration @<customOp>[_<i>] of `type` for the op.
func::FuncOp declaration(ImportContext &ctx, const std::string &customOp, FunctionType type) {
  auto module = ctx.builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  for (int i = 0;; ++i) {
    std::string symbol = i ? customOp + "_" + std::to_string(i) : customOp;
    auto existing = module.lookupSymbol<func::FuncOp>(symbol);
    if (existing && existing.getFunctionType() == type)
      return existing;
    if (existing)
      continue;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(b, ctx.loc, symbol, type);
    decl.setPrivate();
    decl->setAttr("turbine.custom_op", b.getStringAttr(customOp));
    return decl;
  }
}

/// Result types of a call, given its operands and attributes.
using ResultTypesFn = std::function<Result<std::vector<Type>>(
    const SmallVector<Value> &operands, const std::map<std::string, double> &attributes)>;

/// A node calling custom op `customOp` as a call of its declaration.
LogicalResult importCall(ImportContext &ctx, const TorchNode &node, const std::string &schema,
                         const std::string &customOp, const ResultTypesFn &resultTypes) {
  std::vector<std::string> names = argumentNames(node.schema.empty() ? schema : node.schema);
  SmallVector<Value> operands;
  NamedAttrList attributes;
  std::map<std::string, double> numbers;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    std::string name = i < names.size() ? names[i] : "#" + std::to_string(i);
    TValue &v = ctx.input(node, i);
    if (v.isTensor()) {
      FailureOr<Value> t = ctx.tensorInput(node, i);
      if (failed(t))
        return failure();
      auto type = tensorType(*t);
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          return ctx.fail(node, "argument '" + name + "' (" + typeText(type) + ") has dynamic dim " +
                                    std::to_string(d) +
                                    "; Turbine kernels in a compiled model are specialized to "
                                    "static shapes (compile without a dynamic dim that reaches "
                                    "this op)");
      operands.push_back(*t);
    } else if (v.kind == TValue::Kind::Float || v.kind == TValue::Kind::Bool ||
               (v.kind == TValue::Kind::Int && v.intValue.isConstant())) {
      double value = v.kind == TValue::Kind::Float ? v.floatValue
                     : v.kind == TValue::Kind::Bool ? (double)v.boolValue
                                                    : (double)v.intValue.constant;
      attributes.append(name, ctx.builder.getF64FloatAttr(value));
      numbers[name] = value;
    } else {
      return ctx.fail(node, "argument '" + name +
                                "' must be a tensor or a number known at import time");
    }
  }
  Result<std::vector<Type>> results = resultTypes(operands, numbers);
  if (!results.ok())
    return ctx.fail(node, results.message());
  if (results->size() != node.outputs.size())
    return ctx.fail(node, "custom op '" + customOp + "' has " + std::to_string(results->size()) +
                              " results, the TorchScript node " +
                              std::to_string(node.outputs.size()));
  SmallVector<Type> operandTypes;
  for (Value v : operands)
    operandTypes.push_back(v.getType());
  func::FuncOp decl =
      declaration(ctx, customOp, ctx.builder.getFunctionType(operandTypes, *results));
  auto call = func::CallOp::create(ctx.builder, ctx.loc, decl, operands);
  if (!attributes.empty())
    call->setAttr("turbine.custom_op_attributes", attributes.getDictionary(&ctx.context));
  for (size_t i = 0; i < call.getNumResults(); ++i)
    ctx.setTensor(node, i, call.getResult(i));
  return success();
}

LogicalResult importTurbineOp(ImportContext &ctx, const TorchNode &node,
                              const TurbineTorchOp &op) {
  std::string customOp = std::string("turbine.") + op.name;
  return importCall(ctx, node, op.schema, customOp,
                    [&](const SmallVector<Value> &operands,
                        const std::map<std::string, double> &) -> Result<std::vector<Type>> {
    SmallVector<int64_t> shape;
    for (const TurbineOpResultDim &d : op.resultShape) {
      if (d.input >= (int)operands.size() || d.dim >= tensorType(operands[d.input]).getRank())
        return Status::error("expects at least " + std::to_string(d.input + 1) +
                             " tensor argument(s) of rank > " + std::to_string(d.dim));
      shape.push_back(tensorType(operands[d.input]).getDimSize(d.dim));
    }
    return std::vector<Type>{RankedTensorType::get(shape, ctx.builder.getF32Type())};
  });
}

} // namespace

LogicalResult importCustomOpNode(ImportContext &ctx, const TorchNode &node,
                                 const std::string &customOp) {
  if (!ctx.options || !ctx.options->customOpResultTypes)
    return ctx.fail(node, "custom op '" + customOp + "' has no result-type rule");
  return importCall(ctx, node, node.schema, customOp,
                    [&](const SmallVector<Value> &operands,
                        const std::map<std::string, double> &attributes) {
    std::vector<Type> types;
    for (Value v : operands)
      types.push_back(v.getType());
    return ctx.options->customOpResultTypes(customOp, types, attributes);
  });
}

void registerTurbineOps(OpRegistry &registry) {
  for (const TurbineTorchOp &op : turbineTorchOps())
    registry.add(std::string("turbine::") + op.name,
                 [&op](ImportContext &ctx, const TorchNode &node) {
                   return importTurbineOp(ctx, node, op);
                 });
}

} // namespace turbine::torch_frontend
