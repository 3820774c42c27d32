//===- CustomDomainOps.cpp - ONNX nodes of a custom domain -> custom ops --===//
//
// A node whose domain is not an ONNX one (`ai.onnx*`) stands for a custom
// op named "<domain>.<op_type>": it becomes a call of a private declaration
// tagged `turbine.custom_op = "<domain>.<op_type>"`, which
// turbine::kernels::expandCustomOpCalls (kernels/) replaces by a dispatch of
// the registered op's kernel. ONNX cannot infer the outputs of such a node,
// so the model must declare their types (graph value_info or outputs).
// Node attributes are not passed on yet.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace turbine::onnx_frontend {

bool isCustomDomain(const std::string &domain) {
  return !domain.empty() && domain.rfind("ai.onnx", 0) != 0;
}

LogicalResult importCustomDomainNode(
    ImportContext &ctx, const onnx::NodeProto &node,
    const std::function<Type(const std::string &)> &declaredType) {
  OpBuilder &b = ctx.builder;
  std::string opName = node.domain() + "." + node.op_type();
  SmallVector<Value> operands;
  SmallVector<Type> operandTypes;
  for (const std::string &in : node.input()) {
    if (in.empty())
      return ctx.fail(node, "custom op '" + opName + "': optional (empty) inputs "
                            "are not supported");
    FailureOr<Value> v = ctx.getTensor(node, in);
    if (failed(v))
      return failure();
    operands.push_back(*v);
    operandTypes.push_back(v->getType());
  }
  SmallVector<Type> resultTypes;
  for (const std::string &out : node.output()) {
    Type t = declaredType(out);
    if (!t)
      return ctx.fail(node, "custom op '" + opName + "': output '" + out +
                            "' has no declared tensor type (ONNX cannot infer "
                            "it; add it to the graph's value_info)");
    resultTypes.push_back(t);
  }
  // One private declaration per call site (types may differ between calls).
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  OpBuilder declBuilder = OpBuilder::atBlockBegin(module.getBody());
  std::string symbol;
  for (int i = 0; symbol.empty() || module.lookupSymbol(symbol); ++i)
    symbol = "custom_op_" + std::to_string(i);
  auto decl = func::FuncOp::create(declBuilder, ctx.loc, symbol,
                                   b.getFunctionType(operandTypes, resultTypes));
  decl.setPrivate();
  decl->setAttr("turbine.custom_op", b.getStringAttr(opName));
  auto call = func::CallOp::create(b, ctx.loc, decl, operands);
  for (auto [name, result] : llvm::zip(node.output(), call.getResults()))
    ctx.setValue(name, result);
  return success();
}

} // namespace turbine::onnx_frontend
