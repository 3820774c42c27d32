//===- ConvolutionStrategiesTest.cpp - Convolution paths vs a C++ reference ===//
//
// Compiles NCHW convolutions as the frontends emit them (tensor.pad +
// linalg.conv_2d_nchw_fchw with a constant filter, dynamic batch, optional
// bias + ReLU epilogue and residual add) at odd shapes — strides, uneven
// padding, dilation, 1x1, 3 input channels, rectangular windows, channel
// counts that are and are not multiples of the 32-channel filter tile,
// depthwise convolutions (3x3 and 5x5, all channels per workgroup or split
// for small images) and grouped convolutions in the frontends' generic form (grouped:
// groups of 1 to 16 input channels, filters packed per group), and padded
// max pooling after them — runs
// them on local-sync and on local-task with 2 workers, and compares with a
// plain loop nest. Inputs and weights are small multiples of 1/8, so every
// partial sum is a multiple of 1/64 far below 2^18 and f32 arithmetic is
// exact in any order: results must be equal. Each case also checks on the
// global-opt IR whether the filter was packed channel-tile-major
// (ConvolutionFilterPacking.cpp), and for packed filters on the dispatch
// and codegen IR whether the reduction was blocked (whole-image workgroup
// tiles, filter prefetches: ConvolutionReductionBlocking.h), so the test
// exercises the path it names.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;

using turbine::runtime::DType;
using turbine::runtime::Tensor;

struct ConvCase {
  int64_t c, f, h, w, kh, kw;
  int64_t strides[2];
  int64_t dilations[2];
  int64_t pads[4]; // top, left, bottom, right
  bool epilogue;   // + bias[f], then ReLU
  bool residual;   // + the input itself before the ReLU (needs c == f, same size)
  std::vector<int64_t> batches;
  bool expectPacked;
  // Output channels per filter tile when packed: 32, or for F a multiple of
  // 8 but not of 32, the channel tile of its workgroups (40 of 200, 16 of
  // 144: filterTileChannels).
  int64_t packedTile = 32;
  bool depthwise = false; // groups = c = f, as the frontends' generic
  // Groups of c / groups input and f / groups output channels, as the
  // frontends' generic (groups > 1, not depthwise): a grouped NHWC
  // convolution whose filter is packed per group ([G][KH][KW][Cg][Fg]),
  // checked on the global-opt IR and by its kernel's name ("g<G>").
  int64_t groups = 1;
  // A 1x1 max pooling (the identity) after the epilogue: it reads NHWC, so
  // the epilogue moves to NHWC and is tiled with the convolution's register
  // tiles (KernelCodegen.cpp); without it the epilogue reads the result
  // through the final transpose and runs as its own pass.
  bool poolAfter = false;
  // That max pooling's window (square), stride, dilation and -inf padding
  // (top, left, bottom, right): a padded pooling's pad joins its dispatch
  // (DispatchFormation.cpp) and is computed per workgroup tile.
  int64_t poolKernel = 1, poolStride = 1, poolDilation = 1;
  int64_t poolPads[4] = {0, 0, 0, 0};
  // Whether that padded pooling should read its source at clamped indices
  // (ClampedMaxPooling.h: dilation 1, every window overlapping the source),
  // checked on the kernel: no padded scratch tile, no select.
  bool expectClampedPooling = false;
  // Whether the padded NHWC copy of the input (a pad gather reading the
  // NCHW input transposed) is built by rows with shuffles
  // (ChannelsLastInputGather.h: few channels, static width): checked on the
  // kernels (shuffles, no element gathers).
  bool expectInterleavedInput = false;
  // Height and width dynamic too (the register tiles need static ones: the
  // convolution then runs unvectorized, packed or not).
  bool dynamicSpatial = false;
  // CompileOptions::targetCpu: "host", or "x86-64-v3" (AVX2, 16 registers)
  // for the register tiles of such CPUs on any x86-64 host with AVX2.
  std::string cpu = "host";
  // Whether the packed convolution's reduction is blocked
  // (ConvolutionReductionBlocking.h: a filter slice of 256 KiB or more per
  // 32 output channels, at most 64 output pixels): its kernel's workgroup
  // tile is the whole image and its codegen prefetches filter blocks.
  bool expectBlocked = false;
  // Output channels per workgroup of a convolution whose F is not a
  // multiple of 16 (CpuWorkgroupTiling.cpp, splitChannelsWorkgroupTile; a
  // packed one's filter tile), split by codegen into 32-wide register
  // tiles and a 16 / 8 / ... remainder (ConvolutionCodegen.cpp, channel
  // segments): checked on the dispatch's workgroup tiles and on the
  // kernel's 32-wide vector FMAs. 0: not checked.
  int64_t expectSegmentedChannels = 0;

  int64_t oh() const {
    return (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) / strides[0] + 1;
  }
  int64_t ow() const {
    return (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) / strides[1] + 1;
  }
  int64_t poolOut(int64_t in, int axis) const {
    return (in + poolPads[axis] + poolPads[axis + 2] - poolDilation * (poolKernel - 1) - 1) /
               poolStride +
           1;
  }
  // The function's result: the convolution's, or the pooling's.
  int64_t resultH() const { return poolAfter ? poolOut(oh(), 0) : oh(); }
  int64_t resultW() const { return poolAfter ? poolOut(ow(), 1) : ow(); }
};

float xValue(int64_t n, int64_t c, int64_t y, int64_t x) {
  return float((3 * n + 7 * c + 5 * y + 11 * x) % 9 - 4) / 8;
}
float wValue(int64_t f, int64_t c, int64_t y, int64_t x) {
  return float((13 * f + 5 * c + 3 * y + 7 * x) % 11 - 5) / 8;
}
float biasValue(int64_t f) { return float(f % 5 - 2) / 2; }

std::string tensorType(std::vector<int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + "f32>";
}

/// func.func @main(%x: ?xCxHxW) -> ?xFxOHxOW.
std::string convSource(const ConvCase &c) {
  int64_t dyn = c.dynamicSpatial ? -1 : 0;
  auto dim = [&](int64_t d) { return c.dynamicSpatial ? dyn : d; };
  std::string x = tensorType({-1, c.c, dim(c.h), dim(c.w)});
  int64_t hp = c.h + c.pads[0] + c.pads[2], wp = c.w + c.pads[1] + c.pads[3];
  std::string xp = tensorType({-1, c.c, dim(hp), dim(wp)});
  int64_t filterChannels = c.depthwise ? 1 : c.c / c.groups;
  std::string wt = tensorType({c.f, filterChannels, c.kh, c.kw});
  std::string r = tensorType({-1, c.f, dim(c.oh()), dim(c.ow())});
  std::string pr = tensorType({-1, c.f, dim(c.resultH()), dim(c.resultW())});
  // Result sizes: (in + pads - dilation * (k - 1) - 1) / stride + 1.
  std::string emptySizes = "%n";
  std::ostringstream sizes;
  if (c.dynamicSpatial) {
    for (int axis = 0; axis < 2; ++axis) {
      int64_t k = axis ? c.kw : c.kh;
      int64_t extra = c.pads[axis] + c.pads[axis + 2] - c.dilations[axis] * (k - 1) - 1;
      sizes << "  %d" << axis << " = arith.constant " << 2 + axis << " : index\n"
            << "  %in" << axis << " = tensor.dim %x, %d" << axis << " : " << x << "\n"
            << "  %extra" << axis << " = arith.constant " << extra << " : index\n"
            << "  %stride" << axis << " = arith.constant " << c.strides[axis] << " : index\n"
            << "  %one" << axis << " = arith.constant 1 : index\n"
            << "  %t" << axis << " = arith.addi %in" << axis << ", %extra" << axis << " : index\n"
            << "  %q" << axis << " = arith.divui %t" << axis << ", %stride" << axis << " : index\n"
            << "  %out" << axis << " = arith.addi %q" << axis << ", %one" << axis << " : index\n";
    }
    emptySizes = "%n, %out0, %out1";
  }
  std::ostringstream os;
  os << "func.func @main(%x: " << x << ") -> " << pr << " {\n"
     << "  %w = arith.constant dense<[";
  for (int64_t f = 0; f < c.f; ++f) {
    os << (f ? ", [" : "[");
    for (int64_t ci = 0; ci < filterChannels; ++ci) {
      os << (ci ? ", [" : "[");
      for (int64_t y = 0; y < c.kh; ++y) {
        os << (y ? ", [" : "[");
        for (int64_t xx = 0; xx < c.kw; ++xx)
          os << (xx ? ", " : "") << f32Literal(wValue(f, ci, y, xx));
        os << "]";
      }
      os << "]";
    }
    os << "]";
  }
  os << "]> : " << wt << "\n"
     << "  %c0 = arith.constant 0 : index\n"
     << "  %n = tensor.dim %x, %c0 : " << x << "\n"
     << sizes.str()
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %xp = tensor.pad %x low[0, 0, " << c.pads[0] << ", " << c.pads[1] << "] high[0, 0, "
     << c.pads[2] << ", " << c.pads[3] << "] {\n"
     << "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
     << "    tensor.yield %zero : f32\n"
     << "  } : " << x << " to " << xp << "\n"
     << "  %e = tensor.empty(" << emptySizes << ") : " << r << "\n"
     << "  %acc = linalg.fill ins(%zero : f32) outs(%e : " << r << ") -> " << r << "\n";
  if (c.groups > 1) {
    // The frontends' grouped convolution generic, loops (n, f, oh, ow, c, kh, kw).
    os << "  %conv = linalg.generic {indexing_maps = [affine_map<(n, f, y, x, g, ky, kx) -> (n, "
          "(f floordiv "
       << c.f / c.groups << ") * " << filterChannels << " + g, y * " << c.strides[0]
       << " + ky * " << c.dilations[0] << ", x * " << c.strides[1] << " + kx * "
       << c.dilations[1]
       << ")>, affine_map<(n, f, y, x, g, ky, kx) -> (f, g, ky, kx)>, affine_map<(n, f, y, x, "
          "g, ky, kx) -> (n, f, y, x)>], iterator_types = [\"parallel\", \"parallel\", "
          "\"parallel\", \"parallel\", \"reduction\", \"reduction\", \"reduction\"]} ins(%xp, %w : "
       << xp << ", " << wt << ") outs(%acc : " << r << ") {\n"
       << "  ^bb0(%in: f32, %wv: f32, %out: f32):\n"
       << "    %p = arith.mulf %in, %wv : f32\n"
       << "    %q = arith.addf %out, %p : f32\n"
       << "    linalg.yield %q : f32\n"
       << "  } -> " << r << "\n";
  } else if (c.depthwise) {
    // The frontends' grouped convolution generic, loops (n, f, oh, ow, g, kh, kw).
    os << "  %conv = linalg.generic {indexing_maps = [affine_map<(n, f, y, x, g, ky, kx) -> (n, "
          "f + g, y * "
       << c.strides[0] << " + ky * " << c.dilations[0] << ", x * " << c.strides[1] << " + kx * "
       << c.dilations[1]
       << ")>, affine_map<(n, f, y, x, g, ky, kx) -> (f, g, ky, kx)>, affine_map<(n, f, y, x, "
          "g, ky, kx) -> (n, f, y, x)>], iterator_types = [\"parallel\", \"parallel\", "
          "\"parallel\", \"parallel\", \"reduction\", \"reduction\", \"reduction\"]} ins(%xp, %w : "
       << xp << ", " << wt << ") outs(%acc : " << r << ") {\n"
       << "  ^bb0(%in: f32, %wv: f32, %out: f32):\n"
       << "    %p = arith.mulf %in, %wv : f32\n"
       << "    %q = arith.addf %out, %p : f32\n"
       << "    linalg.yield %q : f32\n"
       << "  } -> " << r << "\n";
  } else {
    os << "  %conv = linalg.conv_2d_nchw_fchw {strides = dense<[" << c.strides[0] << ", "
       << c.strides[1] << "]> : tensor<2xi64>, dilations = dense<[" << c.dilations[0] << ", "
       << c.dilations[1] << "]> : tensor<2xi64>} ins(%xp, %w : " << xp << ", " << wt
       << ") outs(%acc : " << r << ") -> " << r << "\n";
  }
  if (!c.epilogue) {
    os << "  return %conv : " << r << "\n}\n";
    return os.str();
  }
  os << "  %bias = arith.constant dense<[";
  for (int64_t f = 0; f < c.f; ++f)
    os << (f ? ", " : "") << f32Literal(biasValue(f));
  os << "]> : " << tensorType({c.f}) << "\n"
     << "  %e2 = tensor.empty(" << emptySizes << ") : " << r << "\n"
     << "  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, "
        "affine_map<(a, b, c, d) -> (b)>, "
     << (c.residual ? "affine_map<(a, b, c, d) -> (a, b, c, d)>, " : "")
     << "affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = [\"parallel\", "
        "\"parallel\", \"parallel\", \"parallel\"]} ins(%conv, %bias"
     << (c.residual ? ", %x" : "") << " : " << r << ", " << tensorType({c.f})
     << (c.residual ? ", " + x : "") << ") outs(%e2 : " << r << ") {\n"
     << "  ^bb0(%v: f32, %bb: f32" << (c.residual ? ", %skip: f32" : "") << ", %o: f32):\n"
     << "    %s = arith.addf %v, %bb : f32\n";
  if (c.residual)
    os << "    %t = arith.addf %s, %skip : f32\n"
       << "    %z = arith.maximumf %t, %zero : f32\n";
  else
    os << "    %z = arith.maximumf %s, %zero : f32\n";
  os << "    linalg.yield %z : f32\n"
     << "  } -> " << r << "\n";
  if (!c.poolAfter) {
    os << "  return %y : " << r << "\n}\n";
    return os.str();
  }
  if (c.dynamicSpatial && (c.poolKernel != 1 || c.poolStride != 1))
    return "unsupported case: pooling with dynamic spatial dims";
  int64_t ph = c.oh() + c.poolPads[0] + c.poolPads[2], pw = c.ow() + c.poolPads[1] + c.poolPads[3];
  std::string padded = tensorType({-1, c.f, dim(ph), dim(pw)});
  std::string window = tensorType({c.poolKernel, c.poolKernel});
  os << "  %ninf = arith.constant 0xFF800000 : f32\n"
     << "  %yp = tensor.pad %y low[0, 0, " << c.poolPads[0] << ", " << c.poolPads[1]
     << "] high[0, 0, " << c.poolPads[2] << ", " << c.poolPads[3] << "] {\n"
     << "  ^bb0(%j0: index, %j1: index, %j2: index, %j3: index):\n"
     << "    tensor.yield %ninf : f32\n"
     << "  } : " << r << " to " << padded << "\n"
     << "  %win = tensor.empty() : " << window << "\n"
     << "  %pe = tensor.empty(" << (c.dynamicSpatial ? emptySizes : "%n") << ") : " << pr << "\n"
     << "  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : " << pr << ") -> " << pr << "\n"
     << "  %pool = linalg.pooling_nchw_max {dilations = dense<" << c.poolDilation
     << "> : tensor<2xi64>, strides = dense<" << c.poolStride
     << "> : tensor<2xi64>} ins(%yp, %win : " << padded << ", " << window << ") outs(%pinit : "
     << pr << ") -> " << pr << "\n"
     << "  return %pool : " << pr << "\n}\n";
  return os.str();
}

/// Plain loop nest, NCHW, in double.
std::vector<float> reference(const ConvCase &c, int64_t batch) {
  int64_t oh = c.oh(), ow = c.ow();
  std::vector<float> out(batch * c.f * oh * ow);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < c.f; ++f)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double sum = 0;
          for (int64_t ci = 0; ci < c.c; ++ci)
            for (int64_t ky = 0; ky < c.kh; ++ky)
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                int64_t iy = y * c.strides[0] + ky * c.dilations[0] - c.pads[0];
                int64_t ix = x * c.strides[1] + kx * c.dilations[1] - c.pads[1];
                int64_t cg = c.c / c.groups, fg = c.f / c.groups;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w || (c.depthwise && ci != f) ||
                    (!c.depthwise && ci / cg != f / fg))
                  continue;
                sum += double(xValue(n, ci, iy, ix)) *
                       double(wValue(f, c.depthwise ? 0 : ci % cg, ky, kx));
              }
          if (c.epilogue) {
            sum += biasValue(f);
            if (c.residual)
              sum += xValue(n, f, y, x);
            sum = std::max(sum, 0.0);
          }
          out[((n * c.f + f) * oh + y) * ow + x] = float(sum);
        }
  if (!c.poolAfter)
    return out;
  int64_t rh = c.resultH(), rw = c.resultW();
  std::vector<float> pooled(batch * c.f * rh * rw);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < c.f; ++f)
      for (int64_t y = 0; y < rh; ++y)
        for (int64_t x = 0; x < rw; ++x) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t ky = 0; ky < c.poolKernel; ++ky)
            for (int64_t kx = 0; kx < c.poolKernel; ++kx) {
              int64_t iy = y * c.poolStride + ky * c.poolDilation - c.poolPads[0];
              int64_t ix = x * c.poolStride + kx * c.poolDilation - c.poolPads[1];
              if (iy >= 0 && iy < oh && ix >= 0 && ix < ow)
                best = std::max(best, out[((n * c.f + f) * oh + iy) * ow + ix]);
            }
          pooled[((n * c.f + f) * rh + y) * rw + x] = best;
        }
  return pooled;
}

/// True if the LLVM dialect text `ir` has an llvm.intr.fmuladd on operands
/// whose type contains `vector` ("vector<" for any vector).
/// FMAs of `vector` type in `ir` (lowered LLVM dialect: one per vector).
int countFma(const std::string &ir, const std::string &vector) {
  std::istringstream lines(ir);
  int count = 0;
  for (std::string line; std::getline(lines, line);)
    count += line.find("llvm.intr.fmuladd") != std::string::npos &&
             line.find(vector) != std::string::npos;
  return count;
}

bool hasFma(const std::string &ir, const std::string &vector) { return countFma(ir, vector) > 0; }

/// FMAs of `vector` type in the kernels of `c` (compiled for c.cpu) whose
/// name holds `kernel` (a failure to compile fails the test).
int64_t kernelFmas(const ConvCase &c, const std::string &kernel, const std::string &vector) {
  std::string lowered, error;
  turbine::compiler::CompileOptions options;
  options.targetCpu = c.cpu;
  if (!compileSource(convSource(c), turbine::compiler::Phase::Codegen, lowered, nullptr, error,
                     options)) {
    ADD_FAILURE() << error;
    return 0;
  }
  int64_t count = 0;
  for (const std::string &text : kernelTexts(lowered, "llvm.func"))
    if (text.find(kernel) != std::string::npos)
      count += countFma(text, vector);
  return count;
}

void runCase(const ConvCase &c) {
  std::string source = convSource(c), ir, error;
  turbine::compiler::CompileOptions options;
  options.targetCpu = c.cpu;
  auto compileTo = [&](turbine::compiler::Phase phase, std::string &out) {
    return compileSource(source, phase, out, nullptr, error, options);
  };
  ASSERT_TRUE(compileTo(turbine::compiler::Phase::GlobalOpt, ir)) << error;
  std::string packedType = tensorType({c.f / c.packedTile, c.kh, c.kw, c.c, c.packedTile});
  bool packed = ir.find("floordiv " + std::to_string(c.packedTile)) != std::string::npos &&
                ir.find(": " + packedType) != std::string::npos;
  EXPECT_EQ(packed, c.expectPacked) << ir;
  EXPECT_EQ(ir.find("linalg.conv_2d_nchw_fchw"), std::string::npos) << ir;
  if (c.depthwise)
    EXPECT_NE(ir.find("linalg.depthwise_conv_2d_nhwc_hwc"), std::string::npos) << ir;
  if (c.groups > 1) {
    // Packed per group, read at input channel (f floordiv Fg) * Cg + c, and
    // named as a grouped convolution at dispatch (so it got the
    // convolution strategy, not the generic one).
    int64_t cg = c.c / c.groups, fg = c.f / c.groups;
    std::string groupedType = tensorType({c.groups, c.kh, c.kw, cg, fg});
    std::string channel = fg == 1   ? "d3 * " + std::to_string(cg)
                          : cg == 1 ? "d3 floordiv " + std::to_string(fg)
                                    : "(d3 floordiv " + std::to_string(fg) + ") * " +
                                          std::to_string(cg);
    EXPECT_NE(ir.find(": " + groupedType), std::string::npos) << ir;
    EXPECT_NE(ir.find(channel), std::string::npos) << ir;
    std::string dispatched;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Dispatch, dispatched)) << error;
    std::string name = "x" + std::to_string(c.f) + "g" + std::to_string(c.groups) + "_f32";
    EXPECT_NE(dispatched.find(name), std::string::npos) << dispatched;
    // With static H and W its register tiles are vector FMAs (a group tile
    // it could not lower would run scalar, still correct).
    if (!c.dynamicSpatial) {
      std::string lowered;
      ASSERT_TRUE(compileTo(turbine::compiler::Phase::Codegen, lowered)) << error;
      bool vectorFma = false;
      for (const std::string &kernel : kernelTexts(lowered, "llvm.func"))
        vectorFma |= kernel.find(name) != std::string::npos && hasFma(kernel, "vector<");
      EXPECT_TRUE(vectorFma) << lowered;
    }
  }

  if (c.expectPacked) {
    // The blocked path: whole-image workgroup tiles of 32 channels at
    // dispatch, the filter prefetches of the reduction blocks at codegen.
    std::string dispatched, lowered;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Dispatch, dispatched)) << error;
    std::string wholeImage = "turbine.workgroup_tiles = array<i64: 0, " + std::to_string(c.oh()) +
                             ", " + std::to_string(c.ow()) + ", 32>";
    EXPECT_EQ(dispatched.find(wholeImage) != std::string::npos, c.expectBlocked) << dispatched;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Codegen, lowered)) << error;
    EXPECT_EQ(lowered.find("turbine.filter_prefetch") != std::string::npos, c.expectBlocked);
    EXPECT_EQ(lowered.find("llvm.intr.prefetch") != std::string::npos ||
                  lowered.find("llvm.prefetch") != std::string::npos,
              c.expectBlocked);
  }

  if (c.expectSegmentedChannels) {
    std::string dispatched, lowered;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Dispatch, dispatched)) << error;
    std::string tiles = ", " + std::to_string(c.expectSegmentedChannels) + ">} {";
    bool segmented = false;
    for (const std::string &kernel : kernelTexts(dispatched, "func.func"))
      segmented |= kernel.find(c.expectPacked ? packedType : "linalg.conv_2d_nhwc_hwcf") !=
                       std::string::npos &&
                   kernel.find(tiles) != std::string::npos;
    EXPECT_TRUE(segmented) << dispatched;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Codegen, lowered)) << error;
    // The widest register tiles: two vector registers of channels (32 with
    // AVX-512, 16 with AVX2; the host's, which this compiles for).
    __builtin_cpu_init();
    const bool avx512 = c.cpu == "host" && __builtin_cpu_supports("avx512f");
    const std::string widest = avx512 ? "vector<32xf32>" : "vector<16xf32>";
    EXPECT_TRUE(hasFma(lowered, widest)) << lowered;
  }

  if (c.poolAfter && (c.poolPads[0] || c.poolPads[1] || c.poolPads[2] || c.poolPads[3])) {
    // The pooling's pad gather (a select of a tensor.extract) is in the
    // pooling's kernel, not a kernel of its own.
    std::string dispatched;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Dispatch, dispatched)) << error;
    int poolKernels = 0, padKernels = 0;
    for (const std::string &kernel : kernelTexts(dispatched, "func.func")) {
      bool pools = kernel.find("linalg.pooling_nhwc_max") != std::string::npos;
      bool gathers = kernel.find("tensor.extract %") != std::string::npos &&
                     kernel.find("0xFF800000") != std::string::npos;
      poolKernels += pools && gathers;
      padKernels += gathers && !pools;
    }
    EXPECT_EQ(poolKernels, 1) << dispatched;
    EXPECT_EQ(padKernels, 0) << dispatched;

    // The pooling's kernel (maxima, no multiplications): read at clamped
    // indices it has no scratch allocation and no select of the padding.
    std::string lowered;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Codegen, lowered)) << error;
    std::string poolKernel;
    for (const std::string &kernel : kernelTexts(lowered, "llvm.func"))
      if (kernel.find("llvm.intr.maximum") != std::string::npos &&
          kernel.find("llvm.intr.fmuladd") == std::string::npos &&
          kernel.find("llvm.fmul") == std::string::npos)
        poolKernel = kernel;
    ASSERT_FALSE(poolKernel.empty()) << lowered;
    bool clamped = poolKernel.find("llvm.call @malloc") == std::string::npos &&
                   poolKernel.find("llvm.select") == std::string::npos;
    EXPECT_EQ(clamped, c.expectClampedPooling) << poolKernel;
  }

  if (c.expectInterleavedInput) {
    std::string lowered;
    ASSERT_TRUE(compileTo(turbine::compiler::Phase::Codegen, lowered)) << error;
    EXPECT_NE(lowered.find("llvm.shufflevector"), std::string::npos) << lowered;
    EXPECT_EQ(lowered.find("llvm.intr.masked.gather"), std::string::npos) << lowered;
  }

  runOnEachDevice(source, [&](turbine::runtime::Function &function,
                              turbine::runtime::Device &device, const char *deviceName) {
    for (int64_t batch : c.batches) {
      Tensor x = Tensor::allocate(DType::f32, {batch, c.c, c.h, c.w}).value();
      for (int64_t e = 0; e < x.elementCount(); ++e) {
        int64_t xx = e % c.w, y = e / c.w % c.h, ci = e / (c.w * c.h) % c.c,
                n = e / (c.w * c.h * c.c);
        x.dataAs<float>()[e] = xValue(n, ci, y, xx);
      }
      std::vector<Tensor> inputs;
      inputs.push_back(std::move(x));
      auto results = function.invoke(device, inputs);
      ASSERT_TRUE(results.ok()) << results.message();
      const Tensor &out = results.value().at(0);
      std::vector<float> expected = reference(c, batch);
      ASSERT_EQ(out.elementCount(), static_cast<int64_t>(expected.size()));
      int64_t mismatches = 0, first = -1;
      for (size_t e = 0; e < expected.size(); ++e)
        if (out.dataAs<float>()[e] != expected[e] && mismatches++ == 0)
          first = static_cast<int64_t>(e);
      EXPECT_EQ(mismatches, 0) << deviceName << " batch " << batch << ": first at flat index "
                               << first << ": "
                               << (first >= 0 ? out.dataAs<float>()[first] : 0.f) << " vs "
                               << (first >= 0 ? expected[first] : 0.f);
    }
  }, options);
}

// Packed filter (F = 64, two 32-channel tiles), odd image, same padding,
// bias + ReLU fused.
TEST(ConvolutionStrategies, PackedFilter3x3SamePadding) {
  runCase({/*c=*/16, /*f=*/64, /*h=*/9, /*w=*/11, /*kh=*/3, /*kw=*/3, {1, 1}, {1, 1},
           {1, 1, 1, 1}, /*epilogue=*/true, /*residual=*/false, /*batches=*/{1, 3},
           /*expectPacked=*/true});
}

// Packed, stride 2 with uneven padding and an odd number of input channels.
TEST(ConvolutionStrategies, PackedFilterStride2UnevenPadding) {
  runCase({5, 96, 13, 10, 3, 3, {2, 2}, {1, 1}, {1, 0, 2, 1}, true, false, {2}, true});
}

// Packed, dilation 2 on 3 input channels (an image's first layer), no epilogue.
TEST(ConvolutionStrategies, PackedFilterDilated3Channels) {
  runCase({3, 64, 12, 9, 3, 3, {1, 1}, {2, 2}, {2, 2, 2, 2}, false, false, {1, 2}, true});
}

// 1x1 stride-2 convolution (ResNet's downsample), packed.
TEST(ConvolutionStrategies, PackedFilter1x1Stride2) {
  runCase({24, 64, 9, 7, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, true});
}

// Rectangular window, different strides per axis, 16 output channels (the
// 16-pixel x 16-channel register tile), not packed.
TEST(ConvolutionStrategies, NarrowRectangularWindow) {
  runCase({3, 16, 11, 13, 5, 3, {2, 1}, {1, 1}, {2, 1, 2, 1}, true, false, {1, 2}, false});
}

// 40 output channels: not a multiple of the filter tile, not packed.
TEST(ConvolutionStrategies, ChannelsNotMultipleOfTileAreNotPacked) {
  runCase({8, 40, 7, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1}, false});
}

// A residual block's second half: relu(conv(x) + bias + x), packed; the
// residual input is the graph's NCHW input, read in NHWC by the epilogue.
TEST(ConvolutionStrategies, ResidualAddFusedIntoPackedConvolution) {
  runCase({64, 64, 7, 9, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, true, {1, 2}, true});
}

// Depthwise (groups = channels, the frontends' generic) becomes an NHWC
// depthwise convolution vectorized over channels: stride 2 with uneven
// padding, 40 channels (a partial 32-channel tile's divisor), bias + ReLU.
TEST(ConvolutionStrategies, DepthwiseStride2UnevenPadding) {
  ConvCase c{40, 40, 11, 9, 3, 3, {2, 2}, {1, 1}, {1, 1, 0, 1}, true, false, {1, 2}, false};
  c.depthwise = true;
  runCase(c);
}

// Depthwise, dilation 2, rectangular window, 3 channels, no epilogue.
TEST(ConvolutionStrategies, DepthwiseDilatedRectangular) {
  ConvCase c{3, 3, 10, 12, 3, 5, {1, 1}, {2, 2}, {2, 4, 2, 4}, false, false, {1, 3}, false};
  c.depthwise = true;
  runCase(c);
}

// Depthwise with a residual add of its own input (same shape).
TEST(ConvolutionStrategies, DepthwiseResidual) {
  ConvCase c{64, 64, 7, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, true, {2}, false};
  c.depthwise = true;
  runCase(c);
}

// The same shapes with the epilogue in NHWC (a pooling reads it), so that it
// runs on the register tiles of the convolution: packed, narrow (16 x 16
// tiles), 40 channels (8-channel tiles), depthwise, residual.
TEST(ConvolutionStrategies, EpilogueOnRegisterTilesPacked) {
  ConvCase c{5, 96, 13, 10, 3, 3, {2, 2}, {1, 1}, {1, 0, 2, 1}, true, false, {1, 2}, true};
  c.poolAfter = true;
  runCase(c);
}

TEST(ConvolutionStrategies, EpilogueOnRegisterTilesNarrow) {
  ConvCase c{3, 16, 11, 13, 5, 3, {2, 1}, {1, 1}, {2, 1, 2, 1}, true, false, {1, 2}, false};
  c.poolAfter = true;
  runCase(c);
}

// 14-pixel rows, 3x3, 32 and 16 input channels: on a 16-register CPU (AVX2,
// this machine's CPU when it has no AVX-512) register tiles of two output
// rows of 7 x 8 (registerTileRows; too few input channels for pixel
// segments: PixelSegmentsOn16Registers); elsewhere one row. Packed filters
// of 64 channels, with the epilogue on the register tiles and with no
// epilogue.
TEST(ConvolutionStrategies, TwoRowRegisterTiles) {
  ConvCase packed{32, 64, 14, 14, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, true};
  packed.poolAfter = true;
  runCase(packed);
  ConvCase plain{16, 64, 14, 14, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false, {1, 2}, true};
  runCase(plain);
}

// Rows whose pixel count has no divisor near the widest tile's, compiled
// for a 16-register CPU (x86-64-v3: AVX2, run on any host that has it):
// split into pixel segments (pixelSegments), the widest tiles (6 x 16) for
// most of the row and a tile of its own for the rest. 14-pixel rows, packed
// with the epilogue on the register tiles (12 + 2 rows x 2 x 16: 16-wide
// FMAs where one row of 7 took 8-wide ones) and with no epilogue; 28-pixel
// rows (24 + 4 x 16); a 7 x 7 image with a blocked reduction (whole image
// per workgroup: 6 + a column of 7 rows x 1 x 8); 1024 input channels,
// whose pixels share an L1 set (the rest in one row). 64 input channels or
// more: fewer take the tiles whose pixels divide the row.
TEST(ConvolutionStrategies, PixelSegmentsOn16Registers) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "needs AVX2 and FMA";
  ConvCase packed{64, 64, 14, 14, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, true};
  packed.poolAfter = true;
  packed.cpu = "x86-64-v3";
  runCase(packed);
  EXPECT_GT(kernelFmas(packed, "conv2d_3x3s1_14x14x64x64", "vector<16xf32>"), 0);

  ConvCase plain{64, 64, 14, 14, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false, {1, 2}, true};
  ConvCase wider{64, 64, 28, 28, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1}, true};
  wider.poolAfter = true;
  ConvCase late{256, 64, 7, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1}, true};
  late.expectBlocked = true;
  ConvCase wideInput{1024, 64, 14, 14, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1}, true};
  wideInput.poolAfter = true;
  for (ConvCase c : {plain, wider, late, wideInput}) {
    c.cpu = "x86-64-v3";
    runCase(c);
  }
}

// Rows of a prime pixel count (SqueezeNet 1.0's stem: 109) compiled for an
// AVX-512 CPU (x86-64-v4, run where the host has AVX-512): the only tile
// whose pixels divide a 37-pixel row is 1 x 32 (two accumulators, FMA
// latency-bound); pixel segments make it 8 x 32 tiles for 32 pixels and
// 5 x 32 for the rest. Few input channels (3, a stem's) are segmented on
// AVX-512 too. Then a 3 x 3 max pooling of 64 channels after a
// convolution: its register tiles read 4 registers of each pixel.
TEST(ConvolutionStrategies, PixelSegmentsOfPrimeRowsOn32Registers) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "needs AVX-512";
  ConvCase stem{3, 32, 41, 41, 5, 5, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, false};
  stem.poolAfter = true;
  stem.cpu = "x86-64-v4";
  runCase(stem);
  // 8 + 5 FMAs of 32 lanes per step where the 1 x 32 tile had 1.
  EXPECT_GE(kernelFmas(stem, "conv2d_5x5s1_37x37x3x32", "vector<32xf32>"), 13);

  ConvCase pooled{64, 64, 15, 15, 3, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, true};
  pooled.poolAfter = true;
  pooled.poolKernel = 3;
  pooled.poolStride = 1;
  pooled.cpu = "x86-64-v4";
  runCase(pooled);
}

TEST(ConvolutionStrategies, EpilogueOnRegisterTilesOddChannels) {
  ConvCase c{8, 40, 7, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {3}, false};
  c.poolAfter = true;
  runCase(c);
}

TEST(ConvolutionStrategies, EpilogueOnRegisterTilesDepthwise) {
  ConvCase c{40, 40, 11, 9, 3, 3, {2, 2}, {1, 1}, {1, 1, 0, 1}, true, false, {1, 2}, false};
  c.depthwise = true;
  c.poolAfter = true;
  runCase(c);
}

// Depthwise convolutions take all channels per workgroup, split for small
// images (CpuWorkgroupTiling.cpp): 72 channels (8-channel register tiles)
// on an 18x18 image, whole; 144 channels at 14x14 with a 5x5 window, split
// into 3 x 48 so that there are 8+ workgroups; 96 channels, 5x5 stride 2
// with uneven padding, split into 3 x 32. Epilogues on the register tiles.
TEST(ConvolutionStrategies, DepthwiseAllChannelsPerWorkgroup) {
  ConvCase c{72, 72, 18, 18, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, false};
  c.depthwise = true;
  c.poolAfter = true;
  runCase(c);
}

TEST(ConvolutionStrategies, Depthwise5x5ChannelsSplitForSmallImage) {
  ConvCase c{144, 144, 14, 14, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, false, {1, 2}, false};
  c.depthwise = true;
  c.poolAfter = true;
  runCase(c);
}

TEST(ConvolutionStrategies, Depthwise5x5Stride2UnevenPaddingSplit) {
  ConvCase c{96, 96, 19, 21, 5, 5, {2, 2}, {1, 1}, {2, 1, 2, 2}, true, false, {2}, false};
  c.depthwise = true;
  c.poolAfter = true;
  runCase(c);
}

TEST(ConvolutionStrategies, EpilogueOnRegisterTilesResidual) {
  ConvCase c{64, 64, 7, 9, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, true, {1, 2}, true};
  c.poolAfter = true;
  runCase(c);
}

// Height and width dynamic: packed (the filter is static) but run by the
// generic strategy; residual epilogue, stride 2 in one axis.
TEST(ConvolutionStrategies, DynamicSpatialDimsPacked) {
  ConvCase c{6, 64, 9, 13, 3, 3, {2, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, true};
  c.dynamicSpatial = true;
  runCase(c);
}

// Channel counts whose tiles are powers of two below 32 (mobilenet's 24 and
// 144: 8- and 16-channel tiles) and an odd count (1-channel tiles), with
// the epilogue on the register tiles.
TEST(ConvolutionStrategies, ExpansionAndProjection1x1OddChannelCounts) {
  ConvCase expand{24, 144, 6, 9, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {2}, true};
  expand.packedTile = 16;
  expand.poolAfter = true;
  runCase(expand);
  ConvCase project{144, 24, 6, 9, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1}, false};
  project.poolAfter = true;
  runCase(project);
  ConvCase odd{5, 17, 7, 6, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1}, false};
  odd.poolAfter = true;
  runCase(odd);
}

// Output channels a multiple of 8 but not of 16 (8-channel register tiles
// before): workgroups of several channel tiles, split into 32-wide register
// tiles and a 16 / 8 remainder (AVX-512; AVX2: 16-wide and an 8
// remainder). A classifier-like 1x1 convolution (F = 200: workgroups of
// 40 = 32 + 8, its filter packed in tiles of 40) on 12-pixel rows, no
// epilogue; 3x3 stride 2 with uneven padding, 56 = 32 + 16 + 8 channels
// (one filter tile: not packed), its epilogue on the register tiles; 5x5
// with a residual add, 40 = 32 + 8; a 1x1 projection to 24 = 16 + 8.
// Dynamic batch, batches 1 and 2.
TEST(ConvolutionStrategies, ChannelSegments1x1Classifier) {
  ConvCase c{64, 200, 12, 12, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, false, {1, 2}, true};
  c.packedTile = 40;
  c.expectSegmentedChannels = 40;
  runCase(c);
}

// Output channels not a multiple of 8 (ShuffleNetV2's 58 and 116: register
// tiles of 2 and 4 channels before, ~8 GFLOP/s): workgroups of all of
// them, split into 32-wide register tiles and a 16 / 8 / 4 / 2 remainder
// (AVX2: 16-wide and an 8 / 4 / 2 remainder). A 1x1 convolution to 58
// channels without epilogue, and 58 -> 116 with bias + ReLU on the
// register tiles. Not packed (F is not a multiple of 8).
TEST(ConvolutionStrategies, ChannelSegmentsNotMultipleOf8) {
  ConvCase c58{24, 58, 10, 12, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, false, {1, 2}, false};
  c58.expectSegmentedChannels = 58;
  runCase(c58);
  ConvCase c116{58, 116, 7, 12, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, false};
  c116.poolAfter = true;
  c116.expectSegmentedChannels = 116;
  runCase(c116);
}

// F a multiple of 8 that no multiple of 8 from 24 to 256 divides
// (ShuffleNetV2 x2.0's 488 = 8 x 61): the filter packed in 8-channel tiles
// (each workgroup's slice contiguous), on 14- and 7-pixel rows.
TEST(ConvolutionStrategies, FilterPackedBy8For488Channels) {
  for (int64_t size : {14, 7}) {
    ConvCase c{32, 488, size, size, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, true};
    c.packedTile = 8;
    c.poolAfter = true;
    runCase(c);
  }
}

// SqueezeNet's classifier in small: a 1x1 convolution to 1000 channels
// (filter tiles of 40 = 32 + 8) on 13-pixel rows, bias + ReLU on the
// register tiles. 13 has no divisor from 2 to 12, so with AVX2 a 16-channel
// register tile would hold one pixel (two accumulators, latency-bound: the
// classifier ran at ~24 GFLOP/s); its segments take 13 pixels x 8
// channels instead, and with AVX-512 13 x 32. Checked on the kernel's
// vector FMAs.
TEST(ConvolutionStrategies, PackedSegmentsOn13PixelRows) {
  ConvCase c{32, 1000, 13, 13, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, true};
  c.packedTile = 40;
  c.poolAfter = true;
  runCase(c);
  std::string lowered, error;
  ASSERT_TRUE(compileSource(convSource(c), turbine::compiler::Phase::Codegen, lowered, nullptr,
                            error))
      << error;
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  bool convolution = false;
  for (const std::string &kernel : kernelTexts(lowered, "llvm.func")) {
    if (kernel.find("@conv2d_") == std::string::npos)
      continue;
    convolution = true;
    EXPECT_TRUE(hasFma(kernel, avx512 ? "vector<32xf32>" : "vector<8xf32>")) << kernel;
    if (!avx512)
      EXPECT_FALSE(hasFma(kernel, "vector<16xf32>")) << kernel;
  }
  EXPECT_TRUE(convolution) << lowered;
}

TEST(ConvolutionStrategies, ChannelSegmentsStride2UnevenPadding) {
  ConvCase c{5, 56, 15, 11, 3, 3, {2, 2}, {1, 1}, {1, 0, 2, 1}, true, false, {1, 2}, false};
  c.poolAfter = true;
  c.expectSegmentedChannels = 56;
  runCase(c);
}

TEST(ConvolutionStrategies, ChannelSegments5x5Residual) {
  ConvCase c{40, 40, 9, 10, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, true, {1, 2}, false};
  c.poolAfter = true;
  c.expectSegmentedChannels = 40;
  runCase(c);
}

TEST(ConvolutionStrategies, ChannelSegments1x1Projection24) {
  ConvCase c{48, 24, 14, 14, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, false};
  c.poolAfter = true;
  runCase(c);
}

// 32-channel register tiles on rows without a divisor from 4 to 8: 13
// pixels (SqueezeNet's 13x13 stage), packed, 3x3 same padding, epilogue on
// the register tiles; and 27 (9 pixels), no epilogue.
TEST(ConvolutionStrategies, PackedRowsOf13And27) {
  ConvCase c13{16, 64, 13, 13, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, true};
  c13.poolAfter = true;
  runCase(c13);
  ConvCase c27{8, 64, 5, 27, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, false, {2}, true};
  runCase(c27);
}

// A ResNet stem in small: convolution + bias + ReLU, then a 3x3 stride-2
// max pooling with -inf padding, whose pad joins the pooling's dispatch and
// is computed per workgroup tile (DispatchFormation.cpp): asymmetric pads,
// odd sizes, 64 channels (two 32-channel workgroup tiles).
TEST(ConvolutionStrategies, PaddedMaxPoolStride2AfterConvolution) {
  ConvCase c{3, 64, 13, 11, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, true};
  c.poolAfter = true;
  c.poolKernel = 3;
  c.poolStride = 2;
  c.poolPads[0] = 1, c.poolPads[1] = 0, c.poolPads[2] = 2, c.poolPads[3] = 1;
  c.expectClampedPooling = true;
  runCase(c);
}

// ResNet-18's stem pooling in small: 3x3 stride 2, pads 1 on every side,
// after a 7x7 stride-2 convolution of a 3-channel image; odd width (the
// last window's right column is padding), 64 channels, batches 1 and 3
// (dynamic batch): read at clamped indices.
TEST(ConvolutionStrategies, ResNetStemMaxPoolClamped) {
  ConvCase c{3, 64, 22, 17, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, false, {1, 3}, true};
  c.poolAfter = true;
  c.poolKernel = 3;
  c.poolStride = 2;
  c.poolPads[0] = 1, c.poolPads[1] = 1, c.poolPads[2] = 1, c.poolPads[3] = 1;
  c.expectClampedPooling = true;
  c.expectInterleavedInput = true; // 17 = 16 + 1 pixels per row
  runCase(c);
}

// A one-channel image 40 wide (two 16-pixel blocks and 8 left over), 5x5
// window, pads 2; batch 2 of a dynamic batch.
TEST(ConvolutionStrategies, GrayscaleImageInterleavedInput) {
  ConvCase c{1, 16, 9, 40, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, false, {2}, false};
  c.poolAfter = true;
  c.expectInterleavedInput = true;
  runCase(c);
}

// Four channels, width exactly one block, padding on the left and bottom
// only (the padded rows at the bottom, none at the top); stride 2.
TEST(ConvolutionStrategies, FourChannelImageInterleavedInput) {
  ConvCase c{4, 64, 7, 16, 3, 3, {2, 2}, {1, 1}, {0, 3, 1, 0}, true, false, {1, 2}, true};
  c.poolAfter = true;
  c.expectInterleavedInput = true;
  runCase(c);
}

// Stride 1, 16 channels (16-channel vectors), pads only at the bottom and
// right: clamped.
TEST(ConvolutionStrategies, SameMaxPoolStride1Clamped) {
  ConvCase c{5, 16, 9, 10, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {2}, false};
  c.poolAfter = true;
  c.poolKernel = 3;
  c.poolStride = 1;
  c.poolPads[0] = 0, c.poolPads[1] = 0, c.poolPads[2] = 2, c.poolPads[3] = 2;
  c.expectClampedPooling = true;
  runCase(c);
}

// A window entirely in the padding (bottom pad 3 with a 2x2 stride-2
// window: the last row of windows sees only padding, -inf): clamping would
// read a source row, so the pooling keeps its padded tile.
TEST(ConvolutionStrategies, MaxPoolWindowInPaddingNotClamped) {
  ConvCase c{4, 32, 6, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, false};
  c.poolAfter = true;
  c.poolKernel = 2;
  c.poolStride = 2;
  c.poolPads[0] = 0, c.poolPads[1] = 0, c.poolPads[2] = 3, c.poolPads[3] = 1;
  c.expectClampedPooling = false;
  runCase(c);
}

// Dilated padded pooling after a narrow (16-channel) convolution.
TEST(ConvolutionStrategies, PaddedMaxPoolDilatedNarrow) {
  ConvCase c{5, 16, 10, 12, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 3}, false};
  c.poolAfter = true;
  c.poolKernel = 2;
  c.poolDilation = 2;
  c.poolPads[0] = 1, c.poolPads[1] = 2, c.poolPads[2] = 1, c.poolPads[3] = 0;
  runCase(c);
}

// Blocked reductions (ConvolutionReductionBlocking.h), small images with
// large filter slices: the reduction runs in blocks (kernel position x up to
// 64 input channels) outside the pixel register tiles, accumulating across
// blocks in a scratch tile; the epilogue runs once after the last block.
// 240 input channels: blocks of 60 (four per kernel position, 36 in all),
// two 32-channel tiles, a 7x6 image (6-pixel register tiles), bias + ReLU
// (a bias added per block, or a ReLU between blocks, would not match).
TEST(ConvolutionStrategies, BlockedReductionBiasRelu) {
  ConvCase c{240, 64, 7, 6, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, true};
  c.expectBlocked = true;
  runCase(c);
}

// Stride 2, uneven padding, 250 input channels (blocks of 50), three
// channel tiles, no epilogue: the convolution is its kernel's root and
// accumulates in a scratch tile copied to the result after the last block.
TEST(ConvolutionStrategies, BlockedReductionStride2NoEpilogue) {
  ConvCase c{250, 96, 13, 11, 3, 3, {2, 2}, {1, 1}, {1, 0, 2, 1}, false, false, {1, 3}, true};
  c.expectBlocked = true;
  runCase(c);
}

// A 7x5 window over 64 channels (one block per kernel position, 35 blocks)
// with a residual add, the epilogue in NHWC (a pooling reads it), dilation
// in one axis; and 229 input channels (prime: one block per kernel
// position) with dilation 2.
TEST(ConvolutionStrategies, BlockedReductionResidualAndPrimeChannels) {
  ConvCase residual{64, 64, 5, 9, 7, 5, {1, 1}, {1, 1}, {3, 2, 3, 2}, true, true, {1, 2}, true};
  residual.expectBlocked = true;
  residual.poolAfter = true;
  runCase(residual);
  ConvCase prime{229, 32 * 2, 7, 7, 3, 3, {1, 1}, {2, 2}, {2, 2, 2, 2}, true, false, {2}, true};
  prime.expectBlocked = true;
  runCase(prime);
}

// Just past the thresholds: 65 output pixels (13 x 5), and a filter slice
// just under 256 KiB (3x3 x 227 channels): the plain register tiles.
TEST(ConvolutionStrategies, NotBlockedPastThresholds) {
  runCase({240, 64, 13, 5, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1}, true});
  runCase({227, 64, 7, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1}, true});
}

// Register tiles of two output rows (registerTileRows) on a 16-register CPU
// (AVX2): 7-pixel rows of 8 channels hold 7 accumulators, two rows 14.
// Channel segments take them too: 116 = 7 x 16 + 4 output channels (not a
// multiple of 8: whole-F workgroups of two 14-pixel rows), bias + ReLU on
// the register tiles (their reduction of 24 is too short for pixel
// segments). A blocked convolution (8 x 7 output pixels, stride 2 over 512
// input channels) reads 64-channel slices of input pixels that are 4 KiB
// apart in memory, which fall in one L1 set: no tile of more than 7 pixels
// (14 of two rows of 7 would overflow its 8 ways), so 6 x 16 tiles and a
// column of 4 rows x 1 x 16 for the 7th pixel (pixelSegments: 6 + 4
// 16-wide FMAs, no 8-wide ones). Elsewhere one row; exact results either
// way.
TEST(ConvolutionStrategies, TwoRowRegisterTilesOfSegmentsAndSlices) {
  __builtin_cpu_init();
  const bool avx2Only = !__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2");
  auto convolutionFmas = [](const ConvCase &c, const std::string &vector = "vector<8xf32>") {
    std::string lowered, error;
    EXPECT_TRUE(compileSource(convSource(c), turbine::compiler::Phase::Codegen, lowered, nullptr,
                              error))
        << error;
    int fmas = 0;
    for (const std::string &kernel : kernelTexts(lowered, "llvm.func"))
      if (kernel.find("@conv2d_") != std::string::npos)
        fmas = std::max(fmas, countFma(kernel, vector));
    return fmas;
  };
  ConvCase segments{24, 116, 14, 14, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, false, {1, 2}, false};
  segments.poolAfter = true;
  runCase(segments);
  if (avx2Only)
    EXPECT_EQ(convolutionFmas(segments), 14);
  ConvCase aliased{512, 64, 15, 13, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, false, {1}, true};
  aliased.expectBlocked = true;
  runCase(aliased);
  if (avx2Only) {
    EXPECT_EQ(convolutionFmas(aliased), 0);
    EXPECT_EQ(convolutionFmas(aliased, "vector<16xf32>"), 10);
  }
}

} // namespace

// Grouped convolutions (the frontends' generic with Cg > 1 or Fg > 1):
// NHWC, filters packed per group, each group's tile one small NHWC
// convolution (ConvolutionFilterPacking.h). Groups of 8 channels (RegNet),
// same padding, bias + ReLU on the register tiles (a pooling reads NHWC).
TEST(ConvolutionStrategies, GroupedGroupsOf8EpilogueOnRegisterTiles) {
  ConvCase c{24, 24, 9, 11, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, false};
  c.groups = 3;
  c.poolAfter = true;
  runCase(c);
}

// 2 groups of 8 input and 16 output channels, stride 2, uneven padding, no
// epilogue.
TEST(ConvolutionStrategies, GroupedStride2UnevenPadding) {
  ConvCase c{16, 32, 11, 9, 3, 3, {2, 2}, {1, 1}, {1, 0, 2, 1}, false, false, {1, 3}, false};
  c.groups = 2;
  runCase(c);
}

// Groups of 2 channels, odd width, bias + ReLU read back in NCHW.
TEST(ConvolutionStrategies, GroupedGroupsOf2) {
  ConvCase c{12, 12, 7, 13, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {2}, false};
  c.groups = 6;
  runCase(c);
}

// Groups of 16 channels with a residual add, on the register tiles.
TEST(ConvolutionStrategies, GroupedGroupsOf16Residual) {
  ConvCase c{32, 32, 7, 9, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, true, {1, 2}, false};
  c.groups = 2;
  c.poolAfter = true;
  runCase(c);
}

// 24 output channels per group (not a power of two: 8-channel tiles inside
// a group), 3 input channels per group, stride 2, 5x5, dilation 1.
TEST(ConvolutionStrategies, GroupedNonPowerOfTwoGroupWidth) {
  ConvCase c{9, 72, 10, 9, 5, 5, {2, 2}, {1, 1}, {2, 2, 2, 2}, true, false, {1, 2}, false};
  c.groups = 3;
  c.poolAfter = true;
  runCase(c);
}

// One input channel per group, two output channels each (a depth
// multiplier of 2), dilation 2.
TEST(ConvolutionStrategies, GroupedDepthMultiplier2) {
  ConvCase c{4, 8, 9, 8, 3, 3, {1, 1}, {2, 2}, {2, 2, 2, 2}, true, false, {1, 2}, false};
  c.groups = 4;
  runCase(c);
}

// Height and width dynamic: packed per group, run by the generic strategy.
TEST(ConvolutionStrategies, GroupedDynamicSpatialDims) {
  ConvCase c{16, 16, 9, 10, 3, 3, {2, 1}, {1, 1}, {1, 1, 1, 1}, true, false, {1, 2}, false};
  c.groups = 2;
  c.dynamicSpatial = true;
  runCase(c);
}

// A squeeze-and-excitation block's global pool in NHWC: sum over H and W
// with loops (n, c, h, w), the input read as x[n, h, w, c]. Codegen
// interchanges it to (n, h, w, c) and vectorizes along the channels
// (KernelCodegen.cpp); 40 channels (a partial workgroup tile), odd H and
// W, batch 1 and 3, against a loop nest (exact: multiples of 1/8).
TEST(ConvolutionStrategies, NhwcGlobalPoolInterchangedAndVectorized) {
  const int64_t h = 9, w = 7, c = 40;
  std::string x = tensorType({-1, h, w, c}), r = tensorType({-1, c});
  std::ostringstream os;
  os << "func.func @main(%x: " << x << ") -> " << r << " {\n"
     << "  %c0 = arith.constant 0 : index\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %n = tensor.dim %x, %c0 : " << x << "\n"
     << "  %e = tensor.empty(%n) : " << r << "\n"
     << "  %acc = linalg.fill ins(%zero : f32) outs(%e : " << r << ") -> " << r << "\n"
     << "  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, "
        "affine_map<(n, c, h, w) -> (n, c)>], iterator_types = [\"parallel\", \"parallel\", "
        "\"reduction\", \"reduction\"]} ins(%x : "
     << x << ") outs(%acc : " << r << ") {\n"
     << "  ^bb0(%v: f32, %o: f32):\n"
     << "    %a = arith.addf %o, %v : f32\n"
     << "    linalg.yield %a : f32\n"
     << "  } -> " << r << "\n"
     << "  return %s : " << r << "\n}\n";
  std::string source = os.str(), lowered, error;
  ASSERT_TRUE(compileSource(source, turbine::compiler::Phase::Codegen, lowered, nullptr, error))
      << error;
  // Vector adds of channels (the scalar form adds f32s only).
  bool vectorAdd = false;
  std::istringstream lines(lowered);
  for (std::string line; std::getline(lines, line);)
    vectorAdd |= line.find("llvm.fadd") != std::string::npos &&
                 line.find("vector<") != std::string::npos;
  EXPECT_TRUE(vectorAdd) << lowered;
  runOnEachDevice(source, [&](turbine::runtime::Function &function,
                              turbine::runtime::Device &device, const char *deviceName) {
    for (int64_t batch : {1, 3}) {
      Tensor in = Tensor::allocate(DType::f32, {batch, h, w, c}).value();
      for (int64_t e = 0; e < in.elementCount(); ++e)
        in.dataAs<float>()[e] = float((7 * e) % 13 - 6) / 8;
      std::vector<float> expected(batch * c, 0.f);
      for (int64_t e = 0; e < in.elementCount(); ++e)
        expected[(e / (h * w * c)) * c + e % c] += in.dataAs<float>()[e];
      std::vector<Tensor> inputs;
      inputs.push_back(std::move(in));
      auto results = function.invoke(device, inputs);
      ASSERT_TRUE(results.ok()) << results.message();
      const Tensor &out = results.value().at(0);
      ASSERT_EQ(out.elementCount(), batch * c);
      for (int64_t e = 0; e < batch * c; ++e)
        EXPECT_EQ(out.dataAs<float>()[e], expected[e]) << deviceName << " batch " << batch << " at " << e;
    }
  });
}
