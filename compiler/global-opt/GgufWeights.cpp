//===- GgufWeights.cpp - Model weights bound from a GGUF file, in place ---===//
//
// turbine-bind-gguf-weights (Passes.td), what `turbine compile
// --weights-from=F.gguf` runs: the weights of the model that the GGUF file
// holds become external parameters named as the file's tensors, so that
// `turbine run --parameters=F.gguf` binds the file's own bytes
// (memory-mapped, no dequantized or re-laid-out copy). The compiler reads no
// file: the caller lists the file's tensors in the `tensors` option, each
// `MODULE_NAME:GGUF_NAME:TYPE:SHAPE` (the state_dict key after the name
// map, the name in the file, the ggml type name, the logical shape
// outermost first, e.g. `layers.0.attention.wq.weight:blk.0.attn_q.weight:
// Q8_0:768x768`).
//
//  - A matmul by a constant named `KEY.T` (the TorchScript importer's
//    transposed linear weight, ParameterNames.h) whose KEY the file holds as
//    Q8_0 or Q4_0 becomes the block-decoding generic of GgufWeights.h over
//    the tensor's raw blocks (i8 [N, K/32, 34 or 18]).
//  - One the file holds as F16 / BF16 / F32 reads the file's [N, K] rows:
//    typed [N, K/32, 32] when K is a multiple of 32, the generic's plain
//    form (GgufWeights.h), which the CPU target tiles as it tiles the block
//    types; otherwise one generic C += A * extf(W) (rewritePlainMatmul).
//  - A constant named KEY of the same shape (bindTensor): when every use is
//    a tensor.extract (the token embedding's gather), each reads the file's
//    tensor in its own type (F32, F16 / BF16 extended, Q8_0 / Q4_0 with the
//    element's block decoded), so no f32 table remains; otherwise F32
//    becomes a load of an external f32 parameter and F16 / BF16 one
//    extended elementwise (norm weights); Q8_0 / Q4_0 tensors used whole
//    keep the model's constant.
//
// Errors (each names the GGUF tensor and the model's weight): a shape that
// does not match the model's (a token embedding of another vocabulary size
// too), a tensor of a ggml type other than F32 / F16 / BF16 / Q8_0 / Q4_0
// (K-quants, integer types), K not a multiple of 32 for a block type. The
// external globals carry `turbine.ggml_type` / `turbine.ggml_shape`, which
// the artifact records, so the runtime refuses a file whose tensor differs
// and binds the file's bytes in place.
//===----------------------------------------------------------------------===//
#include "global-opt/GgufWeights.h"

#include "global-opt/ParameterNames.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

#include <map>
#include <string>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_BINDGGUFWEIGHTS
#include "turbine/compiler/Passes.h.inc"

namespace {

/// One tensor of the GGUF file, as the `tensors` option lists it.
struct GgufTensor {
  std::string moduleName, fileName, type;
  SmallVector<int64_t> shape;
  std::string text() const {
    std::string s;
    for (int64_t d : shape)
      s += std::to_string(d) + "x";
    return s + type;
  }
};

std::string shapeText(ArrayRef<int64_t> shape, StringRef type) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + type.str();
}

/// Parses `MODULE:FILE:TYPE:D0xD1...`; false on a malformed spec.
bool parseSpec(StringRef spec, GgufTensor &out) {
  SmallVector<StringRef> parts;
  spec.split(parts, ':');
  if (parts.size() != 4 || parts[0].empty() || parts[1].empty() || parts[2].empty())
    return false;
  out.moduleName = parts[0].str();
  out.fileName = parts[1].str();
  out.type = parts[2].str();
  SmallVector<StringRef> dims;
  parts[3].split(dims, 'x');
  for (StringRef d : dims) {
    int64_t v = 0;
    if (d.getAsInteger(10, v) || v < 0)
      return false;
    out.shape.push_back(v);
  }
  return true;
}

/// A plain 2-D f32 linalg.matmul whose B is `constant`.
bool isPlainMatmulByConstant(Operation *user, Value constant) {
  auto matmul = dyn_cast<linalg::MatmulOp>(user);
  if (!matmul || matmul.hasUserDefinedMaps() || !matmul.hasPureTensorSemantics() ||
      matmul.getDpsInputs()[1] != constant || matmul.getDpsInputs()[0] == constant)
    return false;
  Type f32 = Float32Type::get(user->getContext());
  for (Value v : {matmul.getDpsInputs()[0], matmul.getDpsInputs()[1], matmul.getDpsInits()[0]})
    if (cast<ShapedType>(v.getType()).getElementType() != f32)
      return false;
  return true;
}

/// The indexing maps of the generic (GgufWeights.h): A', W (scale low
/// byte), W (scale high byte), W (quant byte), C; plain types: A', W, C.
SmallVector<AffineMap> ggufMatmulMaps(MLIRContext *ctx, int ggmlType) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto c = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
  if (GgufMatmul{ggmlType}.plain())
    return {AffineMap::get(4, 0, {d(0), d(2), d(3)}, ctx),
            AffineMap::get(4, 0, {d(1), d(2), d(3)}, ctx),
            AffineMap::get(4, 0, {d(0), d(1)}, ctx)};
  const bool q8 = ggmlType == kGgufQ8_0;
  const unsigned loops = q8 ? 4 : 5;
  const unsigned m = 0, n = 1, g = 2, i = q8 ? 3 : 4;
  auto map = [&](ArrayRef<AffineExpr> exprs) { return AffineMap::get(loops, 0, exprs, ctx); };
  AffineMap a = q8 ? map({d(m), d(g), d(i)}) : map({d(m), d(g), d(3), d(i)});
  return {a, map({d(n), d(g), c(0)}), map({d(n), d(g), c(1)}), map({d(n), d(g), d(i) + 2}),
          map({d(m), d(n)})};
}

/// The element type of a plain (unblocked) ggml type: F32, F16, BF16; null
/// for anything else.
Type plainElementType(MLIRContext *ctx, StringRef ggmlType) {
  if (ggmlType == "F32")
    return Float32Type::get(ctx);
  if (ggmlType == "F16")
    return Float16Type::get(ctx);
  if (ggmlType == "BF16")
    return BFloat16Type::get(ctx);
  return nullptr;
}

/// `x` as f32 (arith.extf from f16 / bf16; f32 as it is).
Value toF32(OpBuilder &b, Location loc, Value x) {
  if (x.getType().isF32())
    return x;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
}

/// `value` ([shape] f16 / bf16) extended to f32 by an identity generic.
Value castElementsToF32(OpBuilder &b, Location loc, Value value, RankedTensorType f32Type) {
  Value empty = tensor::EmptyOp::create(b, loc, f32Type.getShape(), b.getF32Type());
  int64_t rank = f32Type.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(b, loc, TypeRange{f32Type}, ValueRange{value},
                                   ValueRange{empty}, maps, iterators,
                                   [](OpBuilder &nb, Location l, ValueRange args) {
                                     linalg::YieldOp::create(nb, l, toF32(nb, l, args[0]));
                                   })
      .getResult(0);
}

/// Elements per block of a plain GGUF tensor's [N, K/32, 32] view (the
/// plain form of the matmul generic, GgufWeights.h).
constexpr int64_t kPlainLanes = 32;

/// ggml's id of plain element type `t` (f32, f16, bf16).
int plainGgmlType(Type t) {
  return t.isF16() ? kGgufF16 : t.isBF16() ? kGgufBF16 : kGgufF32;
}

/// Rewrites `matmul` (C = A * B, B [K, N] the transposed weight) into a
/// generic reading the plain GGUF tensor `global` (the file's row-major
/// [out, in] f32 / f16 / bf16 rows) in place: with K = 32 G, `global` is
/// [N, G, 32] and the generic the plain form of GgufWeights.h (each output
/// the dot product of two contiguous rows, in 32-element blocks); with K
/// not a multiple of 32, `global` is [N, K] and one generic (loops m, n, k;
/// body C += A * extf(W)) computes it, correctly but slowly. Either is the
/// matmul by the file's values up to f32 summation order.
void rewritePlainMatmul(linalg::MatmulOp matmul, ml_program::GlobalOp global) {
  IRRewriter rewriter(matmul.getContext());
  rewriter.setInsertionPoint(matmul);
  Location loc = matmul.getLoc();
  MLIRContext *ctx = matmul.getContext();
  auto wType = cast<RankedTensorType>(global.getType());
  Value w = ml_program::GlobalLoadConstOp::create(rewriter, loc, wType,
                                                  SymbolRefAttr::get(global.getSymNameAttr()));
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  using utils::IteratorType;
  Value a = matmul.getDpsInputs()[0];
  Value init = matmul.getDpsInits()[0];
  auto multiplyAdd = [&](OpBuilder &b, Location l, ValueRange args) {
    Value product = arith::MulFOp::create(b, l, args[0], toF32(b, l, args[1]));
    linalg::YieldOp::create(b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
  };
  if (wType.getRank() == 2) {
    SmallVector<AffineMap> maps{AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                AffineMap::get(3, 0, {d(1), d(2)}, ctx),
                                AffineMap::get(3, 0, {d(0), d(1)}, ctx)};
    SmallVector<IteratorType> iterators{IteratorType::parallel, IteratorType::parallel,
                                        IteratorType::reduction};
    auto generic = linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()},
                                             ValueRange{a, w}, ValueRange{init}, maps,
                                             iterators, multiplyAdd);
    rewriter.replaceOp(matmul, generic.getResults());
    return;
  }
  const int64_t groups = wType.getDimSize(1);
  auto aType = cast<RankedTensorType>(a.getType());
  SmallVector<OpFoldResult> grouped{tensor::getMixedSize(rewriter, loc, a, 0),
                                    rewriter.getIndexAttr(groups),
                                    rewriter.getIndexAttr(kPlainLanes)};
  Value aGrouped = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get({aType.getDimSize(0), groups, kPlainLanes}, rewriter.getF32Type()),
      a, SmallVector<ReassociationIndices>{{0}, {1, 2}}, grouped);
  SmallVector<IteratorType> iterators{IteratorType::parallel, IteratorType::parallel,
                                      IteratorType::reduction, IteratorType::reduction};
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{aGrouped, w}, ValueRange{init},
      ggufMatmulMaps(ctx, plainGgmlType(wType.getElementType())), iterators, multiplyAdd);
  rewriter.replaceOp(matmul, generic.getResults());
}

/// The immutable external global holding GGUF tensor `t` as raw blocks.
ml_program::GlobalOp blockGlobal(ModuleOp module, SymbolTable &symbols, const GgufTensor &t,
                                 RankedTensorType type) {
  if (auto existing = symbols.lookup<ml_program::GlobalOp>(t.fileName))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto global = ml_program::GlobalOp::create(
      b, module.getLoc(), t.fileName, type, /*is_mutable=*/false,
      ml_program::ExternAttr::get(b.getContext(), type), b.getStringAttr("private"));
  global->setAttr("turbine.ggml_type", b.getStringAttr(t.type));
  global->setAttr("turbine.ggml_shape", b.getDenseI64ArrayAttr(t.shape));
  symbols.insert(global);
  return global;
}

/// Rewrites `matmul` (C = A * B, B [K, N] the transposed weight) into the
/// block-decoding generic reading `global` (GgufWeights.h).
void rewriteMatmul(linalg::MatmulOp matmul, ml_program::GlobalOp global, int ggmlType) {
  IRRewriter rewriter(matmul.getContext());
  rewriter.setInsertionPoint(matmul);
  Location loc = matmul.getLoc();
  MLIRContext *ctx = matmul.getContext();
  auto wType = cast<RankedTensorType>(global.getType());
  Value w = ml_program::GlobalLoadConstOp::create(rewriter, loc, wType,
                                                  SymbolRefAttr::get(global.getSymNameAttr()));
  const int64_t groups = wType.getDimSize(1);
  const bool q8 = ggmlType == kGgufQ8_0;

  Value a = matmul.getDpsInputs()[0];
  auto aType = cast<RankedTensorType>(a.getType());
  SmallVector<int64_t> shape{aType.getDimSize(0), groups};
  if (q8)
    shape.push_back(32);
  else
    shape.append({2, 16});
  SmallVector<ReassociationIndices> reassociation{{0}, {1}};
  for (size_t d = 2; d < shape.size(); ++d)
    reassociation.back().push_back(d);
  SmallVector<OpFoldResult> outputShape;
  for (auto [d, size] : llvm::enumerate(shape))
    outputShape.push_back(ShapedType::isDynamic(size) ? tensor::getMixedSize(rewriter, loc, a, d)
                                                      : rewriter.getIndexAttr(size));
  Value grouped = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, aType.getElementType()), a, reassociation,
      outputShape);

  SmallVector<AffineMap> maps = ggufMatmulMaps(ctx, ggmlType);
  unsigned loops = maps.front().getNumDims();
  SmallVector<utils::IteratorType> iterators(loops, utils::IteratorType::reduction);
  iterators[0] = iterators[1] = utils::IteratorType::parallel;
  Value init = matmul.getDpsInits()[0];
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{grouped, w, w, w}, ValueRange{init},
      maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        Type i16 = b.getI16Type(), i8 = b.getI8Type(), f32 = b.getF32Type();
        Value low = arith::ExtUIOp::create(b, l, i16, args[1]);
        Value high = arith::ExtUIOp::create(b, l, i16, args[2]);
        Value eight16 = arith::ConstantOp::create(b, l, b.getI16IntegerAttr(8));
        Value bits = arith::OrIOp::create(b, l, low, arith::ShLIOp::create(b, l, high, eight16));
        Value d = arith::BitcastOp::create(b, l, b.getF16Type(), bits);
        Value scale = arith::ExtFOp::create(b, l, f32, d);
        Value q = args[3];
        if (!q8) {
          // h = 0: the low nibble, h = 1: the high one; minus 8.
          Value four = arith::ConstantOp::create(b, l, b.getI8IntegerAttr(4));
          Value fifteen = arith::ConstantOp::create(b, l, b.getI8IntegerAttr(15));
          Value eight = arith::ConstantOp::create(b, l, b.getI8IntegerAttr(8));
          Value lowNibble = arith::AndIOp::create(b, l, q, fifteen);
          Value highNibble = arith::ShRUIOp::create(b, l, q, four);
          Value h = linalg::IndexOp::create(b, l, 3);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value isHigh = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, h, zero);
          Value nibble = arith::SelectOp::create(b, l, isHigh, highNibble, lowNibble);
          q = arith::SubIOp::create(b, l, nibble, eight);
          (void)i8;
        }
        Value x = arith::SIToFPOp::create(b, l, f32, q);
        Value weight = arith::MulFOp::create(b, l, x, scale);
        Value product = arith::MulFOp::create(b, l, args[0], weight);
        Value sum = arith::AddFOp::create(b, l, args[4], product);
        linalg::YieldOp::create(b, l, sum);
      });
  rewriter.replaceOp(matmul, generic.getResults());
}

/// The f32 value of element (row, col) of GGUF tensor `w` — [N, K] f32 /
/// f16 / bf16, or i8 [N, K/32, 34 | 18] Q8_0 / Q4_0 blocks — read with
/// tensor.extract: ggml's dequantize_row_q8_0 / q4_0 for one element.
Value extractElement(OpBuilder &b, Location loc, Value w, StringRef ggmlType, Value row,
                     Value col) {
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  if (ggmlType != "Q8_0" && ggmlType != "Q4_0") {
    if (cast<RankedTensorType>(w.getType()).getRank() == 2)
      return toF32(b, loc, tensor::ExtractOp::create(b, loc, w, ValueRange{row, col}));
    // [N, K/32, 32]: the layout a matmul by the same tensor reads.
    Value group = arith::DivUIOp::create(b, loc, col, index(kPlainLanes));
    Value lane = arith::RemUIOp::create(b, loc, col, index(kPlainLanes));
    return toF32(b, loc, tensor::ExtractOp::create(b, loc, w, ValueRange{row, group, lane}));
  }
  Value block = arith::DivUIOp::create(b, loc, col, index(32));
  Value within = arith::RemUIOp::create(b, loc, col, index(32));
  Type i16 = b.getI16Type();
  Value low = arith::ExtUIOp::create(
      b, loc, i16, tensor::ExtractOp::create(b, loc, w, ValueRange{row, block, index(0)}));
  Value high = arith::ExtUIOp::create(
      b, loc, i16, tensor::ExtractOp::create(b, loc, w, ValueRange{row, block, index(1)}));
  Value eight16 = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(8));
  Value bits = arith::OrIOp::create(b, loc, low, arith::ShLIOp::create(b, loc, high, eight16));
  Value scale = toF32(b, loc, arith::BitcastOp::create(b, loc, b.getF16Type(), bits));
  Value q;
  if (ggmlType == "Q8_0") {
    Value at = arith::AddIOp::create(b, loc, within, index(2));
    q = tensor::ExtractOp::create(b, loc, w, ValueRange{row, block, at});
  } else {
    // Element i < 16: the low nibble of byte 2 + i; 16 + i: its high nibble.
    Value byteIndex = arith::AddIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, within, index(16)), index(2));
    Value byte = tensor::ExtractOp::create(b, loc, w, ValueRange{row, block, byteIndex});
    Value isHigh =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, within, index(16));
    Value lowNibble = arith::AndIOp::create(
        b, loc, byte, arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(15)));
    Value highNibble = arith::ShRUIOp::create(
        b, loc, byte, arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(4)));
    Value nibble = arith::SelectOp::create(b, loc, isHigh, highNibble, lowNibble);
    q = arith::SubIOp::create(b, loc, nibble,
                              arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(8)));
  }
  Value x = arith::SIToFPOp::create(b, loc, b.getF32Type(), q);
  return arith::MulFOp::create(b, loc, x, scale);
}

/// Binds the model's f32 constant `constant` (not a transposed matmul
/// weight) to GGUF tensor `t` of the same shape:
///  - every use a tensor.extract (the token embedding's gather): each reads
///    the file's tensor in its own type (F32 / F16 / BF16 / Q8_0 / Q4_0,
///    the element's block decoded), so no f32 copy of the table remains;
///  - otherwise F32 becomes a load of an external f32 parameter and F16 /
///    BF16 one of the file's type, extended to f32 elementwise (norm
///    weights); a Q8_0 / Q4_0 tensor used so keeps the model's constant.
/// A shape that differs from the file's, or an unsupported ggml type, is an
/// error naming both.
LogicalResult bindTensor(ModuleOp module, SymbolTable &symbols, arith::ConstantOp constant,
                         const GgufTensor &t) {
  auto type = cast<RankedTensorType>(constant.getType());
  StringRef name = constant->getAttrOfType<StringAttr>(kParamNameAttr).getValue();
  MLIRContext *ctx = module.getContext();
  std::string tensorText = "GGUF tensor '" + t.fileName + "' (" + t.text() + ")";
  std::string model = "the model's weight '" + name.str() + "' (" +
                      shapeText(type.getShape(), "f32") + ")";
  if (ArrayRef<int64_t>(t.shape) != type.getShape())
    return constant.emitError() << "--weights-from: " << tensorText << " does not match "
                                << model;
  const bool blocks = t.type == "Q8_0" || t.type == "Q4_0";
  Type plain = plainElementType(ctx, t.type);
  if (!plain && !blocks)
    return constant.emitError() << "--weights-from: " << tensorText << ", bound to " << model
                                << ": unsupported ggml type " << t.type
                                << " (Turbine binds F32, F16, BF16, Q8_0 and Q4_0 tensors)";
  SmallVector<tensor::ExtractOp> extracts;
  for (Operation *user : constant->getUsers())
    if (auto extract = dyn_cast<tensor::ExtractOp>(user))
      extracts.push_back(extract);
  const bool gather = !extracts.empty() && extracts.size() == size_t(std::distance(
                                                                  constant->getUsers().begin(),
                                                                  constant->getUsers().end()));
  if (blocks) {
    if (!gather || type.getRank() != 2)
      return success(); // used whole: the model's constant stays
    if (t.shape[1] % 32 != 0)
      return constant.emitError() << "--weights-from: " << tensorText << ": the row length "
                                  << t.shape[1] << " is not a multiple of the " << t.type
                                  << " block of 32";
  }
  // A gathered 2-D F32 / F16 / BF16 table with rows of whole 32-lane groups
  // is typed as a matmul by the same tensor reads it ([N, K/32, 32]), so a
  // model whose output head is its token embedding (tied) binds both uses
  // to one global.
  const bool lanes = gather && !blocks && type.getRank() == 2 && t.shape[1] % kPlainLanes == 0;
  RankedTensorType globalType =
      blocks  ? RankedTensorType::get({t.shape[0], t.shape[1] / 32, t.type == "Q8_0" ? 34 : 18},
                                      IntegerType::get(ctx, 8))
      : lanes ? RankedTensorType::get({t.shape[0], t.shape[1] / kPlainLanes, kPlainLanes}, plain)
              : RankedTensorType::get(t.shape, plain);
  ml_program::GlobalOp global = blockGlobal(module, symbols, t, globalType);
  if (global.getType() != globalType)
    return constant.emitError() << "--weights-from: " << tensorText << " is bound twice with "
                                << "different types";
  OpBuilder b(constant);
  Value load = ml_program::GlobalLoadConstOp::create(
      b, constant.getLoc(), globalType, SymbolRefAttr::get(global.getSymNameAttr()));
  if (gather && (blocks || lanes || !plain.isF32())) {
    for (tensor::ExtractOp extract : extracts) {
      OpBuilder eb(extract);
      if (type.getRank() == 2) {
        Value x = extractElement(eb, extract.getLoc(), load, t.type, extract.getIndices()[0],
                                 extract.getIndices()[1]);
        extract.getResult().replaceAllUsesWith(x);
      } else {
        Value x = tensor::ExtractOp::create(eb, extract.getLoc(), load, extract.getIndices());
        extract.getResult().replaceAllUsesWith(toF32(eb, extract.getLoc(), x));
      }
      extract->erase();
    }
  } else if (plain.isF32()) {
    constant.getResult().replaceAllUsesWith(load);
  } else {
    constant.getResult().replaceAllUsesWith(
        castElementsToF32(b, constant.getLoc(), load, type));
  }
  constant->erase();
  return success();
}

struct BindGgufWeightsPass : impl::BindGgufWeightsBase<BindGgufWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tensors.empty())
      return;
    std::map<std::string, GgufTensor> byModuleName;
    for (const std::string &spec : tensors) {
      GgufTensor t;
      if (!parseSpec(spec, t)) {
        module.emitError() << "bind-gguf-weights: malformed tensor '" << spec
                           << "' (expected MODULE_NAME:GGUF_NAME:TYPE:D0xD1...)";
        return signalPassFailure();
      }
      byModuleName[t.moduleName] = t;
    }
    SymbolTable symbols(module);
    SmallVector<arith::ConstantOp> constants;
    module.walk([&](arith::ConstantOp op) {
      if (op->hasAttr(kParamNameAttr))
        constants.push_back(op);
    });
    for (arith::ConstantOp constant : constants) {
      StringRef name = constant->getAttrOfType<StringAttr>(kParamNameAttr).getValue();
      auto type = dyn_cast<RankedTensorType>(constant.getType());
      if (!type || !type.hasStaticShape())
        continue;
      // A transposed linear weight: KEY.T [K, N], the file's [N, K].
      if (name.ends_with(".T") && byModuleName.count(name.drop_back(2).str())) {
        const GgufTensor &t = byModuleName[name.drop_back(2).str()];
        std::string model = "the model's weight '" + name.drop_back(2).str() + "' (" +
                            shapeText({type.getShape().back(), type.getShape().front()},
                                      "f32") +
                            ", [out, in])";
        std::string tensor = "GGUF tensor '" + t.fileName + "' (" + t.text() + ")";
        if (type.getRank() != 2 || t.shape.size() != 2 || t.shape[0] != type.getDimSize(1) ||
            t.shape[1] != type.getDimSize(0)) {
          constant.emitError() << "--weights-from: " << tensor << " does not match " << model;
          return signalPassFailure();
        }
        int ggmlType = t.type == "Q8_0" ? kGgufQ8_0 : t.type == "Q4_0" ? kGgufQ4_0 : -1;
        Type plain = plainElementType(module.getContext(), t.type);
        if (ggmlType < 0 && !plain) {
          constant.emitError() << "--weights-from: " << tensor << ", bound to " << model
                               << ": unsupported ggml type " << t.type << " for a matmul weight"
                               << " (Turbine binds F32, F16, BF16, Q8_0 and Q4_0 matmul "
                                  "weights)";
          return signalPassFailure();
        }
        const int64_t k = t.shape[1];
        if (plain) {
          // The file's [N, K] rows read in place by a dot-product generic.
          SmallVector<linalg::MatmulOp> matmuls;
          for (Operation *user : constant->getUsers())
            if (isPlainMatmulByConstant(user, constant.getResult()))
              matmuls.push_back(cast<linalg::MatmulOp>(user));
          if (matmuls.empty())
            continue;
          auto wType = k % kPlainLanes == 0
                           ? RankedTensorType::get({t.shape[0], k / kPlainLanes, kPlainLanes},
                                                   plain)
                           : RankedTensorType::get(t.shape, plain);
          ml_program::GlobalOp global = blockGlobal(module, symbols, t, wType);
          if (global.getType() != wType) {
            constant.emitError() << "--weights-from: " << tensor
                                 << " is bound twice with different types";
            return signalPassFailure();
          }
          for (linalg::MatmulOp matmul : matmuls)
            rewritePlainMatmul(matmul, global);
          if (constant->use_empty())
            constant->erase();
          continue;
        }
        if (k % 32 != 0) {
          constant.emitError() << "--weights-from: " << tensor << ": K = " << k
                               << " is not a multiple of the " << t.type << " block of 32";
          return signalPassFailure();
        }
        SmallVector<linalg::MatmulOp> matmuls;
        bool onlyMatmuls = true;
        for (Operation *user : constant->getUsers()) {
          if (isPlainMatmulByConstant(user, constant.getResult()))
            matmuls.push_back(cast<linalg::MatmulOp>(user));
          else
            onlyMatmuls = false;
        }
        if (matmuls.empty())
          continue;
        (void)onlyMatmuls; // other users keep the model's constant
        const int64_t blockBytes = ggmlType == kGgufQ8_0 ? 34 : 18;
        auto wType = RankedTensorType::get({t.shape[0], k / 32, blockBytes},
                                           IntegerType::get(module.getContext(), 8));
        ml_program::GlobalOp global = blockGlobal(module, symbols, t, wType);
        for (linalg::MatmulOp matmul : matmuls)
          rewriteMatmul(matmul, global, ggmlType);
        if (constant->use_empty())
          constant->erase();
        continue;
      }
      // A tensor used as it is: norm weights (F32, or F16 / BF16 extended),
      // the token embedding's gather (any type, the selected elements
      // decoded from the file's bytes).
      auto it = byModuleName.find(name.str());
      if (it == byModuleName.end() || !type.getElementType().isF32())
        continue;
      if (failed(bindTensor(module, symbols, constant, it->second)))
        return signalPassFailure();
    }
  }
};

} // namespace

const char *ggmlTypeName(int ggmlType) {
  switch (ggmlType) {
  case kGgufF32:
    return "F32";
  case kGgufF16:
    return "F16";
  case kGgufBF16:
    return "BF16";
  case kGgufQ8_0:
    return "Q8_0";
  default:
    return "Q4_0";
  }
}

std::optional<GgufMatmul> matchGgufMatmul(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 || generic->getNumResults() > 1 ||
      (generic.getNumDpsInputs() != 4 && generic.getNumDpsInputs() != 2))
    return std::nullopt;
  // Tiling gives each operand its own slice of W (the same slice).
  Value w = generic.getDpsInputs()[1];
  auto wType = dyn_cast<ShapedType>(w.getType());
  if (!wType || wType.getRank() != 3 || wType.isDynamicDim(2))
    return std::nullopt;
  const bool plain = generic.getNumDpsInputs() == 2;
  Type wElement = wType.getElementType();
  GgufMatmul info;
  info.blockBytes = wType.getDimSize(2);
  if (plain && (wElement.isF32() || wElement.isF16() || wElement.isBF16()) &&
      info.blockBytes == kPlainLanes)
    info.ggmlType = plainGgmlType(wElement);
  else if (!plain && wElement.isInteger(8) && info.blockBytes == 34)
    info.ggmlType = kGgufQ8_0;
  else if (!plain && wElement.isInteger(8) && info.blockBytes == 18)
    info.ggmlType = kGgufQ4_0;
  else
    return std::nullopt;
  if (generic.getIndexingMapsArray() != ggufMatmulMaps(op->getContext(), info.ggmlType))
    return std::nullopt;
  auto elementType = [&](Value v) { return getElementTypeOrSelf(v.getType()); };
  if (!elementType(generic.getDpsInputs()[0]).isF32() ||
      !elementType(generic.getDpsInits()[0]).isF32())
    return std::nullopt;
  for (Value operand : llvm::drop_begin(generic.getDpsInputs()))
    if (elementType(operand) != wElement)
      return std::nullopt;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  auto sum = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  Block *body = generic.getBody();
  if (!sum || sum.getLhs() != body->getArgument(generic.getNumDpsInputs()))
    return std::nullopt;
  if (plain) {
    // C += A' * extf(W) (or A' * W for f32), nothing else.
    auto product = sum.getRhs().getDefiningOp<arith::MulFOp>();
    if (!product || product.getLhs() != body->getArgument(0))
      return std::nullopt;
    Value weight = product.getRhs();
    if (auto ext = weight.getDefiningOp<arith::ExtFOp>())
      weight = ext.getIn();
    const size_t ops = wElement.isF32() ? 3 : 4; // (extf,) mulf, addf, yield
    if (weight != body->getArgument(1) || body->getOperations().size() != ops)
      return std::nullopt;
  }
  return info;
}

} // namespace turbine::compiler
