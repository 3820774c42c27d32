//===- OutlineKernels.cpp - Kernel functions -> gpu.func kernels ----------===//
//
// The pass turbine-cuda-outline-kernels (Passes.td has the contract). The
// CPU kernel ABI (artifact/KernelABI.h) calls a kernel once per workgroup
// with a dispatch state; on CUDA every workgroup is one thread and the
// state's contents become kernel parameters:
//
//   gpu.func @k(ptr b0 .. bN-1, i64 c0 .. cM-1, i64 count_x, count_y, count_z)
//
// so the runtime launches any kernel with cuLaunchKernel from the dispatch
// instruction alone (bindings, push constants, the grid), as the CPU
// runtime calls any kernel through one signature. The counts are the host
// program's grid; the runtime rounds them up to whole thread blocks and the
// kernel body runs only in threads whose ids are below them, so every
// workgroup id runs exactly once, as on the CPU.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Passes.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_CUDAOUTLINEKERNELS
#include "turbine/compiler/Passes.h.inc"

namespace {

/// Name of the gpu.module that holds every kernel (EmitCuda.cpp finds it).
constexpr llvm::StringLiteral kGpuModuleName = "turbine_cuda_kernels";

/// The binding a kernel reads, as a dense row-major memref over `base`.
Value bindingMemRef(OpBuilder &b, Location loc, BindingOp op, Value base,
                    const LLVMTypeConverter &converter) {
  auto i64 = b.getI64Type();
  auto type = cast<MemRefType>(op.getType());
  MemRefDescriptor desc = MemRefDescriptor::poison(b, loc, converter.convertType(type));
  desc.setAllocatedPtr(b, loc, base);
  desc.setAlignedPtr(b, loc, base);
  desc.setConstantOffset(b, loc, 0);
  SmallVector<Value> sizes;
  auto dynamic = op.getDynamicDims().begin();
  for (int64_t i = 0; i < type.getRank(); ++i) {
    Value size = type.isDynamicDim(i)
                     ? arith::IndexCastOp::create(b, loc, i64, *dynamic++).getResult()
                     : LLVM::ConstantOp::create(b, loc, i64, type.getDimSize(i)).getResult();
    sizes.push_back(size);
    desc.setSize(b, loc, i, size);
  }
  Value stride = LLVM::ConstantOp::create(b, loc, i64, 1);
  for (int64_t i = type.getRank() - 1; i >= 0; --i) {
    desc.setStride(b, loc, i, stride);
    stride = LLVM::MulOp::create(b, loc, stride, sizes[i]);
  }
  return UnrealizedConversionCastOp::create(b, loc, type, Value(desc)).getResult(0);
}

LogicalResult outlineKernel(func::FuncOp kernel, gpu::GPUModuleOp gpuModule,
                            const LLVMTypeConverter &converter) {
  MLIRContext *ctx = kernel.getContext();
  if (!kernel.getBody().hasOneBlock())
    return kernel.emitError("codegen (cuda): kernel '")
           << kernel.getSymName() << "' has unstructured control flow";
  Block &body = kernel.getBody().front();
  if (body.getNumArguments() != 4)
    return kernel.emitError("codegen (cuda): kernel '")
           << kernel.getSymName() << "' does not have the kernel ABI's 4 arguments";

  int64_t numBindings = 0, numConstants = 0;
  kernel.walk([&](BindingOp op) {
    numBindings = std::max<int64_t>(numBindings, op.getIndex() + 1);
  });
  kernel.walk([&](PushConstantOp op) {
    numConstants = std::max<int64_t>(numConstants, op.getIndex() + 1);
  });

  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> inputs(numBindings, ptr);
  inputs.append(numConstants + 3, i64);
  OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
  Location loc = kernel.getLoc();
  auto func = gpu::GPUFuncOp::create(b, loc, kernel.getSymName(),
                                     FunctionType::get(ctx, inputs, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);

  // Workgroup ids: global thread ids along x and y, the block along z.
  auto globalId = [&](gpu::Dimension dim) -> Value {
    Value block = gpu::BlockIdOp::create(b, loc, dim);
    if (dim == gpu::Dimension::z)
      return block;
    Value size = gpu::BlockDimOp::create(b, loc, dim);
    Value thread = gpu::ThreadIdOp::create(b, loc, dim);
    return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, block, size), thread);
  };
  Value ids[3] = {globalId(gpu::Dimension::x), globalId(gpu::Dimension::y),
                  globalId(gpu::Dimension::z)};
  Value counts[3];
  Value inRange;
  for (int d = 0; d < 3; ++d) {
    counts[d] = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           entry.getArgument(numBindings + numConstants + d));
    Value below =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ids[d], counts[d]);
    inRange = inRange ? arith::AndIOp::create(b, loc, inRange, below).getResult() : below;
  }
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  gpu::ReturnOp::create(b, loc);

  // The ABI ops become parameters.
  SmallVector<Operation *> abiOps;
  kernel.walk([&](Operation *op) {
    if (isa<BindingOp, PushConstantOp, WorkgroupCountOp>(op))
      abiOps.push_back(op);
  });
  for (Operation *op : abiOps) {
    OpBuilder ob(op);
    Value replacement;
    if (auto binding = dyn_cast<BindingOp>(op))
      replacement = bindingMemRef(ob, op->getLoc(), binding,
                                  entry.getArgument(binding.getIndex()), converter);
    else if (auto constant = dyn_cast<PushConstantOp>(op))
      replacement = arith::IndexCastOp::create(
          ob, op->getLoc(), ob.getIndexType(),
          entry.getArgument(numBindings + constant.getIndex()));
    else
      replacement = counts[cast<WorkgroupCountOp>(op).getDimension()];
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
  if (!body.getArgument(0).use_empty())
    return kernel.emitError("codegen (cuda): kernel '")
           << kernel.getSymName() << "' uses its dispatch state other than through "
           << "turbine.binding / push_constant / workgroup_count";
  for (int d = 0; d < 3; ++d)
    body.getArgument(1 + d).replaceAllUsesWith(ids[d]);

  // The body, without its return, into the guard.
  Block *then = guard.thenBlock();
  Operation *terminator = body.getTerminator();
  if (!isa<func::ReturnOp>(terminator) || terminator->getNumOperands() != 0)
    return kernel.emitError("codegen (cuda): kernel '")
           << kernel.getSymName() << "' returns values";
  then->getOperations().splice(then->begin(), body.getOperations(), body.begin(),
                               terminator->getIterator());

  // What stays in the container: the kernel's name and parameter counts.
  kernel.getBody().getBlocks().clear();
  kernel.setPrivate();
  kernel->setAttr("turbine.cuda.bindings", b.getI64IntegerAttr(numBindings));
  kernel->setAttr("turbine.cuda.constants", b.getI64IntegerAttr(numConstants));
  return success();
}

struct CudaOutlineKernelsPass : impl::CudaOutlineKernelsBase<CudaOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp container = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : container.getOps<func::FuncOp>())
      if (func->hasAttr(kKernelAttr) && !func.isDeclaration())
        kernels.push_back(func);
    if (kernels.empty())
      return;
    OpBuilder b = OpBuilder::atBlockEnd(container.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, container.getLoc(), kGpuModuleName);
    LLVMTypeConverter converter(&getContext());
    for (func::FuncOp kernel : kernels)
      if (failed(outlineKernel(kernel, gpuModule, converter)))
        return signalPassFailure();
    // Anything else a kernel still calls is not in the gpu.module.
    WalkResult calls = gpuModule.walk([&](func::CallOp call) {
      call.emitError("codegen (cuda): kernel calls '")
          << call.getCallee() << "', which has no GPU version";
      return WalkResult::interrupt();
    });
    if (calls.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

} // namespace turbine::compiler
