//===- Language.cpp - Tracing the kernel language into a Kernel graph -----===//
//
// A thread-local TraceContext is active while `trace` runs the author's
// lambda; every language function appends an op to the innermost open block
// after checking its operands. The first error is kept and later ops become
// no-ops, so `trace` reports the error closest to its cause.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/Language.h"

#include <cmath>

namespace turbine::kernels {

class TraceContext {
public:
  static thread_local TraceContext *current;

  Kernel kernel;
  std::string error;
  std::vector<Block *> blocks;
  /// Block that defines each value (visibility check).
  std::vector<const Block *> valueBlock;
  int nextOpId = 0;

  bool failed() const { return !error.empty(); }

  void fail(const Op &op, const std::string &message) {
    if (error.empty())
      error = "kernel '" + kernel.name + "': " + kernel.describe(op) + ": " +
              message;
  }
  void fail(const std::string &message) {
    if (error.empty())
      error = "kernel '" + kernel.name + "': " + message;
  }

  Op start(OpKind kind) {
    Op op;
    op.kind = kind;
    op.id = nextOpId++;
    op.location = location;
    return op;
  }

  static thread_local std::string location;

  int newValue(TileType type) {
    kernel.values.push_back(std::move(type));
    valueBlock.push_back(blocks.back());
    return static_cast<int>(kernel.values.size()) - 1;
  }

  const TileType &type(const Tile &t) const { return kernel.values[t.id()]; }

  /// Checks that `t` can be used by `op` here; records an error if not.
  bool use(Op &op, const Tile &t) {
    if (failed())
      return false;
    if (!t.valid()) {
      fail(op, "operand is an uninitialized Tile");
      return false;
    }
    if (t.context() != this) {
      fail(op, "operand belongs to another kernel trace");
      return false;
    }
    const Block *def = valueBlock[t.id()];
    bool visible = false;
    for (const Block *b : blocks)
      visible |= b == def;
    if (!visible) {
      fail(op, "operand %" + std::to_string(t.id()) +
                   " was defined inside a for_loop body and is used outside it");
      return false;
    }
    op.operands.push_back(t.id());
    return true;
  }

  Tile emit(Op op, TileType resultType) {
    int id = newValue(std::move(resultType));
    op.results = {id};
    blocks.back()->ops.push_back(std::move(op));
    return Tile(this, id);
  }

  Tile make(int id) { return Tile(this, id); }
  Buffer makeBuffer(int index) { return Buffer(this, index); }

  void emitNoResult(Op op) { blocks.back()->ops.push_back(std::move(op)); }

  /// Records that `a` and `b` must be equal; false if they provably differ.
  bool requireEqual(const Op &op, const std::string &what, const Expr &a,
                    const Expr &b) {
    if (a.same(b))
      return true;
    if (a.isConstant() && b.isConstant()) {
      fail(op, "shape mismatch: " + what + ": " + a.str() + " vs " + b.str());
      return false;
    }
    kernel.constraints.push_back({op.id, what, a, b});
    return true;
  }

  bool checkShapeIsStatic(const Op &op, const std::vector<Expr> &shape) {
    for (const Expr &e : shape)
      if (e.dependsOnRunTime()) {
        fail(op, "tile shape " + formatExprs(shape) +
                     " depends on program_id or a loop index; shapes may only "
                     "use symbols and constants");
        return false;
      }
    return true;
  }

  /// Elementwise result shape of `a` and `b` (size-1 dims and rank 0
  /// broadcast).
  bool broadcastShapes(const Op &op, const std::vector<Expr> &a,
                       const std::vector<Expr> &b, std::vector<Expr> &out) {
    if (a.empty()) { out = b; return true; }
    if (b.empty()) { out = a; return true; }
    if (a.size() != b.size()) {
      fail(op, "shape mismatch: rank " + std::to_string(a.size()) + " " +
                   formatExprs(a) + " vs rank " + std::to_string(b.size()) +
                   " " + formatExprs(b));
      return false;
    }
    out.clear();
    for (size_t i = 0; i < a.size(); ++i) {
      auto isOne = [](const Expr &e) { return e.isConstant() && e.constant() == 1; };
      if (isOne(a[i])) { out.push_back(b[i]); continue; }
      if (isOne(b[i])) { out.push_back(a[i]); continue; }
      if (!requireEqual(op, "dim " + std::to_string(i) + " of " +
                                formatExprs(a) + " vs " + formatExprs(b),
                        a[i], b[i]))
        return false;
      out.push_back(a[i]);
    }
    return true;
  }

  bool requireDType(const Op &op, DType a, DType b) {
    if (a == b)
      return true;
    fail(op, "dtype mismatch: " + std::string(dtypeName(a)) + " vs " +
                 std::string(dtypeName(b)) + " (convert with to_dtype)");
    return false;
  }
};

thread_local TraceContext *TraceContext::current = nullptr;
thread_local std::string TraceContext::location;

void setTraceLocation(std::string location) {
  TraceContext::location = std::move(location);
}

const std::vector<Expr> &Tile::shape() const {
  static const std::vector<Expr> empty;
  return valid() ? ctx_->kernel.values[id_].shape : empty;
}

DType Tile::dtype() const {
  return valid() ? ctx_->kernel.values[id_].dtype : DType::f32;
}

namespace {

/// The context ops are recorded into; null outside `trace`.
TraceContext *active() { return TraceContext::current; }

Buffer declare(TraceContext *ctx, const std::string &name,
               std::vector<Expr> shape, DType dtype, BufferKind kind);

int normalizeAxis(int axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int>(rank) : axis;
}

} // namespace

void KernelBuilder::dynamic(const Expr &symbol, DynamicOptions options) {
  if (symbol.kind() != Expr::Kind::Symbol) {
    ctx_->fail("dynamic(" + symbol.str() + "): only a symbol can be dynamic");
    return;
  }
  if (ctx_->kernel.dynamicSymbol(symbol.name())) {
    ctx_->fail("symbol '" + symbol.name() + "' is declared dynamic twice");
    return;
  }
  if (options.max < 0 || options.multipleOf < 1) {
    ctx_->fail("dynamic symbol '" + symbol.name() + "': max must be >= 0 (0: unbounded) "
               "and multiple_of >= 1, got max " + std::to_string(options.max) +
               ", multiple_of " + std::to_string(options.multipleOf));
    return;
  }
  ctx_->kernel.dynamicSymbols.push_back({symbol.name(), options.max, options.multipleOf});
}

Buffer KernelBuilder::input(const std::string &name, std::vector<Expr> shape,
                            DType dtype) {
  return declare(ctx_, name, std::move(shape), dtype, BufferKind::Input);
}
Buffer KernelBuilder::output(const std::string &name, std::vector<Expr> shape,
                             DType dtype) {
  return declare(ctx_, name, std::move(shape), dtype, BufferKind::Output);
}
Buffer KernelBuilder::inout(const std::string &name, std::vector<Expr> shape,
                            DType dtype) {
  return declare(ctx_, name, std::move(shape), dtype, BufferKind::InOut);
}

namespace {
Buffer declare(TraceContext *ctx, const std::string &name,
               std::vector<Expr> shape, DType dtype, BufferKind kind) {
  for (const BufferDecl &b : ctx->kernel.buffers)
    if (b.name == name)
      ctx->fail("buffer '" + name + "' is declared twice");
  if (shape.empty())
    ctx->fail("buffer '" + name + "' must have at least one dim");
  for (const Expr &e : shape)
    if (e.dependsOnRunTime())
      ctx->fail("shape of buffer '" + name +
                "' uses program_id or a loop index");
  ctx->kernel.buffers.push_back({name, kind, std::move(shape), dtype});
  return ctx->makeBuffer(static_cast<int>(ctx->kernel.buffers.size()) - 1);
}
} // namespace

namespace {

/// A tile shape that uses `symbol`, as "op #2 'load' ...: [1, N]", or "".
std::string tileShapeUsing(const Kernel &k, const Block &block, const std::string &symbol) {
  for (const Op &op : block.ops) {
    for (int r : op.results) {
      std::set<std::string> used;
      for (const Expr &e : k.values[r].shape)
        e.collectSymbols(used);
      if (used.count(symbol))
        return k.describe(op) + " has tile shape " + formatExprs(k.values[r].shape);
    }
    if (op.body) {
      std::string inner = tileShapeUsing(k, *op.body, symbol);
      if (!inner.empty())
        return inner;
    }
  }
  return "";
}

} // namespace

/// Dynamic symbols may not shape tiles and must come from an input dim.
static void checkDynamicSymbols(TraceContext &ctx) {
  const Kernel &k = ctx.kernel;
  for (const DynamicSymbol &d : k.dynamicSymbols) {
    if (ctx.failed())
      return;
    std::string use = tileShapeUsing(k, k.body, d.name);
    if (!use.empty()) {
      ctx.fail(use + " with dynamic symbol '" + d.name +
               "': tile shapes must be static (buffer dims, offsets, loop bounds "
               "and the grid may be dynamic)");
      return;
    }
    bool fromInput = false;
    for (const BufferDecl &b : k.buffers)
      for (const Expr &e : b.shape)
        fromInput |= b.kind != BufferKind::Output && e.kind() == Expr::Kind::Symbol &&
                     e.name() == d.name;
    if (!fromInput)
      ctx.fail("dynamic symbol '" + d.name + "' is not a dim of an input or inout "
               "buffer (where its value comes from when the kernel runs)");
  }
}

Result<Kernel> trace(const std::string &name, std::vector<Expr> grid,
                     const std::function<void(KernelBuilder &)> &body) {
  if (TraceContext::current)
    return Status::error("kernel '" + name +
                         "': trace called while tracing another kernel");
  TraceContext ctx;
  ctx.kernel.name = name;
  ctx.kernel.grid = std::move(grid);
  ctx.blocks.push_back(&ctx.kernel.body);
  if (ctx.kernel.grid.empty() || ctx.kernel.grid.size() > 3)
    ctx.fail("grid must have 1 to 3 axes, got " +
             std::to_string(ctx.kernel.grid.size()));
  for (const Expr &e : ctx.kernel.grid)
    if (e.dependsOnRunTime())
      ctx.fail("grid " + formatExprs(ctx.kernel.grid) +
               " uses program_id or a loop index");
  {
    // Reset even if `body` throws (a Python body raising an exception).
    struct Active {
      explicit Active(TraceContext *ctx) {
        TraceContext::current = ctx;
        TraceContext::location.clear();
      }
      ~Active() {
        TraceContext::current = nullptr;
        TraceContext::location.clear();
      }
    } active(&ctx);
    KernelBuilder builder(&ctx);
    body(builder);
  }
  checkDynamicSymbols(ctx);
  if (ctx.failed())
    return Status::error(ctx.error);
  ctx.kernel.numOps = ctx.nextOpId;
  ctx.kernel.fingerprint = ctx.kernel.print();
  ctx.kernel.fingerprintHash = std::hash<std::string>{}(ctx.kernel.fingerprint);
  return std::move(ctx.kernel);
}

bool isTracing() { return TraceContext::current != nullptr; }

Expr program_id(int axis) {
  TraceContext *ctx = active();
  if (ctx && (axis < 0 || axis >= static_cast<int>(ctx->kernel.grid.size())))
    ctx->fail("program_id(" + std::to_string(axis) + "): the grid has " +
              std::to_string(ctx->kernel.grid.size()) + " axes");
  return Expr::programId(axis);
}

namespace {

/// Checks a buffer access common to load and store.
bool checkAccess(TraceContext *ctx, const Op &op, const Buffer &buffer,
                 const std::vector<Expr> &offsets,
                 const std::vector<Expr> &shape) {
  const BufferDecl &decl = ctx->kernel.buffers[buffer.index()];
  if (offsets.size() != decl.shape.size()) {
    ctx->fail(op, std::to_string(offsets.size()) + " offsets for rank-" +
                      std::to_string(decl.shape.size()) + " buffer");
    return false;
  }
  if (shape.size() != decl.shape.size()) {
    ctx->fail(op, "tile of rank " + std::to_string(shape.size()) +
                      " for rank-" + std::to_string(decl.shape.size()) +
                      " buffer");
    return false;
  }
  return ctx->checkShapeIsStatic(op, shape);
}

Tile loadImpl(const Buffer &buffer, std::vector<Expr> offsets,
              std::vector<Expr> shape, bool isMasked, double padding) {
  TraceContext *ctx = buffer.context();
  if (!ctx || ctx != active() || ctx->failed())
    return Tile();
  Op op = ctx->start(OpKind::Load);
  op.buffer = buffer.index();
  const BufferDecl &decl = ctx->kernel.buffers[buffer.index()];
  if (decl.kind == BufferKind::Output) {
    ctx->fail(op, "cannot load from output buffer (declare it with inout)");
    return Tile();
  }
  if (!checkAccess(ctx, op, buffer, offsets, shape))
    return Tile();
  op.offsets = std::move(offsets);
  op.shape = shape;
  op.masked = isMasked;
  op.constant = padding;
  return ctx->emit(std::move(op), {std::move(shape), decl.dtype});
}

void storeImpl(const Buffer &buffer, std::vector<Expr> offsets,
               const Tile &value, bool isMasked) {
  TraceContext *ctx = buffer.context();
  if (!ctx || ctx != active() || ctx->failed())
    return;
  Op op = ctx->start(OpKind::Store);
  op.buffer = buffer.index();
  const BufferDecl &decl = ctx->kernel.buffers[buffer.index()];
  if (decl.kind == BufferKind::Input) {
    ctx->fail(op, "cannot store into input buffer (declare it with output or "
                  "inout)");
    return;
  }
  if (!ctx->use(op, value))
    return;
  const TileType &t = ctx->type(value);
  if (!checkAccess(ctx, op, buffer, offsets, t.shape) ||
      !ctx->requireDType(op, t.dtype, decl.dtype))
    return;
  op.offsets = std::move(offsets);
  op.masked = isMasked;
  ctx->emitNoResult(std::move(op));
}

/// The context of a tile operand (reporting misuse on the active one).
TraceContext *contextOf(const Tile &t) {
  TraceContext *ctx = active();
  if (!ctx)
    return nullptr;
  if (ctx->failed())
    return nullptr;
  return ctx;
}

Tile unary(OpKind kind, const Tile &x) {
  TraceContext *ctx = contextOf(x);
  if (!ctx)
    return Tile();
  Op op = ctx->start(kind);
  if (!ctx->use(op, x))
    return Tile();
  TileType t = ctx->type(x);
  if (kind != OpKind::Neg && kind != OpKind::Abs && !dtypeIsFloat(t.dtype)) {
    ctx->fail(op, "needs a floating-point tile, got " + formatTileType(t));
    return Tile();
  }
  return ctx->emit(std::move(op), t);
}

Tile binary(OpKind kind, const Tile &a, const Tile &b) {
  TraceContext *ctx = contextOf(a);
  if (!ctx)
    return Tile();
  Op op = ctx->start(kind);
  if (!ctx->use(op, a) || !ctx->use(op, b))
    return Tile();
  const TileType &ta = ctx->type(a), &tb = ctx->type(b);
  if (!ctx->requireDType(op, ta.dtype, tb.dtype))
    return Tile();
  TileType result;
  if (!ctx->broadcastShapes(op, ta.shape, tb.shape, result.shape))
    return Tile();
  result.dtype = isComparison(kind) ? DType::i1 : ta.dtype;
  return ctx->emit(std::move(op), std::move(result));
}

Tile reduce(OpKind kind, const Tile &x, int axis) {
  TraceContext *ctx = contextOf(x);
  if (!ctx)
    return Tile();
  Op op = ctx->start(kind);
  if (!ctx->use(op, x))
    return Tile();
  TileType t = ctx->type(x);
  int a = normalizeAxis(axis, t.shape.size());
  if (a < 0 || a >= static_cast<int>(t.shape.size())) {
    ctx->fail(op, "axis " + std::to_string(axis) + " out of range for " +
                      formatTileType(t));
    return Tile();
  }
  op.axis = a;
  t.shape[a] = 1;
  return ctx->emit(std::move(op), std::move(t));
}

/// A rank-0 constant of `dtype` (for mixed tile/scalar operators).
Tile scalarLike(double value, const Tile &like) {
  return constant(value, {}, like.dtype());
}
Tile scalarLike(const Expr &value, const Tile &like) {
  return constant(value, like.dtype());
}

} // namespace

Tile load(const Buffer &buffer, std::vector<Expr> offsets,
          std::vector<Expr> shape) {
  return loadImpl(buffer, std::move(offsets), std::move(shape), false, 0.0);
}
Tile load(const Buffer &buffer, std::vector<Expr> offsets,
          std::vector<Expr> shape, Masked mask) {
  return loadImpl(buffer, std::move(offsets), std::move(shape), true,
                  mask.padding);
}
void store(const Buffer &buffer, std::vector<Expr> offsets, const Tile &value) {
  storeImpl(buffer, std::move(offsets), value, false);
}
void store(const Buffer &buffer, std::vector<Expr> offsets, const Tile &value,
           Masked) {
  storeImpl(buffer, std::move(offsets), value, true);
}

Tile constant(double value, std::vector<Expr> shape, DType dtype) {
  TraceContext *ctx = active();
  if (!ctx || ctx->failed())
    return Tile();
  Op op = ctx->start(OpKind::Constant);
  if (!ctx->checkShapeIsStatic(op, shape))
    return Tile();
  op.constant = value;
  op.dtype = dtype;
  op.shape = shape;
  return ctx->emit(std::move(op), {std::move(shape), dtype});
}

Tile constant(const Expr &value, DType dtype) {
  TraceContext *ctx = active();
  if (!ctx || ctx->failed())
    return Tile();
  Op op = ctx->start(OpKind::Constant);
  op.hasScalar = true;
  op.scalar = value;
  op.dtype = dtype;
  return ctx->emit(std::move(op), {{}, dtype});
}

Tile iota(std::vector<Expr> shape, int axis, DType dtype) {
  TraceContext *ctx = active();
  if (!ctx || ctx->failed())
    return Tile();
  Op op = ctx->start(OpKind::Iota);
  if (!ctx->checkShapeIsStatic(op, shape))
    return Tile();
  int a = normalizeAxis(axis, shape.size());
  if (a < 0 || a >= static_cast<int>(shape.size())) {
    ctx->fail(op, "axis " + std::to_string(axis) + " out of range for shape " +
                      formatExprs(shape));
    return Tile();
  }
  op.axis = a;
  op.dtype = dtype;
  op.shape = shape;
  return ctx->emit(std::move(op), {std::move(shape), dtype});
}

Tile operator+(const Tile &a, const Tile &b) { return binary(OpKind::Add, a, b); }
Tile operator-(const Tile &a, const Tile &b) { return binary(OpKind::Sub, a, b); }
Tile operator*(const Tile &a, const Tile &b) { return binary(OpKind::Mul, a, b); }
Tile operator/(const Tile &a, const Tile &b) { return binary(OpKind::Div, a, b); }
Tile operator-(const Tile &a) { return unary(OpKind::Neg, a); }
Tile maximum(const Tile &a, const Tile &b) { return binary(OpKind::Maximum, a, b); }
Tile minimum(const Tile &a, const Tile &b) { return binary(OpKind::Minimum, a, b); }
Tile operator<(const Tile &a, const Tile &b) { return binary(OpKind::CmpLT, a, b); }
Tile operator<=(const Tile &a, const Tile &b) { return binary(OpKind::CmpLE, a, b); }
Tile operator>(const Tile &a, const Tile &b) { return binary(OpKind::CmpGT, a, b); }
Tile operator>=(const Tile &a, const Tile &b) { return binary(OpKind::CmpGE, a, b); }
Tile operator==(const Tile &a, const Tile &b) { return binary(OpKind::CmpEQ, a, b); }
Tile operator!=(const Tile &a, const Tile &b) { return binary(OpKind::CmpNE, a, b); }

#define TURBINE_KERNELS_MIXED(OP, IMPL)                                       \
  Tile OP(const Tile &a, double b) { return IMPL(a, scalarLike(b, a)); }      \
  Tile OP(double a, const Tile &b) { return IMPL(scalarLike(a, b), b); }      \
  Tile OP(const Tile &a, const Expr &b) { return IMPL(a, scalarLike(b, a)); } \
  Tile OP(const Expr &a, const Tile &b) { return IMPL(scalarLike(a, b), b); }
#define TURBINE_KERNELS_BINARY(KIND) [](const Tile &x, const Tile &y) { return binary(OpKind::KIND, x, y); }
TURBINE_KERNELS_MIXED(operator+, TURBINE_KERNELS_BINARY(Add))
TURBINE_KERNELS_MIXED(operator-, TURBINE_KERNELS_BINARY(Sub))
TURBINE_KERNELS_MIXED(operator*, TURBINE_KERNELS_BINARY(Mul))
TURBINE_KERNELS_MIXED(operator/, TURBINE_KERNELS_BINARY(Div))
TURBINE_KERNELS_MIXED(operator<, TURBINE_KERNELS_BINARY(CmpLT))
TURBINE_KERNELS_MIXED(operator<=, TURBINE_KERNELS_BINARY(CmpLE))
TURBINE_KERNELS_MIXED(operator>, TURBINE_KERNELS_BINARY(CmpGT))
TURBINE_KERNELS_MIXED(operator>=, TURBINE_KERNELS_BINARY(CmpGE))
TURBINE_KERNELS_MIXED(maximum, TURBINE_KERNELS_BINARY(Maximum))
TURBINE_KERNELS_MIXED(minimum, TURBINE_KERNELS_BINARY(Minimum))
#undef TURBINE_KERNELS_BINARY
#undef TURBINE_KERNELS_MIXED

Tile exp(const Tile &x) { return unary(OpKind::Exp, x); }
Tile exp2(const Tile &x) { return unary(OpKind::Exp2, x); }
Tile log(const Tile &x) { return unary(OpKind::Log, x); }
Tile sqrt(const Tile &x) { return unary(OpKind::Sqrt, x); }
Tile rsqrt(const Tile &x) { return unary(OpKind::Rsqrt, x); }
Tile tanh(const Tile &x) { return unary(OpKind::Tanh, x); }
Tile abs(const Tile &x) { return unary(OpKind::Abs, x); }

Tile select(const Tile &cond, const Tile &a, const Tile &b) {
  TraceContext *ctx = contextOf(cond);
  if (!ctx)
    return Tile();
  Op op = ctx->start(OpKind::Select);
  if (!ctx->use(op, cond) || !ctx->use(op, a) || !ctx->use(op, b))
    return Tile();
  const TileType &tc = ctx->type(cond), &ta = ctx->type(a), &tb = ctx->type(b);
  if (tc.dtype != DType::i1) {
    ctx->fail(op, "condition must be an i1 tile (a comparison), got " +
                      formatTileType(tc));
    return Tile();
  }
  if (!ctx->requireDType(op, ta.dtype, tb.dtype))
    return Tile();
  TileType result;
  std::vector<Expr> ab;
  if (!ctx->broadcastShapes(op, ta.shape, tb.shape, ab) ||
      !ctx->broadcastShapes(op, tc.shape, ab, result.shape))
    return Tile();
  result.dtype = ta.dtype;
  return ctx->emit(std::move(op), std::move(result));
}
Tile select(const Tile &cond, const Tile &a, double b) {
  return select(cond, a, scalarLike(b, a));
}
Tile select(const Tile &cond, double a, const Tile &b) {
  return select(cond, scalarLike(a, b), b);
}

Tile max(const Tile &x, int axis) { return reduce(OpKind::ReduceMax, x, axis); }
Tile min(const Tile &x, int axis) { return reduce(OpKind::ReduceMin, x, axis); }
Tile sum(const Tile &x, int axis) { return reduce(OpKind::ReduceSum, x, axis); }

Tile broadcast(const Tile &x, std::vector<Expr> shape) {
  TraceContext *ctx = contextOf(x);
  if (!ctx)
    return Tile();
  Op op = ctx->start(OpKind::Broadcast);
  if (!ctx->use(op, x) || !ctx->checkShapeIsStatic(op, shape))
    return Tile();
  TileType t = ctx->type(x);
  if (!t.shape.empty()) {
    if (t.shape.size() != shape.size()) {
      ctx->fail(op, "cannot broadcast " + formatTileType(t) + " to " +
                        formatExprs(shape) + " (ranks differ)");
      return Tile();
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      if (t.shape[i].isConstant() && t.shape[i].constant() == 1)
        continue;
      if (!ctx->requireEqual(op, "broadcast dim " + std::to_string(i),
                             t.shape[i], shape[i]))
        return Tile();
    }
  }
  op.shape = shape;
  return ctx->emit(std::move(op), {std::move(shape), t.dtype});
}

Tile transpose(const Tile &x, std::vector<int> perm) {
  TraceContext *ctx = contextOf(x);
  if (!ctx)
    return Tile();
  Op op = ctx->start(OpKind::Transpose);
  if (!ctx->use(op, x))
    return Tile();
  const TileType &t = ctx->type(x);
  std::vector<bool> seen(t.shape.size(), false);
  bool ok = perm.size() == t.shape.size();
  for (int p : perm) {
    ok = ok && p >= 0 && p < static_cast<int>(seen.size()) && !seen[p];
    if (ok)
      seen[p] = true;
  }
  if (!ok) {
    ctx->fail(op, "invalid permutation for " + formatTileType(t));
    return Tile();
  }
  TileType result{{}, t.dtype};
  for (int p : perm)
    result.shape.push_back(t.shape[p]);
  op.perm = std::move(perm);
  return ctx->emit(std::move(op), std::move(result));
}

Tile reshape(const Tile &x, std::vector<Expr> shape) {
  TraceContext *ctx = contextOf(x);
  if (!ctx)
    return Tile();
  Op op = ctx->start(OpKind::Reshape);
  if (!ctx->use(op, x) || !ctx->checkShapeIsStatic(op, shape))
    return Tile();
  const TileType &t = ctx->type(x);
  Expr before = 1, after = 1;
  for (const Expr &e : t.shape)
    before = before * e;
  for (const Expr &e : shape)
    after = after * e;
  if (!ctx->requireEqual(op, "element count of " + formatTileType(t) +
                                 " vs " + formatExprs(shape),
                         before, after))
    return Tile();
  op.shape = shape;
  return ctx->emit(std::move(op), {std::move(shape), t.dtype});
}

Tile to_dtype(const Tile &x, DType dtype) {
  TraceContext *ctx = contextOf(x);
  if (!ctx)
    return Tile();
  Op op = ctx->start(OpKind::Cast);
  if (!ctx->use(op, x))
    return Tile();
  op.dtype = dtype;
  return ctx->emit(std::move(op), {ctx->type(x).shape, dtype});
}

Tile dot(const Tile &a, const Tile &b, const Tile &acc) {
  TraceContext *ctx = contextOf(a);
  if (!ctx)
    return Tile();
  Op op = ctx->start(OpKind::Dot);
  if (!ctx->use(op, a) || !ctx->use(op, b) || !ctx->use(op, acc))
    return Tile();
  const TileType &ta = ctx->type(a), &tb = ctx->type(b), &tc = ctx->type(acc);
  if (ta.shape.size() != 2 || tb.shape.size() != 2 || tc.shape.size() != 2) {
    ctx->fail(op, "needs matrices a[M, K], b[K, N], acc[M, N]; got " +
                      formatTileType(ta) + ", " + formatTileType(tb) + ", " +
                      formatTileType(tc));
    return Tile();
  }
  if (!ctx->requireDType(op, ta.dtype, tb.dtype))
    return Tile();
  if (!ctx->requireEqual(op, "K of a vs K of b", ta.shape[1], tb.shape[0]) ||
      !ctx->requireEqual(op, "M of a vs M of acc", ta.shape[0], tc.shape[0]) ||
      !ctx->requireEqual(op, "N of b vs N of acc", tb.shape[1], tc.shape[1]))
    return Tile();
  return ctx->emit(std::move(op), tc);
}

std::vector<Tile> detail::forLoop(
    const Expr &start, const Expr &stop, const Expr &step,
    std::vector<Tile> init,
    const std::function<void(const Expr &, std::vector<Tile> &)> &body) {
  TraceContext *ctx = active();
  if (!ctx || ctx->failed())
    return {};
  Op op = ctx->start(OpKind::ForLoop);
  for (const Tile &t : init)
    if (!ctx->use(op, t))
      return {};
  if (step.isConstant() && step.constant() <= 0) {
    ctx->fail(op, "step must be positive, got " + step.str());
    return {};
  }
  op.start = start;
  op.stop = stop;
  op.step = step;
  op.loopId = ctx->kernel.numLoops++;
  op.body = std::make_shared<Block>();
  std::vector<Tile> carried;
  {
    // Pops the body's block even if `body` throws (a Python body raising).
    struct Open {
      Open(TraceContext *ctx, Block *block) : ctx(ctx) { ctx->blocks.push_back(block); }
      ~Open() { ctx->blocks.pop_back(); }
      TraceContext *ctx;
    } open(ctx, op.body.get());
    for (const Tile &t : init) {
      int id = ctx->newValue(ctx->type(t));
      op.body->arguments.push_back(id);
      carried.push_back(ctx->make(id));
    }
    body(Expr::loopIndex(op.loopId), carried);
  }
  if (ctx->failed())
    return {};
  if (carried.size() != init.size()) {
    ctx->fail(op, "the body changed the number of carried values");
    return {};
  }
  for (size_t i = 0; i < carried.size(); ++i) {
    ctx->blocks.push_back(op.body.get());
    Op probe = op; // visibility check from inside the body
    probe.operands.clear();
    bool ok = ctx->use(probe, carried[i]);
    ctx->blocks.pop_back();
    if (!ok)
      return {};
    const TileType &before = ctx->type(init[i]);
    const TileType &after = ctx->type(carried[i]);
    if (before.dtype != after.dtype || before.shape.size() != after.shape.size()) {
      ctx->fail(op, "carried value " + std::to_string(i) + " changes type from " +
                        formatTileType(before) + " to " + formatTileType(after));
      return {};
    }
    for (size_t d = 0; d < before.shape.size(); ++d)
      if (!ctx->requireEqual(op, "carried value " + std::to_string(i) +
                                     " dim " + std::to_string(d),
                             before.shape[d], after.shape[d]))
        return {};
    op.body->yields.push_back(carried[i].id());
  }
  std::vector<Tile> results;
  for (const Tile &t : init) {
    int id = ctx->newValue(ctx->type(t));
    op.results.push_back(id);
    results.push_back(ctx->make(id));
  }
  ctx->emitNoResult(std::move(op));
  return results;
}

} // namespace turbine::kernels
