//===- Language.h - The Turbine kernel language (author-facing API) -------===//
//
// A kernel is plain C++: a lambda that declares typed buffers with symbolic
// shapes and computes on tiles. `trace` runs the lambda once and records
// every op into a `Kernel` graph (KernelGraph.h); nothing is computed.
//
//   Symbol M("M"), N("N"), BLOCK_N("BLOCK_N");
//   Result<Kernel> softmax = trace("softmax", {M}, [&](KernelBuilder &k) {
//     Buffer in = k.input("input", {M, N}, f32);
//     Buffer out = k.output("output", {M, N}, f32);
//     Tile row = load(in, {program_id(0), 0}, {1, BLOCK_N}, masked(-INFINITY));
//     Tile num = exp2(row - max(row));
//     store(out, {program_id(0), 0}, num / sum(num), masked());
//   });
//
// Tiles: values with a symbolic shape and a dtype. Arithmetic operators,
// comparisons and math functions are elementwise; size-1 dims and rank-0
// tiles broadcast; a `double` operand becomes a constant of the other
// operand's dtype, an `Expr` operand a symbolic constant. Dtypes never mix
// implicitly: use to_dtype. Reductions keep the reduced dim with size 1, so
// `row - max(row)` broadcasts.
//
// Masks: `load(buf, offsets, shape)` and `store(buf, offsets, tile)` must
// stay inside the buffer (an out-of-bounds element is a run-time error).
// With `masked(pad)` a load reads the in-bounds part and fills the rest with
// `pad`; a masked store writes only the in-bounds part. That is how tiles
// handle sizes that are not multiples of the tile sizes.
//
// Loops carry values:
//   auto [acc] = for_loop(0, ceildiv(K, BLOCK_K), {acc0},
//                         [&](Expr k, Tile &acc) { acc = dot(a, b, acc); });
// The body assigns the next value of each carried tile; types must not
// change. `k` is the induction variable, usable in offsets.
//
// Misuse (shape mismatch, dtype clash, storing into an input, ...) does not
// throw: the first error is recorded and `trace` returns it, naming the
// kernel and the op ("kernel 'softmax': op #4 'add': shape mismatch ...").
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_LANGUAGE_H
#define TURBINE_KERNELS_LANGUAGE_H

#include "turbine/kernels/KernelGraph.h"

#include <array>
#include <functional>
#include <tuple>
#include <utility>

namespace turbine::kernels {

inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType i1 = DType::i1;
inline constexpr DType i8 = DType::i8;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;

class TraceContext;

/// A traced value: a tile with a symbolic shape and a dtype.
class Tile {
public:
  Tile() = default;
  /// False for tiles produced after a trace error (they carry no value).
  bool valid() const { return ctx_ != nullptr && id_ >= 0; }
  int id() const { return id_; }
  TraceContext *context() const { return ctx_; }
  const std::vector<Expr> &shape() const;
  DType dtype() const;

private:
  friend class TraceContext;
  Tile(TraceContext *ctx, int id) : ctx_(ctx), id_(id) {}
  TraceContext *ctx_ = nullptr;
  int id_ = -1;
};

/// A buffer argument of the kernel being traced.
class Buffer {
public:
  Buffer() = default;
  int index() const { return index_; }
  TraceContext *context() const { return ctx_; }

private:
  friend class TraceContext;
  Buffer(TraceContext *ctx, int index) : ctx_(ctx), index_(index) {}
  TraceContext *ctx_ = nullptr;
  int index_ = -1;
};

/// Bounds of a dynamic symbol (KernelBuilder::dynamic).
struct DynamicOptions {
  /// Largest value allowed (0: unbounded).
  int64_t max = 0;
  /// Values must be multiples of this (1: any value).
  int64_t multipleOf = 1;
};

/// Declares the kernel's buffers (in argument order).
class KernelBuilder {
public:
  /// Keeps `symbol` dynamic: compiled code reads its value at run time, so
  /// one compiled kernel serves every value (others are specialized on).
  /// It must be a whole dim of an input or inout buffer (that is where the
  /// value comes from) and may not appear in a tile shape.
  void dynamic(const Expr &symbol, DynamicOptions options = {});
  Buffer input(const std::string &name, std::vector<Expr> shape, DType dtype);
  Buffer output(const std::string &name, std::vector<Expr> shape, DType dtype);
  /// Read and written.
  Buffer inout(const std::string &name, std::vector<Expr> shape, DType dtype);

private:
  friend Result<Kernel> trace(const std::string &, std::vector<Expr>,
                              const std::function<void(KernelBuilder &)> &);
  explicit KernelBuilder(TraceContext *ctx) : ctx_(ctx) {}
  TraceContext *ctx_;
};

/// Traces `body` into a kernel with the given symbolic grid (1 to 3 axes).
Result<Kernel> trace(const std::string &name, std::vector<Expr> grid,
                     const std::function<void(KernelBuilder &)> &body);

/// The workgroup's index along grid axis `axis`.
Expr program_id(int axis);

/// True while `trace` runs a kernel body on this thread (the language's
/// functions record ops only then).
bool isTracing();

/// Source location given to the ops traced next on this thread
/// ("softmax.py:12"). Front ends that embed the language in another
/// language (python/: the Python kernel language) set the caller's line
/// before each op; error messages then name it ("op #3 'add' at
/// softmax.py:12: ..."). It is never part of the printed graph. "" clears;
/// `trace` clears it when it starts and when it returns.
void setTraceLocation(std::string location);

/// Mask for partial tiles; `padding` fills masked-off load elements.
struct Masked {
  double padding = 0.0;
};
inline Masked masked(double padding = 0.0) { return Masked{padding}; }

Tile load(const Buffer &buffer, std::vector<Expr> offsets,
          std::vector<Expr> shape);
Tile load(const Buffer &buffer, std::vector<Expr> offsets,
          std::vector<Expr> shape, Masked mask);
void store(const Buffer &buffer, std::vector<Expr> offsets, const Tile &value);
void store(const Buffer &buffer, std::vector<Expr> offsets, const Tile &value,
           Masked mask);

/// A tile filled with `value`.
Tile constant(double value, std::vector<Expr> shape, DType dtype);
/// A rank-0 tile holding the value of a symbolic expression.
Tile constant(const Expr &value, DType dtype);
/// Index along `axis` of each element of a `shape` tile (0, 1, 2, ...).
Tile iota(std::vector<Expr> shape, int axis, DType dtype = i32);

// Elementwise arithmetic (size-1 dims broadcast).
Tile operator+(const Tile &a, const Tile &b);
Tile operator-(const Tile &a, const Tile &b);
Tile operator*(const Tile &a, const Tile &b);
Tile operator/(const Tile &a, const Tile &b);
Tile operator-(const Tile &a);
Tile maximum(const Tile &a, const Tile &b);
Tile minimum(const Tile &a, const Tile &b);
// Comparisons give i1 tiles.
Tile operator<(const Tile &a, const Tile &b);
Tile operator<=(const Tile &a, const Tile &b);
Tile operator>(const Tile &a, const Tile &b);
Tile operator>=(const Tile &a, const Tile &b);
Tile operator==(const Tile &a, const Tile &b);
Tile operator!=(const Tile &a, const Tile &b);

/// Mixed forms: a double is a constant of the tile's dtype, an Expr a
/// symbolic constant of the tile's dtype.
#define TURBINE_KERNELS_MIXED(OP)                                             \
  Tile OP(const Tile &a, double b);                                           \
  Tile OP(double a, const Tile &b);                                           \
  Tile OP(const Tile &a, const Expr &b);                                      \
  Tile OP(const Expr &a, const Tile &b);
TURBINE_KERNELS_MIXED(operator+)
TURBINE_KERNELS_MIXED(operator-)
TURBINE_KERNELS_MIXED(operator*)
TURBINE_KERNELS_MIXED(operator/)
TURBINE_KERNELS_MIXED(operator<)
TURBINE_KERNELS_MIXED(operator<=)
TURBINE_KERNELS_MIXED(operator>)
TURBINE_KERNELS_MIXED(operator>=)
TURBINE_KERNELS_MIXED(maximum)
TURBINE_KERNELS_MIXED(minimum)
#undef TURBINE_KERNELS_MIXED

Tile exp(const Tile &x);
Tile exp2(const Tile &x);
Tile log(const Tile &x);
Tile sqrt(const Tile &x);
Tile rsqrt(const Tile &x);
Tile tanh(const Tile &x);
Tile abs(const Tile &x);

/// `cond ? a : b` elementwise (cond is i1).
Tile select(const Tile &cond, const Tile &a, const Tile &b);
Tile select(const Tile &cond, const Tile &a, double b);
Tile select(const Tile &cond, double a, const Tile &b);

/// Reductions over `axis` (negative counts from the end); the reduced dim
/// stays with size 1.
Tile max(const Tile &x, int axis = -1);
Tile min(const Tile &x, int axis = -1);
Tile sum(const Tile &x, int axis = -1);

/// Expands size-1 dims (or a rank-0 tile) to `shape`.
Tile broadcast(const Tile &x, std::vector<Expr> shape);
/// Permutes dims; the default swaps the two dims of a matrix.
Tile transpose(const Tile &x, std::vector<int> perm = {1, 0});
Tile reshape(const Tile &x, std::vector<Expr> shape);
Tile to_dtype(const Tile &x, DType dtype);

/// acc + a x b for a[M, K], b[K, N], acc[M, N]; accumulates in acc's dtype.
Tile dot(const Tile &a, const Tile &b, const Tile &acc);

namespace detail {
std::vector<Tile> forLoop(const Expr &start, const Expr &stop,
                          const Expr &step, std::vector<Tile> init,
                          const std::function<void(const Expr &,
                                                   std::vector<Tile> &)> &body);
} // namespace detail

/// for (k = start; k < stop; k += step) with carried tiles. The body is
/// called once at trace time as body(k, carried...) and assigns the next
/// value of each carried tile. Returns the final values.
template <size_t N, typename Body>
std::array<Tile, N> for_loop(const Expr &start, const Expr &stop,
                             const Expr &step, const Tile (&init)[N],
                             Body &&body) {
  std::vector<Tile> initial(init, init + N);
  std::vector<Tile> results = detail::forLoop(
      start, stop, step, initial,
      [&](const Expr &k, std::vector<Tile> &carried) {
        std::array<Tile, N> values;
        for (size_t i = 0; i < N; ++i)
          values[i] = carried[i];
        std::apply([&](auto &...tiles) { body(k, tiles...); }, values);
        for (size_t i = 0; i < N; ++i)
          carried[i] = values[i];
      });
  std::array<Tile, N> out;
  for (size_t i = 0; i < N && i < results.size(); ++i)
    out[i] = results[i];
  return out;
}

/// for_loop with step 1.
template <size_t N, typename Body>
std::array<Tile, N> for_loop(const Expr &start, const Expr &stop,
                             const Tile (&init)[N], Body &&body) {
  return for_loop(start, stop, Expr(1), init, std::forward<Body>(body));
}

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_LANGUAGE_H
