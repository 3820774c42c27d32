//===- TurbineOps.td - The turbine dialect: dispatches and kernel ABI ----===//
//
// Upstream MLIR has no notion of "a region of work launched as one kernel by
// a host program", nor of the kernel calling convention; these few ops add
// exactly that and nothing else:
//   * turbine.dispatch         host side: launch a kernel over a workgroup grid
//   * turbine.binding          kernel side: the memref behind binding #i
//   * turbine.push_constant    kernel side: index push constant #i
//   * turbine.workgroup_count  kernel side: the grid size along x/y/z
// and, for ONNX's string tensors (upstream has no string type), the element
// type !turbine.string and the host ops on it: turbine.string_normalize,
// turbine.to_string, turbine.from_string. Strings live on the host only: no
// dispatch region ever takes a string tensor. And one compute op upstream
// lacks: turbine.attention (fused scaled-dot-product attention on tensors,
// made by turbine-fuse-attention, one dispatch of its own, lowered by the
// target into an online-softmax loop nest).
// Kernel functions take (!llvm.ptr state, index wg_x, index wg_y, index wg_z);
// `state` points at a turbine_dispatch_state_t (artifact/KernelABI.h).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_OPS_TD
#define TURBINE_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"

def Turbine_Dialect : Dialect {
  let name = "turbine";
  let cppNamespace = "::turbine::compiler";
  let summary = "Dispatches from a host program, the kernel ABI, host strings";
  let useDefaultTypePrinterParser = 1;
}

def Turbine_StringType : TypeDef<Turbine_Dialect, "String"> {
  let mnemonic = "string";
  let summary = "A variable-length UTF-8 byte string (ONNX tensor(string))";
  let description = [{
    Element type of string tensors (`tensor<4x!turbine.string>`). Such
    tensors exist only in host programs, where the string ops below and
    reshapes work on them; the runtime holds one std::string per element.
  }];
}

def Turbine_StringTensor : RankedTensorOf<[Turbine_StringType]>;
def Turbine_NumberTensor : RankedTensorOf<[AnyFloat, AnySignlessInteger]>;

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

    Results written in place: the first N results, for the N `in_place`
    operands, are not new tensors but the storage of the matching `in_place`
    tensor (same type), which the kernel updates where it writes (a slice
    update of a KV cache held in a global); the result is that tensor with
    the kernel's writes applied. The host program binds that tensor's
    buffer as the result's binding and allocates nothing for it.

    ```mlir
    %r = turbine.dispatch @main_dispatch_0[%x, %y, %z]
           (%a, %b) constants(%d0) : (tensor<?x8xf32>, tensor<8x4xf32>)
           -> tensor<?x4xf32>{%d0}
    %c2 = turbine.dispatch @update_0[%x, %y, %z] (%k) constants(%pos)
           in_place(%cache) : (tensor<1x2x1x16xf32>) -> tensor<1x2x128x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                   Variadic<Index>:$workgroups,
                   Variadic<AnyRankedTensor>:$args,
                   Variadic<Index>:$constants,
                   Variadic<Index>:$result_dims,
                   Variadic<AnyRankedTensor>:$in_place);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kernel `[` $workgroups `]` `(` $args `)` (`constants` `(` $constants^ `)`)?
    (`in_place` `(` $in_place^ `:` type($in_place) `)`)?
    attr-dict `:` functional-type($args, $results) (`dims` `(` $result_dims^ `)`)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$results, "::mlir::FlatSymbolRefAttr":$kernel,
                   "::mlir::ValueRange":$workgroups, "::mlir::ValueRange":$args,
                   "::mlir::ValueRange":$constants, "::mlir::ValueRange":$result_dims), [{
      build($_builder, $_state, results, kernel, workgroups, args, constants, result_dims,
            ::mlir::ValueRange{});
    }]>
  ];
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

def Turbine_StringNormalizeOp : Turbine_Op<"string_normalize", [Pure]> {
  let summary = "ONNX StringNormalizer, run by the host program";
  let description = [{
    Removes the elements equal to one of `stopwords` (compared after
    lower-casing both unless `case_sensitive`), then changes the case of the
    rest (`case_change`: "NONE", "LOWER" or "UPPER"; `locale` names the case
    mapping, "" the Unicode default). The input is [C] or [1, C]; the result
    [C'] or [1, C'], or [1] / [1, 1] holding "" when every element was
    removed, so its last dim is data (dynamic unless C' is known).
  }];
  let arguments = (ins Turbine_StringTensor:$input, StrAttr:$case_change,
                   BoolAttr:$case_sensitive, StrArrayAttr:$stopwords,
                   StrAttr:$locale);
  let results = (outs Turbine_StringTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Turbine_ToStringOp : Turbine_Op<"to_string",
                                    [Pure, SameOperandsAndResultShape]> {
  let summary = "Numbers or bools to their text (ONNX Cast to STRING), on the host";
  let description = [{
    Formats each element as the ONNX reference does (StringOps.h of the
    runtime). `is_unsigned`: the signless integer input holds ONNX unsigned
    values.
  }];
  let arguments = (ins Turbine_NumberTensor:$input, UnitAttr:$is_unsigned);
  let results = (outs Turbine_StringTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Turbine_FromStringOp : Turbine_Op<"from_string",
                                      [Pure, SameOperandsAndResultShape]> {
  let summary = "Text to numbers or bools (ONNX Cast from STRING), on the host";
  let description = [{
    Parses each element (StringOps.h of the runtime); text that is not a
    number of the result type is a run-time error naming the element.
    `is_unsigned`: the signless integer result holds ONNX unsigned values.
  }];
  let arguments = (ins Turbine_StringTensor:$input, UnitAttr:$is_unsigned);
  let results = (outs Turbine_NumberTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Turbine_F32Tensor4 : RankedTensorOf<[F32], [HasAnyRankOfPred<[4]>]>;
def Turbine_F32Tensor2 : RankedTensorOf<[F32], [HasAnyRankOfPred<[2]>]>;

def Turbine_AttentionOp : Turbine_Op<"attention",
    [Pure, DestinationStyleOpInterface, AllTypesMatch<["init", "result"]>]> {
  let summary = "Fused scaled-dot-product attention with grouped-query heads";
  let description = [{
    For query [B, H, T, D] and key / value [B, KH, S, D] (H a multiple of
    KH; query head h reads key / value head h / (H / KH)), with L =
    `key_length` <= S keys used (the prefix [0, L) of a KV cache: key and
    value may be the whole cache, no copy of the prefix is made):

      result[b, h, t, :] = sum_{s < L} p[s] * value[b, h / (H/KH), s, :]
      p = softmax_s(scale * query[b, h, t, :] . key[b, h / (H/KH), s, :]
                    + mask[t, s])

    `mask` (optional, [T, L]) is additive: 0 keeps a key, -inf drops it (a
    causal mask). `init` is the destination ([B, H, T, D], only its shape is
    used). Made by turbine-fuse-attention from the
    q.k^T.scale (+mask) -> softmax -> .v pattern; dispatch formation gives it
    a dispatch of its own and the CPU target lowers it into an online-softmax
    loop over key blocks (turbine-cpu-lower-attention): no score matrix is
    materialized.

    ```mlir
    %o = turbine.attention %q, %k, %v key_length(%L) mask(%m : tensor<1x?xf32>)
           scale(0.125) outs(%init) : tensor<1x12x1x64xf32>, tensor<1x4x512x64xf32>,
           tensor<1x4x512x64xf32> -> tensor<1x12x1x64xf32>
    ```
  }];
  let arguments = (ins Turbine_F32Tensor4:$query, Turbine_F32Tensor4:$key,
                   Turbine_F32Tensor4:$value, Index:$key_length,
                   Turbine_F32Tensor4:$init, Optional<Turbine_F32Tensor2>:$mask,
                   F32Attr:$scale);
  let results = (outs Turbine_F32Tensor4:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `key_length` `(` $key_length `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)? `scale` `(` $scale `)`
    `outs` `(` $init `)` attr-dict `:` type($query) `,` type($key) `,` type($value)
    `->` type($result)
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
  let hasVerifier = 1;
}

#endif // TURBINE_OPS_TD
