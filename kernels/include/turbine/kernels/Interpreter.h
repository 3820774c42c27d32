//===- Interpreter.h - Reference semantics of a traced kernel -------------===//
//
// Runs a kernel graph directly on host tensors, one workgroup after another
// over the whole grid. This is the definition of what a kernel means; the
// compiled code is checked against it.
//
// Numerics: every op computes in double and rounds its result to the result
// dtype (f32, f16, bf16 with round-to-nearest-even; integers wrap); `dot`
// accumulates the exact sum of products in double and rounds once.
//
// Bounds: an unmasked load or store that touches an element outside its
// buffer is an error naming the kernel, the op, the element's indices, the
// buffer's shape and the workgroup. Masked loads fill such elements with the
// padding value; masked stores skip them. Writes of earlier workgroups stay
// in place when a later one fails.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_INTERPRETER_H
#define TURBINE_KERNELS_INTERPRETER_H

#include "turbine/kernels/Specialization.h"
#include "turbine/runtime/Tensor.h"

namespace turbine::kernels {

/// Buffer signatures of `tensors` (shape and dtype), for specialize().
std::vector<BufferSignature> signaturesOf(const std::vector<runtime::Tensor> &tensors);

/// Runs a specialized kernel on `buffers` (declaration order; they must
/// match the shapes it was specialized for). Outputs are written in place.
Status interpret(const Specialization &spec, std::vector<runtime::Tensor> buffers);

/// Specializes (buffer shapes + `symbols`) and runs.
Status interpret(const Kernel &kernel, std::vector<runtime::Tensor> buffers,
                 const Bindings &symbols = {});

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_INTERPRETER_H
