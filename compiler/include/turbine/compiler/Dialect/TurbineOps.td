//===- TurbineOps.td - The turbine dialect: dispatches and kernel ABI ----===//
//
// Upstream MLIR has no notion of "a region of work launched as one kernel by
// a host program", nor of the kernel calling convention; these few ops add
// exactly that and nothing else:
//   * turbine.dispatch         host side: launch a kernel over a workgroup grid
//   * turbine.binding          kernel side: the memref behind binding #i
//   * turbine.push_constant    kernel side: index push constant #i
//   * turbine.workgroup_count  kernel side: the grid size along x/y/z
// Kernel functions take (!llvm.ptr state, index wg_x, index wg_y, index wg_z);
// `state` points at a turbine_dispatch_state_t (artifact/KernelABI.h).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_OPS_TD
#define TURBINE_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"

def Turbine_Dialect : Dialect {
  let name = "turbine";
  let cppNamespace = "::turbine::compiler";
  let summary = "Dispatches from a host program and the kernel ABI";
}

class Turbine_Op<string mnemonic, list<Trait> traits = []>
    : Op<Turbine_Dialect, mnemonic, traits>;

def Turbine_DispatchOp : Turbine_Op<"dispatch", [AttrSizedOperandSegments]> {
  let summary = "Launches a kernel over a grid of workgroups";
  let description = [{
    Runs kernel `kernel` (a func.func in the module's kernel container) over
    `workgroups` = (x, y, z). `args` are the tensors the kernel reads; each
    result is a new tensor the kernel writes, whose dynamic dims are
    `result_dims` (in order). Bindings seen by the kernel are `args` followed
    by the results; push constants are `constants`.

    ```mlir
    %r = turbine.dispatch @main_dispatch_0[%x, %y, %z]
           (%a, %b) constants(%d0) : (tensor<?x8xf32>, tensor<8x4xf32>)
           -> tensor<?x4xf32>{%d0}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                   Variadic<Index>:$workgroups,
                   Variadic<AnyRankedTensor>:$args,
                   Variadic<Index>:$constants,
                   Variadic<Index>:$result_dims);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kernel `[` $workgroups `]` `(` $args `)` (`constants` `(` $constants^ `)`)?
    attr-dict `:` functional-type($args, $results) (`dims` `(` $result_dims^ `)`)?
  }];
  let hasVerifier = 1;
}

def Turbine_BindingOp : Turbine_Op<"binding", [Pure]> {
  let summary = "The buffer bound at position `index` of a dispatch";
  let arguments = (ins LLVM_DefaultPointer:$state, I64Attr:$index,
                   Variadic<Index>:$dynamic_dims);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $state `[` $index `]` (`dims` `(` $dynamic_dims^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Turbine_PushConstantOp : Turbine_Op<"push_constant", [Pure]> {
  let summary = "Index push constant at position `index` of a dispatch";
  let arguments = (ins LLVM_DefaultPointer:$state, I64Attr:$index);
  let results = (outs Index:$result);
  let assemblyFormat = "$state `[` $index `]` attr-dict";
}

def Turbine_WorkgroupCountOp : Turbine_Op<"workgroup_count", [Pure]> {
  let summary = "Number of workgroups along `dimension` (0 = x, 1 = y, 2 = z)";
  let arguments = (ins LLVM_DefaultPointer:$state, I64Attr:$dimension);
  let results = (outs Index:$result);
  let assemblyFormat = "$state `[` $dimension `]` attr-dict";
}

#endif // TURBINE_OPS_TD
