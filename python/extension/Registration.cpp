//===- Registration.cpp - The `turbine` TorchScript library ---------------===//
//
// What torch.ops.load_library("libturbine_torch.so") registers:
//   torch.classes.turbine.Module(path, device, parameter_files, parameter_name_map)
//       .functions() -> List[str]
//       .signature(name) -> str
//       .call(name, inputs: List[Tensor]) -> List[Tensor]
//   torch.ops.turbine.compile_torchscript(archive: Tensor (uint8 bytes of
//       torch.jit.save), input_shapes: List[str], dynamic_dims: List[str],
//       compile_to: str, externalize_params: str = "",
//       externalize_min_bytes: int = 256, options: List[str]? = None,
//       externalize_names: List[str]? = None, renames: List[str]? = None,
//       function_shapes: List[str]? = None)
//       -> Tensor (uint8: the .tmod bytes, or the IR text after phase
//       `compile_to`; with externalize_params, weights of at least
//       externalize_min_bytes, or exactly those externalize_names names, go
//       to that .irpa or .safetensors file instead of the artifact, renamed
//       by the "old=new" renames; options are compile options "NAME=VALUE",
//       compiler/Options.h setCompileOption; function_shapes "METHOD:SHAPE,..."
//       import those methods of a stateful module instead of forward, and
//       dynamic_dims are then "METHOD:INPUT:DIM"). (A list argument of
//       strings cannot default to [] in a torch schema: the lists are
//       optional.)
// Turbine's kernel ops (torch.ops.turbine.softmax, ...): KernelOps.cpp.
//===----------------------------------------------------------------------===//
#include "TorchModule.h"
#include "TorchScriptCompiler.h"

#include <torch/library.h>
#include <torch/types.h>

#include <cstring>

using turbine::torch_ext::TorchModule;

namespace {

at::Tensor compileTorchScriptOp(const at::Tensor &archive,
                                const std::vector<std::string> &inputShapes,
                                const std::vector<std::string> &dynamicDims,
                                const std::string &compileTo,
                                const std::string &externalizeParams,
                                int64_t externalizeMinBytes,
                                const c10::optional<std::vector<std::string>> &options,
                                const c10::optional<std::vector<std::string>> &externalizeNames,
                                const c10::optional<std::vector<std::string>> &renames,
                                const c10::optional<std::vector<std::string>> &functionShapes) {
  TORCH_CHECK(archive.scalar_type() == at::kByte && archive.dim() == 1,
              "turbine: compile_torchscript expects a 1-D uint8 tensor of archive bytes");
  at::Tensor bytes = archive.contiguous();
  turbine::torch_ext::TorchScriptCompileRequest request;
  request.archive.assign(reinterpret_cast<const char *>(bytes.data_ptr<uint8_t>()),
                         static_cast<size_t>(bytes.numel()));
  request.inputShapes = inputShapes;
  request.functionShapes = functionShapes.value_or(std::vector<std::string>{});
  request.dynamicDims = dynamicDims;
  request.compileTo = compileTo;
  TORCH_CHECK(externalizeMinBytes >= 0, "turbine: externalize_min_bytes must be >= 0");
  request.externalizeParams = externalizeParams;
  request.externalizeMinBytes = static_cast<uint64_t>(externalizeMinBytes);
  request.options = options.value_or(std::vector<std::string>{});
  request.externalizeNames = externalizeNames.value_or(std::vector<std::string>{});
  request.renames = renames.value_or(std::vector<std::string>{});
  turbine::Result<std::string> compiled = turbine::torch_ext::compileTorchScript(request);
  TORCH_CHECK(compiled.ok(), "turbine: ", compiled.message());
  const std::string &result = *compiled;
  at::Tensor out = at::empty({static_cast<int64_t>(result.size())}, at::kByte);
  std::memcpy(out.data_ptr<uint8_t>(), result.data(), result.size());
  return out;
}

} // namespace

TORCH_LIBRARY(turbine, m) {
  m.class_<TorchModule>("Module")
      .def(torch::init<std::string, std::string, std::vector<std::string>, std::string>())
      .def("functions", &TorchModule::functions)
      .def("signature", &TorchModule::signature)
      .def("call", &TorchModule::call)
      .def("globals", &TorchModule::globals)
      .def("create_instance", &TorchModule::createInstance)
      .def("call_in", &TorchModule::callIn)
      .def("reset", &TorchModule::reset)
      .def("read_global", &TorchModule::readGlobal);
  m.def("compile_torchscript(Tensor archive, str[] input_shapes, str[] dynamic_dims, "
        "str compile_to, str externalize_params=\"\", int externalize_min_bytes=256, "
        "str[]? options=None, str[]? externalize_names=None, str[]? renames=None, "
        "str[]? function_shapes=None) -> Tensor",
        &compileTorchScriptOp);
}
