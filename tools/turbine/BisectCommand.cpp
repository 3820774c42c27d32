//===- BisectCommand.cpp - `turbine bisect`: the first kernel that diverges ===//
//
//   turbine bisect model.onnx --input=@x.npy
//   turbine bisect model.pt --input-shape=1x3x224x224xf32 --input=@x.npy
//
// Finds the first dispatch whose results are wrong. The model is compiled
// twice in this process through the same model session: as `turbine
// compile` would (the build under test), and with plain reference kernels
// (CompileOptions::referenceKernels: the same global optimizations,
// dispatches, workgroup grids and bindings, but every op in a kernel
// lowered as scalar loops, none of the register-tiling, vectorization or
// matmul/convolution strategies; LLVM at --reference-opt-level). Both run on
// the same inputs on local-sync with a dispatch observer
// (runtime::Function::invoke with a DispatchObserver): the reference run
// keeps every dispatch's outputs, the run under test compares its own with
// them, dispatch by dispatch. By default each kernel is checked in
// isolation: after the comparison, its outputs are overwritten with the
// reference's, so an error does not spread and the first dispatch reported
// is the first kernel that computes wrongly on correct inputs
// (--propagate keeps its own values, to see how an error grows).
//
// A dispatch diverges when max |test - reference| > atol + rtol * max
// |reference| over an output. The report names the first divergent dispatch
// (position, kernel, the source ops fused into it, taken from the
// locations of its ops before codegen: ONNX node names, TorchScript ops
// with their source lines), its inputs' and outputs' types, and per output
// the error statistics (max abs and max relative error, where, the values
// there, how many elements are out of tolerance); --all prints every
// dispatch. Exit status: 0 when no dispatch diverges, 1 when one does or on
// an error.
//
// What it cannot see: a wrong global optimization (both builds share it;
// compare the final outputs with torch or ONNX Runtime for that), and
// kernels that differ only in how they round (the tolerance).
// --test-corrupt-kernel=NAME|#N (for the tests) adds 1 to the first float
// output of one kernel of the build under test: a miscompiled kernel that
// bisect must find.
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "FlagHints.h"
#include "TorchScriptPreflight.h"
#include "InvocationSetup.h"
#include "turbine/frontends/onnx/OnnxImporter.h"
#include "turbine/frontends/torch/TorchImporter.h"
#include "turbine/tools/ModelSession.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Passes.h"
#include "turbine/compiler/Session.h"
#include "turbine/runtime/Runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

namespace turbine::tools {
namespace {

using runtime::DispatchEvent;
using runtime::Tensor;

struct BisectArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> inputShapes;
  std::vector<std::string> dynamicDims;
  std::string function;
  double atol = 1e-5;
  double rtol = 1e-4;
  int optLevel = 3;
  int referenceOptLevel = 1;
  std::string targetCpu = "host";
  bool propagate = false;
  bool all = false;
  std::string corruptKernel;
};

int fail(const std::string &message) {
  fmt::print(stderr, "turbine bisect: error: {}\n", message);
  return 1;
}

//===--- what the compile tells about each kernel -------------------------===//

/// "node" for an ONNX node's NameLoc, "aten::linear at file.py:12" for a
/// TorchScript op's; every location a fused op carries.
void describeLocation(mlir::Location loc, std::vector<std::string> &out) {
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc)) {
    for (mlir::Location l : fused.getLocations())
      describeLocation(l, out);
    return;
  }
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc)) {
    std::string text = name.getName().str();
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(name.getChildLoc()))
      if (file.getLine() > 0)
        text += " at " + file.getFilename().str() + ":" + std::to_string(file.getLine());
    out.push_back(text);
    return;
  }
  if (auto callSite = mlir::dyn_cast<mlir::CallSiteLoc>(loc))
    describeLocation(callSite.getCallee(), out);
}

/// Per kernel symbol: the source ops fused into it, in program order.
using KernelSources = std::map<std::string, std::vector<std::string>>;

/// Before codegen, records the locations of every kernel's ops.
class RecordKernelSources
    : public mlir::PassWrapper<RecordKernelSources, mlir::OperationPass<mlir::ModuleOp>> {
public:
  explicit RecordKernelSources(KernelSources &sources) : sources_(sources) {}
  llvm::StringRef getArgument() const override { return "turbine-bisect-record-sources"; }
  void runOnOperation() override {
    mlir::ModuleOp kernels = compiler::getKernelsModule(getOperation(), /*create=*/false);
    if (!kernels)
      return;
    for (auto kernel : kernels.getOps<mlir::func::FuncOp>()) {
      std::vector<std::string> &list = sources_[kernel.getSymName().str()];
      kernel.walk([&](mlir::Operation *op) {
        if (op->getDialect() && op->getDialect()->getNamespace() == "turbine")
          return; // ABI ops: located at the dispatch, not at a source op
        std::vector<std::string> found;
        describeLocation(op->getLoc(), found);
        for (std::string &text : found)
          if (std::find(list.begin(), list.end(), text) == list.end())
            list.push_back(std::move(text));
      });
    }
  }

private:
  KernelSources &sources_;
};

/// For the tests: in kernel `target` (a symbol name, or "#N" for the N-th
/// kernel), the first float result written to an output binding gets 1
/// added: a miscompiled kernel. Records the kernel's name in `corrupted`.
class CorruptKernel
    : public mlir::PassWrapper<CorruptKernel, mlir::OperationPass<mlir::ModuleOp>> {
public:
  CorruptKernel(std::string target, std::string &corrupted)
      : target_(std::move(target)), corrupted_(corrupted) {}
  llvm::StringRef getArgument() const override { return "turbine-bisect-corrupt-kernel"; }
  void runOnOperation() override {
    mlir::ModuleOp kernels = compiler::getKernelsModule(getOperation(), /*create=*/false);
    if (!kernels)
      return;
    int64_t position = 0;
    for (auto kernel : kernels.getOps<mlir::func::FuncOp>()) {
      bool chosen = target_.size() > 1 && target_[0] == '#'
                        ? std::to_string(position) == target_.substr(1)
                        : kernel.getSymName() == target_;
      ++position;
      if (!chosen)
        continue;
      mlir::bufferization::MaterializeInDestinationOp store;
      kernel.walk([&](mlir::bufferization::MaterializeInDestinationOp op) {
        auto type = mlir::dyn_cast<mlir::RankedTensorType>(op.getSource().getType());
        if (!store && type && mlir::isa<mlir::FloatType>(type.getElementType()))
          store = op;
      });
      if (!store) {
        kernel.emitError("bisect: kernel has no float output to corrupt");
        return signalPassFailure();
      }
      mlir::OpBuilder b(store);
      mlir::Location loc = store.getLoc();
      mlir::Value value = store.getSource();
      auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
      llvm::SmallVector<mlir::Value> dynamicDims;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          dynamicDims.push_back(mlir::tensor::DimOp::create(b, loc, value, d));
      mlir::Value init = mlir::tensor::EmptyOp::create(b, loc, type.getShape(),
                                                       type.getElementType(), dynamicDims);
      mlir::AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
      llvm::SmallVector<mlir::utils::IteratorType> iterators(type.getRank(),
                                                             mlir::utils::IteratorType::parallel);
      auto plusOne = mlir::linalg::GenericOp::create(
          b, loc, mlir::TypeRange{type}, mlir::ValueRange{value}, mlir::ValueRange{init},
          llvm::ArrayRef<mlir::AffineMap>{identity, identity}, iterators,
          [&](mlir::OpBuilder &nb, mlir::Location l, mlir::ValueRange args) {
            mlir::Value one = mlir::arith::ConstantOp::create(
                nb, l, nb.getFloatAttr(type.getElementType(), 1.0));
            mlir::linalg::YieldOp::create(
                nb, l, mlir::ValueRange{mlir::arith::AddFOp::create(nb, l, args[0], one)});
          });
      store.getSourceMutable().assign(plusOne.getResult(0));
      corrupted_ = kernel.getSymName().str();
      return;
    }
    getOperation().emitError("bisect: --test-corrupt-kernel: no kernel '" + target_ + "'");
    signalPassFailure();
  }

private:
  std::string target_;
  std::string &corrupted_;
};

/// Adds the recording (and, for the tests, the corrupting) pass before
/// codegen. Holds references into the command's state.
class BisectExtension : public compiler::PipelineExtension {
public:
  BisectExtension(KernelSources *sources, std::string corruptTarget, std::string &corrupted)
      : sources_(sources), corruptTarget_(std::move(corruptTarget)), corrupted_(corrupted) {}
  void addPassesBefore(compiler::Phase phase, mlir::OpPassManager &pm) const override {
    if (phase != compiler::Phase::Codegen)
      return;
    if (!corruptTarget_.empty())
      pm.addPass(std::make_unique<CorruptKernel>(corruptTarget_, corrupted_));
    if (sources_)
      pm.addPass(std::make_unique<RecordKernelSources>(*sources_));
  }

private:
  KernelSources *sources_;
  std::string corruptTarget_;
  std::string &corrupted_;
};

//===--- element statistics ------------------------------------------------===//

double halfToDouble(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -value : value;
}

/// Element `i` of `t` as a double (false for string tensors).
bool elementAt(const Tensor &t, int64_t i, double &out) {
  const char *p = static_cast<const char *>(t.data());
  switch (t.dtype()) {
  case DType::f32: out = t.dataAs<float>()[i]; return true;
  case DType::f64: out = t.dataAs<double>()[i]; return true;
  case DType::f16: {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    out = halfToDouble(h);
    return true;
  }
  case DType::bf16: {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    out = f;
    return true;
  }
  case DType::i1:
  case DType::u8: out = reinterpret_cast<const uint8_t *>(p)[i]; return true;
  case DType::i8: out = reinterpret_cast<const int8_t *>(p)[i]; return true;
  case DType::i16: out = t.dataAs<int16_t>()[i]; return true;
  case DType::u16: out = t.dataAs<uint16_t>()[i]; return true;
  case DType::i32: out = t.dataAs<int32_t>()[i]; return true;
  case DType::u32: out = t.dataAs<uint32_t>()[i]; return true;
  case DType::i64: out = static_cast<double>(t.dataAs<int64_t>()[i]); return true;
  case DType::u64: out = static_cast<double>(t.dataAs<uint64_t>()[i]); return true;
  case DType::string: return false;
  }
  return false;
}

/// How one output of the build under test compares with the reference's.
struct OutputError {
  std::string type;
  double maxAbs = 0, maxRel = 0, refScale = 0;
  int64_t worst = -1;          ///< element index of maxAbs
  double got = 0, want = 0;    ///< the values there
  int64_t outOfTolerance = 0;  ///< elements beyond atol + rtol * |reference|
  int64_t nonFinite = 0;       ///< NaN/Inf in one and not the other
  bool diverges = false;
};

OutputError compare(const Tensor &test, const Tensor &reference, double atol, double rtol) {
  OutputError e;
  e.type = test.typeString();
  int64_t n = test.elementCount();
  double v, r;
  for (int64_t i = 0; i < n; ++i)
    if (elementAt(reference, i, r) && std::isfinite(r))
      e.refScale = std::max(e.refScale, std::fabs(r));
  for (int64_t i = 0; i < n; ++i) {
    if (!elementAt(test, i, v) || !elementAt(reference, i, r))
      continue;
    if (!std::isfinite(v) || !std::isfinite(r)) {
      bool same = (std::isnan(v) && std::isnan(r)) || v == r;
      if (!same) {
        ++e.nonFinite;
        ++e.outOfTolerance;
        if (std::isfinite(e.maxAbs)) { // the first non-finite mismatch is the worst
          e.maxAbs = INFINITY;
          e.worst = i, e.got = v, e.want = r;
        }
      }
      continue;
    }
    double diff = std::fabs(v - r);
    if (diff > atol + rtol * std::fabs(r))
      ++e.outOfTolerance;
    if (std::isfinite(e.maxAbs) && (diff > e.maxAbs || e.worst < 0)) {
      e.maxAbs = diff;
      e.worst = i, e.got = v, e.want = r;
    }
    if (std::fabs(r) > 0)
      e.maxRel = std::max(e.maxRel, diff / std::fabs(r));
  }
  e.diverges = e.nonFinite > 0 || e.maxAbs > atol + rtol * e.refScale;
  return e;
}

/// "[0, 3, 4]" for element `i` of `shape`.
std::string indexText(const std::vector<int64_t> &shape, int64_t i) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

std::string typeList(const std::vector<Tensor> &tensors) {
  std::string text;
  for (const Tensor &t : tensors)
    text += (text.empty() ? "" : ", ") + t.typeString();
  return text.empty() ? "(none)" : text;
}

/// One dispatch of the run under test, as compared.
struct DispatchReport {
  size_t index = 0;
  std::string kernel;
  std::string inputTypes;
  std::vector<OutputError> outputs;
  bool diverges = false;
};

//===--- the command --------------------------------------------------------===//

Result<artifact::Module> compileModel(const BisectArgs &args, bool reference,
                                      KernelSources *sources, std::string &corrupted) {
  compiler::CompileOptions options;
  options.targetCpu = args.targetCpu;
  options.optLevel = reference ? args.referenceOptLevel : args.optLevel;
  options.referenceKernels = reference;
  // One kernel per dispatch, so each is reported with its own source ops.
  options.deduplicateKernels = false;
  torch_frontend::ImportOptions torch;
  for (const std::string &text : args.inputShapes) {
    Result<torch_frontend::InputSpec> spec = torch_frontend::parseInputSpec(text);
    if (!spec)
      return Status::error("--input-shape: " + spec.message());
    torch.inputs.push_back(*spec);
  }
  for (const std::string &text : args.dynamicDims) {
    Result<torch_frontend::DynamicDim> dim = torch_frontend::parseDynamicDim(text);
    if (!dim)
      return Status::error("--dynamic-dim: " + dim.message());
    torch.dynamicDims.push_back(*dim);
  }
  // As `turbine compile`: a malformed archive's crash in libtorch, in a child
  // (once, on the first build, while this process is single-threaded).
  if (!reference && torch_frontend::looksLikeTorchScriptFile(args.model))
    if (Status loads = checkTorchScriptLoads(args.model); !loads)
      return loads;
  std::vector<std::unique_ptr<compiler::Importer>> importers;
  importers.push_back(onnx_frontend::createOnnxImporter());
  importers.push_back(torch_frontend::createTorchScriptImporter(std::move(torch)));
  Result<std::unique_ptr<compiler::Session>> session =
      createModelSession(std::move(options), std::move(importers));
  if (!session)
    return session.status();
  (*session)->addExtension(std::make_shared<BisectExtension>(
      sources, reference ? std::string() : args.corruptKernel, corrupted));
  compiler::Source source = compiler::Source::file(args.model);
  if ((!args.inputShapes.empty() || !args.dynamicDims.empty()) &&
      (*session)->formatOf(source) != "torchscript")
    return Status::error("--input-shape/--dynamic-dim apply to TorchScript models only, not '" +
                         args.model + "'");
  Result<compiler::CompileOutput> output = (*session)->compile(source);
  if (!output)
    return Status::error(std::string(reference ? "reference build: " : "") +
                         withFlagHints(output.message()));
  if (!output->artifact)
    return Status::error("the compile produced no artifact");
  return std::move(*output->artifact);
}

Result<runtime::Function> loadFunction(const artifact::Module &module, const std::string &label,
                                       const std::string &name,
                                       std::shared_ptr<runtime::Module> &keep) {
  Result<std::shared_ptr<runtime::Module>> loaded =
      runtime::Module::loadFromBytes(artifact::serialize(module), label);
  if (!loaded)
    return loaded.status();
  keep = *loaded;
  return selectFunction(*keep, name);
}

void printDispatch(const DispatchReport &d, const KernelSources &sources, bool detailed) {
  fmt::print("dispatch #{} {}{}\n", d.index, d.kernel, d.diverges ? "  DIVERGES" : "");
  if (!detailed)
    return;
  auto it = sources.find(d.kernel);
  std::string list;
  if (it != sources.end()) {
    size_t shown = 0;
    for (const std::string &s : it->second) {
      if (shown++ == 12) {
        list += ", ... (" + std::to_string(it->second.size()) + " in all)";
        break;
      }
      list += (list.empty() ? "" : ", ") + s;
    }
  }
  fmt::print("  source ops: {}\n", list.empty() ? "(no source locations)" : list);
  fmt::print("  inputs:     {}\n", d.inputTypes);
  for (size_t i = 0; i < d.outputs.size(); ++i) {
    const OutputError &e = d.outputs[i];
    fmt::print("  output {}:   {}: max abs err {:.3g}", i, e.type, e.maxAbs);
    if (e.worst >= 0)
      fmt::print(" at element {} (got {:.7g}, reference {:.7g})", e.worst, e.got, e.want);
    fmt::print(", max rel err {:.3g}, reference scale {:.3g}, {} element(s) out of tolerance",
               e.maxRel, e.refScale, e.outOfTolerance);
    if (e.nonFinite)
      fmt::print(", {} NaN/Inf mismatch(es)", e.nonFinite);
    fmt::print("{}\n", e.diverges ? "  <- diverges" : "");
  }
}

int runBisect(const BisectArgs &args) {
  if (args.atol < 0 || args.rtol < 0)
    return fail("--atol and --rtol must be non-negative");
  Result<std::vector<Tensor>> inputs = parseTensorSpecs(args.inputs, "--input");
  if (!inputs)
    return fail(inputs.message());

  KernelSources sources;
  std::string corrupted, unused;
  fmt::print("turbine bisect: compiling {} (the build under test, -O{})\n", args.model,
             args.optLevel);
  std::fflush(stdout);
  Result<artifact::Module> test = compileModel(args, false, &sources, corrupted);
  if (!test)
    return fail(test.message());
  if (!corrupted.empty())
    fmt::print("turbine bisect: test: kernel {} corrupted (its first float output + 1)\n",
               corrupted);
  std::shared_ptr<runtime::Module> testModule, referenceModule;
  Result<runtime::Function> testFn = loadFunction(*test, "<under test>", args.function, testModule);
  if (!testFn)
    return fail(testFn.message());
  if (Status s = testFn->validateInputs(*inputs); !s)
    return fail(s.message() + " (function " + testFn->signatureString() + ")");

  fmt::print("turbine bisect: compiling the reference (plain scalar kernels, -O{})\n",
             args.referenceOptLevel);
  std::fflush(stdout);
  Result<artifact::Module> reference = compileModel(args, true, nullptr, unused);
  if (!reference)
    return fail(reference.message());
  Result<runtime::Function> referenceFn =
      loadFunction(*reference, "<reference>", args.function, referenceModule);
  if (!referenceFn)
    return fail(referenceFn.message());
  Result<std::unique_ptr<runtime::Device>> device = runtime::Device::create("local-sync");
  if (!device)
    return fail(device.message());

  // The reference run: every dispatch's outputs, kept.
  struct Recorded {
    std::string kernel;
    std::vector<Tensor> outputs;
  };
  std::vector<Recorded> recorded;
  Result<std::vector<Tensor>> referenceResults = referenceFn->invoke(
      **device, *inputs, [&](DispatchEvent &e) -> Status {
        Recorded r;
        r.kernel = e.kernel;
        for (const Tensor &t : e.outputs) {
          Result<Tensor> copy = t.clone();
          if (!copy)
            return copy.status();
          r.outputs.push_back(std::move(*copy));
        }
        recorded.push_back(std::move(r));
        return Status::success();
      });
  if (!referenceResults)
    return fail("running the reference: " + referenceResults.message());

  // The run under test: compared dispatch by dispatch.
  std::vector<DispatchReport> reports;
  Result<std::vector<Tensor>> testResults = testFn->invoke(
      **device, *inputs, [&](DispatchEvent &e) -> Status {
        if (e.index >= recorded.size())
          return Status::error("the build under test runs more dispatches (" +
                               std::to_string(e.index + 1) + "+) than the reference (" +
                               std::to_string(recorded.size()) + ")");
        const Recorded &r = recorded[e.index];
        if (r.kernel != e.kernel || r.outputs.size() != e.outputs.size())
          return Status::error("dispatch #" + std::to_string(e.index) + " runs kernel " +
                               e.kernel + " in the build under test but " + r.kernel +
                               " in the reference: the builds do not line up");
        DispatchReport d;
        d.index = e.index;
        d.kernel = e.kernel;
        d.inputTypes = typeList(e.inputs);
        for (size_t i = 0; i < e.outputs.size(); ++i) {
          if (e.outputs[i].shape() != r.outputs[i].shape() ||
              e.outputs[i].dtype() != r.outputs[i].dtype())
            return Status::error("dispatch #" + std::to_string(e.index) + " output " +
                                 std::to_string(i) + " is " + e.outputs[i].typeString() +
                                 " but " + r.outputs[i].typeString() + " in the reference");
          d.outputs.push_back(compare(e.outputs[i], r.outputs[i], args.atol, args.rtol));
          d.diverges = d.diverges || d.outputs.back().diverges;
          // Isolation: later kernels read the reference's values.
          if (!args.propagate && e.outputs[i].dtype() != DType::string)
            std::memcpy(e.outputs[i].data(), r.outputs[i].data(), r.outputs[i].byteSize());
        }
        reports.push_back(std::move(d));
        return Status::success();
      });
  if (!testResults)
    return fail("running the build under test: " + testResults.message());
  if (reports.size() != recorded.size())
    return fail("the build under test ran " + std::to_string(reports.size()) +
                " dispatches, the reference " + std::to_string(recorded.size()));

  size_t divergent = 0;
  const DispatchReport *first = nullptr;
  for (const DispatchReport &d : reports)
    if (d.diverges) {
      ++divergent;
      if (!first)
        first = &d;
    }
  fmt::print("turbine bisect: {} dispatches compared ({}; tolerance: atol {:g} + rtol {:g} "
             "x max |reference| per output)\n",
             reports.size(), args.propagate ? "errors propagate" : "each kernel on reference inputs",
             args.atol, args.rtol);
  if (args.all)
    for (const DispatchReport &d : reports)
      printDispatch(d, sources, true);
  // The final results end to end, for orientation: with isolation the
  // observed run ends on the reference's values, so the build under test
  // runs once more on its own.
  Result<std::vector<Tensor>> endToEnd =
      args.propagate ? std::move(testResults) : testFn->invoke(**device, *inputs);
  if (!endToEnd)
    return fail("running the build under test: " + endToEnd.message());
  for (size_t i = 0; i < endToEnd->size() && i < referenceResults->size(); ++i) {
    OutputError e = compare((*endToEnd)[i], (*referenceResults)[i], args.atol, args.rtol);
    fmt::print("result {}: {}: max abs err {:.3g}, max rel err {:.3g} vs the reference "
               "(end to end)\n",
               i, e.type, e.maxAbs, e.maxRel);
  }
  if (!first) {
    fmt::print("turbine bisect: no dispatch diverges\n");
    return 0;
  }
  fmt::print("turbine bisect: {} of {} dispatches diverge; the first:\n", divergent,
             reports.size());
  printDispatch(*first, sources, true);
  return 1;
}

} // namespace

void registerBisectCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<BisectArgs>();
  CLI::App *cmd = app.add_subcommand(
      "bisect", "Find the first dispatch whose results diverge from plain reference kernels");
  cmd->add_option("model", args->model, "Model file (.onnx, .pt, .mlir)")->required();
  cmd->add_option("--input", args->inputs,
                  "An input value, as for `turbine run` (2x2xf32=1 2 3 4, @x.npy); one per "
                  "function input, in order");
  cmd->add_option("--function", args->function, "Function to run (default: the only one)");
  cmd->add_option("--input-shape", args->inputShapes,
                  "TorchScript only: shape and dtype of a forward input, one per input in order");
  cmd->add_option("--dynamic-dim", args->dynamicDims,
                  "TorchScript only: <input index or name>:<dim> left symbolic; repeatable");
  cmd->add_option("--atol", args->atol, "Absolute tolerance per element")->capture_default_str();
  cmd->add_option("--rtol", args->rtol,
                  "Tolerance relative to the largest |reference| value of an output")
      ->capture_default_str();
  cmd->add_option("--opt-level", args->optLevel, "LLVM optimization level of the build under test")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  cmd->add_option("--reference-opt-level", args->referenceOptLevel,
                  "LLVM optimization level of the reference kernels")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  cmd->add_option("--target-cpu", args->targetCpu, "LLVM CPU name for kernels ('host' = this "
                                                   "machine)");
  cmd->add_flag("--propagate", args->propagate,
                "Let each kernel read the build under test's own earlier results (default: "
                "the reference's, so each kernel is checked in isolation)");
  cmd->add_flag("--all", args->all, "Print every dispatch, not only the first divergent one");
  cmd->add_option("--test-corrupt-kernel", args->corruptKernel,
                  "Testing: add 1 to the first float output of this kernel (symbol name, or "
                  "#N for the N-th kernel) in the build under test")
      ->group(""); // hidden
  cmd->callback([args, &exitCode] { exitCode = runBisect(*args); });
}

} // namespace turbine::tools
