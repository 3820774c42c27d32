//===- LowerKernelsToLLVM.cpp - Kernel ABI ops and the LLVM lowering ------===//
//
// Lowers bufferized, vectorized kernels to the LLVM dialect:
//  * turbine.binding / push_constant / workgroup_count become loads from the
//    turbine_dispatch_state_t the kernel receives (artifact/KernelABI.h);
//    a binding becomes a dense row-major memref descriptor over the pointer.
//  * math functions get polynomial approximations (exp and erf on f32: our
//    own, MathApproximations.h; tanh, log, ... on f32 vectors: upstream's);
//    what remains maps to LLVM intrinsics or libm; float max / min ignore
//    the sign of zero (below: 1-3 instructions instead of 6).
//  * then upstream's conversions to the LLVM dialect, with the loops that
//    only fill memory marked not to be unrolled by LLVM on the way
//    (turbine-cpu-keep-fill-loops-rolled, FillLoopUnrolling.cpp).
// The first two are the passes turbine-cpu-approximate-math and
// turbine-cpu-lower-kernel-abi; addLLVMLoweringPasses adds the rest.
//===----------------------------------------------------------------------===//
#include "targets/cpu/LowerKernelsToLLVM.h"

#include "targets/cpu/MathApproximations.h"

#include "turbine/compiler/Passes.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_CPUAPPROXIMATEMATH
#define GEN_PASS_DEF_CPULOWERKERNELABI
#include "turbine/compiler/Passes.h.inc"

namespace {

/// LLVM type of turbine_dispatch_state_t.
LLVM::LLVMStructType getStateType(MLIRContext *ctx) {
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  return LLVM::LLVMStructType::getLiteral(
      ctx, {ptr, ptr, LLVM::LLVMArrayType::get(i64, 3)});
}

/// Loads element `index` of the array whose pointer is field `field` of the
/// state struct.
Value loadFromStateArray(OpBuilder &b, Location loc, Value state, int field,
                         int64_t index, Type elementType) {
  MLIRContext *ctx = b.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Value fieldPtr = LLVM::GEPOp::create(b, loc, ptrType, getStateType(ctx),
                                       state, ArrayRef<LLVM::GEPArg>{0, field});
  Value array = LLVM::LoadOp::create(b, loc, ptrType, fieldPtr);
  Value elementPtr =
      LLVM::GEPOp::create(b, loc, ptrType, elementType, array,
                          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
  return LLVM::LoadOp::create(b, loc, elementType, elementPtr,
                              /*alignment=*/0, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/true);
}

Value toIndex(OpBuilder &b, Location loc, Value i64) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i64);
}

Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

void lowerAbiOps(ModuleOp kernels) {
  MLIRContext *ctx = kernels.getContext();
  LLVMTypeConverter converter(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Operation *> toErase;

  kernels.walk([&](PushConstantOp op) {
    OpBuilder b(op);
    Value v = loadFromStateArray(b, op.getLoc(), op.getState(), 1,
                                 op.getIndex(), i64);
    op.replaceAllUsesWith(toIndex(b, op.getLoc(), v));
    toErase.push_back(op);
  });
  kernels.walk([&](WorkgroupCountOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value field = LLVM::GEPOp::create(
        b, loc, ptrType, getStateType(ctx), op.getState(),
        ArrayRef<LLVM::GEPArg>{0, 2,
                               static_cast<int32_t>(op.getDimension())});
    Value v = LLVM::LoadOp::create(b, loc, i64, field);
    op.replaceAllUsesWith(toIndex(b, loc, v));
    toErase.push_back(op);
  });
  kernels.walk([&](BindingOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto type = cast<MemRefType>(op.getType());
    Value base = loadFromStateArray(b, loc, op.getState(), 0, op.getIndex(),
                                    ptrType);
    auto descType = converter.convertType(type);
    MemRefDescriptor desc = MemRefDescriptor::poison(b, loc, descType);
    desc.setAllocatedPtr(b, loc, base);
    desc.setAlignedPtr(b, loc, base);
    desc.setConstantOffset(b, loc, 0);
    // Sizes, then row-major strides from the innermost dim outwards.
    SmallVector<Value> sizes;
    auto dynamic = op.getDynamicDims().begin();
    for (int64_t i = 0; i < type.getRank(); ++i) {
      Value size = type.isDynamicDim(i)
                       ? toI64(b, loc, *dynamic++)
                       : LLVM::ConstantOp::create(b, loc, i64,
                                                  type.getDimSize(i))
                             .getResult();
      sizes.push_back(size);
      desc.setSize(b, loc, i, size);
    }
    Value stride = LLVM::ConstantOp::create(b, loc, i64, 1);
    for (int64_t i = type.getRank() - 1; i >= 0; --i) {
      desc.setStride(b, loc, i, stride);
      stride = LLVM::MulOp::create(b, loc, stride, sizes[i]);
    }
    Value memref =
        UnrealizedConversionCastOp::create(b, loc, type, Value(desc))
            .getResult(0);
    op.replaceAllUsesWith(memref);
    toErase.push_back(op);
  });
  for (Operation *op : toErase)
    op->erase();
}

/// Every kernel-level lowering after the ABI ops, as a pass pipeline string
/// (a module-level pipeline, without the enclosing builtin.module()).
constexpr const char *kLLVMLoweringPipeline =
    "func.func(convert-linalg-to-loops,lower-affine,"
    "convert-vector-to-scf{full-unroll=true},turbine-cpu-keep-fill-loops-rolled,"
    "convert-scf-to-cf,"
    "canonicalize,cse),"
    "convert-math-to-llvm,convert-math-to-libm,"
    "convert-vector-to-llvm{reassociate-fp-reductions=true enable-x86vector=true},"
    "expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm,convert-index-to-llvm,"
    "convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "convert-ub-to-llvm,reconcile-unrealized-casts,canonicalize,cse";

/// arith.maximumf / minimumf are IEEE-754 2019 maximum / minimum: a NaN
/// operand gives NaN, and -0 < +0. x86 has neither in one instruction: with
/// both, LLVM spends 6 (a sign test, two blends, the max, an unordered
/// compare, a masked move) per vector; ignoring the sign of zero (`nsz`) it
/// spends 3, and 1 where the other operand is a constant (ReLU's max with
/// 0). NaN still propagates; only whether max(-0, +0) is -0 or +0 is left
/// open, as ONNX Runtime's and torch's CPU kernels leave it (they keep the
/// first or the second operand of equal ones).
template <typename MinMaxOp>
void ignoreSignedZeros(MinMaxOp op) {
  op.setFastmath(op.getFastmath() | arith::FastMathFlags::nsz);
}

struct CpuApproximateMathPass : impl::CpuApproximateMathBase<CpuApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathApproximationPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("codegen: math approximation did not converge");
      signalPassFailure();
    }
    getOperation().walk([](Operation *op) {
      if (auto max = dyn_cast<arith::MaximumFOp>(op))
        ignoreSignedZeros(max);
      else if (auto min = dyn_cast<arith::MinimumFOp>(op))
        ignoreSignedZeros(min);
    });
  }
};

struct CpuLowerKernelAbiPass : impl::CpuLowerKernelAbiBase<CpuLowerKernelAbiPass> {
  void runOnOperation() override { lowerAbiOps(getOperation()); }
};

} // namespace

Status addLLVMLoweringPasses(OpPassManager &kernelsPm) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(kLLVMLoweringPipeline, kernelsPm, os)))
    return Status::error("internal error: the LLVM lowering pipeline does not parse "
                         "(are the upstream passes registered?): " + errors);
  return Status::success();
}

} // namespace turbine::compiler
