//===- CustomOpCalls.cpp - Calls of custom ops -> kernel dispatches --------===//
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/kernels/EmitKernel.h"
#include "turbine/kernels/LibraryOps.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"
#include "turbine/compiler/Session.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cctype>
#include <iterator>

using namespace mlir;

namespace turbine::kernels {

#define GEN_PASS_DECL
#define GEN_PASS_DEF_EXPANDCUSTOMOPCALLS
#define GEN_PASS_REGISTRATION
#include "turbine/kernels/Passes.h.inc"

namespace {

std::string locationOf(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getLoc();
  return s;
}

std::string symbolSafe(const std::string &name) {
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

Result<std::vector<BufferSignature>> signatures(TypeRange types,
                                                const std::string &what) {
  std::vector<BufferSignature> out;
  for (auto [i, t] : llvm::enumerate(types)) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    std::optional<DType> dt = tensor ? dtypeOfElementType(tensor.getElementType()) : std::nullopt;
    if (!tensor || !tensor.hasStaticShape() || !dt) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << t;
      return Status::error(what + " " + std::to_string(i) + " has type " + s +
                           "; custom ops in models take tensors of static "
                           "shape and a supported dtype");
    }
    out.push_back({std::vector<int64_t>(tensor.getShape().begin(),
                                        tensor.getShape().end()),
                   *dt});
  }
  return out;
}

/// Replaces `call` by the body of the op's tensor-level function (cloned
/// in place, so the compiler fuses it with its neighbours).
Status inlineTensorBody(ModuleOp module, func::CallOp call, const CustomOp &op,
                        const std::vector<BufferSignature> &args,
                        const CustomOpSelection &selection, const std::string &where) {
  Result<std::string> text = op.generateTensorFunction(args, selection);
  if (!text.ok())
    return Status::error(where + text.message());
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(
      "module {\n" + *text + "\n}\n", module.getContext(), op.name());
  if (!parsed)
    return Status::error(where + "the tensor-level body does not parse");
  auto fns = parsed->getOps<func::FuncOp>();
  if (std::distance(fns.begin(), fns.end()) != 1)
    return Status::error(where + "the tensor-level body must be exactly one func.func");
  func::FuncOp fn = *fns.begin();
  if (fn.isDeclaration() || !fn.getBody().hasOneBlock())
    return Status::error(where + "the tensor-level body must have one block");
  if (fn.getFunctionType() != call.getCalleeType()) {
    std::string have, want;
    llvm::raw_string_ostream h(have), w(want);
    h << fn.getFunctionType();
    w << call.getCalleeType();
    return Status::error(where + "the tensor-level body has type " + have +
                         ", the call has type " + want);
  }
  mlir::Block &body = fn.getBody().front();
  IRMapping map;
  for (auto [arg, operand] : llvm::zip(body.getArguments(), call.getOperands()))
    map.map(arg, operand);
  OpBuilder b(call);
  for (Operation &inner : body.without_terminator())
    b.clone(inner, map);
  Operation *terminator = body.getTerminator();
  for (auto [result, returned] : llvm::zip(call.getResults(), terminator->getOperands()))
    result.replaceAllUsesWith(map.lookupOrDefault(returned));
  call.erase();
  return Status::success();
}

Status expandCall(ModuleOp module, ModuleOp kernels, func::CallOp call,
                  const std::string &opName, int index,
                  std::vector<std::unique_ptr<Kernel>> &keep) {
  std::string where = "custom op '" + opName + "' at " + locationOf(call) + ": ";
  std::shared_ptr<const CustomOp> op = lookupCustomOp(opName);
  if (!op)
    return Status::error(where + "not registered");
  Result<std::vector<BufferSignature>> args = signatures(call.getOperandTypes(), "argument");
  if (!args.ok())
    return Status::error(where + args.message());
  Result<std::vector<BufferSignature>> results = signatures(call.getResultTypes(), "result");
  if (!results.ok())
    return Status::error(where + results.message());
  CustomOpSelection selection;
  selection.arguments = *args;
  if (auto attributes = call->getAttrOfType<DictionaryAttr>(kCustomOpAttributesAttr)) {
    for (NamedAttribute a : attributes) {
      if (auto f = dyn_cast<FloatAttr>(a.getValue()))
        selection.attributes[a.getName().str()] = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
        selection.attributes[a.getName().str()] = static_cast<double>(i.getInt());
      else
        return Status::error(where + "attribute '" + a.getName().str() +
                             "' is not a number");
    }
  }
  if (Status s = op->select(*args, selection); !s.ok())
    return Status::error(where + s.message());
  if (selection.results.size() != results->size())
    return Status::error(where + "the call has " + std::to_string(results->size()) +
                         " results, select chose " +
                         std::to_string(selection.results.size()));
  for (size_t i = 0; i < results->size(); ++i)
    if (selection.results[i].shape != (*results)[i].shape ||
        selection.results[i].dtype != (*results)[i].dtype)
      return Status::error(where + "result " + std::to_string(i) +
                           " of the call disagrees with the type select chose");
  if (op->hasTensorBody())
    return inlineTensorBody(module, call, *op, *args, selection, where);
  std::string funcName;
  std::array<int64_t, 3> gridSize = {1, 1, 1};
  std::vector<int64_t> pushConstants; // values of the kernel's dynamic symbols
  func::FuncOp fn;
  OwningOpRef<ModuleOp> parsed;
  if (op->hasMLIRBody()) {
    Result<MLIRKernelBody> body = op->generateMLIR(*args, selection);
    if (!body.ok())
      return Status::error(where + body.message());
    funcName = symbolSafe(opName) + "_mlir_" + std::to_string(index);
    parsed = parseSourceString<ModuleOp>("module {\n" + body->function + "\n}\n",
                                         module.getContext(), funcName);
    if (!parsed)
      return Status::error(where + "the hand-written kernel does not parse");
    auto fns = parsed->getOps<func::FuncOp>();
    if (std::distance(fns.begin(), fns.end()) != 1)
      return Status::error(where + "the hand-written body must be one func.func");
    fn = *fns.begin();
    gridSize = body->grid;
  } else {
    Result<Kernel> kernel = op->generate(selection);
    if (!kernel.ok())
      return Status::error(where + kernel.message());
    keep.push_back(std::make_unique<Kernel>(std::move(*kernel)));
    const Kernel &k = *keep.back();
    if (k.buffers.size() != args->size() + results->size())
      return Status::error(where + "kernel '" + k.name + "' has " +
                           std::to_string(k.buffers.size()) + " buffers, expected " +
                           std::to_string(args->size()) + " arguments + " +
                           std::to_string(results->size()) + " results");
    for (size_t i = 0; i < k.buffers.size(); ++i) {
      BufferKind want = i < args->size() ? BufferKind::Input : BufferKind::Output;
      if (k.buffers[i].kind != want)
        return Status::error(where + "buffer '" + k.buffers[i].name + "' of kernel '" +
                             k.name + "' must be an " + bufferKindName(want) +
                             " buffer (tensors in a model are not updated in place)");
    }
    std::vector<BufferSignature> all = *args;
    all.insert(all.end(), results->begin(), results->end());
    Result<Specialization> spec = specialize(k, all, selection.symbols);
    if (!spec.ok())
      return Status::error(where + spec.message());
    funcName = symbolSafe(opName) + "_" + k.name + "_" + std::to_string(index);
    OpBuilder kb = OpBuilder::atBlockEnd(kernels.getBody());
    Result<func::FuncOp> built = buildKernelFunction(kb, *spec, funcName);
    if (!built.ok())
      return Status::error(where + built.message());
    fn = *built;
    gridSize = spec->grid;
    for (const DynamicSymbol &d : k.dynamicSymbols)
      pushConstants.push_back(spec->symbols.at(d.name));
  }
  if (op->hasMLIRBody()) {
    fn->remove();
    SymbolTable::setSymbolName(fn, funcName);
    kernels.push_back(fn);
  }
  fn->setAttr(compiler::kKernelAttr, UnitAttr::get(module.getContext()));

  OpBuilder b(call);
  SmallVector<Value> grid;
  for (int64_t g : gridSize)
    grid.push_back(arith::ConstantIndexOp::create(b, call.getLoc(), g));
  SmallVector<Value> constants;
  for (int64_t c : pushConstants)
    constants.push_back(arith::ConstantIndexOp::create(b, call.getLoc(), c));
  auto dispatch = compiler::DispatchOp::create(
      b, call.getLoc(), call.getResultTypes(),
      FlatSymbolRefAttr::get(b.getContext(), funcName), grid,
      call.getOperands(), constants, ValueRange{});
  call.replaceAllUsesWith(dispatch.getResults());
  call.erase();
  return Status::success();
}

} // namespace

Status expandCustomOpCalls(ModuleOp module) {
  SmallVector<std::pair<func::CallOp, std::string>> calls;
  module.walk([&](func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee)
      return;
    if (auto name = callee->getAttrOfType<StringAttr>(kCustomOpAttr))
      calls.push_back({call, name.str()});
  });
  if (calls.empty())
    return Status::success();
  bool hadContainer = static_cast<bool>(compiler::getKernelsModule(module, /*create=*/false));
  ModuleOp kernels = compiler::getKernelsModule(module, /*create=*/true);
  // Kernels must outlive their specializations until emitted.
  std::vector<std::unique_ptr<Kernel>> keep;
  int index = 0;
  for (auto &[call, name] : calls)
    if (Status s = expandCall(module, kernels, call, name, index++, keep); !s.ok())
      return s;
  // The declarations have no uses left.
  SmallVector<func::FuncOp> declarations;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr(kCustomOpAttr) && fn.isDeclaration())
      declarations.push_back(fn);
  for (func::FuncOp fn : declarations)
    if (SymbolTable::symbolKnownUseEmpty(fn, module))
      fn.erase();
  // Only tensor-level bodies (inlined): no kernel container needed yet.
  if (!hadContainer && kernels.getBody()->empty())
    kernels.erase();
  return Status::success();
}

namespace {

struct ExpandCustomOpCallsPass : impl::ExpandCustomOpCallsBase<ExpandCustomOpCallsPass> {
  void runOnOperation() override {
    if (Status expanded = expandCustomOpCalls(getOperation()); !expanded) {
      // The message names the call's location itself.
      mlir::emitError(UnknownLoc::get(&getContext()), expanded.message());
      signalPassFailure();
    }
  }
};

/// Expands custom-op calls first thing in the dispatch phase.
class CustomOpExtension final : public compiler::PipelineExtension {
public:
  void addPassesBefore(compiler::Phase phase, OpPassManager &pm) const override {
    if (phase == compiler::Phase::Dispatch)
      pm.addPass(createExpandCustomOpCalls());
  }
};

} // namespace

Result<std::shared_ptr<const compiler::PipelineExtension>> createCustomOpExtension() {
  if (Status registered = registerLibraryOps(); !registered)
    return registered;
  return std::shared_ptr<const compiler::PipelineExtension>(
      std::make_shared<CustomOpExtension>());
}

void registerCustomOpPasses() {
  (void)registerLibraryOps();
  registerTurbineKernelsPasses();
}

} // namespace turbine::kernels
