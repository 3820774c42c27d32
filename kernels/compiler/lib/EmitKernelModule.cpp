//===- EmitKernelModule.cpp - Specialized kernel graph -> MLIR (OpBuilder) ===//
//
// Builds the host function and the vector-level kernel with OpBuilder, op by
// op in trace order (see Compile.h for the op mapping). Every MLIR op gets a
// location naming the kernel and the traced op it comes from
// ("softmax: op #3 'load'"), so a diagnostic from a later pass points back
// at the kernel source. Nothing is printed and parsed back: the text forms
// (emitKernelModule / emitKernelFunction) print what is built here.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/EmitKernel.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

using namespace mlir;

namespace turbine::kernels {

Type elementTypeOf(MLIRContext *ctx, DType t) {
  Builder b(ctx);
  switch (t) {
  case DType::f16: return b.getF16Type();
  case DType::bf16: return b.getBF16Type();
  case DType::f32: return b.getF32Type();
  case DType::f64: return b.getF64Type();
  case DType::i1: return b.getI1Type();
  case DType::i8: return b.getIntegerType(8);
  case DType::i16: return b.getIntegerType(16);
  case DType::i32: return b.getI32Type();
  case DType::i64: return b.getI64Type();
  default: return nullptr;
  }
}

std::optional<DType> dtypeOfElementType(Type t) {
  if (t.isF16()) return DType::f16;
  if (t.isBF16()) return DType::bf16;
  if (t.isF32()) return DType::f32;
  if (t.isF64()) return DType::f64;
  if (t.isSignlessInteger(1)) return DType::i1;
  if (t.isSignlessInteger(8)) return DType::i8;
  if (t.isSignlessInteger(16)) return DType::i16;
  if (t.isSignlessInteger(32)) return DType::i32;
  if (t.isSignlessInteger(64)) return DType::i64;
  return std::nullopt;
}

namespace {

int intWidth(DType t) {
  switch (t) {
  case DType::i1: return 1;
  case DType::i8: return 8;
  case DType::i16: return 16;
  case DType::i32: return 32;
  case DType::i64: return 64;
  default: return 0;
  }
}

int floatWidth(DType t) {
  switch (t) {
  case DType::f16: case DType::bf16: return 16;
  case DType::f32: return 32;
  case DType::f64: return 64;
  default: return 0;
  }
}

/// `v` as a scalar attribute of element type `t` (floats rounded to `t`).
TypedAttr scalarAttr(Type t, double v) {
  if (auto f = dyn_cast<FloatType>(t))
    return FloatAttr::get(f, v);
  if (t.isInteger(1))
    return IntegerAttr::get(t, v != 0.0 ? 1 : 0);
  return IntegerAttr::get(t, static_cast<int64_t>(v));
}

class Emitter {
public:
  Emitter(const Specialization &spec, MLIRContext *ctx)
      : spec_(spec), k_(*spec.kernel), ctx_(ctx), b_(ctx),
        loc_(NameLoc::get(StringAttr::get(ctx, "kernel '" + spec.kernel->name + "'"))) {}

  /// Checks the buffers' dtypes and fixes the binding order.
  Status prepare() {
    for (const BufferDecl &b : k_.buffers) {
      if (!elementTypeOf(ctx_, b.dtype) || b.dtype == DType::i1)
        return fail("buffer '" + b.name + "': dtype " +
                    std::string(dtypeName(b.dtype)) +
                    " is not supported by the compiler yet");
    }
    // Bindings: inputs first, then outputs (the dispatch convention). An
    // inout buffer is an input the kernel also writes: updated in place.
    for (size_t i = 0; i < k_.buffers.size(); ++i)
      (k_.buffers[i].kind == BufferKind::Output ? outputs_ : inputs_)
          .push_back(static_cast<int>(i));
    std::vector<int> order = inputs_;
    order.insert(order.end(), outputs_.begin(), outputs_.end());
    bindingOf_.assign(k_.buffers.size(), 0);
    for (size_t p = 0; p < order.size(); ++p)
      bindingOf_[order[p]] = static_cast<int>(p);
    return Status::success();
  }

  /// The host function @main dispatching kernel `kernelName`, at the
  /// builder's insertion point. Dynamic symbols are read from the input
  /// tensors' dims and passed as push constants.
  Status emitHost(OpBuilder &b, const std::string &kernelName) {
    SmallVector<Type> argTypes, resultTypes;
    for (int i : inputs_)
      argTypes.push_back(tensorType(i));
    for (int i : outputs_)
      resultTypes.push_back(tensorType(i));
    auto main = func::FuncOp::create(b, loc_, "main",
                                     b.getFunctionType(argTypes, resultTypes));
    mlir::Block *entry = main.addEntryBlock();
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(entry);
    // Dynamic symbols: the first input dim that is the symbol itself.
    std::map<std::string, Value> outer = std::move(symbolValues_);
    symbolValues_.clear();
    SmallVector<Value> constants, resultDims;
    for (const DynamicSymbol &d : k_.dynamicSymbols) {
      for (size_t a = 0; a < inputs_.size() && !symbolValues_.count(d.name); ++a) {
        const BufferDecl &decl = k_.buffers[inputs_[a]];
        for (size_t dim = 0; dim < decl.shape.size(); ++dim)
          if (decl.shape[dim].kind() == Expr::Kind::Symbol && decl.shape[dim].name() == d.name) {
            symbolValues_[d.name] = tensor::DimOp::create(b_, loc_, entry->getArgument(a),
                                                          static_cast<int64_t>(dim));
            break;
          }
      }
      constants.push_back(symbolValues_.at(d.name));
    }
    SmallVector<Value> grid;
    for (int a = 0; a < 3; ++a) {
      if (a < static_cast<int>(k_.grid.size()) && k_.usesDynamicSymbol(k_.grid[a])) {
        Result<Value> size = index(k_.grid[a]);
        if (!size.ok())
          return size.status();
        grid.push_back(*size);
      } else {
        grid.push_back(arith::ConstantIndexOp::create(b_, loc_, spec_.grid[a]));
      }
    }
    for (int o : outputs_)
      for (size_t dim = 0; dim < k_.buffers[o].shape.size(); ++dim)
        if (spec_.isDynamicDim(o, dim)) {
          Result<Value> size = index(k_.buffers[o].shape[dim]);
          if (!size.ok())
            return size.status();
          resultDims.push_back(*size);
        }
    auto dispatch = compiler::DispatchOp::create(
        b_, loc_, resultTypes, FlatSymbolRefAttr::get(ctx_, kernelName), grid,
        entry->getArguments(), constants, resultDims);
    func::ReturnOp::create(b_, loc_, dispatch.getResults());
    symbolValues_ = std::move(outer);
    return Status::success();
  }

  /// The kernel function `funcName` at the builder's insertion point (a
  /// kernel container).
  Result<func::FuncOp> emitKernel(OpBuilder &b, const std::string &funcName) {
    Type indexType = b.getIndexType();
    auto fn = func::FuncOp::create(
        b, loc_, funcName,
        b.getFunctionType({LLVM::LLVMPointerType::get(ctx_), indexType, indexType, indexType}, {}));
    fn->setAttr("turbine.kernel", b.getUnitAttr());
    mlir::Block *entry = fn.addEntryBlock();
    b_.setInsertionPointToEnd(entry);
    state_ = entry->getArgument(0);
    for (int a = 0; a < 3; ++a)
      workgroup_[a] = entry->getArgument(1 + a);
    // Dynamic symbols are the dispatch's push constants, in declaration order.
    for (size_t i = 0; i < k_.dynamicSymbols.size(); ++i)
      symbolValues_[k_.dynamicSymbols[i].name] = compiler::PushConstantOp::create(
          b_, loc_, b_.getIndexType(), state_, b_.getI64IntegerAttr(static_cast<int64_t>(i)));
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      SmallVector<Value> dims;
      for (size_t d = 0; d < k_.buffers[i].shape.size(); ++d)
        if (spec_.isDynamicDim(i, d)) {
          Result<Value> dim = index(k_.buffers[i].shape[d]);
          if (!dim.ok()) {
            fn.erase();
            return dim.status();
          }
          dims.push_back(*dim);
        }
      buffers_.push_back(compiler::BindingOp::create(
          b_, loc_, memrefType(i), state_, b_.getI64IntegerAttr(bindingOf_[i]), dims));
    }
    if (Status s = emitBlock(k_.body); !s.ok()) {
      fn.erase();
      return s;
    }
    func::ReturnOp::create(b_, loc_);
    return fn;
  }

private:
  Status fail(const std::string &message) const {
    return Status::error("kernel '" + k_.name + "': " + message);
  }
  Status opError(const Op &op, const std::string &message) const {
    return fail(k_.describe(op) + ": " + message);
  }

  Type elem(DType t) const { return elementTypeOf(ctx_, t); }
  /// The buffer's shape as compiled: dims that depend on a dynamic symbol
  /// are dynamic.
  SmallVector<int64_t> compiledShape(size_t buffer) const {
    SmallVector<int64_t> shape(spec_.bufferShapes[buffer].begin(),
                               spec_.bufferShapes[buffer].end());
    for (size_t d = 0; d < shape.size(); ++d)
      if (spec_.isDynamicDim(buffer, d))
        shape[d] = ShapedType::kDynamic;
    return shape;
  }
  MemRefType memrefType(size_t buffer) const {
    return MemRefType::get(compiledShape(buffer), elem(k_.buffers[buffer].dtype));
  }
  RankedTensorType tensorType(size_t buffer) const {
    return RankedTensorType::get(compiledShape(buffer), elem(k_.buffers[buffer].dtype));
  }
  /// True if `e` is known when the kernel is compiled.
  bool isStatic(const Expr &e) const {
    return !e.dependsOnRunTime() && !k_.usesDynamicSymbol(e);
  }
  /// Type of a tile: a vector, or a scalar for rank 0.
  Type tileType(const std::vector<int64_t> &shape, DType t) const {
    if (shape.empty())
      return elem(t);
    return VectorType::get(shape, elem(t));
  }
  /// A constant of tile type `type` (a splat for vectors).
  Value constantOf(Type type, double v) {
    if (auto vec = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(
          b_, loc_, vec, DenseElementsAttr::get(vec, scalarAttr(vec.getElementType(), v)));
    return arith::ConstantOp::create(b_, loc_, cast<TypedAttr>(scalarAttr(type, v)));
  }
  Value indexConstant(int64_t v) { return arith::ConstantIndexOp::create(b_, loc_, v); }

  /// Emits index arithmetic for `e`.
  Result<Value> index(const Expr &e) {
    if (isStatic(e)) {
      Result<int64_t> v = evaluate(e, spec_.symbols);
      if (!v.ok())
        return fail(v.message());
      return indexConstant(*v);
    }
    switch (e.kind()) {
    case Expr::Kind::Symbol: {
      auto it = symbolValues_.find(e.name());
      if (it == symbolValues_.end())
        return fail("internal error: no value for dynamic symbol '" + e.name() + "'");
      return it->second;
    }
    case Expr::Kind::ProgramId:
      return workgroup_[e.leafIndex()];
    case Expr::Kind::LoopIndex: {
      auto it = loopVars_.find(e.leafIndex());
      if (it == loopVars_.end())
        return fail("loop index " + e.str() + " used outside its for_loop");
      return it->second;
    }
    default:
      break;
    }
    Result<Value> a = index(e.lhs());
    if (!a.ok()) return a;
    Result<Value> b = index(e.rhs());
    if (!b.ok()) return b;
    switch (e.kind()) {
    case Expr::Kind::Add: return Value(arith::AddIOp::create(b_, loc_, *a, *b));
    case Expr::Kind::Sub: return Value(arith::SubIOp::create(b_, loc_, *a, *b));
    case Expr::Kind::Mul: return Value(arith::MulIOp::create(b_, loc_, *a, *b));
    case Expr::Kind::FloorDiv: return Value(arith::FloorDivSIOp::create(b_, loc_, *a, *b));
    case Expr::Kind::CeilDiv: return Value(arith::CeilDivSIOp::create(b_, loc_, *a, *b));
    case Expr::Kind::Min: return Value(arith::MinSIOp::create(b_, loc_, *a, *b));
    case Expr::Kind::Max: return Value(arith::MaxSIOp::create(b_, loc_, *a, *b));
    case Expr::Kind::Mod: {
      Value q = arith::FloorDivSIOp::create(b_, loc_, *a, *b);
      Value p = arith::MulIOp::create(b_, loc_, q, *b);
      return Value(arith::SubIOp::create(b_, loc_, *a, p));
    }
    default:
      return fail("cannot lower expression " + e.str());
    }
  }

  /// Inclusive range of an index expression at run time, if known.
  struct Range {
    int64_t lo, hi;
  };
  std::optional<Range> range(const Expr &e) const {
    if (isStatic(e)) {
      Result<int64_t> c = evaluate(e, spec_.symbols);
      if (!c.ok())
        return std::nullopt;
      return Range{*c, *c};
    }
    switch (e.kind()) {
    case Expr::Kind::Symbol: { // dynamic: its bound, if declared
      const DynamicSymbol *d = k_.dynamicSymbol(e.name());
      if (!d || d->max <= 0)
        return std::nullopt;
      return Range{0, d->max};
    }
    case Expr::Kind::ProgramId:
      if (e.leafIndex() < static_cast<int>(k_.grid.size()) &&
          k_.usesDynamicSymbol(k_.grid[e.leafIndex()]))
        return std::nullopt;
      if (spec_.grid[e.leafIndex()] <= 0)
        return std::nullopt;
      return Range{0, spec_.grid[e.leafIndex()] - 1};
    case Expr::Kind::LoopIndex: {
      auto it = loopRanges_.find(e.leafIndex());
      if (it == loopRanges_.end())
        return std::nullopt;
      return it->second;
    }
    default:
      break;
    }
    std::optional<Range> a = range(e.lhs()), b = range(e.rhs());
    if (!a || !b)
      return std::nullopt;
    switch (e.kind()) {
    case Expr::Kind::Add: return Range{a->lo + b->lo, a->hi + b->hi};
    case Expr::Kind::Sub: return Range{a->lo - b->hi, a->hi - b->lo};
    case Expr::Kind::Mul: {
      int64_t p[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
      return Range{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    case Expr::Kind::Min: return Range{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    case Expr::Kind::Max: return Range{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    case Expr::Kind::FloorDiv:
    case Expr::Kind::CeilDiv: {
      if (b->lo != b->hi || b->lo <= 0)
        return std::nullopt;
      auto f = [&](int64_t x) {
        Result<int64_t> r = evaluate(Expr::binary(e.kind(), Expr(x), Expr(b->lo)), Bindings{});
        return *r;
      };
      return Range{f(a->lo), f(a->hi)};
    }
    case Expr::Kind::Mod:
      if (b->lo != b->hi || b->lo <= 0)
        return std::nullopt;
      return Range{0, b->lo - 1};
    default:
      return std::nullopt;
    }
  }

  /// True if a tile of `size` at `offset` provably stays inside a dim
  /// `dim` that is a dynamic symbol declared a multiple of `size`: the
  /// offset steps by `size` over a grid axis or a loop that ends at `dim`.
  bool fitsDynamicDim(const Expr &offset, int64_t size, const Expr &dim) const {
    if (dim.kind() != Expr::Kind::Symbol)
      return false;
    const DynamicSymbol *d = k_.dynamicSymbol(dim.name());
    if (!d || d->multipleOf % size != 0)
      return false;
    auto staticValue = [&](const Expr &e) -> std::optional<int64_t> {
      if (!isStatic(e))
        return std::nullopt;
      Result<int64_t> v = evaluate(e, spec_.symbols);
      return v.ok() ? std::optional<int64_t>(*v) : std::nullopt;
    };
    // `count` is ceildiv(dim, size) or floordiv(dim, size).
    auto countsTiles = [&](const Expr &count) {
      if (count.kind() != Expr::Kind::CeilDiv && count.kind() != Expr::Kind::FloorDiv)
        return false;
      return count.lhs().kind() == Expr::Kind::Symbol && count.lhs().name() == dim.name() &&
             staticValue(count.rhs()) == size;
    };
    auto loopOf = [&](const Expr &leaf) -> const Op * {
      auto it = loopOps_.find(leaf.leafIndex());
      return it == loopOps_.end() ? nullptr : it->second;
    };
    if (offset.kind() == Expr::Kind::LoopIndex) { // for k in range(0, dim, size)
      const Op *loop = loopOf(offset);
      return loop && staticValue(loop->start) == 0 && staticValue(loop->step) == size &&
             loop->stop.kind() == Expr::Kind::Symbol && loop->stop.name() == dim.name();
    }
    if (offset.kind() != Expr::Kind::Mul)
      return false;
    Expr leaf = offset.lhs(), factor = offset.rhs();
    if (staticValue(leaf)) // size * leaf
      std::swap(leaf, factor);
    if (staticValue(factor) != size)
      return false;
    if (leaf.kind() == Expr::Kind::ProgramId) {
      int axis = leaf.leafIndex();
      return axis < static_cast<int>(k_.grid.size()) && countsTiles(k_.grid[axis]);
    }
    if (leaf.kind() == Expr::Kind::LoopIndex) {
      const Op *loop = loopOf(leaf);
      return loop && staticValue(loop->start) == 0 && staticValue(loop->step) == 1 &&
             countsTiles(loop->stop);
    }
    return false;
  }

  Value v(int id) const { return values_.at(id); }
  const std::vector<int64_t> &shapeOf(int id) const { return spec_.valueShapes[id]; }
  DType dtypeOf(int id) const { return k_.values[id].dtype; }
  Type typeOf(int id) const { return tileType(shapeOf(id), dtypeOf(id)); }

  /// Value `id` broadcast to `shape` (same dtype).
  Value broadcastTo(int id, const std::vector<int64_t> &shape) {
    if (shapeOf(id) == shape)
      return v(id);
    return vector::BroadcastOp::create(b_, loc_, tileType(shape, dtypeOf(id)), v(id));
  }

  Status emitBlock(const kernels::Block &block) {
    for (const Op &op : block.ops) {
      Location outer = loc_;
      loc_ = NameLoc::get(StringAttr::get(ctx_, k_.name + ": op #" + std::to_string(op.id) +
                                                     " '" + opKindName(op.kind) + "'"));
      Status s = emitOp(op);
      loc_ = outer;
      if (!s.ok())
        return s;
    }
    return Status::success();
  }

  Status emitAccess(const Op &op, bool isStore) {
    SmallVector<Value> offs;
    for (const Expr &e : op.offsets) {
      Result<Value> n = index(e);
      if (!n.ok())
        return n.status();
      offs.push_back(*n);
    }
    const std::vector<int64_t> &shape =
        isStore ? shapeOf(op.operands[0]) : shapeOf(op.results[0]);
    DType dt = k_.buffers[op.buffer].dtype;
    auto vecType = cast<VectorType>(tileType(shape, dt));
    Value mem = buffers_[op.buffer];
    Value pad;
    if (!isStore)
      pad = arith::ConstantOp::create(b_, loc_, scalarAttr(elem(dt), op.constant));
    auto access = [&](OpBuilder &b, bool inBounds) -> Value {
      SmallVector<bool> flags(shape.size(), inBounds);
      if (isStore) {
        vector::TransferWriteOp::create(b, loc_, v(op.operands[0]), mem, offs,
                                        ArrayRef<bool>(flags));
        return Value();
      }
      return vector::TransferReadOp::create(b, loc_, vecType, mem, offs, pad,
                                            ArrayRef<bool>(flags));
    };
    // Which dims may leave the buffer: those whose offset range (program
    // ids over the grid, loop indices over their loop) does not keep the
    // whole tile inside.
    std::vector<size_t> unsure;
    if (op.masked) {
      const std::vector<int64_t> &bshape = spec_.bufferShapes[op.buffer];
      for (size_t d = 0; d < shape.size(); ++d) {
        if (spec_.isDynamicDim(op.buffer, d)) {
          if (!fitsDynamicDim(op.offsets[d], shape[d], k_.buffers[op.buffer].shape[d]))
            unsure.push_back(d);
          continue;
        }
        std::optional<Range> r = range(op.offsets[d]);
        if (!r || r->lo < 0 || r->hi + shape[d] > bshape[d])
          unsure.push_back(d);
      }
    }
    if (unsure.empty()) { // unmasked, or provably inside
      Value r = access(b_, true);
      if (!isStore)
        values_[op.results[0]] = r;
      return Status::success();
    }
    // Masked: full tiles (the common case) take an unmasked fast path.
    Value all;
    for (size_t d : unsure) {
      Value size = indexConstant(shape[d]);
      Value end = arith::AddIOp::create(b_, loc_, offs[d], size);
      Value limit;
      if (spec_.isDynamicDim(op.buffer, d)) {
        Result<Value> dim = index(k_.buffers[op.buffer].shape[d]);
        if (!dim.ok())
          return dim.status();
        limit = *dim;
      } else {
        limit = indexConstant(spec_.bufferShapes[op.buffer][d]);
      }
      Value ok = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sle, end, limit);
      all = all ? Value(arith::AndIOp::create(b_, loc_, all, ok)) : ok;
    }
    if (isStore) {
      auto ifOp = scf::IfOp::create(b_, loc_, TypeRange{}, all, /*withElseRegion=*/true);
      OpBuilder then = ifOp.getThenBodyBuilder();
      access(then, true);
      OpBuilder otherwise = ifOp.getElseBodyBuilder();
      access(otherwise, false);
      return Status::success();
    }
    auto ifOp = scf::IfOp::create(b_, loc_, TypeRange{vecType}, all,
                                  /*addThenBlock=*/true, /*addElseBlock=*/true);
    OpBuilder then = OpBuilder::atBlockEnd(ifOp.thenBlock());
    scf::YieldOp::create(then, loc_, access(then, true));
    OpBuilder otherwise = OpBuilder::atBlockEnd(ifOp.elseBlock());
    scf::YieldOp::create(otherwise, loc_, access(otherwise, false));
    values_[op.results[0]] = ifOp.getResult(0);
    return Status::success();
  }

  Status emitOp(const Op &op) {
    switch (op.kind) {
    case OpKind::Load:
      return emitAccess(op, false);
    case OpKind::Store:
      return emitAccess(op, true);
    case OpKind::Constant: {
      int r = op.results[0];
      DType dt = dtypeOf(r);
      if (op.hasScalar) { // rank-0 value of an index expression
        Result<Value> n = index(op.scalar);
        if (!n.ok())
          return n.status();
        if (dtypeIsFloat(dt)) {
          Value i64 = arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), *n);
          values_[r] = arith::SIToFPOp::create(b_, loc_, elem(dt), i64);
        } else {
          values_[r] = arith::IndexCastOp::create(b_, loc_, elem(dt), *n);
        }
        return Status::success();
      }
      values_[r] = constantOf(typeOf(r), op.constant);
      return Status::success();
    }
    case OpKind::Iota: {
      // All values are known once specialized: a dense constant.
      int r = op.results[0];
      const std::vector<int64_t> &shape = shapeOf(r);
      Type et = elem(dtypeOf(r));
      std::vector<int64_t> idx(shape.size(), 0);
      int64_t count = 1;
      for (int64_t d : shape)
        count *= d;
      SmallVector<Attribute> elements;
      for (int64_t linear = 0; linear < count; ++linear) {
        elements.push_back(scalarAttr(et, static_cast<double>(idx[op.axis])));
        for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
          if (++idx[d] < shape[d])
            break;
          idx[d] = 0;
        }
      }
      auto flat = VectorType::get({count}, et);
      Value f = arith::ConstantOp::create(b_, loc_, flat, DenseElementsAttr::get(flat, elements));
      values_[r] = vector::ShapeCastOp::create(b_, loc_, typeOf(r), f);
      return Status::success();
    }
    default:
      break;
    }
    return emitCompute(op);
  }

  Status emitForLoop(const Op &op);
  Status emitCompute(const Op &op);

  const Specialization &spec_;
  const Kernel &k_;
  MLIRContext *ctx_;
  OpBuilder b_;
  Location loc_;
  std::vector<int> inputs_, outputs_, bindingOf_;
  Value state_;
  Value workgroup_[3];
  std::vector<Value> buffers_;
  std::map<int, Value> values_;
  std::map<int, Value> loopVars_;
  std::map<int, Range> loopRanges_;
  std::map<int, const Op *> loopOps_;
  /// Values of the dynamic symbols where code is being emitted (push
  /// constants in the kernel, tensor dims in the host function).
  std::map<std::string, Value> symbolValues_;
};

Status Emitter::emitForLoop(const Op &op) {
  Result<Value> lo = index(op.start), hi = index(op.stop), st = index(op.step);
  if (!lo.ok()) return lo.status();
  if (!hi.ok()) return hi.status();
  if (!st.ok()) return st.status();
  SmallVector<Value> inits;
  for (int operand : op.operands)
    inits.push_back(v(operand));
  auto loop = scf::ForOp::create(b_, loc_, *lo, *hi, *st, inits);
  mlir::Block *body = loop.getBody();
  // Without carried values the builder adds the terminator itself.
  if (!body->empty())
    body->back().erase();
  loopVars_[op.loopId] = loop.getInductionVar();
  loopOps_[op.loopId] = &op;
  {
    std::optional<Range> a = range(op.start), b = range(op.stop), c = range(op.step);
    if (a && b && c && a->lo == a->hi && b->lo == b->hi && c->lo == c->hi &&
        c->lo > 0 && b->lo > a->lo)
      loopRanges_[op.loopId] =
          Range{a->lo, a->lo + ((b->lo - a->lo - 1) / c->lo) * c->lo};
  }
  for (size_t i = 0; i < op.body->arguments.size(); ++i)
    values_[op.body->arguments[i]] = loop.getRegionIterArg(i);
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToEnd(body);
  Status s = emitBlock(*op.body);
  if (!s.ok())
    return s;
  SmallVector<Value> yields;
  for (int y : op.body->yields)
    yields.push_back(v(y));
  scf::YieldOp::create(b_, loc_, yields);
  loopVars_.erase(op.loopId);
  loopRanges_.erase(op.loopId);
  loopOps_.erase(op.loopId);
  for (size_t i = 0; i < op.results.size(); ++i)
    values_[op.results[i]] = loop.getResult(i);
  return Status::success();
}

Value unaryOp(OpBuilder &b, Location loc, OpKind kind, bool isFloat, Value x) {
  switch (kind) {
  case OpKind::Neg: return isFloat ? Value(arith::NegFOp::create(b, loc, x)) : Value();
  case OpKind::Abs:
    return isFloat ? Value(math::AbsFOp::create(b, loc, x)) : Value(math::AbsIOp::create(b, loc, x));
  case OpKind::Exp: return math::ExpOp::create(b, loc, x);
  case OpKind::Log: return math::LogOp::create(b, loc, x);
  case OpKind::Sqrt: return math::SqrtOp::create(b, loc, x);
  case OpKind::Rsqrt: return math::RsqrtOp::create(b, loc, x);
  case OpKind::Tanh: return math::TanhOp::create(b, loc, x);
  default: return Value();
  }
}

Value binaryOp(OpBuilder &b, Location loc, OpKind kind, bool isFloat, Value x, Value y) {
  switch (kind) {
  case OpKind::Add:
    return isFloat ? Value(arith::AddFOp::create(b, loc, x, y)) : Value(arith::AddIOp::create(b, loc, x, y));
  case OpKind::Sub:
    return isFloat ? Value(arith::SubFOp::create(b, loc, x, y)) : Value(arith::SubIOp::create(b, loc, x, y));
  case OpKind::Mul:
    return isFloat ? Value(arith::MulFOp::create(b, loc, x, y)) : Value(arith::MulIOp::create(b, loc, x, y));
  case OpKind::Div:
    return isFloat ? Value(arith::DivFOp::create(b, loc, x, y)) : Value(arith::DivSIOp::create(b, loc, x, y));
  case OpKind::Maximum:
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, x, y)) : Value(arith::MaxSIOp::create(b, loc, x, y));
  case OpKind::Minimum:
    return isFloat ? Value(arith::MinimumFOp::create(b, loc, x, y)) : Value(arith::MinSIOp::create(b, loc, x, y));
  default: return Value();
  }
}

std::optional<arith::CmpFPredicate> floatPredicate(OpKind kind) {
  switch (kind) {
  case OpKind::CmpLT: return arith::CmpFPredicate::OLT;
  case OpKind::CmpLE: return arith::CmpFPredicate::OLE;
  case OpKind::CmpGT: return arith::CmpFPredicate::OGT;
  case OpKind::CmpGE: return arith::CmpFPredicate::OGE;
  case OpKind::CmpEQ: return arith::CmpFPredicate::OEQ;
  case OpKind::CmpNE: return arith::CmpFPredicate::UNE;
  default: return std::nullopt;
  }
}

std::optional<arith::CmpIPredicate> intPredicate(OpKind kind) {
  switch (kind) {
  case OpKind::CmpLT: return arith::CmpIPredicate::slt;
  case OpKind::CmpLE: return arith::CmpIPredicate::sle;
  case OpKind::CmpGT: return arith::CmpIPredicate::sgt;
  case OpKind::CmpGE: return arith::CmpIPredicate::sge;
  case OpKind::CmpEQ: return arith::CmpIPredicate::eq;
  case OpKind::CmpNE: return arith::CmpIPredicate::ne;
  default: return std::nullopt;
  }
}

Status Emitter::emitCompute(const Op &op) {
  if (op.kind == OpKind::ForLoop)
    return emitForLoop(op);
  int r = op.results[0];
  DType dt = dtypeOf(r);
  const std::vector<int64_t> &shape = shapeOf(r);
  Type type = typeOf(r);
  if (isUnaryElementwise(op.kind)) {
    bool isFloat = dtypeIsFloat(dt);
    Value x = v(op.operands[0]);
    if (op.kind == OpKind::Neg && !isFloat) { // integer negation
      Value zero = constantOf(type, 0.0);
      values_[r] = arith::SubIOp::create(b_, loc_, zero, x);
      return Status::success();
    }
    if (op.kind == OpKind::Exp2) {
      // exp2(x) = exp(x * ln 2): math.exp has a vector polynomial
      // approximation, math.exp2 would become one libm call per lane.
      Value ln2 = constantOf(type, 0.69314718055994530942);
      Value scaled = arith::MulFOp::create(b_, loc_, x, ln2);
      values_[r] = math::ExpOp::create(b_, loc_, scaled);
      return Status::success();
    }
    Value result = unaryOp(b_, loc_, op.kind, isFloat, x);
    if (!result)
      return opError(op, "not supported by the compiler yet");
    values_[r] = result;
    return Status::success();
  }
  if (isBinaryElementwise(op.kind) || isComparison(op.kind)) {
    DType in = dtypeOf(op.operands[0]);
    bool isFloat = dtypeIsFloat(in);
    Value a = broadcastTo(op.operands[0], shape);
    Value b = broadcastTo(op.operands[1], shape);
    if (isComparison(op.kind))
      values_[r] = isFloat ? Value(arith::CmpFOp::create(b_, loc_, *floatPredicate(op.kind), a, b))
                           : Value(arith::CmpIOp::create(b_, loc_, *intPredicate(op.kind), a, b));
    else
      values_[r] = binaryOp(b_, loc_, op.kind, isFloat, a, b);
    return Status::success();
  }
  switch (op.kind) {
  case OpKind::Select: {
    Value c = broadcastTo(op.operands[0], shape);
    Value a = broadcastTo(op.operands[1], shape);
    Value b = broadcastTo(op.operands[2], shape);
    values_[r] = arith::SelectOp::create(b_, loc_, c, a, b);
    return Status::success();
  }
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceSum: {
    bool isFloat = dtypeIsFloat(dt);
    vector::CombiningKind kind =
        op.kind == OpKind::ReduceSum   ? vector::CombiningKind::ADD
        : op.kind == OpKind::ReduceMax ? (isFloat ? vector::CombiningKind::MAXIMUMF
                                                  : vector::CombiningKind::MAXSI)
                                       : (isFloat ? vector::CombiningKind::MINIMUMF
                                                  : vector::CombiningKind::MINSI);
    const std::vector<int64_t> &src = shapeOf(op.operands[0]);
    if (src.size() == 1) {
      Value t = vector::ReductionOp::create(b_, loc_, kind, v(op.operands[0]));
      values_[r] = vector::BroadcastOp::create(b_, loc_, type, t);
      return Status::success();
    }
    std::vector<int64_t> reduced;
    SmallVector<bool> mask;
    for (size_t d = 0; d < src.size(); ++d) {
      mask.push_back(static_cast<int>(d) == op.axis);
      if (static_cast<int>(d) != op.axis)
        reduced.push_back(src[d]);
    }
    double identity = op.kind == OpKind::ReduceSum ? 0.0
                      : op.kind == OpKind::ReduceMax ? -INFINITY : INFINITY;
    if (!isFloat) {
      int w = intWidth(dt);
      int64_t big = w >= 64 ? INT64_MAX : (int64_t(1) << (w - 1)) - 1;
      identity = op.kind == OpKind::ReduceSum ? 0.0
                 : op.kind == OpKind::ReduceMax ? static_cast<double>(-big - 1)
                                                : static_cast<double>(big);
    }
    Value init = constantOf(tileType(reduced, dt), identity);
    Value t = vector::MultiDimReductionOp::create(b_, loc_, v(op.operands[0]), init, mask, kind);
    values_[r] = vector::ShapeCastOp::create(b_, loc_, type, t);
    return Status::success();
  }
  case OpKind::Broadcast:
    values_[r] = broadcastTo(op.operands[0], shape);
    return Status::success();
  case OpKind::Transpose: {
    SmallVector<int64_t> perm(op.perm.begin(), op.perm.end());
    values_[r] = vector::TransposeOp::create(b_, loc_, v(op.operands[0]), perm);
    return Status::success();
  }
  case OpKind::Reshape:
    if (shape.empty() || shapeOf(op.operands[0]).empty())
      return opError(op, "reshape to or from rank 0 is not supported by the compiler yet");
    values_[r] = vector::ShapeCastOp::create(b_, loc_, type, v(op.operands[0]));
    return Status::success();
  case OpKind::Cast: {
    DType from = dtypeOf(op.operands[0]);
    Value x = v(op.operands[0]);
    if (from == dt) {
      values_[r] = x;
      return Status::success();
    }
    bool ff = dtypeIsFloat(from), tf = dtypeIsFloat(dt);
    if (ff && tf) {
      if (floatWidth(from) == floatWidth(dt)) { // f16 <-> bf16 through f32
        Value wide = arith::ExtFOp::create(b_, loc_, tileType(shape, DType::f32), x);
        values_[r] = arith::TruncFOp::create(b_, loc_, type, wide);
      } else if (floatWidth(dt) > floatWidth(from)) {
        values_[r] = arith::ExtFOp::create(b_, loc_, type, x);
      } else {
        values_[r] = arith::TruncFOp::create(b_, loc_, type, x);
      }
    } else if (ff) {
      values_[r] = arith::FPToSIOp::create(b_, loc_, type, x);
    } else if (tf) {
      values_[r] = from == DType::i1 ? Value(arith::UIToFPOp::create(b_, loc_, type, x))
                                     : Value(arith::SIToFPOp::create(b_, loc_, type, x));
    } else if (intWidth(dt) > intWidth(from)) {
      values_[r] = from == DType::i1 ? Value(arith::ExtUIOp::create(b_, loc_, type, x))
                                     : Value(arith::ExtSIOp::create(b_, loc_, type, x));
    } else {
      values_[r] = arith::TruncIOp::create(b_, loc_, type, x);
    }
    return Status::success();
  }
  case OpKind::Dot: {
    DType in = dtypeOf(op.operands[0]);
    Value a = v(op.operands[0]), b = v(op.operands[1]);
    const std::vector<int64_t> &sa = shapeOf(op.operands[0]), &sb = shapeOf(op.operands[1]);
    if (in != dt) {
      if (!dtypeIsFloat(in) || !dtypeIsFloat(dt))
        return opError(op, "integer dot with a different accumulator type is not supported by the compiler yet");
      a = arith::ExtFOp::create(b_, loc_, tileType(sa, dt), a);
      b = arith::ExtFOp::create(b_, loc_, tileType(sb, dt), b);
    }
    AffineExpr m, n, k;
    bindDims(ctx_, m, n, k);
    values_[r] = vector::ContractionOp::create(
        b_, loc_, a, b, v(op.operands[2]),
        ArrayRef<ArrayRef<AffineExpr>>{{m, k}, {k, n}, {m, n}},
        ArrayRef<vector::IteratorType>{vector::IteratorType::parallel,
                                       vector::IteratorType::parallel,
                                       vector::IteratorType::reduction});
    return Status::success();
  }
  default:
    break;
  }
  return opError(op, "not supported by the compiler yet");
}

/// The kernel container `module @kernels attributes {turbine.kernels}` at
/// the end of `module`.
ModuleOp addKernelContainer(ModuleOp module) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernels = ModuleOp::create(b, module.getLoc(), StringRef("kernels"));
  kernels->setAttr("turbine.kernels", b.getUnitAttr());
  return kernels;
}

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

} // namespace

void loadKernelDialects(MLIRContext &context) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                      math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                      tensor::TensorDialect, vector::VectorDialect,
                      compiler::TurbineDialect>();
}

Result<OwningOpRef<ModuleOp>> buildKernelModule(MLIRContext &context,
                                                const Specialization &spec) {
  loadKernelDialects(context);
  Emitter emitter(spec, &context);
  if (Status s = emitter.prepare(); !s.ok())
    return s;
  Location loc = NameLoc::get(StringAttr::get(&context, "kernel '" + spec.kernel->name + "'"));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  if (Status s = emitter.emitHost(b, spec.kernel->name); !s.ok())
    return s;
  ModuleOp container = addKernelContainer(*module);
  OpBuilder kb = OpBuilder::atBlockEnd(container.getBody());
  Result<func::FuncOp> fn = emitter.emitKernel(kb, spec.kernel->name);
  if (!fn.ok())
    return fn.status();
  return std::move(module);
}

Result<func::FuncOp> buildKernelFunction(OpBuilder &builder, const Specialization &spec,
                                         const std::string &funcName) {
  loadKernelDialects(*builder.getContext());
  Emitter emitter(spec, builder.getContext());
  if (Status s = emitter.prepare(); !s.ok())
    return s;
  return emitter.emitKernel(builder, funcName);
}

Result<std::string> emitKernelModule(const Specialization &spec) {
  MLIRContext context;
  Result<OwningOpRef<ModuleOp>> module = buildKernelModule(context, spec);
  if (!module.ok())
    return module.status();
  return printModule(**module);
}

Result<std::string> emitKernelFunction(const Specialization &spec,
                                       const std::string &funcName) {
  MLIRContext context;
  loadKernelDialects(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  ModuleOp container = addKernelContainer(*module);
  OpBuilder b = OpBuilder::atBlockEnd(container.getBody());
  Result<func::FuncOp> fn = buildKernelFunction(b, spec, funcName);
  if (!fn.ok())
    return fn.status();
  return printModule(*module);
}

} // namespace turbine::kernels
