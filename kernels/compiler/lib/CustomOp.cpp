//===- CustomOp.cpp - Registry and eager calls of kernel-backed ops -------===//
#include "turbine/kernels/CustomOp.h"

#include <cstdio>
#include <iterator>
#include <map>
#include <mutex>

namespace turbine::kernels {
namespace {

class FunctionCustomOp : public CustomOp {
public:
  FunctionCustomOp(
      std::string name,
      std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
      std::function<Result<Kernel>(const CustomOpSelection &)> generate)
      : name_(std::move(name)), select_(std::move(select)),
        generate_(std::move(generate)) {}
  const std::string &name() const override { return name_; }
  Status select(const std::vector<BufferSignature> &args,
                CustomOpSelection &out) const override {
    return select_(args, out);
  }
  Result<Kernel> generate(const CustomOpSelection &selection) const override {
    return generate_(selection);
  }

private:
  std::string name_;
  std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select_;
  std::function<Result<Kernel>(const CustomOpSelection &)> generate_;
};

class MLIRFunctionCustomOp : public CustomOp {
public:
  MLIRFunctionCustomOp(
      std::string name,
      std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
      std::function<Result<MLIRKernelBody>(const std::vector<BufferSignature> &,
                                           const CustomOpSelection &)> generate)
      : name_(std::move(name)), select_(std::move(select)),
        generate_(std::move(generate)) {}
  const std::string &name() const override { return name_; }
  Status select(const std::vector<BufferSignature> &args,
                CustomOpSelection &out) const override {
    return select_(args, out);
  }
  Result<Kernel> generate(const CustomOpSelection &) const override {
    return Status::error("custom op '" + name_ + "' has a hand-written MLIR body");
  }
  bool hasMLIRBody() const override { return true; }
  Result<MLIRKernelBody> generateMLIR(const std::vector<BufferSignature> &args,
                                      const CustomOpSelection &selection) const override {
    return generate_(args, selection);
  }

private:
  std::string name_;
  std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select_;
  std::function<Result<MLIRKernelBody>(const std::vector<BufferSignature> &,
                                       const CustomOpSelection &)> generate_;
};

class TensorFunctionCustomOp : public CustomOp {
public:
  TensorFunctionCustomOp(
      std::string name,
      std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
      std::function<Result<std::string>(const std::vector<BufferSignature> &,
                                        const CustomOpSelection &)> generate)
      : name_(std::move(name)), select_(std::move(select)),
        generate_(std::move(generate)) {}
  const std::string &name() const override { return name_; }
  Status select(const std::vector<BufferSignature> &args,
                CustomOpSelection &out) const override {
    return select_(args, out);
  }
  Result<Kernel> generate(const CustomOpSelection &) const override {
    return Status::error("custom op '" + name_ + "' has a tensor-level body");
  }
  bool hasTensorBody() const override { return true; }
  Result<std::string> generateTensorFunction(const std::vector<BufferSignature> &args,
                                             const CustomOpSelection &selection) const override {
    return generate_(args, selection);
  }

private:
  std::string name_;
  std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select_;
  std::function<Result<std::string>(const std::vector<BufferSignature> &,
                                    const CustomOpSelection &)> generate_;
};

std::string tensorTypeText(const BufferSignature &s) {
  std::string t = "tensor<";
  for (int64_t d : s.shape)
    t += std::to_string(d) + "x";
  return t + std::string(dtypeName(s.dtype)) + ">";
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const CustomOp>> ops;
  /// Generated kernels by op name + selection key (kept alive: launches
  /// and specializations point at them).
  std::map<std::string, std::shared_ptr<const Kernel>> kernels;
};

Registry &registry() {
  static Registry r;
  return r;
}

std::string formatSignature(const BufferSignature &s) {
  std::string out;
  for (int64_t d : s.shape)
    out += std::to_string(d) + "x";
  return out + std::string(dtypeName(s.dtype));
}

std::string selectionKey(const std::string &name,
                         const std::vector<BufferSignature> &args,
                         const CustomOpSelection &selection) {
  std::string key = name + "(";
  for (const BufferSignature &a : args)
    key += formatSignature(a) + ",";
  key += ")->(";
  for (const BufferSignature &r : selection.results)
    key += formatSignature(r) + ",";
  key += ")";
  for (const auto &[symbol, value] : selection.symbols)
    key += symbol + "=" + std::to_string(value) + ";";
  char text[32];
  for (const auto &[attribute, value] : selection.attributes) {
    std::snprintf(text, sizeof(text), "%.17g", value);
    key += "@" + attribute + "=" + text + ";";
  }
  return key;
}

} // namespace

std::shared_ptr<const CustomOp> makeCustomOp(
    std::string name,
    std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
    std::function<Result<Kernel>(const CustomOpSelection &)> generate) {
  return std::make_shared<FunctionCustomOp>(std::move(name), std::move(select),
                                            std::move(generate));
}

std::shared_ptr<const CustomOp> makeMLIRCustomOp(
    std::string name,
    std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
    std::function<Result<MLIRKernelBody>(const std::vector<BufferSignature> &,
                                         const CustomOpSelection &)> generate) {
  return std::make_shared<MLIRFunctionCustomOp>(std::move(name), std::move(select),
                                                std::move(generate));
}

std::shared_ptr<const CustomOp> makeTensorCustomOp(
    std::string name,
    std::function<Status(const std::vector<BufferSignature> &, CustomOpSelection &)> select,
    std::function<Result<std::string>(const std::vector<BufferSignature> &,
                                      const CustomOpSelection &)> generate) {
  return std::make_shared<TensorFunctionCustomOp>(std::move(name), std::move(select),
                                                  std::move(generate));
}

std::string mlirBodyModule(const MLIRKernelBody &body,
                           const std::vector<BufferSignature> &args,
                           const std::vector<BufferSignature> &results) {
  std::string argTypes, resultTypes, argNames, resultNames;
  for (size_t i = 0; i < args.size(); ++i) {
    argTypes += (i ? ", " : "") + tensorTypeText(args[i]);
    argNames += (i ? ", " : "") + std::string("%arg") + std::to_string(i);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    resultTypes += (i ? ", " : "") + tensorTypeText(results[i]);
    resultNames += (i ? ", " : "") + std::string("%r") + std::to_string(i);
  }
  std::string params;
  for (size_t i = 0; i < args.size(); ++i)
    params += (i ? ", " : "") + std::string("%arg") + std::to_string(i) + ": " +
              tensorTypeText(args[i]);
  std::string text = "module {\n  func.func @main(" + params + ") -> (" +
                     resultTypes + ") {\n";
  for (int a = 0; a < 3; ++a)
    text += "    %grid" + std::to_string(a) + " = arith.constant " +
            std::to_string(body.grid[a]) + " : index\n";
  text += "    " + resultNames + " = turbine.dispatch @kernel[%grid0, %grid1, %grid2] (" +
          argNames + ") : (" + argTypes + ") -> (" + resultTypes + ")\n";
  text += "    return " + resultNames + " : " + resultTypes + "\n  }\n";
  text += "  module @kernels attributes {turbine.kernels} {\n" + body.function +
          "\n  }\n}\n";
  return text;
}

Status registerCustomOp(std::shared_ptr<const CustomOp> op) {
  if (!op || op->name().empty())
    return Status::error("custom op: cannot register an op without a name");
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.ops.count(op->name()))
    return Status::error("custom op '" + op->name() + "' is already registered");
  r.ops[op->name()] = std::move(op);
  return Status::success();
}

bool unregisterCustomOp(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.ops.erase(name))
    return false;
  std::string prefix = name + "(";
  for (auto it = r.kernels.begin(); it != r.kernels.end();)
    it = it->first.compare(0, prefix.size(), prefix) == 0 ? r.kernels.erase(it) : std::next(it);
  return true;
}

std::vector<std::string> registeredCustomOps() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto &[name, op] : r.ops)
    names.push_back(name);
  return names;
}

std::shared_ptr<const CustomOp> lookupCustomOp(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.ops.find(name);
  return it == r.ops.end() ? nullptr : it->second;
}

Result<std::vector<runtime::Tensor>>
callCustomOp(const std::string &name, const std::vector<runtime::Tensor> &args,
             runtime::Device *device, const std::map<std::string, double> &attributes) {
  std::shared_ptr<const CustomOp> op = lookupCustomOp(name);
  if (!op) {
    std::string known;
    {
      std::lock_guard<std::mutex> lock(registry().mutex);
      for (const auto &[n, _] : registry().ops)
        known += (known.empty() ? "" : ", ") + n;
    }
    return Status::error("custom op '" + name + "' is not registered (registered: " +
                         (known.empty() ? "none" : known) + ")");
  }
  std::vector<BufferSignature> signatures;
  for (const runtime::Tensor &t : args)
    signatures.push_back({t.shape(), t.dtype()});
  CustomOpSelection selection;
  selection.arguments = signatures;
  selection.attributes = attributes;
  if (Status s = op->select(signatures, selection); !s.ok())
    return Status::error("custom op '" + name + "': " + s.message());
  if (selection.results.empty())
    return Status::error("custom op '" + name + "': select chose no results");

  if (op->hasTensorBody()) {
    Result<std::string> function = op->generateTensorFunction(signatures, selection);
    if (!function.ok())
      return Status::error("custom op '" + name + "': " + function.message());
    return launchTensorModule("custom op '" + name + "'", "module {\n" + *function + "\n}\n",
                              args, device);
  }
  if (op->hasMLIRBody()) {
    Result<MLIRKernelBody> body = op->generateMLIR(signatures, selection);
    if (!body.ok())
      return Status::error("custom op '" + name + "': " + body.message());
    std::string text = mlirBodyModule(*body, signatures, selection.results);
    return launchModule("custom op '" + name + "'", text, args, device);
  }

  std::string key = selectionKey(name, signatures, selection);
  std::shared_ptr<const Kernel> kernel;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    auto it = registry().kernels.find(key);
    if (it != registry().kernels.end())
      kernel = it->second;
  }
  if (!kernel) {
    Result<Kernel> generated = op->generate(selection);
    if (!generated.ok())
      return Status::error("custom op '" + name + "': " + generated.message());
    const Kernel &k = *generated;
    size_t expected = args.size() + selection.results.size();
    if (k.buffers.size() != expected)
      return Status::error("custom op '" + name + "': generated kernel '" + k.name +
                           "' has " + std::to_string(k.buffers.size()) +
                           " buffers, expected " + std::to_string(args.size()) +
                           " arguments + " + std::to_string(selection.results.size()) +
                           " results");
    for (size_t i = 0; i < k.buffers.size(); ++i) {
      bool isArg = i < args.size();
      BufferKind want = isArg ? BufferKind::Input : BufferKind::Output;
      if (k.buffers[i].kind != want)
        return Status::error("custom op '" + name + "': buffer '" + k.buffers[i].name +
                             "' of kernel '" + k.name + "' must be an " +
                             bufferKindName(want) + " buffer");
    }
    kernel = std::make_shared<const Kernel>(std::move(*generated));
    std::lock_guard<std::mutex> lock(registry().mutex);
    registry().kernels.emplace(key, kernel);
  }

  std::vector<runtime::Tensor> buffers = args;
  std::vector<runtime::Tensor> results;
  for (const BufferSignature &r : selection.results) {
    Result<runtime::Tensor> t = runtime::Tensor::allocate(r.dtype, r.shape);
    if (!t.ok())
      return Status::error("custom op '" + name + "': " + t.message());
    results.push_back(*t);
    buffers.push_back(*t);
  }
  if (Status s = launch(*kernel, buffers, selection.symbols, device); !s.ok())
    return Status::error("custom op '" + name + "': " + s.message());
  return results;
}

} // namespace turbine::kernels
