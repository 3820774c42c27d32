//===- MatmulDataTiling.cpp - Pack matmul's B into contiguous panels ------===//
//
// Part of global-opt (see MatmulDataTiling.h for the layout). For each
// linalg.matmul worth it:
//   * a constant B is packed here, at compile time (a new constant: no run
//     time cost);
//   * a run-time B gets a transpose of its (K, N/32, 32) view into
//     (N/32, K, 32): an elementwise generic that becomes a dispatch of its own;
//   * the matmul becomes a linalg.contract on the packed operand writing C
//     viewed as (M, N/32, 32), and the collapse of that view back to (M, N)
//     is pushed below the elementwise consumers (bias, activation) so that
//     dispatch formation still fuses them into the matmul's kernel.
//
// When (the heuristic, from the sgemm and model benchmarks in
// docs/performance.md):
//   * f32, B static with N a multiple of 32, default indexing maps;
//   * constant B: always (the pack is free); also with N not a multiple of
//     32 from N = 256 (a classifier's 1000): B packed with zero columns up
//     to whole panels, the contract writing a padded C [M, 1024] (its
//     accumulator's fill over a wider empty tensor), and C = that C's first
//     N columns, a gather fused into the elementwise consumers (unpacked,
//     a one-row tile read B rows 4000 bytes apart at a third of the read
//     bandwidth);
//   * run-time B: only when the pack (one read and one write of B) is small
//     next to the matmul and B's rows are far apart: static M >= 512 and
//     N >= 1024 (rows 4 KiB or more apart alias in L1 when the register tile
//     walks K down a column panel).
// The pass option data-tiling=off turns data tiling off, =all packs every
// eligible matmul regardless of the shape heuristic (for benchmarking).
//
// The matmuls left as they are get the attribute `turbine.pack_b_in_kernel`
// (their B packed per workgroup inside the kernel, MatmulKernelPacking.h)
// when: f32, default maps, B static with N a multiple of 32, and N >= 1024
// (B's rows 4 KiB or more apart) and M >= 64 or dynamic (below that the
// per-workgroup pack costs more than the matmul loses to B's layout).
// The pass option kernel-pack=off turns this off, =all marks every eligible
// matmul regardless of N and M (for tests and benchmarking).
//===----------------------------------------------------------------------===//
#include "targets/cpu/MatmulDataTiling.h"

#include "global-opt/ParameterNames.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <vector>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_DATATILEMATMULS
#include "turbine/compiler/Passes.h.inc"

namespace {

constexpr int64_t kRuntimePackMinM = 512;
constexpr int64_t kRuntimePackMinN = 1024;
constexpr int64_t kKernelPackMinM = 64;
constexpr int64_t kKernelPackMinN = 1024;
constexpr llvm::StringLiteral kPackBInKernelAttr = "turbine.pack_b_in_kernel";

/// The constant B of `matmul`, if it is a plain dense constant.
DenseElementsAttr constantB(linalg::MatmulOp matmul) {
  auto constant = matmul.getInputs()[1].getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return {};
  return dyn_cast<DenseElementsAttr>(constant.getValue());
}

/// An f32 result of f32 operands, or of f16/bf16 ones (turbine-accumulate-
/// in-f32 made their accumulator f32; the panels keep B's type and the
/// kernel extends it in registers), default maps, B static with N a multiple
/// of the panel width: a B that can be viewed as panels.
bool hasPanelableB(linalg::MatmulOp matmul) {
  if (!matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps())
    return false;
  auto a = cast<RankedTensorType>(matmul.getInputs()[0].getType());
  auto b = cast<RankedTensorType>(matmul.getInputs()[1].getType());
  auto c = cast<RankedTensorType>(matmul.getOutputs()[0].getType());
  auto operandType = [](Type t) { return isa<Float32Type, Float16Type, BFloat16Type>(t); };
  if (!operandType(a.getElementType()) || !operandType(b.getElementType()) ||
      !c.getElementType().isF32() || !b.hasStaticShape())
    return false;
  return b.getDimSize(1) % kPackedPanelWidth == 0 && b.getDimSize(0) != 0;
}

/// A constant B whose N is not a multiple of the panel width, but wide
/// enough that the zero columns padding it to whole panels are a small part
/// (N >= kPaddedPackMinN: at most 31 / 256 of the work), with the other
/// conditions of hasPanelableB and an accumulator that is a fill of an empty
/// tensor (rebuilt wider): packed with zero columns, its result sliced.
constexpr int64_t kPaddedPackMinN = 256;
bool hasPaddablePanelB(linalg::MatmulOp matmul) {
  if (!matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps() || !constantB(matmul))
    return false;
  auto a = cast<RankedTensorType>(matmul.getInputs()[0].getType());
  auto b = cast<RankedTensorType>(matmul.getInputs()[1].getType());
  auto c = cast<RankedTensorType>(matmul.getOutputs()[0].getType());
  auto fill = matmul.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  return a.getElementType().isF32() && b.getElementType().isF32() && c.getElementType().isF32() &&
         b.hasStaticShape() && b.getDimSize(1) % kPackedPanelWidth != 0 &&
         b.getDimSize(1) >= kPaddedPackMinN && fill &&
         fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

bool shouldPackB(linalg::MatmulOp matmul, StrategyMode mode) {
  if (mode != StrategyMode::Off && hasPaddablePanelB(matmul))
    return true;
  if (mode == StrategyMode::Off || !hasPanelableB(matmul))
    return false;
  auto a = cast<RankedTensorType>(matmul.getInputs()[0].getType());
  auto b = cast<RankedTensorType>(matmul.getInputs()[1].getType());
  int64_t n = b.getDimSize(1);
  if (mode == StrategyMode::All || constantB(matmul))
    return true;
  int64_t m = a.getDimSize(0);
  return !ShapedType::isDynamic(m) && m >= kRuntimePackMinM &&
         n >= kRuntimePackMinN;
}

/// For a matmul that shouldPackB left alone.
bool shouldPackBInKernel(linalg::MatmulOp matmul, StrategyMode mode) {
  if (mode == StrategyMode::Off || !hasPanelableB(matmul))
    return false;
  if (mode == StrategyMode::All)
    return true;
  int64_t m = cast<RankedTensorType>(matmul.getInputs()[0].getType()).getDimSize(0);
  int64_t n = cast<RankedTensorType>(matmul.getInputs()[1].getType()).getDimSize(1);
  return n >= kKernelPackMinN && (ShapedType::isDynamic(m) || m >= kKernelPackMinM);
}

/// B [K, N] → Bp [ceil(N/32), K, 32] on a constant; columns past N (the
/// last panel's, when N is not a multiple of 32) are zeros.
DenseElementsAttr packConstant(DenseElementsAttr b) {
  auto type = cast<RankedTensorType>(b.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  int64_t panels = llvm::divideCeil(n, kPackedPanelWidth);
  auto packedType = RankedTensorType::get({panels, k, kPackedPanelWidth},
                                          type.getElementType());
  if (b.isSplat() && n % kPackedPanelWidth == 0)
    return DenseElementsAttr::get(packedType, b.getSplatValue<Attribute>());
  const size_t width = type.getElementTypeBitWidth() / 8;
  // A splat's raw data is one element: expand it.
  std::vector<char> raw;
  if (b.isSplat())
    for (int64_t e = 0; e < k * n; ++e)
      raw.insert(raw.end(), b.getRawData().begin(), b.getRawData().begin() + width);
  else
    raw.assign(b.getRawData().begin(), b.getRawData().end());
  std::vector<char> packed(panels * k * kPackedPanelWidth * width, 0);
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t columns = std::min(kPackedPanelWidth, n - panel * kPackedPanelWidth);
    for (int64_t row = 0; row < k; ++row)
      std::memcpy(&packed[((panel * k + row) * kPackedPanelWidth) * width],
                  &raw[(row * n + panel * kPackedPanelWidth) * width], columns * width);
  }
  return DenseElementsAttr::getFromRawBuffer(
      packedType, ArrayRef<char>(packed.data(), packed.size()));
}

/// B [K, N] → Bp [N/32, K, 32] at run time: a transpose of B's (K, N/32, 32)
/// view, written as the generic global-opt would make of linalg.transpose.
Value packAtRunTime(RewriterBase &rewriter, Location loc, Value b) {
  auto type = cast<RankedTensorType>(b.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  int64_t panels = n / kPackedPanelWidth;
  auto viewType =
      RankedTensorType::get({k, panels, kPackedPanelWidth}, type.getElementType());
  Value view = tensor::ExpandShapeOp::create(
      rewriter, loc, viewType, b, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{panels, k, kPackedPanelWidth},
      type.getElementType());
  auto transpose = linalg::TransposeOp::create(rewriter, loc, view, empty,
                                               ArrayRef<int64_t>{1, 0, 2});
  FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(
      rewriter, cast<linalg::LinalgOp>(transpose.getOperation()));
  return (*generic)->getResult(0);
}

/// The maps of the packed contraction, loops (nb, m, n0, k).
SmallVector<AffineMap> packedMatmulMaps(MLIRContext *ctx) {
  AffineExpr nb, m, n0, k;
  bindDims(ctx, nb, m, n0, k);
  return {AffineMap::get(4, 0, {m, k}, ctx),
          AffineMap::get(4, 0, {nb, k, n0}, ctx),
          AffineMap::get(4, 0, {m, nb, n0}, ctx)};
}

void packMatmul(RewriterBase &rewriter, linalg::MatmulOp matmul) {
  Location loc = matmul.getLoc();
  rewriter.setInsertionPoint(matmul);
  Value packed;
  if (DenseElementsAttr constant = constantB(matmul)) {
    auto packedConstant =
        arith::ConstantOp::create(rewriter, loc, packConstant(constant));
    auto type = cast<RankedTensorType>(constant.getType());
    // (Padded with zero columns, it has no such torch expression: unnamed.)
    if (type.getDimSize(1) % kPackedPanelWidth == 0)
      deriveParameterName(matmul.getInputs()[1].getDefiningOp(), packedConstant,
                          ".reshape(" + std::to_string(type.getDimSize(0)) + "," +
                              std::to_string(type.getDimSize(1) / kPackedPanelWidth) +
                              "," + std::to_string(kPackedPanelWidth) +
                              ").permute(1,0,2)");
    packed = packedConstant;
  } else
    packed = packAtRunTime(rewriter, loc, matmul.getInputs()[1]);

  auto cType = cast<RankedTensorType>(matmul.getOutputs()[0].getType());
  const int64_t n = cType.getDimSize(1);
  if (n % kPackedPanelWidth == 0) {
    rewriter.replaceOp(matmul, createPackedMatmul(rewriter, loc, matmul.getInputs()[0], packed,
                                                  matmul.getOutputs()[0]));
    return;
  }
  // N padded to whole panels (hasPaddablePanelB): the accumulator's fill
  // over a wider empty tensor, then C = the padded result's first N
  // columns, read by a gather generic (a tensor.extract_slice would be left
  // between kernels, where the host program cannot run it).
  auto fill = matmul.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  const int64_t paddedN = llvm::alignTo(n, kPackedPanelWidth);
  auto paddedType = RankedTensorType::get({cType.getDimSize(0), paddedN}, cType.getElementType());
  Value paddedInit =
      linalg::FillOp::create(
          rewriter, loc, fill.getInputs()[0],
          tensor::EmptyOp::create(rewriter, loc, paddedType, empty.getDynamicSizes()).getResult())
          .getResult(0);
  Value padded = createPackedMatmul(rewriter, loc, matmul.getInputs()[0], packed, paddedInit);
  AffineMap identity = rewriter.getMultiDimIdentityMap(2);
  auto slice = linalg::GenericOp::create(
      rewriter, loc, TypeRange{cType}, ValueRange{}, ValueRange{fill.getOutputs()[0]},
      ArrayRef<AffineMap>{identity},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location nested, ValueRange) {
        Value row = linalg::IndexOp::create(b, nested, 0);
        Value column = linalg::IndexOp::create(b, nested, 1);
        linalg::YieldOp::create(
            b, nested, tensor::ExtractOp::create(b, nested, padded, ValueRange{row, column}).getResult());
      });
  rewriter.replaceOp(matmul, slice.getResult(0));
  // Into its elementwise consumers now (global-opt's elementwise fusion ran
  // before this pass): the bias reads the padded result directly, with no
  // temporary of the slice in the kernel.
  for (OpOperand &use : llvm::make_early_inc_range(slice->getUses())) {
    if (!isa<linalg::GenericOp>(use.getOwner()) || !linalg::areElementwiseOpsFusable(&use))
      continue;
    Operation *consumer = use.getOwner();
    rewriter.setInsertionPoint(consumer);
    FailureOr<linalg::ElementwiseOpFusionResult> fused = linalg::fuseElementwiseOps(rewriter, &use);
    if (failed(fused))
      continue;
    for (OpResult result : consumer->getResults())
      rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
    rewriter.eraseOp(consumer);
  }
  if (slice->use_empty())
    rewriter.eraseOp(slice);
}

/// True if `value` is the result of an op satisfying `isRoot`, possibly
/// through elementwise generics (reading it with identity maps).
bool comesFromOp(Value value, function_ref<bool(Operation *)> isRoot,
                 int depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 8)
    return false;
  if (isRoot(def))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(def);
  if (!generic || generic.getNumReductionLoops() != 0)
    return false;
  for (OpOperand *input : generic.getDpsInputOperands())
    if (generic.getMatchingIndexingMap(input).isIdentity() &&
        comesFromOp(input->get(), isRoot, depth + 1))
      return true;
  return false;
}

/// True if `value` is a packed matmul's result, possibly through elementwise
/// generics that already took in the reshape.
bool comesFromPackedMatmul(Value value) {
  return comesFromOp(value, isPackedMatmul);
}

} // namespace

Value createPackedMatmul(OpBuilder &builder, Location loc, Value a,
                         Value packedB, Value init, Operation **contract) {
  auto cType = cast<RankedTensorType>(init.getType());
  int64_t panels = cast<RankedTensorType>(packedB.getType()).getDimSize(0);
  auto c3Type = RankedTensorType::get(
      {cType.getDimSize(0), panels, kPackedPanelWidth}, cType.getElementType());
  SmallVector<ReassociationIndices> reassociation{{0}, {1, 2}};
  Value init3 =
      tensor::ExpandShapeOp::create(builder, loc, c3Type, init, reassociation);
  auto op = linalg::ContractOp::create(
      builder, loc, TypeRange{c3Type}, ValueRange{a, packedB}, ValueRange{init3},
      builder.getAffineMapArrayAttr(packedMatmulMaps(builder.getContext())));
  if (contract)
    *contract = op;
  return tensor::CollapseShapeOp::create(builder, loc, cType, op->getResult(0),
                                         reassociation);
}

bool packsBInKernel(Operation *op) {
  return isa_and_nonnull<linalg::MatmulOp>(op) &&
         op->hasAttr(kPackBInKernelAttr);
}

bool comesFromMatmulPackingBInKernel(Value value) {
  return comesFromOp(value, packsBInKernel);
}

bool isPackedMatmul(Operation *op) {
  auto contract = dyn_cast_or_null<linalg::ContractOp>(op);
  if (!contract || contract.getNumDpsInputs() != 2 ||
      contract.getNumDpsInits() != 1)
    return false;
  return contract.getIndexingMapsArray() ==
         packedMatmulMaps(op->getContext());
}

bool isPanelPack(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
      generic.getNumLoops() != 3)
    return false;
  auto type = dyn_cast<RankedTensorType>(generic->getResult(0).getType());
  if (!type || type.getDimSize(2) != kPackedPanelWidth)
    return false;
  MLIRContext *ctx = op->getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(3, 0, {d1, d0, d2}, ctx) ||
      !maps[1].isIdentity())
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getBody()->getArgument(0);
}

namespace {

struct DataTileMatmulsPass : impl::DataTileMatmulsBase<DataTileMatmulsPass> {
  using Base::Base;
  void runOnOperation() override { dataTileMatmuls(getOperation(), dataTiling, kernelPack); }
};

} // namespace

void dataTileMatmuls(ModuleOp module, StrategyMode mode, StrategyMode kernelMode) {
  SmallVector<linalg::MatmulOp> matmuls;
  module.walk([&](linalg::MatmulOp op) {
    if (shouldPackB(op, mode))
      matmuls.push_back(op);
    else if (shouldPackBInKernel(op, kernelMode))
      op->setAttr(kPackBInKernelAttr, UnitAttr::get(op->getContext()));
  });
  if (matmuls.empty())
    return;
  ReshapedConstantNames names(module);
  IRRewriter rewriter(module.getContext());
  for (linalg::MatmulOp matmul : matmuls)
    packMatmul(rewriter, matmul);

  // Move each result's collapse_shape below the elementwise consumers (they
  // iterate over the 3-D view instead), and fold the reshapes of the fill /
  // empty destinations and of constant operands (a bias).
  RewritePatternSet patterns(module.getContext());
  // Only into elementwise generics: a consumer matmul (the next layer) must
  // keep reading the 2-D (M, N) result.
  linalg::ControlFusionFn belowPackedMatmul = [](OpOperand *operand) {
    auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
    auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
    return collapse && collapse->hasOneUse() && consumer &&
           consumer.getNumReductionLoops() == 0 &&
           comesFromPackedMatmul(collapse.getSrc());
  };
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                    belowPackedMatmul);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  linalg::FillOp::getCanonicalizationPatterns(patterns, module.getContext());
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns,
                                                     module.getContext());
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                       module.getContext());
  (void)applyPatternsGreedily(module, std::move(patterns));
  names.restore(module); // e.g. a bias folded into the (N/32, 32) view
}

} // namespace turbine::compiler
