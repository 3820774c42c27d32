//===- Interpreter.cpp - Runs a specialized kernel graph on host tensors --===//
#include "turbine/kernels/Interpreter.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace turbine::kernels {

namespace {

/// A concrete tile: row-major values in double, rounded to `dtype`.
struct TileData {
  std::vector<int64_t> shape;
  DType dtype = DType::f32;
  std::vector<double> data;
};

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

std::string formatIndex(const std::vector<int64_t> &idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i)
    s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

double roundBF16(double x) {
  float f = static_cast<float>(x);
  if (std::isnan(f))
    return x;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Rounds `x` to a value representable in `dtype`.
double roundTo(DType dtype, double x) {
  switch (dtype) {
  case DType::f64: return x;
  case DType::f32: return static_cast<float>(x);
  case DType::f16: return static_cast<double>(static_cast<_Float16>(x));
  case DType::bf16: return roundBF16(x);
  case DType::i1: return x != 0.0 ? 1.0 : 0.0;
  default: break;
  }
  if (std::isnan(x) || std::isinf(x))
    return 0.0;
  double t = std::trunc(x);
  switch (dtype) {
  case DType::i8: return static_cast<int8_t>(static_cast<int64_t>(t));
  case DType::i16: return static_cast<int16_t>(static_cast<int64_t>(t));
  case DType::i32: return static_cast<int32_t>(static_cast<int64_t>(t));
  case DType::i64: return static_cast<double>(static_cast<int64_t>(t));
  case DType::u8: return static_cast<uint8_t>(static_cast<int64_t>(t));
  case DType::u16: return static_cast<uint16_t>(static_cast<int64_t>(t));
  case DType::u32: return static_cast<uint32_t>(static_cast<int64_t>(t));
  case DType::u64: return static_cast<double>(static_cast<uint64_t>(t));
  default: return t;
  }
}

double readElement(const void *base, DType dtype, int64_t i) {
  switch (dtype) {
  case DType::f64: return static_cast<const double *>(base)[i];
  case DType::f32: return static_cast<const float *>(base)[i];
  case DType::f16: return static_cast<double>(static_cast<const _Float16 *>(base)[i]);
  case DType::bf16: {
    uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t *>(base)[i]) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::i1: return static_cast<const uint8_t *>(base)[i] ? 1.0 : 0.0;
  case DType::i8: return static_cast<const int8_t *>(base)[i];
  case DType::i16: return static_cast<const int16_t *>(base)[i];
  case DType::i32: return static_cast<const int32_t *>(base)[i];
  case DType::i64: return static_cast<double>(static_cast<const int64_t *>(base)[i]);
  case DType::u8: return static_cast<const uint8_t *>(base)[i];
  case DType::u16: return static_cast<const uint16_t *>(base)[i];
  case DType::u32: return static_cast<const uint32_t *>(base)[i];
  case DType::u64: return static_cast<double>(static_cast<const uint64_t *>(base)[i]);
  }
  return 0.0;
}

void writeElement(void *base, DType dtype, int64_t i, double x) {
  x = roundTo(dtype, x);
  switch (dtype) {
  case DType::f64: static_cast<double *>(base)[i] = x; break;
  case DType::f32: static_cast<float *>(base)[i] = static_cast<float>(x); break;
  case DType::f16: static_cast<_Float16 *>(base)[i] = static_cast<_Float16>(x); break;
  case DType::bf16: {
    float f = static_cast<float>(x);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    static_cast<uint16_t *>(base)[i] = static_cast<uint16_t>(bits >> 16);
    break;
  }
  case DType::i1: static_cast<uint8_t *>(base)[i] = x != 0.0; break;
  case DType::i8: static_cast<int8_t *>(base)[i] = static_cast<int8_t>(x); break;
  case DType::i16: static_cast<int16_t *>(base)[i] = static_cast<int16_t>(x); break;
  case DType::i32: static_cast<int32_t *>(base)[i] = static_cast<int32_t>(x); break;
  case DType::i64: static_cast<int64_t *>(base)[i] = static_cast<int64_t>(x); break;
  case DType::u8: static_cast<uint8_t *>(base)[i] = static_cast<uint8_t>(x); break;
  case DType::u16: static_cast<uint16_t *>(base)[i] = static_cast<uint16_t>(x); break;
  case DType::u32: static_cast<uint32_t *>(base)[i] = static_cast<uint32_t>(x); break;
  case DType::u64: static_cast<uint64_t *>(base)[i] = static_cast<uint64_t>(x); break;
  }
}

/// Calls f(index, linear) for every element of `shape` in row-major order.
template <typename F> void forEachIndex(const std::vector<int64_t> &shape, F f) {
  int64_t n = product(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    f(idx, linear);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

/// Linear index into `t` of the broadcast element at `idx` (result shape).
int64_t broadcastIndex(const TileData &t, const std::vector<int64_t> &idx) {
  if (t.shape.empty())
    return 0;
  int64_t linear = 0, stride = 1;
  for (int d = static_cast<int>(t.shape.size()) - 1; d >= 0; --d) {
    int64_t i = t.shape[d] == 1 ? 0 : idx[d];
    linear += i * stride;
    stride *= t.shape[d];
  }
  return linear;
}

double applyUnary(OpKind kind, double x) {
  switch (kind) {
  case OpKind::Neg: return -x;
  case OpKind::Abs: return std::fabs(x);
  case OpKind::Exp: return std::exp(x);
  case OpKind::Exp2: return std::exp2(x);
  case OpKind::Log: return std::log(x);
  case OpKind::Sqrt: return std::sqrt(x);
  case OpKind::Rsqrt: return 1.0 / std::sqrt(x);
  case OpKind::Tanh: return std::tanh(x);
  default: return x;
  }
}

double applyBinary(OpKind kind, DType dtype, double a, double b) {
  switch (kind) {
  case OpKind::Add: return a + b;
  case OpKind::Sub: return a - b;
  case OpKind::Mul: return a * b;
  case OpKind::Div:
    if (!dtypeIsFloat(dtype))
      return b == 0.0 ? 0.0 : std::trunc(a / b);
    return a / b;
  case OpKind::Maximum: return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  case OpKind::Minimum: return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  case OpKind::CmpLT: return a < b;
  case OpKind::CmpLE: return a <= b;
  case OpKind::CmpGT: return a > b;
  case OpKind::CmpGE: return a >= b;
  case OpKind::CmpEQ: return a == b;
  case OpKind::CmpNE: return a != b;
  default: return 0.0;
  }
}

class Interpreter {
public:
  Interpreter(const Specialization &spec, std::vector<runtime::Tensor> &buffers)
      : spec_(spec), kernel_(*spec.kernel), buffers_(buffers),
        values_(kernel_.values.size()),
        loopIndices_(static_cast<size_t>(kernel_.numLoops), 0) {
    env_.symbols = &spec_.symbols;
    env_.loopIndices = &loopIndices_;
  }

  Status runWorkgroup(int64_t x, int64_t y, int64_t z) {
    env_.programId[0] = x;
    env_.programId[1] = y;
    env_.programId[2] = z;
    return runBlock(kernel_.body);
  }

private:
  Status error(const Op &op, const std::string &message) const {
    return Status::error("kernel '" + kernel_.name + "': " +
                         kernel_.describe(op) + ": " + message +
                         " (program_id " + formatIndex({env_.programId[0],
                                                        env_.programId[1],
                                                        env_.programId[2]}) +
                         ")");
  }

  Result<int64_t> eval(const Op &op, const Expr &e) const {
    Result<int64_t> v = evaluate(e, env_);
    if (!v.ok())
      return error(op, v.message());
    return v;
  }

  Result<std::vector<int64_t>> evalAll(const Op &op,
                                       const std::vector<Expr> &exprs) const {
    std::vector<int64_t> out;
    for (const Expr &e : exprs) {
      Result<int64_t> v = eval(op, e);
      if (!v.ok())
        return v.status();
      out.push_back(*v);
    }
    return out;
  }

  TileData &result(const Op &op, size_t i = 0) {
    TileData &t = values_[op.results[i]];
    t.shape = spec_.valueShapes[op.results[i]];
    t.dtype = kernel_.values[op.results[i]].dtype;
    t.data.assign(static_cast<size_t>(product(t.shape)), 0.0);
    return t;
  }

  const TileData &operand(const Op &op, size_t i) const {
    return values_[op.operands[i]];
  }

  Status runBlock(const Block &block) {
    for (const Op &op : block.ops) {
      Status s = runOp(op);
      if (!s.ok())
        return s;
    }
    return Status::success();
  }

  Status access(const Op &op, bool isStore) {
    runtime::Tensor &buffer = buffers_[op.buffer];
    const std::vector<int64_t> &bshape = buffer.shape();
    std::vector<int64_t> bstrides = stridesOf(bshape);
    Result<std::vector<int64_t>> offsets = evalAll(op, op.offsets);
    if (!offsets.ok())
      return offsets.status();
    const std::vector<int64_t> &tileShape =
        isStore ? operand(op, 0).shape : spec_.valueShapes[op.results[0]];
    TileData *loaded = isStore ? nullptr : &result(op);
    const TileData *stored = isStore ? &operand(op, 0) : nullptr;
    DType dtype = buffer.dtype();
    Status status;
    std::vector<int64_t> element(bshape.size());
    forEachIndex(tileShape, [&](const std::vector<int64_t> &idx, int64_t linear) {
      if (!status.ok())
        return;
      bool inBounds = true;
      int64_t at = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        element[d] = (*offsets)[d] + idx[d];
        inBounds &= element[d] >= 0 && element[d] < bshape[d];
        at += element[d] * bstrides[d];
      }
      if (!inBounds) {
        if (op.masked) {
          if (loaded)
            loaded->data[linear] = roundTo(dtype, op.constant);
          return;
        }
        status = error(op, std::string("out-of-bounds ") +
                               (isStore ? "store" : "load") + " of element " +
                               formatIndex(element) + " (buffer shape " +
                               formatIndex(bshape) + ", tile offset " +
                               formatIndex(*offsets) + ", tile shape " +
                               formatIndex(tileShape) +
                               "; use masked() for partial tiles)");
        return;
      }
      if (loaded)
        loaded->data[linear] = readElement(buffer.data(), dtype, at);
      else
        writeElement(buffer.data(), dtype, at, stored->data[linear]);
    });
    return status;
  }

  Status runOp(const Op &op) {
    switch (op.kind) {
    case OpKind::Constant: {
      TileData &t = result(op);
      double v = op.constant;
      if (op.hasScalar) {
        Result<int64_t> s = eval(op, op.scalar);
        if (!s.ok())
          return s.status();
        v = static_cast<double>(*s);
      }
      std::fill(t.data.begin(), t.data.end(), roundTo(t.dtype, v));
      return Status::success();
    }
    case OpKind::Iota: {
      TileData &t = result(op);
      forEachIndex(t.shape, [&](const std::vector<int64_t> &idx, int64_t i) {
        t.data[i] = roundTo(t.dtype, static_cast<double>(idx[op.axis]));
      });
      return Status::success();
    }
    case OpKind::Load:
      return access(op, /*isStore=*/false);
    case OpKind::Store:
      if (buffers_[op.buffer].isReadOnly())
        return error(op, "buffer is read-only");
      return access(op, /*isStore=*/true);
    case OpKind::Select: {
      TileData &t = result(op);
      const TileData &c = operand(op, 0), &a = operand(op, 1), &b = operand(op, 2);
      forEachIndex(t.shape, [&](const std::vector<int64_t> &idx, int64_t i) {
        t.data[i] = c.data[broadcastIndex(c, idx)] != 0.0
                        ? a.data[broadcastIndex(a, idx)]
                        : b.data[broadcastIndex(b, idx)];
      });
      return Status::success();
    }
    case OpKind::Broadcast: {
      TileData &t = result(op);
      const TileData &x = operand(op, 0);
      forEachIndex(t.shape, [&](const std::vector<int64_t> &idx, int64_t i) {
        t.data[i] = x.data[broadcastIndex(x, idx)];
      });
      return Status::success();
    }
    case OpKind::Transpose: {
      TileData &t = result(op);
      const TileData &x = operand(op, 0);
      std::vector<int64_t> xs = stridesOf(x.shape);
      forEachIndex(t.shape, [&](const std::vector<int64_t> &idx, int64_t i) {
        int64_t at = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          at += idx[d] * xs[op.perm[d]];
        t.data[i] = x.data[at];
      });
      return Status::success();
    }
    case OpKind::Reshape: {
      TileData &t = result(op);
      t.data = operand(op, 0).data;
      return Status::success();
    }
    case OpKind::Cast: {
      TileData &t = result(op);
      const TileData &x = operand(op, 0);
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] = roundTo(t.dtype, x.data[i]);
      return Status::success();
    }
    case OpKind::Dot: {
      TileData &t = result(op);
      const TileData &a = operand(op, 0), &b = operand(op, 1), &c = operand(op, 2);
      int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double s = c.data[m * N + n];
          for (int64_t k = 0; k < K; ++k)
            s += a.data[m * K + k] * b.data[k * N + n];
          t.data[m * N + n] = roundTo(t.dtype, s);
        }
      return Status::success();
    }
    case OpKind::ForLoop:
      return runLoop(op);
    default:
      break;
    }
    if (isUnaryElementwise(op.kind)) {
      TileData &t = result(op);
      const TileData &x = operand(op, 0);
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] = roundTo(t.dtype, applyUnary(op.kind, x.data[i]));
      return Status::success();
    }
    if (isBinaryElementwise(op.kind) || isComparison(op.kind)) {
      TileData &t = result(op);
      const TileData &a = operand(op, 0), &b = operand(op, 1);
      forEachIndex(t.shape, [&](const std::vector<int64_t> &idx, int64_t i) {
        t.data[i] = roundTo(t.dtype, applyBinary(op.kind, a.dtype,
                                                 a.data[broadcastIndex(a, idx)],
                                                 b.data[broadcastIndex(b, idx)]));
      });
      return Status::success();
    }
    if (isReduction(op.kind)) {
      TileData &t = result(op);
      const TileData &x = operand(op, 0);
      double init = op.kind == OpKind::ReduceSum ? 0.0
                    : op.kind == OpKind::ReduceMax
                        ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
      std::fill(t.data.begin(), t.data.end(), init);
      std::vector<int64_t> outIdx;
      std::vector<int64_t> ts = stridesOf(t.shape);
      forEachIndex(x.shape, [&](const std::vector<int64_t> &idx, int64_t i) {
        int64_t at = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          at += (static_cast<int>(d) == op.axis ? 0 : idx[d]) * ts[d];
        double &acc = t.data[at];
        double v = x.data[i];
        if (op.kind == OpKind::ReduceSum)
          acc += v;
        else if (std::isnan(v) || std::isnan(acc))
          acc = NAN;
        else
          acc = op.kind == OpKind::ReduceMax ? std::max(acc, v) : std::min(acc, v);
      });
      for (double &v : t.data)
        v = roundTo(t.dtype, v);
      return Status::success();
    }
    return error(op, "the interpreter does not implement this op");
  }

  Status runLoop(const Op &op) {
    Result<int64_t> start = eval(op, op.start), stop = eval(op, op.stop),
                    step = eval(op, op.step);
    if (!start.ok()) return start.status();
    if (!stop.ok()) return stop.status();
    if (!step.ok()) return step.status();
    if (*step <= 0)
      return error(op, "step " + op.step.str() + " = " + std::to_string(*step) +
                           " must be positive");
    const Block &body = *op.body;
    for (size_t i = 0; i < op.operands.size(); ++i)
      values_[body.arguments[i]] = values_[op.operands[i]];
    for (int64_t k = *start; k < *stop; k += *step) {
      loopIndices_[op.loopId] = k;
      Status s = runBlock(body);
      if (!s.ok())
        return s;
      for (size_t i = 0; i < body.yields.size(); ++i) {
        if (body.yields[i] != body.arguments[i])
          values_[body.arguments[i]] = values_[body.yields[i]];
      }
    }
    for (size_t i = 0; i < op.results.size(); ++i)
      values_[op.results[i]] = values_[body.arguments[i]];
    return Status::success();
  }

  const Specialization &spec_;
  const Kernel &kernel_;
  std::vector<runtime::Tensor> &buffers_;
  std::vector<TileData> values_;
  std::vector<int64_t> loopIndices_;
  EvalEnv env_;
};

} // namespace

std::vector<BufferSignature>
signaturesOf(const std::vector<runtime::Tensor> &tensors) {
  std::vector<BufferSignature> out;
  for (const runtime::Tensor &t : tensors)
    out.push_back({t.shape(), t.dtype()});
  return out;
}

Status interpret(const Specialization &spec,
                 std::vector<runtime::Tensor> buffers) {
  const Kernel &kernel = *spec.kernel;
  if (buffers.size() != kernel.buffers.size())
    return Status::error("kernel '" + kernel.name + "': expected " +
                         std::to_string(kernel.buffers.size()) +
                         " buffers, got " + std::to_string(buffers.size()));
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].shape() != spec.bufferShapes[i] ||
        buffers[i].dtype() != kernel.buffers[i].dtype)
      return Status::error("kernel '" + kernel.name + "': buffer '" +
                           kernel.buffers[i].name + "' is " +
                           buffers[i].typeString() +
                           ", not the specialization's type");
  Interpreter interp(spec, buffers);
  for (int64_t z = 0; z < spec.grid[2]; ++z)
    for (int64_t y = 0; y < spec.grid[1]; ++y)
      for (int64_t x = 0; x < spec.grid[0]; ++x) {
        Status s = interp.runWorkgroup(x, y, z);
        if (!s.ok())
          return s;
      }
  return Status::success();
}

Status interpret(const Kernel &kernel, std::vector<runtime::Tensor> buffers,
                 const Bindings &symbols) {
  Result<Specialization> spec = specialize(kernel, signaturesOf(buffers), symbols);
  if (!spec.ok())
    return spec.status();
  return interpret(*spec, std::move(buffers));
}

} // namespace turbine::kernels
