//===- KernelGraph.cpp - Op names and the kernel printer -------------------===//
#include "turbine/kernels/KernelGraph.h"

#include <sstream>

namespace turbine::kernels {

const char *opKindName(OpKind kind) {
  switch (kind) {
  case OpKind::Constant: return "constant";
  case OpKind::Iota: return "iota";
  case OpKind::Load: return "load";
  case OpKind::Store: return "store";
  case OpKind::Neg: return "neg";
  case OpKind::Abs: return "abs";
  case OpKind::Exp: return "exp";
  case OpKind::Exp2: return "exp2";
  case OpKind::Log: return "log";
  case OpKind::Sqrt: return "sqrt";
  case OpKind::Rsqrt: return "rsqrt";
  case OpKind::Tanh: return "tanh";
  case OpKind::Add: return "add";
  case OpKind::Sub: return "sub";
  case OpKind::Mul: return "mul";
  case OpKind::Div: return "div";
  case OpKind::Maximum: return "maximum";
  case OpKind::Minimum: return "minimum";
  case OpKind::CmpLT: return "cmp_lt";
  case OpKind::CmpLE: return "cmp_le";
  case OpKind::CmpGT: return "cmp_gt";
  case OpKind::CmpGE: return "cmp_ge";
  case OpKind::CmpEQ: return "cmp_eq";
  case OpKind::CmpNE: return "cmp_ne";
  case OpKind::Select: return "select";
  case OpKind::ReduceMax: return "reduce_max";
  case OpKind::ReduceMin: return "reduce_min";
  case OpKind::ReduceSum: return "reduce_sum";
  case OpKind::Broadcast: return "broadcast";
  case OpKind::Transpose: return "transpose";
  case OpKind::Reshape: return "reshape";
  case OpKind::Cast: return "to_dtype";
  case OpKind::Dot: return "dot";
  case OpKind::ForLoop: return "for_loop";
  }
  return "?";
}

bool isUnaryElementwise(OpKind kind) {
  return kind >= OpKind::Neg && kind <= OpKind::Tanh;
}
bool isBinaryElementwise(OpKind kind) {
  return kind >= OpKind::Add && kind <= OpKind::Minimum;
}
bool isComparison(OpKind kind) {
  return kind >= OpKind::CmpLT && kind <= OpKind::CmpNE;
}
bool isReduction(OpKind kind) {
  return kind >= OpKind::ReduceMax && kind <= OpKind::ReduceSum;
}

const char *bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input: return "input";
  case BufferKind::Output: return "output";
  case BufferKind::InOut: return "inout";
  }
  return "?";
}

std::string formatTileType(const TileType &type) {
  return std::string(dtypeName(type.dtype)) + formatExprs(type.shape);
}

namespace {

std::string valueName(int id) { return "%" + std::to_string(id); }

std::string valueList(const std::vector<int> &ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i)
    s += (i ? ", " : "") + valueName(ids[i]);
  return s;
}

std::string formatDouble(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void printBlock(const Kernel &k, const Block &block, int indent,
                std::ostringstream &os) {
  std::string pad(indent, ' ');
  for (const Op &op : block.ops) {
    os << pad;
    if (!op.results.empty())
      os << valueList(op.results) << " = ";
    os << opKindName(op.kind);
    switch (op.kind) {
    case OpKind::Constant:
      os << " " << (op.hasScalar ? op.scalar.str() : formatDouble(op.constant));
      break;
    case OpKind::Iota:
      os << " axis=" << op.axis;
      break;
    case OpKind::Load:
      os << " " << k.buffers[op.buffer].name << formatExprs(op.offsets);
      if (op.masked)
        os << " masked(pad=" << formatDouble(op.constant) << ")";
      break;
    case OpKind::Store:
      os << " " << k.buffers[op.buffer].name << formatExprs(op.offsets) << ", "
         << valueName(op.operands[0]);
      if (op.masked)
        os << " masked";
      break;
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceSum:
      os << " " << valueName(op.operands[0]) << " axis=" << op.axis;
      break;
    case OpKind::Transpose: {
      os << " " << valueName(op.operands[0]) << " perm=[";
      for (size_t i = 0; i < op.perm.size(); ++i)
        os << (i ? ", " : "") << op.perm[i];
      os << "]";
      break;
    }
    case OpKind::ForLoop: {
      os << " k" << op.loopId << " in range(" << op.start.str() << ", "
         << op.stop.str() << ", " << op.step.str() << ")";
      os << " iter_args(";
      for (size_t i = 0; i < op.operands.size(); ++i)
        os << (i ? ", " : "") << valueName(op.body->arguments[i]) << " = "
           << valueName(op.operands[i]);
      os << ") {\n";
      printBlock(k, *op.body, indent + 2, os);
      os << pad << "  yield " << valueList(op.body->yields) << "\n" << pad
         << "}";
      break;
    }
    default:
      os << " " << valueList(op.operands);
      break;
    }
    if (op.results.size() == 1 && op.kind != OpKind::ForLoop)
      os << " : " << formatTileType(k.values[op.results[0]]);
    os << "\n";
  }
}

} // namespace

std::string Kernel::print() const {
  std::ostringstream os;
  os << "kernel " << name << " grid" << formatExprs(grid);
  if (!dynamicSymbols.empty()) {
    os << " dynamic[";
    for (size_t i = 0; i < dynamicSymbols.size(); ++i) {
      const DynamicSymbol &d = dynamicSymbols[i];
      os << (i ? ", " : "") << d.name;
      if (d.multipleOf > 1)
        os << " multiple_of " << d.multipleOf;
      if (d.max > 0)
        os << " max " << d.max;
    }
    os << "]";
  }
  os << " (\n";
  for (const BufferDecl &b : buffers)
    os << "    " << b.name << ": " << bufferKindName(b.kind) << " "
       << formatTileType({b.shape, b.dtype}) << "\n";
  os << ") {\n";
  printBlock(*this, body, 2, os);
  os << "}\n";
  return os.str();
}

std::string Kernel::describe(const Op &op) const {
  std::string s = "op #" + std::to_string(op.id) + " '" + opKindName(op.kind) + "'";
  if (op.buffer >= 0)
    s += " on buffer '" + buffers[op.buffer].name + "'";
  if (!op.location.empty())
    s += " at " + op.location;
  return s;
}

const DynamicSymbol *Kernel::dynamicSymbol(const std::string &symbol) const {
  for (const DynamicSymbol &d : dynamicSymbols)
    if (d.name == symbol)
      return &d;
  return nullptr;
}

bool Kernel::usesDynamicSymbol(const Expr &e) const {
  if (dynamicSymbols.empty())
    return false;
  std::set<std::string> used;
  e.collectSymbols(used);
  for (const std::string &s : used)
    if (dynamicSymbol(s))
      return true;
  return false;
}

static void collectBlockSymbols(const Block &block, std::set<std::string> &out) {
  for (const Op &op : block.ops) {
    for (const Expr &e : op.offsets) e.collectSymbols(out);
    for (const Expr &e : op.shape) e.collectSymbols(out);
    if (op.hasScalar) op.scalar.collectSymbols(out);
    if (op.kind == OpKind::ForLoop) {
      op.start.collectSymbols(out);
      op.stop.collectSymbols(out);
      op.step.collectSymbols(out);
      collectBlockSymbols(*op.body, out);
    }
  }
}

std::set<std::string> Kernel::symbols() const {
  std::set<std::string> out;
  for (const Expr &e : grid) e.collectSymbols(out);
  for (const BufferDecl &b : buffers)
    for (const Expr &e : b.shape) e.collectSymbols(out);
  for (const TileType &t : values)
    for (const Expr &e : t.shape) e.collectSymbols(out);
  collectBlockSymbols(body, out);
  return out;
}

} // namespace turbine::kernels
