//===- CpuWorkgroupTiling.h - The CPU target's workgroup tile policy ------===//
//
// How the CPU target splits a dispatch region over workgroups (and the
// divisor helpers its codegen strategies share). Sizes come from the
// register tiles and cache sizes; see CpuWorkgroupTiling.cpp.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_CPUWORKGROUPTILING_H
#define TURBINE_COMPILER_CPU_CPUWORKGROUPTILING_H

#include "turbine/compiler/Target.h"

#include <string>

namespace turbine::compiler {

struct RegisterTiles;

/// Tiles for a region (its ops in block order) whose workgroups compute
/// tiles of `tiled`, on a CPU with `registers` (CodegenStrategies.h).
WorkgroupTiling cpuWorkgroupTiling(llvm::ArrayRef<mlir::Operation *> regionOps,
                                   mlir::Value tiled, const RegisterTiles &registers);

/// Names of the kernels whose root is an op only the CPU target makes: a
/// packed convolution (conv2d_KHxKWsS_OHxOWxCxF_f32) or the run-time pack of
/// a matmul's B (pack_matmul_b_...); empty for other ops.
std::string describeCpuKernelRoot(mlir::Operation *op);

/// Output channels per workgroup of an NHWC convolution with `channels`
/// output channels, 24 or more and not a multiple of 16, whose register
/// tiles would otherwise be 8 channels (ymm) wide or narrower: for a
/// multiple of 8 (24, 40, 72, 1000) the smallest divisor of `channels` from
/// 40 up (at most 256; else the largest, 24), else all of them (58, 116; at
/// most 256), which codegen splits into 32-wide register tiles and a 16 /
/// 8 / 4 / 2 / 1 remainder (ConvolutionCodegen.cpp). 0 for other channel
/// counts.
int64_t splitChannelsWorkgroupTile(int64_t channels);

/// Largest divisor of `extent` that is at most `limit` (1 if none larger).
int64_t largestDivisorAtMost(int64_t extent, int64_t limit);
/// Largest power of two dividing `extent` that is at most `limit`.
int64_t largestPowerOfTwoDivisorAtMost(int64_t extent, int64_t limit);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_CPUWORKGROUPTILING_H
