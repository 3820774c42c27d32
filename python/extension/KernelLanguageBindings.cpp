//===- KernelLanguageBindings.cpp - The kernel language from Python -------===//
//
// Binds kernels/ Language.h one to one: Python calls the same functions the
// C++ front end calls, so a kernel traced in Python is the same graph
// (KernelGraph.h) the C++ form of it gives, printed identically. Python
// sugar (symbols, buffer annotations, the @kernel decorator, for_loop as a
// decorator) is in turbine_torch/kernel.py.
//
// Every op binding records the calling Python line (file:line) as the
// location of the op (setTraceLocation), so trace errors name the Python
// source ("op #4 'add' at attention.py:31: shape mismatch ..."). Errors of
// the kernel language raise turbine_torch._native.KernelError (a
// ValueError); misuse of the binding (wrong Python types) raises TypeError.
//
// Mixed operands follow Language.h: a Python int or float next to a tile is
// a rank-0 constant of the tile's dtype, an Expr a symbolic constant.
//
// launch() is the eager path on torch tensors: no tensor objects are made
// per call; the buffers' pointers and shapes go straight to
// kernels::launchBuffers (Launch.h), with the GIL released while the kernel
// runs (and while it compiles, on first use).
//===----------------------------------------------------------------------===//
#include "PythonBindings.h"
#include "TensorInterop.h"

#include "turbine/kernels/Interpreter.h"
#include "turbine/kernels/KernelLibrary.h"
#include "turbine/kernels/Language.h"
#include "turbine/kernels/Launch.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <frameobject.h>

namespace py = pybind11;

namespace turbine::torch_ext {
namespace {

using namespace turbine::kernels;

/// Errors of the kernel language (trace, specialization, launch).
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

DType parseDtype(const std::string &name) {
  std::optional<DType> d = parseDType(name);
  if (!d || *d == DType::string)
    throw py::value_error("unknown dtype '" + name +
                          "' (f16, bf16, f32, f64, i1, i8, i16, i32, i64)");
  return *d;
}

std::string dtypeText(DType t) { return std::string(dtypeName(t)); }

/// A dtype argument: a name ("f32", or turbine_torch.kernel's f32, a str)
/// or a torch.dtype.
DType dtypeArg(py::handle dtype) {
  if (py::isinstance<py::str>(dtype))
    return parseDtype(dtype.cast<std::string>());
  std::string text = py::str(dtype);
  static const std::map<std::string, DType> torchNames = {
      {"torch.float16", DType::f16}, {"torch.bfloat16", DType::bf16},
      {"torch.float32", DType::f32}, {"torch.float64", DType::f64},
      {"torch.bool", DType::i1},     {"torch.int8", DType::i8},
      {"torch.int16", DType::i16},   {"torch.int32", DType::i32},
      {"torch.int64", DType::i64}};
  auto it = torchNames.find(text);
  if (it == torchNames.end())
    throw py::value_error("unknown dtype " + text + " (f16, bf16, f32, f64, i1, i8, i16, i32, i64)");
  return it->second;
}

/// The calling Python line, "file.py:12" (basename), or "".
std::string callerLocation() {
  PyFrameObject *frame = PyEval_GetFrame();
  if (!frame)
    return "";
  int line = PyFrame_GetLineNumber(frame);
  PyCodeObject *code = PyFrame_GetCode(frame);
  py::object filename = py::reinterpret_steal<py::object>(
      PyObject_GetAttrString(reinterpret_cast<PyObject *>(code), "co_filename"));
  Py_DECREF(code);
  if (!filename) {
    PyErr_Clear();
    return "";
  }
  std::string file = py::str(filename);
  size_t slash = file.rfind('/');
  if (slash != std::string::npos)
    file = file.substr(slash + 1);
  return file + ":" + std::to_string(line);
}

/// Before an op: it must be traced, and it gets the caller's location.
void beginOp(const char *what) {
  if (!isTracing())
    throw KernelError(std::string(what) +
                      ": kernel-language functions record ops only while a kernel is "
                      "traced (inside the body of a @kernel function)");
  setTraceLocation(callerLocation());
}

/// `o` as a tile operand next to `like`: a Tile, an Expr (symbolic
/// constant) or a Python number (constant of like's dtype).
Tile operand(py::handle o, const Tile &like, const char *what) {
  if (py::isinstance<Tile>(o))
    return o.cast<Tile>();
  if (py::isinstance<Expr>(o))
    return constant(o.cast<Expr>(), like.dtype());
  if (py::isinstance<py::bool_>(o) || py::isinstance<py::int_>(o) ||
      py::isinstance<py::float_>(o))
    return constant(o.cast<double>(), {}, like.dtype());
  throw py::type_error(std::string(what) + ": unsupported operand of type '" +
                       std::string(py::str(o.get_type().attr("__name__"))) +
                       "' (a Tile, an Expr or a number)");
}

std::vector<Expr> exprs(py::handle seq, const char *what) {
  std::vector<Expr> out;
  if (py::isinstance<Expr>(seq) || py::isinstance<py::int_>(seq)) {
    out.push_back(seq.cast<Expr>());
    return out;
  }
  if (!py::isinstance<py::sequence>(seq) || py::isinstance<py::str>(seq))
    throw py::type_error(std::string(what) + ": expected a tuple of ints and symbols");
  for (py::handle item : seq) {
    if (py::isinstance<Expr>(item))
      out.push_back(item.cast<Expr>());
    else if (py::isinstance<py::int_>(item))
      out.push_back(Expr(item.cast<int64_t>()));
    else
      throw py::type_error(std::string(what) + ": '" +
                           std::string(py::str(py::repr(item))) +
                           "' is not an int or a symbol");
  }
  return out;
}

using TileBinary = Tile (*)(const Tile &, const Tile &);

/// Binds `name` and its reflected form for a binary tile operator.
void bindBinary(py::class_<Tile> &cls, const char *name, const char *reflected, TileBinary op) {
  cls.def(name, [op, name](const Tile &a, py::object b) {
    beginOp(name);
    Tile tb = operand(b, a, name);
    return op(a, tb);
  }, py::is_operator());
  if (reflected)
    cls.def(reflected, [op, reflected](const Tile &a, py::object b) {
      beginOp(reflected);
      Tile tb = operand(b, a, reflected);
      return op(tb, a);
    }, py::is_operator());
}

std::string tileRepr(const Tile &t) {
  if (!t.valid())
    return "Tile(<invalid: the trace already failed>)";
  return "Tile(%" + std::to_string(t.id()) + ": " + formatTileType({t.shape(), t.dtype()}) + ")";
}

py::dict statsDict(const LaunchStats &s) {
  py::dict d;
  d["memory_hits"] = s.memoryHits;
  d["disk_hits"] = s.diskHits;
  d["misses"] = s.misses;
  d["corrupt_entries"] = s.corruptEntries;
  d["compile_ms"] = s.compileMillis;
  return d;
}

Bindings toBindings(py::handle symbols) {
  Bindings out;
  if (symbols.is_none())
    return out;
  for (auto item : py::reinterpret_borrow<py::dict>(symbols)) {
    py::handle value = item.second;
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
      throw py::type_error("symbol '" + std::string(py::str(item.first)) +
                           "' must be bound to an int, got " +
                           std::string(py::str(py::repr(value))));
    out[py::str(item.first)] = value.cast<int64_t>();
  }
  return out;
}

/// Checks the tensor arguments of a launch or an interpreter run; inputs
/// that are not contiguous are copied into `keep`.
const at::Tensor &checkedTensor(const Kernel &k, size_t i, py::handle obj,
                                std::vector<at::Tensor> &keep) {
  if (!THPVariable_Check(obj.ptr()))
    throw py::type_error("kernel '" + k.name + "': buffer '" + k.buffers[i].name +
                         "' must be a torch.Tensor, got " +
                         std::string(py::str(obj.get_type().attr("__name__"))));
  const at::Tensor &t = THPVariable_Unpack(obj.ptr());
  if (!t.device().is_cpu())
    throw KernelError("kernel '" + k.name + "': buffer '" + k.buffers[i].name +
                      "' is on " + t.device().str() + "; Turbine kernels run on CPU tensors");
  if (t.is_contiguous())
    return t;
  if (k.buffers[i].kind != BufferKind::Input)
    throw KernelError("kernel '" + k.name + "': " + bufferKindName(k.buffers[i].kind) +
                      " buffer '" + k.buffers[i].name +
                      "' must be contiguous (the kernel writes it in place)");
  keep.push_back(t.contiguous());
  return keep.back();
}

void checkCount(const Kernel &k, size_t count) {
  if (count == k.buffers.size())
    return;
  std::string names;
  for (const BufferDecl &b : k.buffers)
    names += (names.empty() ? "" : ", ") + b.name;
  throw KernelError("kernel '" + k.name + "' takes " + std::to_string(k.buffers.size()) +
                    " buffers (" + names + "), got " + std::to_string(count));
}

DType tensorDtype(const Kernel &k, size_t i, const at::Tensor &t) {
  try {
    return toDType(t.scalar_type(), "kernel '" + k.name + "': buffer '" + k.buffers[i].name + "'");
  } catch (const c10::Error &e) {
    throw KernelError(e.what_without_backtrace());
  }
}

void launchOnTensors(const Kernel &k, py::sequence tensors, py::handle symbols) {
  size_t count = py::len(tensors);
  checkCount(k, count);
  std::vector<at::Tensor> keep;
  keep.reserve(count);
  LaunchBuffer stackBuffers[8];
  std::vector<LaunchBuffer> heapBuffers;
  LaunchBuffer *buffers = stackBuffers;
  if (count > 8) {
    heapBuffers.resize(count);
    buffers = heapBuffers.data();
  }
  for (size_t i = 0; i < count; ++i) {
    const at::Tensor &t = checkedTensor(k, i, tensors[i], keep);
    buffers[i].data = t.data_ptr();
    buffers[i].dtype = tensorDtype(k, i, t);
    buffers[i].shape = t.sizes().data();
    buffers[i].rank = static_cast<size_t>(t.dim());
    buffers[i].readOnly = false;
  }
  Bindings bound = toBindings(symbols);
  Status s;
  {
    py::gil_scoped_release release;
    s = launchBuffers(k, buffers, count, bound);
  }
  if (!s.ok())
    throw KernelError(s.message());
}

py::dict timeOnTensors(const Kernel &k, py::sequence tensors, py::handle symbols,
                       int repetitions) {
  size_t count = py::len(tensors);
  checkCount(k, count);
  std::vector<at::Tensor> keep;
  std::vector<LaunchBuffer> buffers(count);
  for (size_t i = 0; i < count; ++i) {
    const at::Tensor &t = checkedTensor(k, i, tensors[i], keep);
    buffers[i] = {t.data_ptr(), tensorDtype(k, i, t), t.sizes().data(),
                  static_cast<size_t>(t.dim()), false};
  }
  Bindings bound = toBindings(symbols);
  Result<LaunchTimings> t = Status::error("not run");
  {
    py::gil_scoped_release release;
    t = timeLaunches(k, buffers.data(), count, bound, repetitions);
  }
  if (!t.ok())
    throw KernelError(t.message());
  py::dict d;
  d["launch_s"] = t->launchSeconds;
  d["dispatch_s"] = t->dispatchSeconds;
  return d;
}

void interpretOnTensors(const Kernel &k, py::sequence tensors, py::handle symbols) {
  size_t count = py::len(tensors);
  checkCount(k, count);
  std::vector<at::Tensor> keep;
  std::vector<runtime::Tensor> buffers;
  for (size_t i = 0; i < count; ++i) {
    const at::Tensor &t = checkedTensor(k, i, tensors[i], keep);
    tensorDtype(k, i, t);
    buffers.push_back(toRuntimeTensor(t, "kernel '" + k.name + "': buffer '" + k.buffers[i].name + "'"));
  }
  Bindings bound = toBindings(symbols);
  Status s;
  {
    py::gil_scoped_release release;
    s = interpret(k, buffers, bound);
  }
  if (!s.ok())
    throw KernelError(s.message());
}

std::vector<BufferSignature> signaturesOf(const Kernel &k, py::sequence specs) {
  checkCount(k, py::len(specs));
  std::vector<BufferSignature> out;
  for (size_t i = 0; i < py::len(specs); ++i) {
    py::handle item = specs[i];
    if (THPVariable_Check(item.ptr())) {
      const at::Tensor &t = THPVariable_Unpack(item.ptr());
      out.push_back({t.sizes().vec(), tensorDtype(k, i, t)});
      continue;
    }
    auto pair = item.cast<std::pair<std::vector<int64_t>, std::string>>();
    out.push_back({pair.first, parseDtype(pair.second)});
  }
  return out;
}

std::shared_ptr<Kernel> unwrap(Result<Kernel> k) {
  if (!k.ok())
    throw KernelError(k.message());
  return std::make_shared<Kernel>(std::move(*k));
}

} // namespace

void bindKernelLanguage(py::module_ &m) {
  py::register_exception<KernelError>(m, "KernelError", PyExc_ValueError);

  // Symbolic integers.
  py::class_<Expr> expr(m, "Expr");
  expr.def(py::init<int64_t>())
      .def("__repr__", &Expr::str)
      .def("__str__", &Expr::str)
      .def_property_readonly("is_symbol", [](const Expr &e) { return e.kind() == Expr::Kind::Symbol; })
      .def_property_readonly("name", [](const Expr &e) { return e.name(); })
      .def("same", &Expr::same)
      .def("__bool__", [](const Expr &e) -> bool {
        throw py::type_error("the symbolic value '" + e.str() +
                             "' has no truth value while tracing (Python `if`/`while` on "
                             "symbols is not traced; use tk.select on tiles)");
      })
      .def("__hash__", [](const Expr &e) { return std::hash<std::string>{}(e.str()); });
  auto exprOps = [&](const char *name, const char *reflected, Expr (*op)(const Expr &, const Expr &)) {
    expr.def(name, [op](const Expr &a, const Expr &b) { return op(a, b); }, py::is_operator());
    expr.def(name, [op](const Expr &a, int64_t b) { return op(a, Expr(b)); }, py::is_operator());
    if (reflected)
      expr.def(reflected, [op](const Expr &a, int64_t b) { return op(Expr(b), a); }, py::is_operator());
  };
  exprOps("__add__", "__radd__", [](const Expr &a, const Expr &b) { return a + b; });
  exprOps("__sub__", "__rsub__", [](const Expr &a, const Expr &b) { return a - b; });
  exprOps("__mul__", "__rmul__", [](const Expr &a, const Expr &b) { return a * b; });
  exprOps("__floordiv__", "__rfloordiv__", [](const Expr &a, const Expr &b) { return floordiv(a, b); });
  exprOps("__mod__", "__rmod__", [](const Expr &a, const Expr &b) { return a % b; });
  expr.def("__neg__", [](const Expr &a) { return Expr(0) - a; });
  py::implicitly_convertible<py::int_, Expr>();

  m.def("symbol", &Expr::symbol, py::arg("name"));
  m.def("ceildiv", [](const Expr &a, const Expr &b) { return ceildiv(a, b); });
  m.def("floordiv", [](const Expr &a, const Expr &b) { return floordiv(a, b); });
  m.def("smin", [](const Expr &a, const Expr &b) { return kernels::min(a, b); });
  m.def("smax", [](const Expr &a, const Expr &b) { return kernels::max(a, b); });
  m.def("program_id", [](int axis) {
    if (isTracing())
      setTraceLocation(callerLocation());
    return program_id(axis);
  }, py::arg("axis"));

  // Tiles and their operators.
  py::class_<Tile> tile(m, "Tile");
  tile.def_property_readonly("shape", [](const Tile &t) { return t.shape(); })
      .def_property_readonly("dtype", [](const Tile &t) { return dtypeText(t.dtype()); })
      .def_property_readonly("valid", &Tile::valid)
      .def("__repr__", &tileRepr)
      .def("__bool__", [](const Tile &t) -> bool {
        throw py::type_error(tileRepr(t) +
                             " has no truth value while tracing: Python `if`, `while`, "
                             "`and`, `or` and `not` on tiles are not traced (use "
                             "tk.select(cond, a, b) for elementwise choices)");
      })
      .def("__neg__", [](const Tile &t) { beginOp("neg"); return -t; })
      .def("__abs__", [](const Tile &t) { beginOp("abs"); return kernels::abs(t); });
  bindBinary(tile, "__add__", "__radd__", [](const Tile &a, const Tile &b) { return a + b; });
  bindBinary(tile, "__sub__", "__rsub__", [](const Tile &a, const Tile &b) { return a - b; });
  bindBinary(tile, "__mul__", "__rmul__", [](const Tile &a, const Tile &b) { return a * b; });
  bindBinary(tile, "__truediv__", "__rtruediv__", [](const Tile &a, const Tile &b) { return a / b; });
  bindBinary(tile, "__lt__", nullptr, [](const Tile &a, const Tile &b) { return a < b; });
  bindBinary(tile, "__le__", nullptr, [](const Tile &a, const Tile &b) { return a <= b; });
  bindBinary(tile, "__gt__", nullptr, [](const Tile &a, const Tile &b) { return a > b; });
  bindBinary(tile, "__ge__", nullptr, [](const Tile &a, const Tile &b) { return a >= b; });
  bindBinary(tile, "__eq__", nullptr, [](const Tile &a, const Tile &b) { return a == b; });
  bindBinary(tile, "__ne__", nullptr, [](const Tile &a, const Tile &b) { return a != b; });

  py::class_<Buffer>(m, "Buffer").def_property_readonly("index", &Buffer::index);
  py::class_<Masked>(m, "Masked").def_readonly("padding", &Masked::padding);
  m.def("masked", &masked, py::arg("padding") = 0.0);

  py::class_<KernelBuilder>(m, "KernelBuilder")
      .def("input", [](KernelBuilder &kb, const std::string &name, py::object shape, py::object dtype) {
        return kb.input(name, exprs(shape, "buffer shape"), dtypeArg(dtype));
      })
      .def("output", [](KernelBuilder &kb, const std::string &name, py::object shape, py::object dtype) {
        return kb.output(name, exprs(shape, "buffer shape"), dtypeArg(dtype));
      })
      .def("inout", [](KernelBuilder &kb, const std::string &name, py::object shape, py::object dtype) {
        return kb.inout(name, exprs(shape, "buffer shape"), dtypeArg(dtype));
      })
      .def("dynamic", [](KernelBuilder &kb, const Expr &symbol, int64_t max, int64_t multipleOf) {
        kb.dynamic(symbol, {max, multipleOf});
      }, py::arg("symbol"), py::arg("max") = 0, py::arg("multiple_of") = 1);

  m.def("trace", [](const std::string &name, py::object grid, py::function body) {
    std::vector<Expr> axes = exprs(grid, "grid");
    Result<Kernel> k = trace(name, axes, [&](KernelBuilder &kb) {
      body(py::cast(&kb, py::return_value_policy::reference));
    });
    setTraceLocation("");
    return unwrap(std::move(k));
  }, py::arg("name"), py::arg("grid"), py::arg("body"));

  // Ops.
  m.def("load", [](const Buffer &b, py::object offsets, py::object shape, py::object mask) {
    beginOp("load");
    std::vector<Expr> o = exprs(offsets, "load offsets"), s = exprs(shape, "load shape");
    if (mask.is_none())
      return load(b, o, s);
    return load(b, o, s, mask.cast<Masked>());
  }, py::arg("buffer"), py::arg("offsets"), py::arg("shape"), py::arg("mask") = py::none());
  m.def("store", [](const Buffer &b, py::object offsets, const Tile &value, py::object mask) {
    beginOp("store");
    std::vector<Expr> o = exprs(offsets, "store offsets");
    if (mask.is_none())
      store(b, o, value);
    else
      store(b, o, value, mask.cast<Masked>());
  }, py::arg("buffer"), py::arg("offsets"), py::arg("value"), py::arg("mask") = py::none());
  m.def("constant", [](py::object value, py::object shape, py::object dtype) {
    beginOp("constant");
    if (py::isinstance<Expr>(value)) {
      if (!shape.is_none() && py::len(shape) != 0)
        throw py::type_error("constant: a symbolic value makes a rank-0 tile (no shape)");
      return constant(value.cast<Expr>(), dtypeArg(dtype));
    }
    std::vector<Expr> s = shape.is_none() ? std::vector<Expr>{} : exprs(shape, "constant shape");
    return constant(value.cast<double>(), s, dtypeArg(dtype));
  }, py::arg("value"), py::arg("shape") = py::none(), py::arg("dtype") = "f32");
  m.def("iota", [](py::object shape, int axis, py::object dtype) {
    beginOp("iota");
    return iota(exprs(shape, "iota shape"), axis, dtypeArg(dtype));
  }, py::arg("shape"), py::arg("axis"), py::arg("dtype") = "i32");

#define TURBINE_UNARY(NAME)                                                   \
  m.def(#NAME, [](const Tile &x) { beginOp(#NAME); return kernels::NAME(x); }, py::arg("x"));
  TURBINE_UNARY(exp)
  TURBINE_UNARY(exp2)
  TURBINE_UNARY(log)
  TURBINE_UNARY(sqrt)
  TURBINE_UNARY(rsqrt)
  TURBINE_UNARY(tanh)
  TURBINE_UNARY(abs)
#undef TURBINE_UNARY
  m.def("maximum", [](py::object a, py::object b) {
    beginOp("maximum");
    if (py::isinstance<Tile>(a))
      return maximum(a.cast<Tile>(), operand(b, a.cast<Tile>(), "maximum"));
    Tile tb = b.cast<Tile>();
    return maximum(operand(a, tb, "maximum"), tb);
  });
  m.def("minimum", [](py::object a, py::object b) {
    beginOp("minimum");
    if (py::isinstance<Tile>(a))
      return minimum(a.cast<Tile>(), operand(b, a.cast<Tile>(), "minimum"));
    Tile tb = b.cast<Tile>();
    return minimum(operand(a, tb, "minimum"), tb);
  });
  m.def("select", [](const Tile &cond, py::object a, py::object b) {
    beginOp("select");
    if (py::isinstance<Tile>(a)) {
      Tile ta = a.cast<Tile>();
      return select(cond, ta, operand(b, ta, "select"));
    }
    if (!py::isinstance<Tile>(b))
      throw py::type_error("select: one of the two values must be a Tile (its dtype is the result's)");
    Tile tb = b.cast<Tile>();
    return select(cond, operand(a, tb, "select"), tb);
  }, py::arg("cond"), py::arg("a"), py::arg("b"));
  m.def("max", [](const Tile &x, int axis) { beginOp("max"); return kernels::max(x, axis); },
        py::arg("x"), py::arg("axis") = -1);
  m.def("min", [](const Tile &x, int axis) { beginOp("min"); return kernels::min(x, axis); },
        py::arg("x"), py::arg("axis") = -1);
  m.def("sum", [](const Tile &x, int axis) { beginOp("sum"); return kernels::sum(x, axis); },
        py::arg("x"), py::arg("axis") = -1);
  m.def("broadcast", [](const Tile &x, py::object shape) {
    beginOp("broadcast");
    return broadcast(x, exprs(shape, "broadcast shape"));
  }, py::arg("x"), py::arg("shape"));
  m.def("transpose", [](const Tile &x, std::vector<int> perm) {
    beginOp("transpose");
    return transpose(x, perm);
  }, py::arg("x"), py::arg("perm") = std::vector<int>{1, 0});
  m.def("reshape", [](const Tile &x, py::object shape) {
    beginOp("reshape");
    return reshape(x, exprs(shape, "reshape shape"));
  }, py::arg("x"), py::arg("shape"));
  m.def("to_dtype", [](const Tile &x, py::object dtype) {
    beginOp("to_dtype");
    return to_dtype(x, dtypeArg(dtype));
  }, py::arg("x"), py::arg("dtype"));
  m.def("dot", [](const Tile &a, const Tile &b, const Tile &acc) {
    beginOp("dot");
    return dot(a, b, acc);
  }, py::arg("a"), py::arg("b"), py::arg("acc"));
  m.def("for_loop", [](const Expr &start, const Expr &stop, const Expr &step,
                       std::vector<Tile> init, py::function body, std::string location) {
    beginOp("for_loop");
    if (location.empty())
      location = callerLocation();
    setTraceLocation(location);
    std::vector<Tile> results = detail::forLoop(
        start, stop, step, init, [&](const Expr &k, std::vector<Tile> &carried) {
          py::tuple args(1 + carried.size());
          args[0] = py::cast(k);
          for (size_t i = 0; i < carried.size(); ++i)
            args[1 + i] = py::cast(carried[i]);
          py::object next = body(*args);
          std::vector<Tile> values;
          if (py::isinstance<Tile>(next))
            values.push_back(next.cast<Tile>());
          else if (py::isinstance<py::sequence>(next))
            for (py::handle v : next) {
              if (!py::isinstance<Tile>(v))
                throw py::type_error("for_loop body (" + location + ") must return Tiles, got " +
                                     std::string(py::str(py::repr(v))));
              values.push_back(v.cast<Tile>());
            }
          else if (!next.is_none() || !carried.empty())
            throw py::type_error("for_loop body (" + location +
                                 ") must return the next value of each carried tile");
          if (values.size() != carried.size())
            throw py::value_error("for_loop body (" + location + ") returned " +
                                  std::to_string(values.size()) + " values for " +
                                  std::to_string(carried.size()) + " carried tiles");
          carried = values;
          setTraceLocation(location);
        });
    return results;
  }, py::arg("start"), py::arg("stop"), py::arg("step"), py::arg("init"), py::arg("body"),
     py::arg("location") = "");

  // Traced kernels.
  py::class_<Kernel, std::shared_ptr<Kernel>>(m, "Kernel")
      .def_readonly("name", &Kernel::name)
      .def_readonly("fingerprint", &Kernel::fingerprint)
      .def("print", &Kernel::print)
      .def("__str__", &Kernel::print)
      .def_property_readonly("grid", [](const Kernel &k) { return k.grid; })
      .def_property_readonly("buffers", [](const Kernel &k) {
        py::list out;
        for (const BufferDecl &b : k.buffers)
          out.append(py::make_tuple(b.name, bufferKindName(b.kind), b.shape, dtypeText(b.dtype)));
        return out;
      })
      .def_property_readonly("dynamic_symbols", [](const Kernel &k) {
        py::list out;
        for (const DynamicSymbol &d : k.dynamicSymbols)
          out.append(py::make_tuple(d.name, d.max, d.multipleOf));
        return out;
      })
      .def("symbols", [](const Kernel &k) {
        std::set<std::string> s = k.symbols();
        return std::vector<std::string>(s.begin(), s.end());
      })
      .def("launch", &launchOnTensors, py::arg("tensors"), py::arg("symbols") = py::none())
      .def("interpret", &interpretOnTensors, py::arg("tensors"), py::arg("symbols") = py::none())
      .def("time_launches", &timeOnTensors, py::arg("tensors"), py::arg("symbols") = py::none(),
           py::arg("repetitions") = 3000)
      .def("specialization_key", [](const Kernel &k, py::sequence specs, py::handle symbols) {
        Result<Specialization> spec = specialize(k, signaturesOf(k, specs), toBindings(symbols));
        if (!spec.ok())
          throw KernelError(spec.message());
        return spec->key();
      }, py::arg("buffers"), py::arg("symbols") = py::none())
      .def("emit_mlir", [](const Kernel &k, py::sequence specs, py::handle symbols) {
        Result<Specialization> spec = specialize(k, signaturesOf(k, specs), toBindings(symbols));
        if (!spec.ok())
          throw KernelError(spec.message());
        Result<std::string> text = emitKernelModule(*spec);
        if (!text.ok())
          throw KernelError(text.message());
        return *text;
      }, py::arg("buffers"), py::arg("symbols") = py::none());

  // The C++ kernel library (KernelLibrary.h), for comparing graphs.
  m.def("library_kernel", [](const std::string &name) {
    if (name == "softmax") return unwrap(library::softmaxKernel());
    if (name == "gemm") return unwrap(library::gemmKernel());
    if (name == "gemm_f16") return unwrap(library::gemmKernel(DType::f16));
    if (name == "layernorm") return unwrap(library::layernormKernel());
    if (name == "attention") return unwrap(library::attentionKernel());
    throw py::value_error("no library kernel '" + name +
                          "' (softmax, gemm, gemm_f16, layernorm, attention)");
  }, py::arg("name"));

  m.def("set_trace_location", [](std::string location) { setTraceLocation(std::move(location)); });
  m.def("launch_stats", [] { return statsDict(launchStats()); });
  m.def("reset_launch_stats", &resetLaunchStats);
  m.def("clear_launch_cache", &clearLaunchCache);
}

} // namespace turbine::torch_ext
