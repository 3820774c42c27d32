//===- CustomOpBindings.cpp - Python custom ops in the kernels/ registry --===//
//
// A Python CustomOp (turbine_torch/custom_op.py) is registered here as a
// kernels/ CustomOp (CustomOp.h) whose select and generate steps call back
// into Python, so one definition serves:
//   * eager calls (call_custom_op -> kernels::callCustomOp: select, generate
//     cached per selection, launch; the torch.library implementation of the
//     op calls this),
//   * models: the TorchScript importer types a call of the op with its
//     select step (TorchScriptCompiler.cpp) and expandCustomOpCalls turns the
//     call into the op's own dispatch, or inlines a tensor-level body.
// The body kinds: "kernel" (generate returns a traced Kernel), "mlir_kernel"
// (hand-written vector-level kernel text and its grid: MLIRKernelBody),
// "tensor" (a func.func on tensors the compiler fuses).
//
// The callbacks take the GIL themselves: they run from C++ code that may
// have released it (a launch, a compile inside a torch op). A Python
// exception in select or generate becomes the custom op's error message.
//===----------------------------------------------------------------------===//
#include "PythonBindings.h"
#include "TensorInterop.h"

#include "turbine/kernels/CustomOp.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

namespace py = pybind11;

namespace turbine::torch_ext {
namespace {

using namespace turbine::kernels;

struct CustomOpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The message of the Python exception being handled.
std::string pythonMessage(py::error_already_set &e) {
  std::string message = py::str(e.value());
  if (!e.matches(PyExc_ValueError))
    message = std::string(py::str(e.type().attr("__name__"))) + ": " + message;
  return message;
}

py::list argsToPython(const std::vector<BufferSignature> &args) {
  py::list out;
  for (const BufferSignature &a : args)
    out.append(py::make_tuple(py::tuple(py::cast(a.shape)), std::string(dtypeName(a.dtype))));
  return out;
}

py::dict attributesToPython(const std::map<std::string, double> &attributes) {
  py::dict out;
  for (const auto &[name, value] : attributes)
    out[py::str(name)] = value;
  return out;
}

Result<BufferSignature> signatureFromPython(py::handle item, const std::string &what) {
  try {
    auto pair = item.cast<std::pair<std::vector<int64_t>, std::string>>();
    std::optional<DType> dtype = parseDType(pair.second);
    if (!dtype || *dtype == DType::string)
      return Status::error(what + ": unknown dtype '" + pair.second + "'");
    for (int64_t d : pair.first)
      if (d < 0)
        return Status::error(what + ": negative dim in a result shape");
    return BufferSignature{pair.first, *dtype};
  } catch (const py::cast_error &) {
    return Status::error(what + ": expected (shape, dtype), got " +
                         std::string(py::str(py::repr(item))));
  }
}

class PythonCustomOp : public CustomOp {
public:
  enum class Body { Kernel, MLIRKernel, Tensor };

  PythonCustomOp(std::string name, Body body, py::object select, py::object generate)
      : name_(std::move(name)), body_(body),
        // Kept for the process' lifetime: the registry outlives the
        // interpreter, and releasing them after it finalizes would crash.
        select_(new py::object(std::move(select))),
        generate_(new py::object(std::move(generate))) {}

  const std::string &name() const override { return name_; }

  Status select(const std::vector<BufferSignature> &args,
                CustomOpSelection &out) const override {
    py::gil_scoped_acquire gil;
    try {
      py::object r = (*select_)(argsToPython(args), attributesToPython(out.attributes));
      auto pair = r.cast<std::pair<py::list, std::map<std::string, int64_t>>>();
      out.results.clear();
      for (size_t i = 0; i < pair.first.size(); ++i) {
        Result<BufferSignature> s =
            signatureFromPython(pair.first[i], "select result " + std::to_string(i));
        if (!s.ok())
          return s.status();
        out.results.push_back(*s);
      }
      out.symbols = pair.second;
      return Status::success();
    } catch (py::error_already_set &e) {
      return Status::error(pythonMessage(e));
    } catch (const py::cast_error &e) {
      return Status::error(std::string("select must give (results, symbols): ") + e.what());
    }
  }

  Result<Kernel> generate(const CustomOpSelection &selection) const override {
    if (body_ != Body::Kernel)
      return Status::error("custom op '" + name_ + "' has an MLIR body");
    py::gil_scoped_acquire gil;
    try {
      py::object r = call(selection);
      if (!py::isinstance<Kernel>(r))
        return Status::error("generate must return a kernel (turbine_torch.kernel), got " +
                             std::string(py::str(py::repr(r))));
      return *r.cast<std::shared_ptr<Kernel>>();
    } catch (py::error_already_set &e) {
      return Status::error(pythonMessage(e));
    }
  }

  bool hasMLIRBody() const override { return body_ == Body::MLIRKernel; }
  Result<MLIRKernelBody> generateMLIR(const std::vector<BufferSignature> &,
                                      const CustomOpSelection &selection) const override {
    py::gil_scoped_acquire gil;
    try {
      auto pair = call(selection).cast<std::pair<std::string, std::vector<int64_t>>>();
      MLIRKernelBody body;
      body.function = pair.first;
      if (pair.second.empty() || pair.second.size() > 3)
        return Status::error("generate_mlir: the grid must have 1 to 3 axes");
      for (size_t i = 0; i < pair.second.size(); ++i)
        body.grid[i] = pair.second[i];
      return body;
    } catch (py::error_already_set &e) {
      return Status::error(pythonMessage(e));
    } catch (const py::cast_error &e) {
      return Status::error(std::string("generate_mlir must return (text, grid): ") + e.what());
    }
  }

  bool hasTensorBody() const override { return body_ == Body::Tensor; }
  Result<std::string> generateTensorFunction(const std::vector<BufferSignature> &,
                                             const CustomOpSelection &selection) const override {
    py::gil_scoped_acquire gil;
    try {
      return call(selection).cast<std::string>();
    } catch (py::error_already_set &e) {
      return Status::error(pythonMessage(e));
    } catch (const py::cast_error &e) {
      return Status::error(std::string("generate_tensor_mlir must return the text of one "
                                       "func.func: ") + e.what());
    }
  }

private:
  py::object call(const CustomOpSelection &selection) const {
    py::list results;
    for (const BufferSignature &r : selection.results)
      results.append(py::make_tuple(py::tuple(py::cast(r.shape)), std::string(dtypeName(r.dtype))));
    return (*generate_)(argsToPython(selection.arguments),
                        attributesToPython(selection.attributes), results,
                        py::cast(selection.symbols));
  }

  std::string name_;
  Body body_;
  py::object *select_;
  py::object *generate_;
};

std::vector<runtime::Tensor> tensorsOf(const std::string &op, py::sequence tensors) {
  std::vector<runtime::Tensor> out;
  for (size_t i = 0; i < py::len(tensors); ++i) {
    py::handle obj = tensors[i];
    if (!THPVariable_Check(obj.ptr()))
      throw py::type_error("custom op '" + op + "': argument " + std::to_string(i) +
                           " must be a torch.Tensor");
    try {
      out.push_back(toRuntimeTensor(THPVariable_Unpack(obj.ptr()),
                                    "custom op '" + op + "' argument " + std::to_string(i)));
    } catch (const c10::Error &e) {
      throw CustomOpError(e.what_without_backtrace());
    }
  }
  return out;
}

} // namespace

void bindCustomOps(py::module_ &m) {
  py::register_exception<CustomOpError>(m, "CustomOpError", PyExc_RuntimeError);

  m.def("register_custom_op", [](const std::string &name, const std::string &body,
                                 py::object select, py::object generate, bool replace) {
    PythonCustomOp::Body kind;
    if (body == "kernel")
      kind = PythonCustomOp::Body::Kernel;
    else if (body == "mlir_kernel")
      kind = PythonCustomOp::Body::MLIRKernel;
    else if (body == "tensor")
      kind = PythonCustomOp::Body::Tensor;
    else
      throw py::value_error("unknown custom-op body '" + body + "' (kernel, mlir_kernel, tensor)");
    if (replace)
      unregisterCustomOp(name);
    Status s = registerCustomOp(std::make_shared<PythonCustomOp>(name, kind, select, generate));
    if (!s.ok())
      throw CustomOpError(s.message());
  }, py::arg("name"), py::arg("body"), py::arg("select"), py::arg("generate"),
     py::arg("replace") = true);
  m.def("unregister_custom_op", &unregisterCustomOp, py::arg("name"));
  m.def("registered_custom_ops", &registeredCustomOps);
  m.def("call_custom_op", [](const std::string &name, py::sequence tensors, py::dict attributes) {
    std::vector<runtime::Tensor> args = tensorsOf(name, tensors);
    std::map<std::string, double> attrs;
    for (auto item : attributes)
      attrs[py::str(item.first)] = item.second.cast<double>();
    Result<std::vector<runtime::Tensor>> results = Status::error("not run");
    {
      py::gil_scoped_release release;
      results = callCustomOp(name, args, nullptr, attrs);
    }
    if (!results.ok())
      throw CustomOpError(results.message());
    py::list out;
    for (const runtime::Tensor &r : *results)
      out.append(py::reinterpret_steal<py::object>(
          THPVariable_Wrap(toTorchTensor(r, "custom op '" + name + "' result"))));
    return out;
  }, py::arg("name"), py::arg("tensors"), py::arg("attributes") = py::dict());
}

} // namespace turbine::torch_ext
