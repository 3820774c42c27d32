//===- TorchScriptCompiler.h - In-process TorchScript -> artifact ----------===//
//
// What torch.ops.turbine.compile_torchscript runs: the request's options
// handed to the model session every front door compiles with
// (tools/common ModelSession.h: the TorchScript frontend, Turbine's torch
// ops expanded into their kernels' dispatches, the compiler's phases), in
// the calling process; optionally the weights moved into a parameter file.
// No torch or MLIR types here: the translation unit behind it includes MLIR,
// the one registering the op includes torch, and neither includes the other.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_PYTHON_EXTENSION_TORCHSCRIPTCOMPILER_H
#define TURBINE_PYTHON_EXTENSION_TORCHSCRIPTCOMPILER_H

#include "turbine/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace turbine::torch_ext {

struct TorchScriptCompileRequest {
  std::string archive;                  ///< torch.jit.save bytes
  std::vector<std::string> inputShapes; ///< "2x16xf32", one per forward input
  /// A stateful import instead: "METHOD:SHAPE,SHAPE,..." per method.
  std::vector<std::string> functionShapes;
  /// "<input index or name>:<dim>"; with functionShapes "METHOD:<input>:<dim>".
  std::vector<std::string> dynamicDims;
  std::string compileTo;                ///< "" = artifact; else a phase name
  /// Compile options as "NAME=VALUE" (compiler::setCompileOption).
  std::vector<std::string> options;
  /// When set (artifact only): parameters of at least externalizeMinBytes
  /// move to this .irpa / .safetensors file (`turbine compile
  /// --externalize-params`).
  std::string externalizeParams;
  uint64_t externalizeMinBytes = 256;
  /// When not empty: exactly these parameters move (state_dict keys; names
  /// derived from one, `fc.weight.T`, move with it), whatever their size.
  std::vector<std::string> externalizeNames;
  /// "old=new": names of moved parameters in the file and the artifact.
  std::vector<std::string> renames;
};

/// The .tmod bytes, or the IR after `compileTo` as text (through
/// global-opt: Turbine ops still custom-op calls; from dispatch on: their
/// dispatches). An error on any failure (bad archive, unsupported op, bad
/// spec).
Result<std::string> compileTorchScript(const TorchScriptCompileRequest &request);

} // namespace turbine::torch_ext

#endif // TURBINE_PYTHON_EXTENSION_TORCHSCRIPTCOMPILER_H
