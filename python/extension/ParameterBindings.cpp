//===- ParameterBindings.cpp - Parameter archives from Python -------------===//
//
// The runtime's parameter files (runtime/ ParameterArchive.h: IREE's .irpa
// layout and safetensors) for Python; turbine_torch/parameters.py wraps them
// as iree-turbine's ParameterArchive / ParameterArchiveBuilder.
//
// Opening maps the file copy-on-write (PROT_READ | PROT_WRITE, MAP_PRIVATE):
// a typed data entry becomes a torch tensor over the mapping itself (zero
// copy), and writing to such a tensor changes this process' pages only,
// never the file (and never faults). Splats and entries whose bytes are not
// aligned for their dtype are materialized (copied).
//===----------------------------------------------------------------------===//
#include "PythonBindings.h"
#include "TensorInterop.h"

#include "turbine/runtime/ParameterArchive.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace py = pybind11;

namespace turbine::torch_ext {
namespace {

using runtime::ParameterArchiveWriter;
using runtime::ParameterEntry;
using runtime::ParameterFileFormat;
using runtime::ParameterIndex;

struct ParameterError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A copy-on-write mapping of a whole file.
struct Mapping {
  void *base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base && size)
      ::munmap(base, size);
  }
};

ParameterIndex openArchive(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw ParameterError("cannot open parameter file '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ParameterError("parameter file '" + path + "' is not a regular file");
  }
  auto mapping = std::make_shared<Mapping>();
  static const uint8_t empty = 0;
  const uint8_t *base = &empty;
  if (st.st_size > 0) {
    void *mapped = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw ParameterError("cannot map parameter file '" + path + "': " + std::strerror(err));
    }
    mapping->base = mapped;
    mapping->size = static_cast<size_t>(st.st_size);
    base = static_cast<const uint8_t *>(mapped);
  }
  ::close(fd);
  Result<ParameterIndex> index = ParameterIndex::parse(
      base, static_cast<uint64_t>(st.st_size), std::shared_ptr<const void>(mapping, base), path);
  if (!index.ok())
    throw ParameterError(index.message());
  return std::move(*index);
}

const ParameterEntry &entryOf(const ParameterIndex &index, const std::string &name) {
  const ParameterEntry *entry = index.find(name);
  if (!entry)
    throw py::key_error("parameter file '" + index.origin() + "' has no entry '" + name + "'");
  return *entry;
}

py::object wrapTensor(const runtime::Tensor &t, const std::string &what) {
  return py::reinterpret_steal<py::object>(THPVariable_Wrap(toTorchTensor(t, what)));
}

/// The entry as a torch tensor of `dtype` and `shape` (its recorded type
/// when not given): zero-copy for aligned data entries.
py::object entryTensor(const ParameterIndex &index, const std::string &name,
                       std::optional<std::string> dtypeName, std::optional<std::vector<int64_t>> shape) {
  const ParameterEntry &entry = entryOf(index, name);
  std::string what = "parameter '" + name + "' of '" + index.origin() + "'";
  std::optional<DType> dtype = entry.dtype;
  std::vector<int64_t> dims = entry.shape;
  if (dtypeName) {
    dtype = parseDType(*dtypeName);
    if (!dtype || *dtype == DType::string)
      throw py::value_error("unknown dtype '" + *dtypeName + "'");
    dims = shape ? *shape : std::vector<int64_t>{static_cast<int64_t>(entry.length / dtypeSize(*dtype))};
  } else if (shape) {
    throw py::value_error(what + ": give a dtype with the shape");
  }
  if (!dtype)
    throw ParameterError(what + " has no tensor type (a blob of " + std::to_string(entry.length) +
                         " bytes): use as_bytes(), as_flat_tensor() or as_tensor(dtype, shape)");
  if (entry.kind == ParameterEntry::Kind::data &&
      reinterpret_cast<uintptr_t>(entry.bytes) % dtypeSize(*dtype) == 0) {
    int64_t count = 1;
    for (int64_t d : dims)
      count *= d;
    if (static_cast<uint64_t>(count) * dtypeSize(*dtype) != entry.length)
      throw ParameterError(what + ": " + std::to_string(entry.length) + " bytes do not hold " +
                           std::string(turbine::dtypeName(*dtype)) + " of that shape");
    if (entry.dtype && dtypeName && *entry.dtype != *dtype && *dtype != DType::u8)
      throw ParameterError(what + " is recorded as " + entry.typeString());
    Result<runtime::Tensor> view = runtime::Tensor::wrap(
        *dtype, dims, const_cast<uint8_t *>(entry.bytes), index.storage());
    if (!view.ok())
      throw ParameterError(what + ": " + view.message());
    return wrapTensor(*view, what);
  }
  Result<runtime::Tensor> t = dtypeName || shape ? index.tensor(entry, *dtype, dims)
                                                 : index.tensor(entry);
  if (!t.ok())
    throw ParameterError(t.message());
  return wrapTensor(*t, what);
}

py::bytes entryBytes(const ParameterIndex &index, const std::string &name) {
  const ParameterEntry &entry = entryOf(index, name);
  if (entry.kind == ParameterEntry::Kind::data)
    return py::bytes(reinterpret_cast<const char *>(entry.bytes), entry.length);
  std::string out(entry.length, '\0');
  for (uint64_t i = 0; i < entry.length; ++i)
    out[i] = static_cast<char>(entry.pattern[i % entry.patternLength]);
  return py::bytes(out);
}

ParameterFileFormat formatOf(const std::string &path, const std::string &format) {
  if (format == "irpa")
    return ParameterFileFormat::irpa;
  if (format == "safetensors")
    return ParameterFileFormat::safetensors;
  if (!format.empty())
    throw py::value_error("unknown parameter file format '" + format + "' (irpa, safetensors)");
  const std::string suffix = ".safetensors";
  bool safetensors = path.size() >= suffix.size() &&
                     path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return safetensors ? ParameterFileFormat::safetensors : ParameterFileFormat::irpa;
}

/// Builds a parameter file; torch tensors are held (not copied) until save.
class ArchiveWriter {
public:
  void addTensor(const std::string &name, py::handle tensor) {
    if (!THPVariable_Check(tensor.ptr()))
      throw py::type_error("parameter '" + name + "' must be a torch.Tensor");
    const at::Tensor &t = THPVariable_Unpack(tensor.ptr());
    runtime::Tensor rt;
    try {
      rt = toRuntimeTensor(t.detach(), "parameter '" + name + "'");
    } catch (const c10::Error &e) {
      throw ParameterError(e.what_without_backtrace());
    }
    check(writer_.addTensor(name, rt));
  }
  void addBlob(const std::string &name, py::bytes data) {
    auto holder = std::make_shared<std::string>(data);
    check(writer_.addBlob(name, reinterpret_cast<const uint8_t *>(holder->data()),
                          holder->size(), holder));
  }
  void addSplat(const std::string &name, py::bytes pattern, uint64_t length,
                std::optional<std::string> dtype, std::vector<int64_t> shape) {
    std::string p = pattern;
    std::optional<DType> type;
    if (dtype) {
      type = parseDType(*dtype);
      if (!type)
        throw py::value_error("unknown dtype '" + *dtype + "'");
    }
    check(writer_.addSplat(name, std::vector<uint8_t>(p.begin(), p.end()), length, type, shape));
  }
  void addEntry(const ParameterIndex &source, const std::string &name, const std::string &rename) {
    check(writer_.addEntry(source, entryOf(source, name), rename));
  }
  void save(const std::string &path, const std::string &format) {
    Status s;
    {
      py::gil_scoped_release release;
      s = writer_.write(path, formatOf(path, format));
    }
    check(s);
  }
  size_t size() const { return writer_.size(); }

private:
  static void check(const Status &s) {
    if (!s.ok())
      throw ParameterError(s.message());
  }
  ParameterArchiveWriter writer_;
};

} // namespace

void bindParameters(py::module_ &m) {
  py::register_exception<ParameterError>(m, "ParameterError", PyExc_ValueError);

  py::class_<ParameterIndex>(m, "ParameterIndex")
      .def(py::init(&openArchive), py::arg("path"))
      .def_property_readonly("format", [](const ParameterIndex &i) {
        return std::string(runtime::parameterFileFormatName(i.format()));
      })
      .def_property_readonly("path", &ParameterIndex::origin)
      .def("names", [](const ParameterIndex &i) {
        std::vector<std::string> names;
        for (const ParameterEntry &e : i.entries())
          names.push_back(e.name);
        return names;
      })
      .def("contains", [](const ParameterIndex &i, const std::string &name) {
        return i.find(name) != nullptr;
      })
      .def("info", [](const ParameterIndex &i, const std::string &name) {
        const ParameterEntry &e = entryOf(i, name);
        py::dict d;
        d["kind"] = e.kind == ParameterEntry::Kind::splat ? "splat" : "data";
        d["length"] = e.length;
        d["dtype"] = e.dtype ? py::object(py::str(std::string(dtypeName(*e.dtype)))) : py::none();
        d["shape"] = e.dtype ? py::object(py::tuple(py::cast(e.shape))) : py::none();
        d["type"] = e.typeString();
        d["file_offset"] = e.kind == ParameterEntry::Kind::data ? py::object(py::int_(e.fileOffset))
                                                                : py::none();
        d["metadata"] = py::bytes(e.metadata);
        return d;
      })
      .def("tensor", &entryTensor, py::arg("name"), py::arg("dtype") = py::none(),
           py::arg("shape") = py::none())
      .def("bytes", &entryBytes, py::arg("name"));

  py::class_<ArchiveWriter>(m, "ParameterWriter")
      .def(py::init<>())
      .def("add_tensor", &ArchiveWriter::addTensor, py::arg("name"), py::arg("tensor"))
      .def("add_blob", &ArchiveWriter::addBlob, py::arg("name"), py::arg("data"))
      .def("add_splat", &ArchiveWriter::addSplat, py::arg("name"), py::arg("pattern"),
           py::arg("length"), py::arg("dtype") = py::none(),
           py::arg("shape") = std::vector<int64_t>{})
      .def("add_entry", &ArchiveWriter::addEntry, py::arg("source"), py::arg("name"),
           py::arg("rename") = "")
      .def("save", &ArchiveWriter::save, py::arg("path"), py::arg("format") = "")
      .def("__len__", &ArchiveWriter::size);
}

} // namespace turbine::torch_ext
