//===- dispatch_overhead_benchmark.cpp - Runtime cost of one dispatch -----===//
//
// Measures what the runtime spends per dispatch, the number IREE quotes as
// 21-49 us on CPU: host-program interpretation, result allocation, binding
// and launching a kernel's workgroups, and waiting for them.
//
// Input: a Turbine artifact whose `main(x, y)` is one elementwise kernel
// (compiled by run_dispatch_benchmark.sh from a small static linalg.add: 64
// elements make one workgroup, which local-task runs inline on the caller;
// 4096 make 16, spread over the pool's workers). Its
// host program is rewritten into a chain of N dispatches of that kernel,
// r1 = k(x, y), r2 = k(r1, y), ..., each with its own result allocation, as
// the compiler emits for N unfused ops (no buffer reuse yet). The chain is
// built from the artifact rather than compiled because global-opt fuses any
// elementwise chain into one kernel. Reports the median time per call over
// the repetitions divided by N, for the chain and for N = 1, on the device
// given; also checks the chain's result (x + N*y).
//===----------------------------------------------------------------------===//
#include "turbine/artifact/Module.h"
#include "turbine/runtime/Runtime.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace turbine;
using namespace turbine::runtime;

struct Options {
  std::string artifact;
  int dispatches = 1000;
  int repetitions = 100;
  int warmup = 5;
  std::string device = "local-sync";
  int taskWorkers = 0;
};

int fail(const std::string &message) {
  fmt::print(stderr, "dispatch_overhead_benchmark: error: {}\n", message);
  return 1;
}

/// Rewrites the single-dispatch `main` of `module` into a chain of `n`.
Status makeChain(artifact::Module &module, int n) {
  if (module.functions.size() != 1)
    return Status::error("expected one function");
  artifact::Function &f = module.functions[0];
  const artifact::Instruction *alloc = nullptr, *dispatch = nullptr;
  for (const artifact::Instruction &inst : f.code) {
    if (inst.op == artifact::Opcode::Alloc)
      alloc = &inst;
    if (inst.op == artifact::Opcode::Dispatch)
      dispatch = dispatch ? nullptr : &inst;
  }
  if (!alloc || !dispatch || dispatch->bindings.size() != 3 || f.inputs.size() != 2)
    return Status::error("expected main(x, y) with one alloc and one dispatch(x, y, out)");
  std::vector<artifact::Instruction> code;
  for (const artifact::Instruction &inst : f.code)
    if (inst.op != artifact::Opcode::Alloc && inst.op != artifact::Opcode::Dispatch &&
        inst.op != artifact::Opcode::Return)
      code.push_back(inst); // index constants
  artifact::Instruction allocTemplate = *alloc, dispatchTemplate = *dispatch;
  int32_t previous = 0;
  int32_t next = f.numBufferRegisters;
  for (int i = 0; i < n; ++i) {
    artifact::Instruction a = allocTemplate;
    a.dst = next++;
    artifact::Instruction d = dispatchTemplate;
    d.bindings = {previous, 1, a.dst};
    code.push_back(a);
    code.push_back(d);
    previous = a.dst;
  }
  artifact::Instruction ret;
  ret.op = artifact::Opcode::Return;
  ret.operands = {previous};
  code.push_back(ret);
  f.code = std::move(code);
  f.numBufferRegisters = next;
  return Status::success();
}

/// Median seconds per call of `fn(x, y)`.
Result<double> timeCalls(const Function &fn, Device &device, const Tensor &x, const Tensor &y,
                         const Options &options, std::vector<Tensor> *lastResults) {
  std::vector<double> seconds;
  for (int r = 0; r < options.warmup + options.repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto results = fn.invoke(device, {x, y});
    auto stop = std::chrono::steady_clock::now();
    if (!results)
      return results.status();
    if (r >= options.warmup)
      seconds.push_back(std::chrono::duration<double>(stop - start).count());
    *lastResults = std::move(*results);
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

int run(const Options &options) {
  Result<artifact::Module> read = artifact::readFile(options.artifact);
  if (!read)
    return fail(read.message());
  artifact::Module original = std::move(*read);
  DeviceOptions deviceOptions;
  deviceOptions.taskWorkers = options.taskWorkers;
  auto device = Device::create(options.device, deviceOptions);
  if (!device)
    return fail(device.message());
  if (original.functions.size() != 1 || original.functions[0].inputs.empty())
    return fail(options.artifact + ": expected one function main(x, y)");
  std::vector<int64_t> shape = original.functions[0].inputs[0].shape;
  std::string type = formatTensorType(DType::f32, shape);
  auto x = parseTensorSpec(type + "=1");
  auto y = parseTensorSpec(type + "=0.5");
  if (!x || !y)
    return fail(options.artifact + ": main's inputs must be static f32 tensors, got " + type);

  double perDispatchUs[2] = {0, 0};
  const int lengths[2] = {1, options.dispatches};
  for (int k = 0; k < 2; ++k) {
    artifact::Module chain = original;
    if (Status s = makeChain(chain, lengths[k]); !s)
      return fail(options.artifact + ": " + s.message());
    auto module = Module::loadFromBytes(artifact::serialize(chain), "chain");
    if (!module)
      return fail(module.message());
    auto fn = (*module)->lookupFunction("main");
    if (!fn)
      return fail(fn.message());
    std::vector<Tensor> results;
    auto median = timeCalls(*fn, **device, *x, *y, options, &results);
    if (!median)
      return fail(median.message());
    float expected = 1.0f + 0.5f * lengths[k];
    for (int64_t i = 0; i < results[0].elementCount(); ++i)
      if (std::fabs(results[0].dataAs<float>()[i] - expected) > 1e-3f)
        return fail(fmt::format("wrong result: element {} is {}, expected {}", i,
                                results[0].dataAs<float>()[i], expected));
    perDispatchUs[k] = *median * 1e6 / lengths[k];
  }
  fmt::print("{} {} workers={}: chain of {} dispatches: {:.3f} us per dispatch "
             "(one-dispatch call: {:.3f} us)\n",
             type, options.device, options.device == "local-task" ? options.taskWorkers : 1,
             options.dispatches, perDispatchUs[1], perDispatchUs[0]);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  CLI::App app{"Runtime cost per dispatch: a chain of N tiny elementwise kernels"};
  app.add_option("artifact", options.artifact, "Artifact with main(x, y) = x + y (static f32)")
      ->required();
  app.add_option("--dispatches", options.dispatches, "Chain length")->capture_default_str();
  app.add_option("--repetitions", options.repetitions, "Timed calls")->capture_default_str();
  app.add_option("--warmup", options.warmup, "Untimed calls first")->capture_default_str();
  app.add_option("--device", options.device, "local-sync or local-task")->capture_default_str();
  app.add_option("--task_workers", options.taskWorkers, "local-task threads (0: all cores)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (options.dispatches < 1 || options.repetitions < 1)
    return fail("--dispatches and --repetitions must be positive");
  return run(options);
}
