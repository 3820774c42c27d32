//===- ChannelsLastConvolutions.h - Grouped NHWC convolutions -------------===//
//
// Part of the global-opt phase (ChannelsLastConvolutions.cpp): the grouped
// NHWC convolution turbine-convert-to-channels-last makes of the frontends'
// grouped NCHW generic is a linalg.generic with no name; this recognizes it
// for elementwise fusion (which leaves it alone, like a named convolution)
// and for the CPU target's filter packing (ConvolutionFilterPacking.cpp).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_GLOBALOPT_CHANNELSLASTCONVOLUTIONS_H
#define TURBINE_COMPILER_GLOBALOPT_CHANNELSLASTCONVOLUTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace turbine::compiler {

/// Window and group shape of a grouped NHWC convolution.
struct GroupedConvolution {
  int64_t filtersPerGroup = 0; // Fg
  llvm::SmallVector<int64_t> strides, dilations;
};

/// A grouped NHWC convolution, loops (n, oh, ow, f, kh, kw, c), filter
/// [KH][KW][Cg][F]:
///   out[n, oh, ow, f] += x[n, oh*sh + kh*dh, ow*sw + kw*dw,
///                          (f floordiv Fg)*Cg + c] * w[kh, kw, c, f]
/// or nullopt.
std::optional<GroupedConvolution> matchGroupedChannelsLast(mlir::linalg::GenericOp op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_GLOBALOPT_CHANNELSLASTCONVOLUTIONS_H
