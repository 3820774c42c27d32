//===- KernelGraph.h - The traced form of a Turbine kernel -----------------===//
//
// Tracing a kernel (Language.h) produces a `Kernel`: its buffers (typed,
// with symbolic shapes), its symbolic grid and a graph of ops in program
// order. Every op result is a *tile*: a value with a symbolic shape and a
// dtype, numbered %0, %1, ... A `for_loop` op owns a nested block whose
// arguments are the carried values and whose `yield` gives their next
// values; its induction variable is the run-time leaf `k<loopId>` that
// offsets may use.
//
// Offsets, loop bounds and symbolic scalars are `Expr`s (Symbolic.h);
// tile shapes are Exprs over symbols only. Everything is concrete once the
// kernel is specialized (Specialization.h).
//
// `Kernel::print()` gives a readable listing, one op per line, like the
// printed FX graph of iree-turbine's TK.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_KERNELGRAPH_H
#define TURBINE_KERNELS_KERNELGRAPH_H

#include "turbine/artifact/DType.h"
#include "turbine/kernels/Symbolic.h"

#include <memory>
#include <string>
#include <vector>

namespace turbine::kernels {

using turbine::DType;

enum class BufferKind { Input, Output, InOut };

/// A buffer argument of the kernel.
struct BufferDecl {
  std::string name;
  BufferKind kind = BufferKind::Input;
  std::vector<Expr> shape;
  DType dtype = DType::f32;
};

/// Type of a tile value.
struct TileType {
  std::vector<Expr> shape;
  DType dtype = DType::f32;
};

enum class OpKind {
  Constant,  // splat of `constant` (or `scalar` if set) with `shape`, `dtype`
  Iota,      // index along `axis` over `shape`, dtype `dtype`
  Load,      // buffer[offsets .. offsets+shape], masked: pad with `constant`
  Store,     // buffer[offsets ..] = operand 0; masked: skip out-of-bounds
  // Elementwise unary (one operand).
  Neg, Abs, Exp, Exp2, Log, Sqrt, Rsqrt, Tanh,
  // Elementwise binary (two operands, size-1 dims broadcast).
  Add, Sub, Mul, Div, Maximum, Minimum,
  // Comparisons (two operands) -> i1.
  CmpLT, CmpLE, CmpGT, CmpGE, CmpEQ, CmpNE,
  Select,    // operand 0 (i1) ? operand 1 : operand 2
  ReduceMax, ReduceMin, ReduceSum, // over `axis`, kept with size 1
  Broadcast, // size-1 dims of operand 0 expanded to `shape`
  Transpose, // permutation `perm`
  Reshape,   // to `shape` (same element count)
  Cast,      // to `dtype`
  Dot,       // operand 2 + operand 0 x operand 1 in operand 2's dtype
  ForLoop,   // `start`, `stop`, `step`; operands: init values; results: finals
};

/// Name as printed ("load", "exp2", "reduce_sum", ...).
const char *opKindName(OpKind kind);
bool isUnaryElementwise(OpKind kind);
bool isBinaryElementwise(OpKind kind);
bool isComparison(OpKind kind);
bool isReduction(OpKind kind);

struct Block;

/// One traced op.
struct Op {
  OpKind kind = OpKind::Constant;
  /// Position in the kernel (trace order), used in messages: "op #3".
  int id = 0;
  std::vector<int> operands;
  std::vector<int> results;
  // Attributes (meaning depends on kind; see OpKind).
  int buffer = -1;
  std::vector<Expr> offsets;
  std::vector<Expr> shape;
  std::vector<int> perm;
  int axis = 0;
  DType dtype = DType::f32;
  double constant = 0.0;
  bool hasScalar = false; // Constant: value is the Expr `scalar`
  Expr scalar = 0;
  bool masked = false;
  // ForLoop.
  Expr start = 0, stop = 0, step = 1;
  int loopId = -1;
  std::shared_ptr<Block> body;
  /// Where the op was traced from ("softmax.py:12"; set by front ends in
  /// other languages, see setTraceLocation). Named in messages, never
  /// printed in the graph.
  std::string location;
};

/// A straight-line list of ops; for_loop bodies are nested blocks.
struct Block {
  std::vector<Op> ops;
  /// Values defined by the block (carried values of a loop body).
  std::vector<int> arguments;
  /// Values the block yields (next carried values).
  std::vector<int> yields;
};

/// A deferred shape check: two dims that must be equal once specialized.
struct ShapeConstraint {
  int opId;
  std::string what; // "add: dim 1 of lhs vs rhs"
  Expr lhs, rhs;
};

/// A symbol the kernel keeps dynamic: compiled code reads its value at run
/// time (a push constant of the dispatch) instead of being specialized on
/// it, so one compiled kernel serves every value. Values are checked when
/// the kernel is specialized: at most `max` (0: unbounded) and a multiple
/// of `multipleOf` (which also lets the compiler drop masks it can prove
/// unnecessary).
struct DynamicSymbol {
  std::string name;
  int64_t max = 0;
  int64_t multipleOf = 1;
};

/// A traced kernel. Immutable once `trace` returns it.
struct Kernel {
  std::string name;
  std::vector<Expr> grid;
  std::vector<BufferDecl> buffers;
  /// Type of every value, indexed by value id.
  std::vector<TileType> values;
  Block body;
  int numLoops = 0;
  int numOps = 0;
  std::vector<ShapeConstraint> constraints;
  /// Symbols kept dynamic (KernelBuilder::dynamic), in declaration order:
  /// push constant i of a compiled dispatch is the value of symbol i.
  std::vector<DynamicSymbol> dynamicSymbols;
  /// The printed graph, recorded when tracing finishes: identifies the
  /// kernel's content (cache keys).
  std::string fingerprint;
  /// std::hash of `fingerprint` (0 if not recorded): a cheap first key.
  size_t fingerprintHash = 0;

  /// Readable listing of the kernel.
  std::string print() const;
  /// Description of op `op` for messages: "op #3 'load' (%3 = load input)".
  std::string describe(const Op &op) const;
  /// Symbols used anywhere in the kernel.
  std::set<std::string> symbols() const;
  /// The dynamic symbol called `name`, or null (specialized).
  const DynamicSymbol *dynamicSymbol(const std::string &name) const;
  /// True if `e` uses a dynamic symbol.
  bool usesDynamicSymbol(const Expr &e) const;
};

/// "f32[M, N]".
std::string formatTileType(const TileType &type);
const char *bufferKindName(BufferKind kind);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_KERNELGRAPH_H
