//===- Symbolic.cpp - Folding, printing and evaluation of Expr ------------===//
#include "turbine/kernels/Symbolic.h"

#include <algorithm>

namespace turbine::kernels {

struct ExprNode {
  Expr::Kind kind;
  int64_t value = 0;   // constant value, program id axis, loop id
  std::string name;    // symbol name
  std::vector<Expr> operands;
};

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

const char *binaryName(Expr::Kind kind) {
  switch (kind) {
  case Expr::Kind::Add: return "+";
  case Expr::Kind::Sub: return "-";
  case Expr::Kind::Mul: return "*";
  case Expr::Kind::Mod: return "%";
  case Expr::Kind::FloorDiv: return "floordiv";
  case Expr::Kind::CeilDiv: return "ceildiv";
  case Expr::Kind::Min: return "min";
  case Expr::Kind::Max: return "max";
  default: return "?";
  }
}

bool isInfix(Expr::Kind kind) {
  return kind == Expr::Kind::Add || kind == Expr::Kind::Sub ||
         kind == Expr::Kind::Mul || kind == Expr::Kind::Mod;
}

} // namespace

Expr::Expr(int64_t value) {
  auto node = std::make_shared<ExprNode>();
  node->kind = Kind::Constant;
  node->value = value;
  node_ = std::move(node);
}

Expr Expr::symbol(const std::string &name) {
  auto node = std::make_shared<ExprNode>();
  node->kind = Kind::Symbol;
  node->name = name;
  return Expr(std::move(node));
}

Expr Expr::programId(int axis) {
  auto node = std::make_shared<ExprNode>();
  node->kind = Kind::ProgramId;
  node->value = axis;
  return Expr(std::move(node));
}

Expr Expr::loopIndex(int loopId) {
  auto node = std::make_shared<ExprNode>();
  node->kind = Kind::LoopIndex;
  node->value = loopId;
  return Expr(std::move(node));
}

Expr Expr::binary(Kind kind, const Expr &a, const Expr &b) {
  if (a.isConstant() && b.isConstant()) {
    int64_t x = a.constant(), y = b.constant();
    bool divides = kind == Kind::FloorDiv || kind == Kind::CeilDiv ||
                   kind == Kind::Mod;
    if (!(divides && y == 0)) { // division by zero is reported at evaluation
      switch (kind) {
      case Kind::Add: return Expr(x + y);
      case Kind::Sub: return Expr(x - y);
      case Kind::Mul: return Expr(x * y);
      case Kind::FloorDiv: return Expr(floorDiv(x, y));
      case Kind::CeilDiv: return Expr(ceilDiv(x, y));
      case Kind::Mod: return Expr(floorMod(x, y));
      case Kind::Min: return Expr(std::min(x, y));
      case Kind::Max: return Expr(std::max(x, y));
      default: break;
      }
    }
  }
  auto isConst = [](const Expr &e, int64_t v) {
    return e.isConstant() && e.constant() == v;
  };
  switch (kind) {
  case Kind::Add:
    if (isConst(a, 0)) return b;
    if (isConst(b, 0)) return a;
    // (x + c1) + c2 -> x + (c1 + c2)
    if (b.isConstant() && a.kind() == Kind::Add && a.rhs().isConstant())
      return a.lhs() + Expr(a.rhs().constant() + b.constant());
    break;
  case Kind::Sub:
    if (isConst(b, 0)) return a;
    if (a.same(b)) return Expr(0);
    if (b.isConstant() && a.kind() == Kind::Add && a.rhs().isConstant())
      return a.lhs() + Expr(a.rhs().constant() - b.constant());
    break;
  case Kind::Mul:
    if (isConst(a, 0) || isConst(b, 0)) return Expr(0);
    if (isConst(a, 1)) return b;
    if (isConst(b, 1)) return a;
    break;
  case Kind::FloorDiv:
  case Kind::CeilDiv:
    if (isConst(b, 1)) return a;
    if (isConst(a, 0) && b.isConstant() && b.constant() != 0) return Expr(0);
    break;
  case Kind::Mod:
    if (isConst(b, 1)) return Expr(0);
    break;
  case Kind::Min:
  case Kind::Max:
    if (a.same(b)) return a;
    break;
  default:
    break;
  }
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  node->operands = {a, b};
  return Expr(std::move(node));
}

Expr::Kind Expr::kind() const { return node_->kind; }
int64_t Expr::constant() const { return node_->value; }
const std::string &Expr::name() const { return node_->name; }
int Expr::leafIndex() const { return static_cast<int>(node_->value); }
const Expr &Expr::lhs() const { return node_->operands[0]; }
const Expr &Expr::rhs() const { return node_->operands[1]; }

bool Expr::dependsOnRunTime() const {
  if (kind() == Kind::ProgramId || kind() == Kind::LoopIndex)
    return true;
  for (const Expr &op : node_->operands)
    if (op.dependsOnRunTime())
      return true;
  return false;
}

void Expr::collectSymbols(std::set<std::string> &out) const {
  if (kind() == Kind::Symbol)
    out.insert(name());
  for (const Expr &op : node_->operands)
    op.collectSymbols(out);
}

std::string Expr::str() const {
  switch (kind()) {
  case Kind::Constant: return std::to_string(constant());
  case Kind::Symbol: return name();
  case Kind::ProgramId: return "pid" + std::to_string(leafIndex());
  case Kind::LoopIndex: return "k" + std::to_string(leafIndex());
  default: break;
  }
  if (!isInfix(kind()))
    return std::string(binaryName(kind())) + "(" + lhs().str() + ", " +
           rhs().str() + ")";
  // Parenthesize infix operands of lower or equal (right side) precedence.
  auto precedence = [](Kind k) {
    return (k == Kind::Add || k == Kind::Sub) ? 1 : 2;
  };
  auto operand = [&](const Expr &e, bool right) {
    std::string s = e.str();
    if (isInfix(e.kind()) &&
        (precedence(e.kind()) < precedence(kind()) ||
         (right && precedence(e.kind()) == precedence(kind()) &&
          kind() != Kind::Add && kind() != Kind::Mul)))
      return "(" + s + ")";
    return s;
  };
  return operand(lhs(), false) + " " + binaryName(kind()) + " " +
         operand(rhs(), true);
}

bool Expr::same(const Expr &other) const {
  if (node_ == other.node_)
    return true;
  if (kind() != other.kind())
    return false;
  switch (kind()) {
  case Kind::Constant:
  case Kind::ProgramId:
  case Kind::LoopIndex:
    return node_->value == other.node_->value;
  case Kind::Symbol:
    return name() == other.name();
  default:
    return lhs().same(other.lhs()) && rhs().same(other.rhs());
  }
}

Expr operator+(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::Add, a, b);
}
Expr operator-(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::Sub, a, b);
}
Expr operator*(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::Mul, a, b);
}
Expr operator%(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::Mod, a, b);
}
Expr floordiv(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::FloorDiv, a, b);
}
Expr ceildiv(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::CeilDiv, a, b);
}
Expr min(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::Min, a, b);
}
Expr max(const Expr &a, const Expr &b) {
  return Expr::binary(Expr::Kind::Max, a, b);
}

Result<int64_t> evaluate(const Expr &e, const EvalEnv &env) {
  switch (e.kind()) {
  case Expr::Kind::Constant:
    return e.constant();
  case Expr::Kind::Symbol: {
    if (env.symbols) {
      auto it = env.symbols->find(e.name());
      if (it != env.symbols->end())
        return it->second;
    }
    return Status::error("unbound symbol '" + e.name() + "'");
  }
  case Expr::Kind::ProgramId:
    if (e.leafIndex() < 0 || e.leafIndex() > 2)
      return Status::error("program_id axis " + std::to_string(e.leafIndex()) +
                           " out of range");
    return env.programId[e.leafIndex()];
  case Expr::Kind::LoopIndex:
    if (!env.loopIndices || e.leafIndex() < 0 ||
        e.leafIndex() >= static_cast<int>(env.loopIndices->size()))
      return Status::error("loop index " + e.str() +
                           " used outside its for_loop");
    return (*env.loopIndices)[e.leafIndex()];
  default:
    break;
  }
  Result<int64_t> a = evaluate(e.lhs(), env);
  if (!a.ok())
    return a;
  Result<int64_t> b = evaluate(e.rhs(), env);
  if (!b.ok())
    return b;
  int64_t x = *a, y = *b;
  switch (e.kind()) {
  case Expr::Kind::Add: return x + y;
  case Expr::Kind::Sub: return x - y;
  case Expr::Kind::Mul: return x * y;
  case Expr::Kind::Min: return std::min(x, y);
  case Expr::Kind::Max: return std::max(x, y);
  default: break;
  }
  if (y == 0)
    return Status::error("division by zero in '" + e.str() + "'");
  switch (e.kind()) {
  case Expr::Kind::FloorDiv: return floorDiv(x, y);
  case Expr::Kind::CeilDiv: return ceilDiv(x, y);
  case Expr::Kind::Mod: return floorMod(x, y);
  default: break;
  }
  return Status::error("internal error: unknown expression kind");
}

Result<int64_t> evaluate(const Expr &e, const Bindings &symbols) {
  EvalEnv env;
  env.symbols = &symbols;
  return evaluate(e, env);
}

std::string formatExprs(const std::vector<Expr> &exprs) {
  std::string s = "[";
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i)
      s += ", ";
    s += exprs[i].str();
  }
  return s + "]";
}

} // namespace turbine::kernels
