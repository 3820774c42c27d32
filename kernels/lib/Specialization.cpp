//===- Specialization.cpp - Symbol binding and shape evaluation -----------===//
#include "turbine/kernels/Specialization.h"

#include <map>

namespace turbine::kernels {

std::string Specialization::key() const {
  std::string s = kernel->name + "[";
  bool first = true;
  for (const auto &[name, value] : symbols) {
    s += (first ? "" : ",") + name + "=" +
         (kernel->dynamicSymbol(name) ? std::string("?") : std::to_string(value));
    first = false;
  }
  return s + "]";
}

bool Specialization::isDynamicDim(size_t buffer, size_t dim) const {
  return kernel->usesDynamicSymbol(kernel->buffers[buffer].shape[dim]);
}

namespace {

void indexOps(const Block &block, std::map<int, const Op *> &ops,
              std::map<int, const Op *> &valueOwner) {
  for (const Op &op : block.ops) {
    ops[op.id] = &op;
    for (int r : op.results)
      valueOwner[r] = &op;
    if (op.body) {
      for (int a : op.body->arguments)
        valueOwner[a] = &op;
      indexOps(*op.body, ops, valueOwner);
    }
  }
}

/// Checks that every symbol `e` uses is bound (run-time leaves are fine).
Status checkBound(const Expr &e, const Bindings &symbols) {
  std::set<std::string> used;
  e.collectSymbols(used);
  for (const std::string &name : used)
    if (!symbols.count(name))
      return Status::error("unbound symbol '" + name + "' in '" + e.str() +
                           "' (bind it when specializing)");
  return Status::success();
}

Status checkOpsBound(const Kernel &kernel, const Block &block,
                     const Bindings &symbols) {
  for (const Op &op : block.ops) {
    std::vector<const Expr *> exprs;
    for (const Expr &e : op.offsets) exprs.push_back(&e);
    for (const Expr &e : op.shape) exprs.push_back(&e);
    if (op.hasScalar) exprs.push_back(&op.scalar);
    if (op.kind == OpKind::ForLoop) {
      exprs.push_back(&op.start);
      exprs.push_back(&op.stop);
      exprs.push_back(&op.step);
    }
    for (const Expr *e : exprs) {
      Status s = checkBound(*e, symbols);
      if (!s.ok())
        return Status::error("kernel '" + kernel.name + "': " +
                             kernel.describe(op) + ": " + s.message());
    }
    if (op.kind == OpKind::ForLoop) {
      if (!op.step.dependsOnRunTime()) {
        Result<int64_t> step = evaluate(op.step, symbols);
        if (step.ok() && *step <= 0)
          return Status::error("kernel '" + kernel.name + "': " +
                               kernel.describe(op) + ": step " + op.step.str() +
                               " = " + std::to_string(*step) +
                               " must be positive");
      }
      Status s = checkOpsBound(kernel, *op.body, symbols);
      if (!s.ok())
        return s;
    }
  }
  return Status::success();
}

} // namespace

Result<Specialization> specialize(const Kernel &kernel,
                                  const std::vector<BufferSignature> &buffers,
                                  const Bindings &explicitSymbols) {
  std::string where = "kernel '" + kernel.name + "': ";
  if (buffers.size() != kernel.buffers.size())
    return Status::error(where + "expected " +
                         std::to_string(kernel.buffers.size()) +
                         " buffers, got " + std::to_string(buffers.size()));
  Specialization spec;
  spec.kernel = &kernel;
  spec.symbols = explicitSymbols;
  std::map<std::string, std::string> origin;
  for (const auto &[name, value] : explicitSymbols)
    origin[name] = "the explicit binding";

  // Bind symbols from buffer dims.
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferDecl &decl = kernel.buffers[i];
    const BufferSignature &actual = buffers[i];
    if (actual.dtype != decl.dtype)
      return Status::error(where + "buffer '" + decl.name + "' is " +
                           std::string(dtypeName(actual.dtype)) +
                           ", the kernel declares " +
                           std::string(dtypeName(decl.dtype)));
    if (actual.shape.size() != decl.shape.size())
      return Status::error(where + "buffer '" + decl.name + "' has rank " +
                           std::to_string(actual.shape.size()) +
                           ", the kernel declares " +
                           formatTileType({decl.shape, decl.dtype}));
    for (size_t d = 0; d < decl.shape.size(); ++d) {
      const Expr &e = decl.shape[d];
      if (e.kind() != Expr::Kind::Symbol)
        continue;
      std::string here = "buffer '" + decl.name + "' dim " + std::to_string(d);
      auto it = spec.symbols.find(e.name());
      if (it == spec.symbols.end()) {
        spec.symbols[e.name()] = actual.shape[d];
        origin[e.name()] = here;
      } else if (it->second != actual.shape[d]) {
        return Status::error(where + "symbol '" + e.name() + "' is " +
                             std::to_string(actual.shape[d]) + " from " + here +
                             " but " + std::to_string(it->second) + " from " +
                             origin[e.name()]);
      }
    }
  }
  // Every buffer dim must now agree with its expression.
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferDecl &decl = kernel.buffers[i];
    for (size_t d = 0; d < decl.shape.size(); ++d) {
      Result<int64_t> v = evaluate(decl.shape[d], spec.symbols);
      if (!v.ok())
        return Status::error(where + "buffer '" + decl.name + "' dim " +
                             std::to_string(d) + ": " + v.message());
      if (*v != buffers[i].shape[d])
        return Status::error(where + "buffer '" + decl.name + "' dim " +
                             std::to_string(d) + " is " +
                             std::to_string(buffers[i].shape[d]) +
                             ", expected " + decl.shape[d].str() + " = " +
                             std::to_string(*v));
    }
    spec.bufferShapes.push_back(buffers[i].shape);
  }
  for (const DynamicSymbol &d : kernel.dynamicSymbols) {
    auto it = spec.symbols.find(d.name);
    if (it == spec.symbols.end())
      continue; // reported below with the op that uses it
    const char *rule = nullptr;
    if (it->second < 0)
      rule = "must not be negative";
    else if (d.max > 0 && it->second > d.max)
      rule = "exceeds its bound";
    else if (it->second % d.multipleOf != 0)
      rule = "is not a multiple of its multiple_of";
    if (rule)
      return Status::error(where + "dynamic symbol '" + d.name + "' = " +
                           std::to_string(it->second) + " (from " + origin[d.name] + ") " +
                           rule + " (declared: max " +
                           (d.max > 0 ? std::to_string(d.max) : std::string("none")) +
                           ", multiple_of " + std::to_string(d.multipleOf) + ")");
  }
  for (size_t a = 0; a < kernel.grid.size(); ++a) {
    Result<int64_t> v = evaluate(kernel.grid[a], spec.symbols);
    if (!v.ok())
      return Status::error(where + "grid axis " + std::to_string(a) + ": " +
                           v.message());
    if (*v < 0)
      return Status::error(where + "grid axis " + std::to_string(a) + " (" +
                           kernel.grid[a].str() + ") is negative: " +
                           std::to_string(*v));
    spec.grid[a] = *v;
  }

  std::map<int, const Op *> ops, valueOwner;
  indexOps(kernel.body, ops, valueOwner);
  Status bound = checkOpsBound(kernel, kernel.body, spec.symbols);
  if (!bound.ok())
    return bound;
  for (size_t v = 0; v < kernel.values.size(); ++v) {
    std::vector<int64_t> shape;
    for (const Expr &e : kernel.values[v].shape) {
      Result<int64_t> d = evaluate(e, spec.symbols);
      std::string opWhere = where;
      if (valueOwner.count(static_cast<int>(v)))
        opWhere += kernel.describe(*valueOwner[static_cast<int>(v)]) + ": ";
      if (!d.ok())
        return Status::error(opWhere + d.message());
      if (*d <= 0)
        return Status::error(opWhere + "tile shape " +
                             formatExprs(kernel.values[v].shape) +
                             " has a dim that is not positive (" +
                             e.str() + " = " + std::to_string(*d) + ")");
      shape.push_back(*d);
    }
    spec.valueShapes.push_back(std::move(shape));
  }
  for (const ShapeConstraint &c : kernel.constraints) {
    Result<int64_t> a = evaluate(c.lhs, spec.symbols);
    Result<int64_t> b = evaluate(c.rhs, spec.symbols);
    std::string opWhere = where;
    if (ops.count(c.opId))
      opWhere += kernel.describe(*ops[c.opId]) + ": ";
    if (!a.ok() || !b.ok())
      return Status::error(opWhere + (!a.ok() ? a.message() : b.message()));
    if (*a != *b)
      return Status::error(opWhere + "shape mismatch: " + c.what + ": " +
                           c.lhs.str() + " = " + std::to_string(*a) + " vs " +
                           c.rhs.str() + " = " + std::to_string(*b));
  }
  return spec;
}

} // namespace turbine::kernels
