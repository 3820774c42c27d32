//===- CodegenStrategies.h - Vector-level strategies of kernel codegen ----===//
//
// Internal to the compiler library. Kernel codegen (KernelCodegen.cpp) tiles
// each kernel to workgroups and then gives each op inside a workgroup tile a
// vector-level strategy: matmuls (MatmulCodegen.cpp), convolutions and
// pooling (ConvolutionCodegen.cpp), everything else by the generic strategy.
// This header holds the primitives those share (defined in
// KernelCodegen.cpp) and the strategies' entry points.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CODEGENSTRATEGIES_H
#define TURBINE_COMPILER_CODEGENSTRATEGIES_H

#include "targets/cpu/CpuFeatures.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <functional>
#include <optional>

namespace turbine::compiler {

/// Matmul K tile.
constexpr int64_t kMatmulTileK = 256;
/// Innermost tile of the generic strategy.
constexpr int64_t kVectorWidth = 64;

/// The register tiles of the f32 strategies, sized for the target's vector
/// registers (CpuFeatures): accumulators, a row of B and a broadcast of A
/// fit in the register file with none spilled.
///                    32 zmm (AVX-512)   16 ymm (AVX2)   16 xmm (SSE)
///   matmul rows x columns   8 x 32           6 x 16          6 x 8
///   GEMV columns               128               64             32
///   accumulators                16               12             12
/// A convolution's register tile is pixels x channels with channels at most
/// matmulColumns and pixels x channel vectors at most `accumulators`.
struct RegisterTiles {
  int64_t lanes;         ///< f32 elements of one vector register
  int64_t matmulRows;    ///< rows of a matmul register tile
  int64_t matmulColumns; ///< its columns: two vector registers
  int64_t gemvColumns;   ///< columns of a one-row tile: eight registers
  int64_t accumulators;  ///< most accumulator registers of one tile
  int64_t registers;     ///< vector registers in all: 32 | 16
};
RegisterTiles registerTiles(const CpuFeatures &features);

// Primitives (KernelCodegen.cpp).

/// Tiles `op` with `tileSizes` (scf.for loops, no fusion). Returns the tiled
/// op, or null if tiling failed (the op is left as it was).
mlir::Operation *tileOp(mlir::RewriterBase &rewriter, mlir::TilingInterface op,
                        llvm::ArrayRef<int64_t> tileSizes);

/// Whether `op` has a shaped operand of i1. Such tensors hold a byte per
/// element while vectors of i1 are bit-packed in memory: the strategies
/// vectorize no op that reads or writes one.
bool hasI1Operand(mlir::Operation *op);

/// linalg.matmul, linalg.batch_matmul or a packed matmul (MatmulDataTiling.h).
bool isMatmulLike(mlir::Operation *op);

/// Vectorizes `op` with the given vector sizes (masked where its shape is
/// dynamic). Leaves the op alone if the vectorizer cannot handle it (returns
/// false then; true once `op` is replaced and erased).
bool vectorizeOp(mlir::RewriterBase &rewriter, mlir::Operation *op,
                 llvm::ArrayRef<int64_t> vectorSizes);

/// Everything but matmul inside a workgroup tile: the innermost loop tiled by
/// 64 and the others by 1, then vectorized (with masks for partial tiles of
/// a dynamic extent; a static extent's remainder is peeled, and its tiles
/// are vectorized by vectorizePeeledTiles once canonicalization made their
/// shapes static).
void tileAndVectorizeGeneric(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op);

/// Vectorizes the peeled tiles of `kernel` at their (now static) sizes.
void vectorizePeeledTiles(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel);

/// Tiles `epilogue` by `options` with `root` (a convolution or matmul whose
/// result it reads) and the fill of root's accumulator fused into each
/// tile, then erases the untiled ops. On failure the IR is as it was.
mlir::FailureOr<mlir::scf::SCFTileAndFuseResult>
tileEpilogueWithProducers(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp epilogue,
                          mlir::linalg::LinalgOp root,
                          const mlir::scf::SCFTileAndFuseOptions &options);

/// An in-bounds vector read of `type` from `source` at `indices` (minor
/// identity map), and the matching write of `value` into `dest` (returns
/// the updated tensor).
mlir::Value readVector(mlir::OpBuilder &b, mlir::Location loc, mlir::Value source,
                       llvm::ArrayRef<mlir::Value> indices, mlir::VectorType type);
mlir::Value writeVector(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                        mlir::Value dest, llvm::ArrayRef<mlir::Value> indices);

/// Static upper bound of each of `op`'s loops (its extent where static, a
/// power of two at least the largest value of a dynamic extent), or nullopt
/// if some dynamic extent has none.
std::optional<llvm::SmallVector<int64_t>> loopUpperBounds(mlir::linalg::LinalgOp op);

// Matmuls (MatmulCodegen.cpp).

/// Matmul / batch_matmul / packed matmul inside a workgroup tile: K tiles,
/// register tiles, leftover rows, the in-kernel pack of B where marked.
/// bf16 operands on a CPU with AVX512-BF16 (`features`) take the vdpbf16ps
/// register tiles of Bf16MatmulCodegen.cpp instead.
void tileMatmul(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                const CpuFeatures &features);

/// How tileMatmulOnDecodedPanels reads a B stored in another layout.
struct DecodedPanels {
  /// The op's loop over blocks of K, and how many blocks make a K tile
  /// (at most 256 elements of K).
  unsigned blockDim = 2;
  int64_t blocksPerTile = 1;
  /// Rows from which the panels pay for their decoding.
  int64_t minRows = 16;
  /// Writes B's K tile, decoded from the layout `tile` reads it in, into
  /// `panels` (Bp[N/32][k][32] f32, k-major, a slice of the kernel's panel
  /// scratch, MatmulKernelPacking.h); returns the written tensor.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::linalg::GenericOp tile, mlir::Value panels)>
      decode;
};

/// A matmul-like generic inside a workgroup tile whose B is stored in
/// another layout (GGUF blocks, group-quantized weights): C [M, N], A its
/// input 0, viewed as [M, blocks, ...] with K's elements in order (rows of
/// K once collapsed). With at least `minRows` rows and N a static multiple
/// of 32 (at most 128), its block loop is tiled into K tiles; per K tile
/// `decode` writes B's tile into the kernel's panel scratch and the packed
/// contract on it replaces the tile, register-tiled as tileMatmul tiles it
/// (8 x 32, the f32 GEMM's inner loop): each weight decoded once per
/// workgroup, not once per register tile. Fewer rows (or other N) go to
/// `fewRows`; a dynamic row count gets both, chosen per workgroup at run
/// time (scf.if on its rows).
void tileMatmulOnDecodedPanels(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                               const DecodedPanels &panels, const CpuFeatures &features,
                               llvm::function_ref<void(mlir::linalg::LinalgOp)> fewRows);

/// The rows of a matmul (after K tiling) past the last multiple of the
/// register tile's (fewer or a dynamic count): one row at a time, 1 x
/// gemvColumns x 1 then 1 x matmulColumns x 1 tiles.
void tileLeftoverMatmulRows(mlir::RewriterBase &rewriter, mlir::Operation *leftoverRows,
                            const RegisterTiles &tiles);

/// The matmul whose result `epilogue` updates in place, when one
/// register-tile pass covers it; null otherwise.
mlir::linalg::LinalgOp matmulBeforeRegisterEpilogue(mlir::linalg::GenericOp epilogue,
                                                    const RegisterTiles &tiles);

/// A matmul and its in-place epilogue, register tile by register tile.
/// Returns the tiles it made, empty if it could not tile.
llvm::SmallVector<mlir::Operation *> tileMatmulWithEpilogue(mlir::RewriterBase &rewriter,
                                                            mlir::linalg::GenericOp epilogue,
                                                            mlir::linalg::LinalgOp matmul,
                                                            const RegisterTiles &tiles);

/// Vectorizes the fill and epilogue tiles tileMatmulWithEpilogue made.
void vectorizeRegisterEpilogues(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel);

/// Vectorizes the matmul register tiles of `kernel` (masked where partial).
void vectorizeMatmulTiles(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel,
                          const RegisterTiles &tiles);

// bf16 matmuls with AVX512-BF16 (Bf16MatmulCodegen.cpp).

/// True if `op` (a matmul or packed matmul, possibly a workgroup or K tile
/// of one) takes the vdpbf16ps strategy on a CPU with `features`: bf16 A
/// and B, an f32 accumulator, 32-column panels (packed B, or a plain B with
/// static N a multiple of 32), not a static single row (GEMV keeps its
/// 1x128 f32 tiles).
bool takesBf16DotProducts(mlir::linalg::LinalgOp op, const CpuFeatures &features);

/// A matmul that takesBf16DotProducts, after K tiling: rows split at the
/// last multiple of 8; full rows get 8 x 32 register tiles over the whole
/// K tile, static leftover rows one tile of that many rows, a dynamic
/// leftover tileLeftoverMatmulRows with `leftover`'s tiles.
void tileBf16MatmulRows(mlir::RewriterBase &rewriter, mlir::Operation *op,
                        const RegisterTiles &leftover);

/// Writes the tiles tileBf16MatmulRows made as vdpbf16ps vector code
/// (x86vector.avx512.dot).
void vectorizeBf16Matmuls(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel);

// Group-quantized matmuls (QuantizedMatmulCodegen.cpp).

/// The fused dequantize-and-multiply generic of turbine-quantize-weights
/// (global-opt/WeightQuantization.h) inside a workgroup tile: 8x32 register
/// tiles for full rows, 1x128 (then 1x32) for leftover rows, reductions
/// whole; many rows (M >= 16 or dynamic, no batch): per K tile the weights
/// dequantized into the kernel's panel scratch and the f32 GEMM on it
/// (tileMatmulOnDecodedPanels). Does nothing to any other op.
void tileQuantizedMatmul(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                         const CpuFeatures &features);

/// Writes the register tiles tileQuantizedMatmul made as vector code that
/// reads the int8 / int4 weights and dequantizes them in registers; int4
/// GEMV tiles with AVX512-VNNI (`features`) multiply int8-quantized
/// activations by the nibbles with vpdpbusd instead.
void vectorizeQuantizedMatmuls(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel,
                               const CpuFeatures &features);

/// The instructions a byte dot product (buildUnsignedSignedDot) becomes.
enum class ByteDot {
  /// AVX512-VNNI's vpdpbusd: 4 products per i32 lane, summed exactly.
  Vpdpbusd,
  /// AVX2's vpmaddubsw (two adjacent products summed into an i16, with
  /// saturation) then vpmaddwd by ones (two i16 into an i32): exact only
  /// where |x[2i] * y[2i] + x[2i+1] * y[2i+1]| <= 32767, which the caller
  /// guarantees (unsigned bytes below 16, or |x| <= 128 and |y| <= 127).
  Vpmaddubsw,
};

/// The byte dot product of `features` (CpuFeatures.h: cleared without
/// --quantized-matmul-activations=int8): vpdpbusd, else vpmaddubsw, else
/// none (the strategies keep f32 activations).
std::optional<ByteDot> byteDot(const CpuFeatures &features);

/// acc[j] += sum_b u8(x[j].byte b) * s8(y[j].byte b), b = 0..3, for
/// vector<L x i32> acc, x, y: a byte dot product's meaning as pure vector
/// ops, marked with the instructions `dot` it is to become, which
/// lowerVectors writes after bufferization (ByteDotToVnni,
/// ByteDotToPairSums, KernelCodegen.cpp; unrewritten it is still the right
/// result).
mlir::Value buildUnsignedSignedDot(mlir::OpBuilder &b, mlir::Location loc, mlir::Value acc,
                                   mlir::Value x, mlir::Value y, ByteDot dot);

/// The attribute buildUnsignedSignedDot marks its reduction with: "vpdpbusd"
/// or "vpmaddubsw".
inline constexpr llvm::StringLiteral kByteDotAttr = "turbine.byte_dot";

/// A block of activations rounded to int8 with one scale, as llama.cpp's
/// Q8 activations: amax = max |a|, q = roundeven(a * 127 / amax) (0 where
/// amax = 0), a ~ q * scale with scale = amax / 127.
struct Int8Activations {
  mlir::Value q;     ///< vector<N x i32>, values in [-127, 127]
  mlir::Value scale; ///< f32
};
Int8Activations roundActivationsToInt8(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a);

// Matmuls by GGUF Q8_0 / Q4_0 blocks (GgufMatmulCodegen.cpp).

/// The block-decoding generic of turbine-bind-gguf-weights
/// (global-opt/GgufWeights.h) inside a workgroup tile: register tiles of
/// 1 x 1 (M = 1) or 4 x 2 (rows x weight rows), reductions whole; with
/// AVX512-VNNI (`features`), an M = 1 tile stays whole (its activations
/// are rounded to int8 once per tile); many rows (prefill): per K tile the
/// weight rows decoded into the kernel's panel scratch and the f32 GEMM's
/// packed contract on it (tiled here by tileMatmul).
void tileGgufMatmul(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                    const CpuFeatures &features);

/// Writes the register tiles tileGgufMatmul made as vector code that reads
/// the blocks in place and dequantizes them in registers, or (VNNI GEMV)
/// multiplies them by int8-rounded activations with vpdpbusd.
void vectorizeGgufMatmuls(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel,
                          const CpuFeatures &features);

// Convolutions and pooling (ConvolutionCodegen.cpp).

/// 2-D NCHW convolution inside a workgroup tile: 1-D convolution tiles.
void tileConvolution(mlir::RewriterBase &rewriter, mlir::linalg::Conv2DNchwFchwOp op);

/// NHWC convolution or pooling inside a workgroup tile: register tiles of
/// pixels x channels.
void tileChannelsLastWindow(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                            const RegisterTiles &tiles);

/// A clamped-window max pooling (ClampedMaxPooling.h) by one pixel x one
/// channel vector; returns the tiles.
llvm::SmallVector<mlir::Operation *> tileClampedMaxPooling(mlir::RewriterBase &rewriter,
                                                           mlir::linalg::LinalgOp op,
                                                           const RegisterTiles &tiles);

/// The NHWC convolution whose only use is `epilogue`, or null.
mlir::linalg::LinalgOp convolutionBeforeEpilogue(mlir::linalg::GenericOp epilogue);

/// A convolution and its elementwise epilogue, register tile by register
/// tile. Returns the convolution tiles it made, empty if it could not tile.
llvm::SmallVector<mlir::Operation *> tileConvolutionWithEpilogue(mlir::RewriterBase &rewriter,
                                                                 mlir::linalg::GenericOp epilogue,
                                                                 mlir::linalg::LinalgOp conv,
                                                                 const RegisterTiles &tiles);

/// A packed-filter convolution: one NHWC convolution per 32-channel tile,
/// with blocked reductions when `blockReduction`.
void tilePackedConvolution(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                           bool blockReduction, const RegisterTiles &tiles);

/// Decomposes the unit-height convolution and pooling tiles to 1-D ones and
/// vectorizes those with static shapes.
void vectorizeConvolutions(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CODEGENSTRATEGIES_H
