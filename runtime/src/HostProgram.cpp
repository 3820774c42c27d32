//===- HostProgram.cpp - Interpreter of a function's host program --------===//
//
// A register machine: index registers (int64) and buffer registers
// (Tensors), straight-line except for structured loops (loop / break_unless /
// end_loop, see artifact/Module.h). Instructions compute shapes, allocate buffers, view
// parameters, reshape, and launch kernels on a Device. Every runtime failure
// (division by zero, failed assertion, use of an undefined buffer, bad reshape)
// is reported as an error naming the function and the instruction.
// Buffers come from the module's BufferPool, and each register is dropped
// after its last use (BufferReleasePlan), so storage is reused within a call
// and across calls. On a GpuDevice (cuda) dispatches go to a GpuCall, which
// keeps device copies of the bound buffers; every host-side read of a buffer
// (load, string ops, global stores, results, observers) first brings its host
// copy up to date.
//===----------------------------------------------------------------------===//
#include "HostProgram.h"

#include "GpuDevice.h"
#include "HostStringOps.h"
#include "InstanceState.h"
#include "LoadedModule.h"
#include "turbine/runtime/Profiling.h"

#include <chrono>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace turbine::runtime::detail {

using artifact::BinaryKind;
using artifact::Instruction;
using artifact::Opcode;

namespace {

/// Evaluates one Binary instruction; returns an error text on failure.
bool evalBinary(BinaryKind kind, int64_t a, int64_t b, int64_t &out,
                std::string &error) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  auto divisionByZero = [&] {
    error = "division by zero (" + std::to_string(a) + " " +
            std::string(artifact::binaryKindName(kind)) + " 0)";
    return false;
  };
  switch (kind) {
  case BinaryKind::Add: out = static_cast<int64_t>(ua + ub); return true;
  case BinaryKind::Sub: out = static_cast<int64_t>(ua - ub); return true;
  case BinaryKind::Mul: out = static_cast<int64_t>(ua * ub); return true;
  case BinaryKind::DivS:
  case BinaryKind::CeilDivS:
  case BinaryKind::FloorDivS: {
    if (b == 0)
      return divisionByZero();
    if (a == kMin && b == -1) {
      error = "signed division overflow (" + std::to_string(a) + " / -1)";
      return false;
    }
    int64_t q = a / b, r = a % b;
    if (kind == BinaryKind::CeilDivS && r != 0 && ((a < 0) == (b < 0)))
      ++q;
    if (kind == BinaryKind::FloorDivS && r != 0 && ((a < 0) != (b < 0)))
      --q;
    out = q;
    return true;
  }
  case BinaryKind::DivU:
    if (b == 0)
      return divisionByZero();
    out = static_cast<int64_t>(ua / ub);
    return true;
  case BinaryKind::RemS:
    if (b == 0)
      return divisionByZero();
    out = (b == -1) ? 0 : a % b;
    return true;
  case BinaryKind::RemU:
    if (b == 0)
      return divisionByZero();
    out = static_cast<int64_t>(ua % ub);
    return true;
  case BinaryKind::MinS: out = a < b ? a : b; return true;
  case BinaryKind::MaxS: out = a > b ? a : b; return true;
  case BinaryKind::MinU: out = static_cast<int64_t>(ua < ub ? ua : ub); return true;
  case BinaryKind::MaxU: out = static_cast<int64_t>(ua > ub ? ua : ub); return true;
  case BinaryKind::And: out = a & b; return true;
  case BinaryKind::Or: out = a | b; return true;
  case BinaryKind::Xor: out = a ^ b; return true;
  case BinaryKind::Shl:
  case BinaryKind::ShrS:
  case BinaryKind::ShrU:
    if (b < 0 || b > 63) {
      error = "shift amount " + std::to_string(b) + " out of range [0, 63]";
      return false;
    }
    if (kind == BinaryKind::Shl)
      out = static_cast<int64_t>(ua << b);
    else if (kind == BinaryKind::ShrS)
      out = a >> b;
    else
      out = static_cast<int64_t>(ua >> b);
    return true;
  case BinaryKind::Eq: out = a == b; return true;
  case BinaryKind::Ne: out = a != b; return true;
  case BinaryKind::Slt: out = a < b; return true;
  case BinaryKind::Sle: out = a <= b; return true;
  case BinaryKind::Sgt: out = a > b; return true;
  case BinaryKind::Sge: out = a >= b; return true;
  case BinaryKind::Ult: out = ua < ub; return true;
  case BinaryKind::Ule: out = ua <= ub; return true;
  case BinaryKind::Ugt: out = ua > ub; return true;
  case BinaryKind::Uge: out = ua >= ub; return true;
  }
  error = "unknown binary kind " + std::to_string(static_cast<int>(kind));
  return false;
}

/// $TURBINE_MAX_HOST_STEPS, read once: the most instructions one call may
/// execute (loops included) before it fails; 0 or unset: no limit.
uint64_t hostStepLimit() {
  static const uint64_t limit = [] {
    const char *text = std::getenv("TURBINE_MAX_HOST_STEPS");
    return text ? std::strtoull(text, nullptr, 10) : 0ull;
  }();
  return limit;
}

/// The interpreter state of one invocation.
class Interpreter {
public:
  Interpreter(const LoadedModule &module, const artifact::Function &function,
              Device &device, InstanceState *state, const DispatchObserver *observer)
      : module_(module), function_(function), device_(device), state_(state),
        releases_(releasePlanOf(module, function)), observer_(observer),
        index_(static_cast<size_t>(function.numIndexRegisters), 0),
        buffers_(static_cast<size_t>(function.numBufferRegisters)),
        defined_(static_cast<size_t>(function.numBufferRegisters), false),
        fresh_(observer ? static_cast<size_t>(function.numBufferRegisters) : 0, false) {}

  Result<std::vector<Tensor>> run(const std::vector<Tensor> &inputs) {
    inputs_ = &inputs;
    const std::string &target = module_.artifact.target;
    auto *gpu = dynamic_cast<GpuDevice *>(&device_);
    auto fail = [&](const std::string &message) {
      return Status::error("function '" + function_.name + "': " + message);
    };
    if (gpu && target != gpu->target())
      return fail("the artifact was compiled for target '" + target + "', which device '" +
                  device_.name() + "' does not run (compile it with --target=" +
                  gpu->target() + ", or run it on local-sync or local-task)");
    if (!gpu && target != "cpu")
      return fail("the artifact was compiled for target '" + target + "', which device '" +
                  device_.name() + "' does not run (run it on device '" + target + "')");
    if (gpu) {
      Result<std::unique_ptr<GpuCall>> call = gpu->beginCall(module_, inputs);
      if (!call)
        return fail(call.message());
      gpuCall_ = std::move(*call);
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (Status s = setBuffer(static_cast<int32_t>(i), inputs[i]); !s)
        return s;
    const uint64_t stepLimit = hostStepLimit();
    uint64_t steps = 0;
    for (pc_ = 0; pc_ < function_.code.size(); ++pc_) {
      if (stepLimit && ++steps > stepLimit)
        return fail("the host program ran more than " + std::to_string(stepLimit) +
                    " instructions (TURBINE_MAX_HOST_STEPS)");
      const Instruction &inst = function_.code[pc_];
      if (inst.op == Opcode::Return) {
        Result<std::vector<Tensor>> results = collectResults(inst);
        if (results && gpuCall_ && state_)
          for (const Tensor &global : state_->storage)
            if (Status s = gpuCall_->toHost(global); !s)
              return fail(s.message());
        return results;
      }
      if (Status s = step(inst); !s)
        return s;
      if (releases_)
        for (uint32_t i = releases_->begin[pc_]; i < releases_->begin[pc_ + 1]; ++i)
          buffers_[releases_->registers[i]] = Tensor();
    }
    return fail("host program ended without a return");
  }

private:
  /// The function's plan, or null when it has none (drop nothing early).
  static const BufferReleasePlan *releasePlanOf(const LoadedModule &module,
                                                const artifact::Function &function) {
    const std::vector<artifact::Function> &functions = module.artifact.functions;
    for (size_t i = 0; i < functions.size() && i < module.releasePlans.size(); ++i)
      if (&functions[i] == &function) {
        const BufferReleasePlan &plan = module.releasePlans[i];
        bool fits = !plan.empty() && plan.begin.size() == function.code.size() + 1;
        return fits ? &plan : nullptr;
      }
    return nullptr;
  }

  Status fail(const std::string &message) const {
    std::string where = "function '" + function_.name + "'";
    if (pc_ < function_.code.size())
      where += ", instruction " + std::to_string(pc_) + " (" +
               std::string(artifact::opcodeName(function_.code[pc_].op)) + ")";
    return Status::error(where + ": " + message);
  }

  /// Register indices are validated by the artifact reader; these guards keep
  /// a hand-built Module from crashing the interpreter too.
  bool validIndex(int32_t r) const {
    return r >= 0 && static_cast<size_t>(r) < index_.size();
  }
  bool validBuffer(int32_t r) const {
    return r >= 0 && static_cast<size_t>(r) < buffers_.size();
  }
  Status index(int32_t r, int64_t &value) const {
    if (!validIndex(r))
      return fail("index register " + std::to_string(r) + " out of range");
    value = index_[r];
    return Status::success();
  }
  Status buffer(int32_t r, const Tensor *&value) const {
    if (!validBuffer(r))
      return fail("buffer register " + std::to_string(r) + " out of range");
    if (!defined_[r])
      return fail("buffer register " + std::to_string(r) + " is used before it is set");
    value = &buffers_[r];
    return Status::success();
  }
  Status setIndex(int32_t r, int64_t value) {
    if (!validIndex(r))
      return fail("index register " + std::to_string(r) + " out of range");
    index_[r] = value;
    return Status::success();
  }
  Status setBuffer(int32_t r, Tensor value) {
    if (!validBuffer(r))
      return fail("buffer register " + std::to_string(r) + " out of range");
    buffers_[r] = std::move(value);
    defined_[r] = true;
    return Status::success();
  }
  Status shapeFrom(const std::vector<int32_t> &regs, std::vector<int64_t> &shape) {
    shape.clear();
    for (int32_t r : regs) {
      int64_t d;
      if (Status s = index(r, d); !s)
        return s;
      shape.push_back(d);
    }
    return Status::success();
  }

  Status step(const Instruction &inst) {
    switch (inst.op) {
    case Opcode::Const:
      return setIndex(inst.dst, inst.imm);
    case Opcode::Dim: {
      const Tensor *t;
      if (Status s = buffer(inst.a, t); !s)
        return s;
      if (inst.imm < 0 || static_cast<size_t>(inst.imm) >= t->rank())
        return fail("dim " + std::to_string(inst.imm) + " of a rank-" +
                    std::to_string(t->rank()) + " buffer (" + t->typeString() + ")");
      return setIndex(inst.dst, t->shape()[inst.imm]);
    }
    case Opcode::Binary: {
      int64_t a, b, out;
      if (Status s = index(inst.a, a); !s)
        return s;
      if (Status s = index(inst.b, b); !s)
        return s;
      std::string error;
      if (!evalBinary(inst.kind, a, b, out, error))
        return fail(error);
      return setIndex(inst.dst, out);
    }
    case Opcode::Select: {
      int64_t a, b, c;
      if (Status s = index(inst.a, a); !s)
        return s;
      if (Status s = index(inst.b, b); !s)
        return s;
      if (Status s = index(inst.c, c); !s)
        return s;
      return setIndex(inst.dst, a != 0 ? b : c);
    }
    case Opcode::Assert: {
      int64_t a;
      if (Status s = index(inst.a, a); !s)
        return s;
      if (a == 0)
        return fail("assertion failed: " +
                    (inst.message.empty() ? std::string("(no message)") : inst.message));
      return Status::success();
    }
    case Opcode::Alloc: {
      std::vector<int64_t> shape;
      if (Status s = shapeFrom(inst.operands, shape); !s)
        return s;
      Result<Tensor> t = module_.bufferPool->allocate(inst.dtype, std::move(shape));
      if (!t)
        return fail(t.message());
      if (gpuCall_)
        gpuCall_->allocated(*t);
      if (Status s = setBuffer(inst.dst, std::move(*t)); !s)
        return s;
      if (observer_) {
        fresh_[inst.dst] = true; // not written yet: a dispatch binding it writes it
        // Observed runs compare outputs element for element: a dispatch
        // that writes only part of its output (the first slice of a
        // concatenation, the others follow in place) leaves the rest zero,
        // not whatever the pool's block held.
        Tensor &fresh = buffers_[inst.dst];
        if (!gpuCall_ && fresh.byteSize() > 0)
          std::memset(fresh.data(), 0, fresh.byteSize());
      }
      return Status::success();
    }
    case Opcode::Param:
      return stepParam(inst);
    case Opcode::Reshape: {
      const Tensor *t;
      if (Status s = buffer(inst.a, t); !s)
        return s;
      std::vector<int64_t> shape;
      if (Status s = shapeFrom(inst.operands, shape); !s)
        return s;
      Result<Tensor> view = t->reshape(std::move(shape));
      if (!view)
        return fail(view.message());
      return setBuffer(inst.dst, std::move(*view));
    }
    case Opcode::Dispatch:
      return observer_ ? stepObservedDispatch(inst) : stepDispatch(inst);
    case Opcode::Load:
      return stepLoad(inst);
    case Opcode::StringNormalize:
    case Opcode::ToString:
    case Opcode::FromString:
      return stepString(inst);
    case Opcode::Move:
    case Opcode::MoveBuffer:
    case Opcode::Loop:
    case Opcode::BreakUnless:
    case Opcode::EndLoop:
      return stepControlFlow(inst);
    case Opcode::GlobalLoad:
    case Opcode::GlobalStore:
      return stepGlobal(inst);
    case Opcode::Return:
      break;
    }
    return fail("unexpected opcode");
  }

  /// global_load: a view of the instance's storage (no copy). global_store:
  /// the register becomes the global's value: nothing to do when it already
  /// is the storage (a dispatch updated it in place); adopted without a
  /// copy when it is a buffer of this call that nothing else owns; copied
  /// otherwise (an input the caller may change, a read-only parameter, or
  /// the storage of another global).
  Status stepGlobal(const Instruction &inst) {
    const std::vector<artifact::Global> &globals = module_.artifact.globals;
    if (inst.imm < 0 || static_cast<size_t>(inst.imm) >= globals.size())
      return fail("global index " + std::to_string(inst.imm) + " out of range");
    size_t g = static_cast<size_t>(inst.imm);
    const artifact::Global &global = globals[g];
    if (!state_ || g >= state_->storage.size())
      return fail("global '" + global.name + "' is module state: call '" + function_.name +
                  "' through an Instance (Module::createInstance())");
    if (!global.isMutable)
      return fail("global '" + global.name + "' is immutable");
    Tensor &storage = state_->storage[g];
    if (inst.op == Opcode::GlobalLoad) {
      if (inst.requiresInitialized && !state_->initialized[g])
        return fail("global '" + global.name + "' is read before any function stored it in "
                    "this instance (it has no initial value): call the function that "
                    "initializes it first");
      return setBuffer(inst.dst, storage);
    }
    const Tensor *value;
    if (Status s = buffer(inst.a, value); !s)
      return s;
    if (Status s = syncToHost(*value); !s)
      return s;
    if (value->dtype() != global.dtype || value->shape() != global.shape)
      return fail("storing a " + value->typeString() + " value into global '" + global.name +
                  "' of type " + formatTensorType(global.dtype, global.shape));
    if (value->data() == storage.data() && value->sharesStorageWith(storage)) {
      state_->initialized[g] = true;
      return Status::success();
    }
    bool shared = value->isReadOnly();
    for (const Tensor &input : *inputs_)
      shared = shared || value->sharesStorageWith(input);
    for (size_t other = 0; other < state_->storage.size(); ++other)
      shared = shared || (other != g && value->sharesStorageWith(state_->storage[other]));
    if (!shared) {
      storage = *value;
    } else {
      Result<Tensor> copy = value->clone();
      if (!copy)
        return fail("global '" + global.name + "': " + copy.message());
      storage = std::move(*copy);
    }
    state_->initialized[g] = true;
    return Status::success();
  }

  /// Moves and structured loops. A jump sets pc_ to the bracket it names;
  /// run() then continues with the instruction after it. Targets are
  /// validated when the artifact is read (artifact::validateControlFlow);
  /// the checks here keep a hand-built Module from running off the code.
  Status stepControlFlow(const Instruction &inst) {
    auto target = [&](artifact::Opcode expected) -> Status {
      if (inst.imm < 0 || static_cast<size_t>(inst.imm) >= function_.code.size() ||
          function_.code[inst.imm].op != expected)
        return fail("target " + std::to_string(inst.imm) + " is not a " +
                    std::string(artifact::opcodeName(expected)));
      return Status::success();
    };
    switch (inst.op) {
    case Opcode::Move: {
      int64_t v;
      if (Status s = index(inst.a, v); !s)
        return s;
      return setIndex(inst.dst, v);
    }
    case Opcode::MoveBuffer: {
      const Tensor *t;
      if (Status s = buffer(inst.a, t); !s)
        return s;
      Tensor copy = *t;
      return setBuffer(inst.dst, std::move(copy));
    }
    case Opcode::Loop:
      return target(Opcode::EndLoop);
    case Opcode::BreakUnless: {
      int64_t condition;
      if (Status s = index(inst.a, condition); !s)
        return s;
      if (Status s = target(Opcode::EndLoop); !s)
        return s;
      if (condition == 0)
        pc_ = static_cast<size_t>(inst.imm);
      return Status::success();
    }
    case Opcode::EndLoop:
      if (Status s = target(Opcode::Loop); !s)
        return s;
      pc_ = static_cast<size_t>(inst.imm);
      return Status::success();
    default:
      return fail("not a control-flow opcode");
    }
  }

  /// A string opcode (HostStringOps.h): strings never reach a kernel.
  Status stepString(const Instruction &inst) {
    const Tensor *t;
    if (Status s = buffer(inst.a, t); !s)
      return s;
    if (Status s = syncToHost(*t); !s)
      return s;
    Result<Tensor> result = runStringInstruction(inst, *t);
    if (!result)
      return fail(result.message());
    return setBuffer(inst.dst, std::move(*result));
  }

  Status stepParam(const Instruction &inst) {
    const std::vector<Tensor> &params = module_.parameters;
    if (inst.imm < 0 || static_cast<size_t>(inst.imm) >= params.size())
      return fail("parameter index " + std::to_string(inst.imm) + " out of range");
    return setBuffer(inst.dst, params[inst.imm]);
  }

  /// Reads one integer element of a buffer into an index register. The
  /// buffer is an input, a parameter or the result of an earlier dispatch
  /// (Device::dispatch returns only when all workgroups are done, so the
  /// element is final).
  Status stepLoad(const Instruction &inst) {
    const Tensor *t;
    if (Status s = buffer(inst.a, t); !s)
      return s;
    if (Status s = syncToHost(*t); !s)
      return s;
    if (dtypeIsFloat(inst.dtype) || dtypeIsFloat(t->dtype()) ||
        dtypeSize(t->dtype()) != dtypeSize(inst.dtype))
      return fail("cannot load a " + std::string(dtypeName(inst.dtype)) +
                  " element from a " + t->typeString() + " buffer");
    if (inst.operands.size() != t->rank())
      return fail(std::to_string(inst.operands.size()) +
                  " indices for a rank-" + std::to_string(t->rank()) +
                  " buffer (" + t->typeString() + ")");
    int64_t offset = 0;
    std::string where;
    for (size_t d = 0; d < t->rank(); ++d) {
      int64_t i;
      if (Status s = index(inst.operands[d], i); !s)
        return s;
      where += (d ? ", " : "") + std::to_string(i);
      if (i < 0 || i >= t->shape()[d])
        return fail("element [" + where + "] of a " + t->typeString() +
                    " buffer is out of bounds (dim " + std::to_string(d) +
                    " has size " + std::to_string(t->shape()[d]) + ")");
      offset = offset * t->shape()[d] + i;
    }
    const char *p = static_cast<const char *>(t->data()) +
                    offset * static_cast<int64_t>(dtypeSize(inst.dtype));
    int64_t value = 0;
    switch (inst.dtype) {
    case DType::i1: value = *reinterpret_cast<const uint8_t *>(p) != 0; break;
    case DType::i8: value = *reinterpret_cast<const int8_t *>(p); break;
    case DType::u8: value = *reinterpret_cast<const uint8_t *>(p); break;
    case DType::i16: value = *reinterpret_cast<const int16_t *>(p); break;
    case DType::u16: value = *reinterpret_cast<const uint16_t *>(p); break;
    case DType::i32: value = *reinterpret_cast<const int32_t *>(p); break;
    case DType::u32: value = *reinterpret_cast<const uint32_t *>(p); break;
    case DType::i64:
    case DType::u64: std::memcpy(&value, p, sizeof(value)); break;
    default:
      return fail("cannot load a " + std::string(dtypeName(inst.dtype)) + " element");
    }
    return setIndex(inst.dst, value);
  }

  Status stepDispatch(const Instruction &inst) {
    const size_t kernelCount =
        gpuCall_ ? module_.artifact.kernels.size() : module_.kernels.size();
    if (inst.imm < 0 || static_cast<size_t>(inst.imm) >= kernelCount)
      return fail("kernel index " + std::to_string(inst.imm) + " out of range");
    int64_t counts[3];
    for (int i = 0; i < 3; ++i)
      if (Status s = index(inst.workgroups[i], counts[i]); !s)
        return s;
    bindingPointers_.clear();
    for (int32_t r : inst.bindings) {
      const Tensor *t;
      if (Status s = buffer(r, t); !s)
        return s;
      if (dtypeIsString(t->dtype()))
        return fail("buffer register " + std::to_string(r) + " holds strings (" +
                    t->typeString() + "), which no kernel can take");
      bindingPointers_.push_back(const_cast<void *>(t->data()));
    }
    constants_.clear();
    for (int32_t r : inst.operands) {
      int64_t v;
      if (Status s = index(r, v); !s)
        return s;
      constants_.push_back(v);
    }
    if (counts[0] <= 0 || counts[1] <= 0 || counts[2] <= 0)
      return Status::success();
    int64_t total;
    if (__builtin_mul_overflow(counts[0], counts[1], &total) ||
        __builtin_mul_overflow(total, counts[2], &total))
      return fail("workgroup count " + std::to_string(counts[0]) + "x" +
                  std::to_string(counts[1]) + "x" + std::to_string(counts[2]) +
                  " overflows");
    if (gpuCall_)
      return gpuDispatch(inst, counts);
    turbine_dispatch_state_t state;
    state.bindings = bindingPointers_.data();
    state.constants = constants_.data();
    for (int i = 0; i < 3; ++i)
      state.workgroup_count[i] = counts[i];
    if (!dispatchProfilingEnabled()) {
      device_.dispatch(module_.kernels[inst.imm], state);
      return Status::success();
    }
    auto start = std::chrono::steady_clock::now();
    device_.dispatch(module_.kernels[inst.imm], state);
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const Tensor *output = nullptr;
    std::string shape;
    if (!inst.bindings.empty() && buffer(inst.bindings.back(), output).ok())
      shape = output->typeString();
    recordDispatch(module_.artifact.kernels[inst.imm], shape, elapsed.count());
    return Status::success();
  }

  /// A dispatch on a GpuDevice: queued on the GPU (timed to completion when
  /// dispatch profiling is on).
  Status gpuDispatch(const Instruction &inst, const int64_t counts[3]) {
    bindingTensors_.clear();
    for (int32_t r : inst.bindings)
      bindingTensors_.push_back(&buffers_[r]);
    const size_t kernel = static_cast<size_t>(inst.imm);
    const bool profile = dispatchProfilingEnabled();
    auto start = std::chrono::steady_clock::now();
    if (Status s = gpuCall_->dispatch(kernel, bindingTensors_, constants_, counts); !s)
      return fail(s.message());
    if (!profile)
      return Status::success();
    if (Status s = gpuCall_->synchronize(); !s)
      return fail(s.message());
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    std::string shape;
    if (!inst.bindings.empty())
      shape = buffers_[inst.bindings.back()].typeString();
    recordDispatch(module_.artifact.kernels[kernel], shape, elapsed.count());
    return Status::success();
  }

  /// On a GpuDevice: makes the host copy of `t` current (no-op otherwise).
  Status syncToHost(const Tensor &t) {
    if (!gpuCall_)
      return Status::success();
    if (Status s = gpuCall_->toHost(t); !s)
      return fail(s.message());
    return Status::success();
  }

  /// Runs the dispatch, then shows it to the observer: the bindings that
  /// were allocated and not yet written (the dispatch's results) are its
  /// outputs, the others its inputs.
  Status stepObservedDispatch(const Instruction &inst) {
    if (Status s = stepDispatch(inst); !s)
      return s;
    DispatchEvent event;
    event.index = dispatchCount_++;
    event.instruction = pc_;
    event.kernel = module_.artifact.kernels[inst.imm];
    for (int32_t r : inst.bindings) {
      if (fresh_[r]) {
        event.outputs.push_back(buffers_[r]);
        fresh_[r] = false;
      } else {
        event.inputs.push_back(buffers_[r]);
      }
    }
    std::vector<Tensor> given = event.outputs;
    for (const std::vector<Tensor> *list : {&event.inputs, &event.outputs})
      for (const Tensor &t : *list)
        if (Status s = syncToHost(t); !s)
          return s;
    if (Status s = (*observer_)(event); !s)
      return fail("dispatch observer: " + s.message());
    if (gpuCall_)
      for (const Tensor &t : given)
        gpuCall_->hostWrote(t); // the observer may have changed its elements
    // Only the elements may change: the registers keep the tensors given.
    for (size_t i = 0; i < given.size(); ++i)
      if (i >= event.outputs.size() || !event.outputs[i].sharesStorageWith(given[i]) ||
          event.outputs[i].shape() != given[i].shape())
        return fail("dispatch observer replaced output " + std::to_string(i) +
                    " (it may only overwrite its elements)");
    return Status::success();
  }

  /// Returns the results; copies any that alias an input, a parameter or an
  /// earlier result so every result owns its storage.
  Result<std::vector<Tensor>> collectResults(const Instruction &inst) {
    std::vector<Tensor> results;
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      const Tensor *t;
      if (Status s = buffer(inst.operands[i], t); !s)
        return s;
      if (Status s = syncToHost(*t); !s)
        return s;
      bool aliases = t->isReadOnly();
      for (const Tensor &input : *inputs_)
        aliases = aliases || t->sharesStorageWith(input);
      if (state_)
        for (const Tensor &global : state_->storage)
          aliases = aliases || t->sharesStorageWith(global);
      for (const Tensor &earlier : results)
        aliases = aliases || t->sharesStorageWith(earlier);
      if (aliases) {
        Result<Tensor> copy = t->clone();
        if (!copy)
          return fail("result " + std::to_string(i) + ": " + copy.message());
        results.push_back(std::move(*copy));
      } else {
        results.push_back(*t);
      }
      if (i < function_.outputs.size()) {
        const artifact::TensorType &sig = function_.outputs[i];
        const Tensor &r = results.back();
        bool matches = r.dtype() == sig.dtype && r.rank() == sig.shape.size();
        for (size_t d = 0; matches && d < sig.shape.size(); ++d)
          matches = sig.shape[d] < 0 || sig.shape[d] == r.shape()[d];
        if (!matches)
          return fail("result " + std::to_string(i) + " is " + r.typeString() +
                      " but the signature says " +
                      formatTensorType(sig.dtype, sig.shape));
      }
    }
    if (results.size() != function_.outputs.size())
      return fail("returns " + std::to_string(results.size()) +
                  " values but the function has " +
                  std::to_string(function_.outputs.size()) + " outputs");
    return results;
  }

  const LoadedModule &module_;
  const artifact::Function &function_;
  Device &device_;
  InstanceState *state_;
  const BufferReleasePlan *releases_;
  const DispatchObserver *observer_;
  const std::vector<Tensor> *inputs_ = nullptr;
  size_t pc_ = 0;
  std::vector<int64_t> index_;
  std::vector<Tensor> buffers_;
  std::vector<bool> defined_;
  /// Per buffer register (only with an observer): allocated and not yet
  /// bound to a dispatch.
  std::vector<bool> fresh_;
  size_t dispatchCount_ = 0;
  std::vector<void *> bindingPointers_;
  std::vector<int64_t> constants_;
  /// On a GpuDevice: this call's device state, and the dispatch's bindings.
  std::unique_ptr<GpuCall> gpuCall_;
  std::vector<const Tensor *> bindingTensors_;
};

} // namespace

Result<std::vector<Tensor>> runHostProgram(const LoadedModule &module,
                                           const artifact::Function &function,
                                           Device &device,
                                           const std::vector<Tensor> &inputs,
                                           InstanceState *state,
                                           const DispatchObserver *observer) {
  Interpreter interpreter(module, function, device, state, observer);
  return interpreter.run(inputs);
}

} // namespace turbine::runtime::detail
