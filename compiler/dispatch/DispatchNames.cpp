//===- DispatchNames.cpp - Kernel names from root ops and shapes ----------===//
#include "dispatch/DispatchNames.h"

#include "global-opt/LowerPads.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

std::string size(int64_t extent) {
  return ShapedType::isDynamic(extent) ? "D" : std::to_string(extent);
}

std::string join(llvm::ArrayRef<int64_t> extents) { return formatExtents(extents); }

/// The product of `dims`' loop ranges (dynamic if any is).
int64_t product(llvm::ArrayRef<int64_t> ranges, llvm::ArrayRef<unsigned> dims) {
  int64_t result = 1;
  for (unsigned d : dims) {
    if (ShapedType::isDynamic(ranges[d]))
      return ShapedType::kDynamic;
    result *= ranges[d];
  }
  return result;
}

} // namespace

std::string formatExtents(llvm::ArrayRef<int64_t> extents) {
  std::string text;
  for (int64_t extent : extents)
    text += (text.empty() ? "" : "x") + size(extent);
  return text.empty() ? "scalar" : text;
}

std::string resultElementTypeName(Operation *op) {
  Type type = op->getNumResults() ? op->getResult(0).getType() : Type();
  if (auto shaped = dyn_cast_or_null<ShapedType>(type))
    type = shaped.getElementType();
  if (!type)
    return "none";
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

namespace {

std::string resultShape(Operation *op) {
  if (op->getNumResults() == 0)
    return "scalar";
  if (auto shaped = dyn_cast<ShapedType>(op->getResult(0).getType()))
    return join(shaped.getShape());
  return "scalar";
}

/// KHxKWsS: the window and its (first) stride.
std::string window(llvm::ArrayRef<int64_t> ranges, const linalg::ConvolutionDimensions &dims) {
  std::string text;
  for (unsigned d : dims.filterLoop)
    text += (text.empty() ? "" : "x") + size(ranges[d]);
  int64_t stride = dims.strides.empty() ? 1 : dims.strides.front();
  return text + "s" + std::to_string(stride);
}

/// How a reduction combines, from the op yielding its accumulator.
std::string reductionKind(linalg::LinalgOp op) {
  Operation *combiner = nullptr;
  if (auto yield = dyn_cast<linalg::YieldOp>(op.getBlock()->getTerminator()))
    if (yield.getNumOperands() == 1)
      combiner = yield.getOperand(0).getDefiningOp();
  if (isa_and_nonnull<arith::AddFOp, arith::AddIOp>(combiner))
    return "sum";
  if (isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp, arith::MaxUIOp>(
          combiner))
    return "max";
  if (isa_and_nonnull<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp, arith::MinUIOp>(
          combiner))
    return "min";
  if (isa_and_nonnull<arith::MulFOp, arith::MulIOp>(combiner))
    return "prod";
  return "generic";
}

/// True for a generic that copies its one input through a permutation.
bool isTranspose(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return yield.getNumOperands() == 1 && yield.getOperand(0) == op.getBody()->getArgument(0) &&
         op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isPermutation() &&
         !op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity();
}

/// How strongly `op` characterizes its region (higher names it).
int rank(Operation *op) {
  if (isa<AttentionOp>(op))
    return 7;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return 0;
  if (linalg::isaContractionOpInterface(linalgOp) || isa<linalg::ContractOp>(op))
    return 6;
  if (linalg::isaConvolutionOpInterface(linalgOp) ||
      isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp, linalg::PoolingNchwMaxOp,
          linalg::PoolingNchwSumOp>(op))
    return 5;
  if (linalgOp.getNumReductionLoops() > 0)
    return 4;
  if (isPadGather(op))
    return 3;
  if (isa<linalg::FillOp>(op))
    return 1;
  return 2;
}

std::string describe(Operation *root) {
  if (auto attention = dyn_cast<AttentionOp>(root)) {
    // attention_BxHxTxD_kvKH_T: query shape, key / value heads.
    auto key = cast<ShapedType>(attention.getKey().getType());
    return "attention_" + resultShape(root) + "_kv" + formatExtents(key.getDimSize(1)) + "_" +
           resultElementTypeName(root);
  }
  auto op = cast<linalg::LinalgOp>(root);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::string type = resultElementTypeName(root);
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::ContractOp>(root) ||
      linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
    if (succeeded(dims)) {
      std::string mnk = size(product(ranges, dims->m)) + "x" + size(product(ranges, dims->n)) +
                        "x" + size(product(ranges, dims->k));
      if (!dims->batch.empty())
        return "batch_matmul_" + size(product(ranges, dims->batch)) + "x" + mnk + "_" + type;
      return "matmul_" + mnk + "_" + type;
    }
    return "contract_" + join(ranges) + "_" + type;
  }
  if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNchwMaxOp, linalg::PoolingNhwcSumOp,
          linalg::PoolingNchwSumOp>(root) ||
      linalg::isaConvolutionOpInterface(op)) {
    std::string kind = isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNchwMaxOp>(root) ? "maxpool"
                       : isa<linalg::PoolingNhwcSumOp, linalg::PoolingNchwSumOp>(root)
                           ? "sumpool"
                           : "conv2d";
    FailureOr<linalg::ConvolutionDimensions> dims = linalg::inferConvolutionDims(op);
    if (failed(dims))
      return kind + "_" + join(ranges) + "_" + type;
    std::string image;
    for (unsigned d : dims->outputImage)
      image += size(ranges[d]) + "x";
    if (kind == "conv2d" && !dims->depth.empty())
      return "depthwise_conv2d_" + window(ranges, *dims) + "_" + image +
             size(product(ranges, dims->depth)) + "_" + type;
    if (kind != "conv2d") { // pooling: the channels of its NHWC / NCHW result
      ArrayRef<int64_t> out = cast<ShapedType>(root->getResult(0).getType()).getShape();
      bool nchw = isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(root);
      return kind + "_" + window(ranges, *dims) + "_" + image + size(out[nchw ? 1 : 3]) + "_" +
             type;
    }
    return kind + "_" + window(ranges, *dims) + "_" + image +
           size(product(ranges, dims->inputChannel)) + "x" +
           size(product(ranges, dims->outputChannel)) + "_" + type;
  }
  if (op.getNumReductionLoops() > 0)
    return "reduce_" + reductionKind(op) + "_" + join(ranges) + "_" + type;
  if (isPadGather(root))
    return "pad_" + resultShape(root) + "_" + type;
  if (isa<linalg::FillOp>(root))
    return "fill_" + resultShape(root) + "_" + type;
  if (auto generic = dyn_cast<linalg::GenericOp>(root); generic && isTranspose(generic))
    return "transpose_" + resultShape(root) + "_" + type;
  return "elementwise_" + resultShape(root) + "_" + type;
}

} // namespace

std::string describeDispatchRegion(llvm::ArrayRef<Operation *> regionOps, const Target &target) {
  Operation *root = nullptr;
  for (Operation *op : regionOps)
    if (rank(op) > 0 && (!root || rank(op) > rank(root)))
      root = op;
  if (!root)
    return "dispatch";
  std::string name = target.describeKernelRoot(root);
  return name.empty() ? describe(root) : name;
}

std::string uniqueKernelName(const SymbolTable &kernels, const std::string &base) {
  std::string name = base;
  for (int suffix = 1; kernels.lookup(name); ++suffix)
    name = base + "_" + std::to_string(suffix);
  return name;
}

} // namespace turbine::compiler
