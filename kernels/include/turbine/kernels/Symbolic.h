//===- Symbolic.h - Symbolic integer expressions for kernel shapes --------===//
//
// Dims and tile sizes of a Turbine kernel are symbols (M, N, BLOCK_K, ...).
// An `Expr` is an immutable integer expression over symbols, constants and
// two kinds of run-time leaves: `program_id(axis)` (the workgroup's position
// in the grid) and the induction variable of a `for_loop`. Shapes may only
// use symbols and constants; offsets and loop bounds may use all leaves.
//
// Arithmetic: + - * floordiv ceildiv min max (and % as floor-modulo).
// Construction folds constants and trivial identities (x+0, x*1, x*0,
// floordiv(x, 1), min(x, x)), so `N * 1 + 0` prints and compares as `N`.
// Division rounds toward minus infinity (Python's //); ceildiv rounds up.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_SYMBOLIC_H
#define TURBINE_KERNELS_SYMBOLIC_H

#include "turbine/runtime/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace turbine::kernels {

using runtime::Result;
using runtime::Status;

/// Values of symbols at specialization: name -> value.
using Bindings = std::map<std::string, int64_t>;

struct ExprNode;

/// An immutable symbolic integer expression (cheap to copy).
class Expr {
public:
  enum class Kind {
    Constant, Symbol, ProgramId, LoopIndex,
    Add, Sub, Mul, FloorDiv, CeilDiv, Mod, Min, Max,
  };

  /// Constants convert implicitly so `{row, 0}` and `N + 1` read naturally.
  Expr(int64_t value);
  Expr(int value) : Expr(static_cast<int64_t>(value)) {}

  static Expr symbol(const std::string &name);
  /// Workgroup index along grid axis 0, 1 or 2 (run-time leaf).
  static Expr programId(int axis);
  /// Induction variable of for_loop number `loopId` (run-time leaf).
  static Expr loopIndex(int loopId);
  /// Builds `lhs <kind> rhs` for a binary kind, folding what it can.
  static Expr binary(Kind kind, const Expr &lhs, const Expr &rhs);

  Kind kind() const;
  bool isConstant() const { return kind() == Kind::Constant; }
  bool isBinary() const { return kind() >= Kind::Add; }
  /// Only for constants.
  int64_t constant() const;
  /// Symbol name; "" for other kinds.
  const std::string &name() const;
  /// Axis of a program id, loop id of a loop index.
  int leafIndex() const;
  /// Operands of a binary expression.
  const Expr &lhs() const;
  const Expr &rhs() const;

  /// True if the expression contains program_id or a loop index.
  bool dependsOnRunTime() const;
  /// Adds the names of every symbol used.
  void collectSymbols(std::set<std::string> &out) const;
  /// Readable form: "ceildiv(K, BLOCK_K)", "pid0 * BLOCK_M", "k0 + 1".
  std::string str() const;
  /// Structural equality (after construction-time folding).
  bool same(const Expr &other) const;

private:
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const ExprNode> node_;
};

/// A named symbol: `Symbol M("M");` then use M like any Expr.
class Symbol : public Expr {
public:
  explicit Symbol(const std::string &name) : Expr(Expr::symbol(name)) {}
};

Expr operator+(const Expr &a, const Expr &b);
Expr operator-(const Expr &a, const Expr &b);
Expr operator*(const Expr &a, const Expr &b);
/// Floor-modulo (result has the sign of the divisor).
Expr operator%(const Expr &a, const Expr &b);
Expr floordiv(const Expr &a, const Expr &b);
Expr ceildiv(const Expr &a, const Expr &b);
Expr min(const Expr &a, const Expr &b);
Expr max(const Expr &a, const Expr &b);

/// Everything an Expr may refer to when evaluated.
struct EvalEnv {
  const Bindings *symbols = nullptr;
  int64_t programId[3] = {0, 0, 0};
  /// Loop index values by loop id (only the loops enclosing the evaluation).
  const std::vector<int64_t> *loopIndices = nullptr;
};

/// Evaluates `e`; errors name an unbound symbol, a run-time leaf evaluated
/// where none is available, or a division by zero.
Result<int64_t> evaluate(const Expr &e, const EvalEnv &env);
/// Evaluates with symbols only (shapes, grid, loop bounds).
Result<int64_t> evaluate(const Expr &e, const Bindings &symbols);

/// "[M, N]" for a list of expressions.
std::string formatExprs(const std::vector<Expr> &exprs);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_SYMBOLIC_H
