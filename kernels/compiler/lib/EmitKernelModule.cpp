//===- EmitKernelModule.cpp - Specialized kernel graph -> MLIR text -------===//
//
// Writes the host function and the vector-level kernel as MLIR text (parsed
// and verified by the caller). Values are named %v<id>; index expressions
// %i<n>; every other temporary %t<n>. See Compile.h for the op mapping.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/Compile.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

namespace turbine::kernels {
namespace {

const char *mlirElementType(DType t) {
  switch (t) {
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::f32: return "f32";
  case DType::f64: return "f64";
  case DType::i1: return "i1";
  case DType::i8: return "i8";
  case DType::i16: return "i16";
  case DType::i32: return "i32";
  case DType::i64: return "i64";
  default: return nullptr;
  }
}

std::string dims(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s;
}

/// Type of a tile: vector<...> or a scalar for rank 0.
std::string tileType(const std::vector<int64_t> &shape, DType t) {
  if (shape.empty())
    return mlirElementType(t);
  return "vector<" + dims(shape) + mlirElementType(t) + ">";
}

/// A float literal MLIR parses exactly for `t` (hex for inf/nan).
std::string floatLiteral(double v, DType t) {
  if (std::isfinite(v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17e", v);
    return buf;
  }
  bool neg = std::signbit(v);
  char buf[32];
  switch (t) {
  case DType::f16:
    std::snprintf(buf, sizeof buf, "0x%04X", std::isnan(v) ? 0x7E00 : neg ? 0xFC00 : 0x7C00);
    break;
  case DType::bf16:
    std::snprintf(buf, sizeof buf, "0x%04X", std::isnan(v) ? 0x7FC0 : neg ? 0xFF80 : 0x7F80);
    break;
  case DType::f64:
    std::snprintf(buf, sizeof buf, "0x%016llX",
                  std::isnan(v) ? 0x7FF8000000000000ull
                  : neg         ? 0xFFF0000000000000ull
                                : 0x7FF0000000000000ull);
    break;
  default:
    std::snprintf(buf, sizeof buf, "0x%08X", std::isnan(v) ? 0x7FC00000u : neg ? 0xFF800000u : 0x7F800000u);
    break;
  }
  return buf;
}

std::string literal(double v, DType t) {
  if (dtypeIsFloat(t))
    return floatLiteral(v, t);
  if (t == DType::i1)
    return v != 0.0 ? "true" : "false";
  return std::to_string(static_cast<int64_t>(v));
}

class Emitter {
public:
  explicit Emitter(const Specialization &spec)
      : spec_(spec), k_(*spec.kernel) {}

  /// `withHost`: the whole module (host @main + kernel container);
  /// otherwise a module holding only the kernel function `funcName`.
  Result<std::string> run(bool withHost, const std::string &funcName) {
    for (const BufferDecl &b : k_.buffers) {
      const char *t = mlirElementType(b.dtype);
      if (!t || b.dtype == DType::i1)
        return fail("buffer '" + b.name + "': dtype " +
                    std::string(dtypeName(b.dtype)) +
                    " is not supported by the compiler yet");
    }
    // Bindings: inputs first, then outputs (the dispatch convention). An
    // inout buffer is an input the kernel also writes: updated in place.
    std::vector<int> inputs, outputs;
    for (size_t i = 0; i < k_.buffers.size(); ++i)
      (k_.buffers[i].kind == BufferKind::Output ? outputs : inputs)
          .push_back(static_cast<int>(i));
    std::vector<int> order = inputs;
    order.insert(order.end(), outputs.begin(), outputs.end());
    bindingOf_.assign(k_.buffers.size(), 0);
    for (size_t p = 0; p < order.size(); ++p)
      bindingOf_[order[p]] = static_cast<int>(p);

    os_ << "module {\n";
    if (withHost)
      emitHost(inputs, outputs);
    os_ << "  module @kernels attributes {turbine.kernels} {\n";
    os_ << "    func.func @" << funcName
        << "(%state: !llvm.ptr, %wg0: index, %wg1: index, %wg2: index) attributes {turbine.kernel} {\n";
    for (size_t i = 0; i < k_.buffers.size(); ++i)
      line("%buf" + std::to_string(i) + " = turbine.binding %state[" +
           std::to_string(bindingOf_[i]) + "] : " + memrefType(i));
    Status s = emitBlock(k_.body);
    if (!s.ok())
      return s;
    line("return");
    os_ << "    }\n  }\n}\n";
    return os_.str();
  }

private:
  Status fail(const std::string &message) const {
    return Status::error("kernel '" + k_.name + "': " + message);
  }

  std::string memrefType(size_t buffer) const {
    return "memref<" + dims(spec_.bufferShapes[buffer]) +
           mlirElementType(k_.buffers[buffer].dtype) + ">";
  }
  std::string tensorType(size_t buffer) const {
    return "tensor<" + dims(spec_.bufferShapes[buffer]) +
           mlirElementType(k_.buffers[buffer].dtype) + ">";
  }

  void emitHost(const std::vector<int> &inputs, const std::vector<int> &outputs) {
    os_ << "  func.func @main(";
    for (size_t i = 0; i < inputs.size(); ++i)
      os_ << (i ? ", " : "") << "%arg" << i << ": " << tensorType(inputs[i]);
    os_ << ") -> (";
    for (size_t i = 0; i < outputs.size(); ++i)
      os_ << (i ? ", " : "") << tensorType(outputs[i]);
    os_ << ") {\n";
    for (int a = 0; a < 3; ++a)
      os_ << "    %grid" << a << " = arith.constant " << spec_.grid[a]
          << " : index\n";
    os_ << "    ";
    for (size_t i = 0; i < outputs.size(); ++i)
      os_ << (i ? ", " : "") << "%r" << i;
    os_ << (outputs.empty() ? "" : " = ") << "turbine.dispatch @" << k_.name
        << "[%grid0, %grid1, %grid2] (";
    for (size_t i = 0; i < inputs.size(); ++i)
      os_ << (i ? ", " : "") << "%arg" << i;
    os_ << ") : (";
    for (size_t i = 0; i < inputs.size(); ++i)
      os_ << (i ? ", " : "") << tensorType(inputs[i]);
    os_ << ") -> (";
    for (size_t i = 0; i < outputs.size(); ++i)
      os_ << (i ? ", " : "") << tensorType(outputs[i]);
    os_ << ")\n    return";
    for (size_t i = 0; i < outputs.size(); ++i)
      os_ << (i ? ", " : " ") << "%r" << i;
    if (!outputs.empty()) {
      os_ << " : ";
      for (size_t i = 0; i < outputs.size(); ++i)
        os_ << (i ? ", " : "") << tensorType(outputs[i]);
    }
    os_ << "\n  }\n";
  }

  void line(const std::string &text) {
    os_ << std::string(6 + 2 * depth_, ' ') << text << "\n";
  }

  std::string temp() { return "%t" + std::to_string(nextTemp_++); }

  /// Emits index arithmetic for `e`; returns the SSA name.
  Result<std::string> index(const Expr &e) {
    if (!e.dependsOnRunTime()) {
      Result<int64_t> v = evaluate(e, spec_.symbols);
      if (!v.ok())
        return fail(v.message());
      std::string n = temp();
      line(n + " = arith.constant " + std::to_string(*v) + " : index");
      return n;
    }
    switch (e.kind()) {
    case Expr::Kind::ProgramId:
      return "%wg" + std::to_string(e.leafIndex());
    case Expr::Kind::LoopIndex: {
      auto it = loopVars_.find(e.leafIndex());
      if (it == loopVars_.end())
        return fail("loop index " + e.str() + " used outside its for_loop");
      return it->second;
    }
    default:
      break;
    }
    Result<std::string> a = index(e.lhs());
    if (!a.ok()) return a;
    Result<std::string> b = index(e.rhs());
    if (!b.ok()) return b;
    const char *op = nullptr;
    switch (e.kind()) {
    case Expr::Kind::Add: op = "arith.addi"; break;
    case Expr::Kind::Sub: op = "arith.subi"; break;
    case Expr::Kind::Mul: op = "arith.muli"; break;
    case Expr::Kind::FloorDiv: op = "arith.floordivsi"; break;
    case Expr::Kind::CeilDiv: op = "arith.ceildivsi"; break;
    case Expr::Kind::Min: op = "arith.minsi"; break;
    case Expr::Kind::Max: op = "arith.maxsi"; break;
    case Expr::Kind::Mod: {
      std::string q = temp(), p = temp(), r = temp();
      line(q + " = arith.floordivsi " + *a + ", " + *b + " : index");
      line(p + " = arith.muli " + q + ", " + *b + " : index");
      line(r + " = arith.subi " + *a + ", " + p + " : index");
      return r;
    }
    default:
      return fail("cannot lower expression " + e.str());
    }
    std::string n = temp();
    line(n + " = " + op + " " + *a + ", " + *b + " : index");
    return n;
  }

  /// Inclusive range of an index expression at run time, if known.
  struct Range {
    int64_t lo, hi;
  };
  std::optional<Range> range(const Expr &e) const {
    if (!e.dependsOnRunTime()) {
      Result<int64_t> c = evaluate(e, spec_.symbols);
      if (!c.ok())
        return std::nullopt;
      return Range{*c, *c};
    }
    switch (e.kind()) {
    case Expr::Kind::ProgramId:
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

  std::string v(int id) const {
    auto it = aliases_.find(id);
    return it != aliases_.end() ? it->second : "%v" + std::to_string(id);
  }
  const std::vector<int64_t> &shapeOf(int id) const { return spec_.valueShapes[id]; }
  DType dtypeOf(int id) const { return k_.values[id].dtype; }
  std::string typeOf(int id) const { return tileType(shapeOf(id), dtypeOf(id)); }

  /// `value` (of value id `id`) broadcast to `shape` (same dtype).
  std::string broadcastTo(int id, const std::vector<int64_t> &shape) {
    if (shapeOf(id) == shape)
      return v(id);
    std::string n = temp();
    line(n + " = vector.broadcast " + v(id) + " : " + typeOf(id) + " to " +
         tileType(shape, dtypeOf(id)));
    return n;
  }

  Status emitBlock(const Block &block) {
    for (const Op &op : block.ops) {
      Status s = emitOp(op);
      if (!s.ok())
        return Status::error(s.message());
    }
    return Status::success();
  }

  Status opError(const Op &op, const std::string &message) const {
    return fail(k_.describe(op) + ": " + message);
  }

  Status emitAccess(const Op &op, bool isStore) {
    std::vector<std::string> offs;
    for (const Expr &e : op.offsets) {
      Result<std::string> n = index(e);
      if (!n.ok())
        return n.status();
      offs.push_back(*n);
    }
    std::string idx;
    for (size_t i = 0; i < offs.size(); ++i)
      idx += (i ? ", " : "") + offs[i];
    const std::vector<int64_t> &shape =
        isStore ? shapeOf(op.operands[0]) : shapeOf(op.results[0]);
    auto inBoundsAttr = [&](bool inBounds) {
      std::string a = "in_bounds = [";
      for (size_t i = 0; i < shape.size(); ++i)
        a += std::string(i ? ", " : "") + (inBounds ? "true" : "false");
      return a + "]";
    };
    DType dt = k_.buffers[op.buffer].dtype;
    std::string vecType = tileType(shape, dt);
    std::string mem = "%buf" + std::to_string(op.buffer);
    std::string pad;
    if (!isStore) {
      pad = temp();
      line(pad + " = arith.constant " + literal(op.constant, dt) + " : " +
           mlirElementType(dt));
    }
    auto access = [&](bool inBounds, const std::string &result) {
      if (isStore)
        line("vector.transfer_write " + v(op.operands[0]) + ", " + mem + "[" +
             idx + "] {" + inBoundsAttr(inBounds) + "} : " + vecType + ", " +
             memrefType(op.buffer));
      else
        line(result + " = vector.transfer_read " + mem + "[" + idx + "], " +
             pad + " {" + inBoundsAttr(inBounds) + "} : " +
             memrefType(op.buffer) + ", " + vecType);
    };
    // Which dims may leave the buffer: those whose offset range (program
    // ids over the grid, loop indices over their loop) does not keep the
    // whole tile inside.
    std::vector<size_t> unsure;
    if (op.masked) {
      const std::vector<int64_t> &bshape = spec_.bufferShapes[op.buffer];
      for (size_t d = 0; d < shape.size(); ++d) {
        std::optional<Range> r = range(op.offsets[d]);
        if (!r || r->lo < 0 || r->hi + shape[d] > bshape[d])
          unsure.push_back(d);
      }
    }
    if (unsure.empty()) { // unmasked, or provably inside
      access(true, isStore ? "" : v(op.results[0]));
      return Status::success();
    }
    // Masked: full tiles (the common case) take an unmasked fast path.
    std::string all;
    for (size_t d : unsure) {
      std::string size = temp(), end = temp(), limit = temp(), ok = temp();
      line(size + " = arith.constant " + std::to_string(shape[d]) + " : index");
      line(end + " = arith.addi " + offs[d] + ", " + size + " : index");
      line(limit + " = arith.constant " +
           std::to_string(spec_.bufferShapes[op.buffer][d]) + " : index");
      line(ok + " = arith.cmpi sle, " + end + ", " + limit + " : index");
      if (all.empty()) {
        all = ok;
      } else {
        std::string both = temp();
        line(both + " = arith.andi " + all + ", " + ok + " : i1");
        all = both;
      }
    }
    if (isStore) {
      line("scf.if " + all + " {");
      ++depth_;
      access(true, "");
      --depth_;
      line("} else {");
      ++depth_;
      access(false, "");
      --depth_;
      line("}");
      return Status::success();
    }
    line(v(op.results[0]) + " = scf.if " + all + " -> (" + vecType + ") {");
    ++depth_;
    std::string fast = temp(), slow = temp();
    access(true, fast);
    line("scf.yield " + fast + " : " + vecType);
    --depth_;
    line("} else {");
    ++depth_;
    access(false, slow);
    line("scf.yield " + slow + " : " + vecType);
    --depth_;
    line("}");
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
        Result<std::string> n = index(op.scalar);
        if (!n.ok())
          return n.status();
        if (dtypeIsFloat(dt)) {
          std::string i64 = temp();
          line(i64 + " = arith.index_cast " + *n + " : index to i64");
          line(v(r) + " = arith.sitofp " + i64 + " : i64 to " + mlirElementType(dt));
        } else {
          line(v(r) + " = arith.index_cast " + *n + " : index to " + mlirElementType(dt));
        }
        return Status::success();
      }
      if (shapeOf(r).empty())
        line(v(r) + " = arith.constant " + literal(op.constant, dt) + " : " + typeOf(r));
      else
        line(v(r) + " = arith.constant dense<" + literal(op.constant, dt) +
             "> : " + typeOf(r));
      return Status::success();
    }
    case OpKind::Iota: {
      // All values are known once specialized: a dense constant.
      int r = op.results[0];
      const std::vector<int64_t> &shape = shapeOf(r);
      std::string text;
      std::vector<int64_t> idx(shape.size(), 0);
      int64_t count = 1;
      for (int64_t d : shape)
        count *= d;
      for (int64_t linear = 0; linear < count; ++linear) {
        text += (linear ? ", " : "") + literal(static_cast<double>(idx[op.axis]), dtypeOf(r));
        for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
          if (++idx[d] < shape[d])
            break;
          idx[d] = 0;
        }
      }
      std::vector<int64_t> flat = {count};
      std::string f = temp();
      line(f + " = arith.constant dense<[" + text + "]> : " + tileType(flat, dtypeOf(r)));
      line(v(r) + " = vector.shape_cast " + f + " : " + tileType(flat, dtypeOf(r)) +
           " to " + typeOf(r));
      return Status::success();
    }
    default:
      break;
    }
    return emitCompute(op);
  }

  Status emitCompute(const Op &op);

  const Specialization &spec_;
  const Kernel &k_;
  std::ostringstream os_;
  std::vector<int> bindingOf_;
  std::map<int, std::string> loopVars_;
  std::map<int, std::string> aliases_;
  std::map<int, Range> loopRanges_;
  int nextTemp_ = 0;
  int depth_ = 0;
};


const char *unaryOp(OpKind kind, bool isFloat) {
  switch (kind) {
  case OpKind::Neg: return isFloat ? "arith.negf" : nullptr;
  case OpKind::Abs: return isFloat ? "math.absf" : "math.absi";
  case OpKind::Exp: return "math.exp";
  case OpKind::Exp2: return "math.exp2";
  case OpKind::Log: return "math.log";
  case OpKind::Sqrt: return "math.sqrt";
  case OpKind::Rsqrt: return "math.rsqrt";
  case OpKind::Tanh: return "math.tanh";
  default: return nullptr;
  }
}

const char *binaryOp(OpKind kind, bool isFloat) {
  switch (kind) {
  case OpKind::Add: return isFloat ? "arith.addf" : "arith.addi";
  case OpKind::Sub: return isFloat ? "arith.subf" : "arith.subi";
  case OpKind::Mul: return isFloat ? "arith.mulf" : "arith.muli";
  case OpKind::Div: return isFloat ? "arith.divf" : "arith.divsi";
  case OpKind::Maximum: return isFloat ? "arith.maximumf" : "arith.maxsi";
  case OpKind::Minimum: return isFloat ? "arith.minimumf" : "arith.minsi";
  default: return nullptr;
  }
}

const char *predicate(OpKind kind, bool isFloat) {
  switch (kind) {
  case OpKind::CmpLT: return isFloat ? "olt" : "slt";
  case OpKind::CmpLE: return isFloat ? "ole" : "sle";
  case OpKind::CmpGT: return isFloat ? "ogt" : "sgt";
  case OpKind::CmpGE: return isFloat ? "oge" : "sge";
  case OpKind::CmpEQ: return isFloat ? "oeq" : "eq";
  case OpKind::CmpNE: return isFloat ? "une" : "ne";
  default: return nullptr;
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

Status Emitter::emitCompute(const Op &op) {
  if (op.kind == OpKind::ForLoop) {
    Result<std::string> lo = index(op.start), hi = index(op.stop), st = index(op.step);
    if (!lo.ok()) return lo.status();
    if (!hi.ok()) return hi.status();
    if (!st.ok()) return st.status();
    std::string iv = "%k" + std::to_string(op.loopId);
    std::string results, args, types;
    for (size_t i = 0; i < op.results.size(); ++i) {
      results += (i ? ", " : "") + v(op.results[i]);
      args += (i ? ", " : "") + v(op.body->arguments[i]) + " = " + v(op.operands[i]);
      types += (i ? ", " : "") + typeOf(op.results[i]);
    }
    std::string head = (results.empty() ? "" : results + " = ") + "scf.for " + iv +
                       " = " + *lo + " to " + *hi + " step " + *st;
    if (!args.empty())
      head += " iter_args(" + args + ") -> (" + types + ")";
    line(head + " {");
    loopVars_[op.loopId] = iv;
    {
      std::optional<Range> a = range(op.start), b = range(op.stop), c = range(op.step);
      if (a && b && c && a->lo == a->hi && b->lo == b->hi && c->lo == c->hi &&
          c->lo > 0 && b->lo > a->lo)
        loopRanges_[op.loopId] =
            Range{a->lo, a->lo + ((b->lo - a->lo - 1) / c->lo) * c->lo};
    }
    ++depth_;
    Status s = emitBlock(*op.body);
    if (!s.ok())
      return s;
    std::string yields;
    for (size_t i = 0; i < op.body->yields.size(); ++i)
      yields += (i ? ", " : "") + v(op.body->yields[i]);
    line(yields.empty() ? "scf.yield" : "scf.yield " + yields + " : " + types);
    --depth_;
    line("}");
    loopVars_.erase(op.loopId);
    loopRanges_.erase(op.loopId);
    return Status::success();
  }
  int r = op.results[0];
  DType dt = dtypeOf(r);
  const std::vector<int64_t> &shape = shapeOf(r);
  std::string type = typeOf(r);
  if (isUnaryElementwise(op.kind)) {
    bool isFloat = dtypeIsFloat(dt);
    const char *name = unaryOp(op.kind, isFloat);
    if (!name) { // integer negation
      std::string zero = temp();
      line(zero + " = arith.constant " + std::string(shape.empty() ? "0" : "dense<0>") + " : " + type);
      line(v(r) + " = arith.subi " + zero + ", " + v(op.operands[0]) + " : " + type);
      return Status::success();
    }
    if (op.kind == OpKind::Exp2) {
      // exp2(x) = exp(x * ln 2): math.exp has a vector polynomial
      // approximation, math.exp2 would become one libm call per lane.
      std::string ln2 = temp(), scaled = temp();
      line(ln2 + " = arith.constant " +
           std::string(shape.empty() ? "" : "dense<") +
           floatLiteral(0.69314718055994530942, dt) +
           (shape.empty() ? "" : ">") + " : " + type);
      line(scaled + " = arith.mulf " + v(op.operands[0]) + ", " + ln2 + " : " + type);
      line(v(r) + " = math.exp " + scaled + " : " + type);
      return Status::success();
    }
    line(v(r) + " = " + name + " " + v(op.operands[0]) + " : " + type);
    return Status::success();
  }
  if (isBinaryElementwise(op.kind) || isComparison(op.kind)) {
    DType in = dtypeOf(op.operands[0]);
    bool isFloat = dtypeIsFloat(in);
    std::string a = broadcastTo(op.operands[0], shape);
    std::string b = broadcastTo(op.operands[1], shape);
    std::string inType = tileType(shape, in);
    if (isComparison(op.kind))
      line(v(r) + " = " + (isFloat ? "arith.cmpf " : "arith.cmpi ") +
           predicate(op.kind, isFloat) + ", " + a + ", " + b + " : " + inType);
    else
      line(v(r) + " = " + binaryOp(op.kind, isFloat) + " " + a + ", " + b + " : " + type);
    return Status::success();
  }
  switch (op.kind) {
  case OpKind::Select: {
    std::string c = broadcastTo(op.operands[0], shape);
    std::string a = broadcastTo(op.operands[1], shape);
    std::string b = broadcastTo(op.operands[2], shape);
    if (shape.empty())
      line(v(r) + " = arith.select " + c + ", " + a + ", " + b + " : " + type);
    else
      line(v(r) + " = arith.select " + c + ", " + a + ", " + b + " : " +
           tileType(shape, DType::i1) + ", " + type);
    return Status::success();
  }
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceSum: {
    bool isFloat = dtypeIsFloat(dt);
    const char *kind = op.kind == OpKind::ReduceSum ? "add"
                       : op.kind == OpKind::ReduceMax ? (isFloat ? "maximumf" : "maxsi")
                                                      : (isFloat ? "minimumf" : "minsi");
    const std::vector<int64_t> &src = shapeOf(op.operands[0]);
    const char *elem = mlirElementType(dt);
    if (src.size() == 1) {
      std::string t = temp();
      line(t + " = vector.reduction <" + kind + ">, " + v(op.operands[0]) + " : " +
           typeOf(op.operands[0]) + " into " + elem);
      line(v(r) + " = vector.broadcast " + t + " : " + elem + " to " + type);
      return Status::success();
    }
    std::vector<int64_t> reduced;
    for (size_t d = 0; d < src.size(); ++d)
      if (static_cast<int>(d) != op.axis)
        reduced.push_back(src[d]);
    double identity = op.kind == OpKind::ReduceSum ? 0.0
                      : op.kind == OpKind::ReduceMax ? -INFINITY : INFINITY;
    std::string init = temp(), t = temp();
    std::string redType = tileType(reduced, dt);
    if (!isFloat) {
      int w = intWidth(dt);
      int64_t big = w >= 64 ? INT64_MAX : (int64_t(1) << (w - 1)) - 1;
      identity = op.kind == OpKind::ReduceSum ? 0.0
                 : op.kind == OpKind::ReduceMax ? static_cast<double>(-big - 1)
                                                : static_cast<double>(big);
    }
    line(init + " = arith.constant dense<" + literal(identity, dt) + "> : " + redType);
    line(t + " = vector.multi_reduction <" + kind + ">, " + v(op.operands[0]) +
         ", " + init + " [" + std::to_string(op.axis) + "] : " +
         typeOf(op.operands[0]) + " to " + redType);
    line(v(r) + " = vector.shape_cast " + t + " : " + redType + " to " + type);
    return Status::success();
  }
  case OpKind::Broadcast:
    aliases_[r] = broadcastTo(op.operands[0], shape);
    return Status::success();
  case OpKind::Transpose: {
    std::string perm;
    for (size_t i = 0; i < op.perm.size(); ++i)
      perm += (i ? ", " : "") + std::to_string(op.perm[i]);
    line(v(r) + " = vector.transpose " + v(op.operands[0]) + ", [" + perm + "] : " +
         typeOf(op.operands[0]) + " to " + type);
    return Status::success();
  }
  case OpKind::Reshape:
    if (shape.empty() || shapeOf(op.operands[0]).empty())
      return opError(op, "reshape to or from rank 0 is not supported by the compiler yet");
    line(v(r) + " = vector.shape_cast " + v(op.operands[0]) + " : " +
         typeOf(op.operands[0]) + " to " + type);
    return Status::success();
  case OpKind::Cast: {
    DType from = dtypeOf(op.operands[0]);
    std::string x = v(op.operands[0]);
    std::string fromType = typeOf(op.operands[0]);
    if (from == dt) {
      aliases_[r] = x;
      return Status::success();
    }
    bool ff = dtypeIsFloat(from), tf = dtypeIsFloat(dt);
    if (ff && tf) {
      if (floatWidth(from) == floatWidth(dt)) { // f16 <-> bf16 through f32
        std::string wide = temp();
        line(wide + " = arith.extf " + x + " : " + fromType + " to " + tileType(shape, DType::f32));
        line(v(r) + " = arith.truncf " + wide + " : " + tileType(shape, DType::f32) + " to " + type);
      } else {
        line(v(r) + " = " + (floatWidth(dt) > floatWidth(from) ? "arith.extf " : "arith.truncf ") +
             x + " : " + fromType + " to " + type);
      }
    } else if (ff) {
      line(v(r) + " = arith.fptosi " + x + " : " + fromType + " to " + type);
    } else if (tf) {
      line(v(r) + " = " + (from == DType::i1 ? "arith.uitofp " : "arith.sitofp ") + x +
           " : " + fromType + " to " + type);
    } else {
      line(v(r) + " = " + (intWidth(dt) > intWidth(from) ? (from == DType::i1 ? "arith.extui " : "arith.extsi ") : "arith.trunci ") +
           x + " : " + fromType + " to " + type);
    }
    return Status::success();
  }
  case OpKind::Dot: {
    DType in = dtypeOf(op.operands[0]);
    std::string a = v(op.operands[0]), b = v(op.operands[1]);
    const std::vector<int64_t> &sa = shapeOf(op.operands[0]), &sb = shapeOf(op.operands[1]);
    if (in != dt) {
      if (!dtypeIsFloat(in) || !dtypeIsFloat(dt))
        return opError(op, "integer dot with a different accumulator type is not supported by the compiler yet");
      std::string wa = temp(), wb = temp();
      line(wa + " = arith.extf " + a + " : " + tileType(sa, in) + " to " + tileType(sa, dt));
      line(wb + " = arith.extf " + b + " : " + tileType(sb, in) + " to " + tileType(sb, dt));
      a = wa;
      b = wb;
    }
    line(v(r) + " = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
         "affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], "
         "iterator_types = [\"parallel\", \"parallel\", \"reduction\"], "
         "kind = #vector.kind<add>} " + a + ", " + b + ", " + v(op.operands[2]) + " : " +
         tileType(sa, dt) + ", " + tileType(sb, dt) + " into " + type);
    return Status::success();
  }
  default:
    break;
  }
  return opError(op, "not supported by the compiler yet");
}

} // namespace

Result<std::string> emitKernelModule(const Specialization &spec) {
  return Emitter(spec).run(/*withHost=*/true, spec.kernel->name);
}

Result<std::string> emitKernelFunction(const Specialization &spec,
                                       const std::string &funcName) {
  return Emitter(spec).run(/*withHost=*/false, funcName);
}

} // namespace turbine::kernels
