//===- Passes.td - Every transformation of the Turbine compiler -----------===//
//
// Each transformation the phases run is a registered pass with options, so
// it can be run alone (`turbine-opt --turbine-lower-pads in.mlir`) and
// FileCheck-tested on small inputs, the way upstream MLIR tests its passes.
// The phases (Pipeline.h) are pass pipelines made of these and of upstream
// passes (canonicalize, cse, the LLVM conversions).
//
// Anchors: passes that transform host functions (input, global-opt,
// dispatch) run on the top-level module; codegen passes run on the kernel
// container (`module @kernels attributes {turbine.kernels}`), which the
// phase pipelines reach as a nested module: in turbine-opt,
// `--pass-pipeline='builtin.module(builtin.module(turbine-cpu-lower-vectors))'`.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_PASSES
#define TURBINE_COMPILER_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// input
//===----------------------------------------------------------------------===//

def VerifyInput : Pass<"turbine-verify-input", "mlir::ModuleOp"> {
  let summary = "Rejects input the pipeline cannot take, with a clear message";
  let description = [{
    The module must hold at least one function with a body; entry functions
    take ranked tensors (no memrefs, no unranked tensors); string tensors
    (`!turbine.string`) meet only the host string ops, reshapes, tensor.dim,
    tensor.empty and return. Each violation is an error naming the op.
  }];
}

def LowerTosa : Pass<"turbine-lower-tosa", "mlir::ModuleOp"> {
  let summary = "Runs upstream's TOSA -> linalg pipeline when the module has TOSA ops";
  let description = [{
    A module without TOSA ops is left exactly as it is (the upstream pipeline
    also canonicalizes, which would change other input).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def InlineConstantGlobals : Pass<"turbine-inline-constant-globals", "mlir::ModuleOp"> {
  let summary = "Immutable ml_program globals with a value become named constants";
  let description = [{
    Every `ml_program.global_load` / `global_load_const` of an immutable
    global whose value is `dense<...>` or `dense_resource<...>` becomes an
    `arith.constant` of that value named `turbine.param_name` (the global's
    own `turbine.param_name`, else its symbol name), so constant folding and
    packing see it and the artifact stores it as a parameter of that name;
    the global itself is erased. Immutable globals whose value is
    `#ml_program.extern` (bound from a parameter file at load) and mutable
    globals (module state) are left alone.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// global-opt
//===----------------------------------------------------------------------===//

def FuseAttention : Pass<"turbine-fuse-attention", "mlir::ModuleOp"> {
  let summary = "q.k^T.scale (+mask) -> softmax -> .v becomes one turbine.attention";
  let description = [{
    Matches scaled-dot-product attention as the frontends lower it (two
    linalg.batch_matmul around a last-axis softmax, an optional constant
    scale and an optional additive [T, L] mask), reading K and V through
    prefix gathers / extract_slices (a KV cache's used part) and head
    gathers (repeat_interleave for grouped-query attention), and replaces it
    with one turbine.attention on the gathers' sources with the prefix
    length as key_length: no prefix copy, no repeated heads, no score
    matrix. Runs first in global-opt, on the importers' form.
  }];
  let dependentDialects = ["::turbine::compiler::TurbineDialect", "mlir::tensor::TensorDialect"];
}

def ConvertToChannelsLast : Pass<"turbine-convert-to-channels-last", "mlir::ModuleOp"> {
  let summary = "NCHW convolutions and pooling become NHWC ones between transposes";
  let description = [{
    Depthwise (grouped-generic) convolutions too. The NHWC layout then moves
    up through elementwise ops and gathers (lowered pads), so residual
    streams stay NHWC and the transposes meet and cancel.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

def LowerPads : Pass<"turbine-lower-pads", "mlir::ModuleOp"> {
  let summary = "tensor.pad becomes a gathering linalg.generic";
  let description = [{
    The generic reads the source at clamped indices and selects the pad value
    outside it, so it fuses and tiles like any elementwise op; dispatch
    formation and codegen recognize these gathers (LowerPads.h).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
}

def AccumulateInF32 : Pass<"turbine-accumulate-in-f32", "mlir::ModuleOp"> {
  let summary = "f16/bf16 matmuls and convolutions accumulate in f32";
  let description = [{
    A named contraction or convolution (matmul, batch_matmul, matvec, vecmat,
    batch_matvec, the 1-D/2-D/3-D and depthwise convolutions) whose inputs
    and result are f16 or bf16 sums its products in f32, as PyTorch and ONNX
    Runtime do on CPUs: the op is rebuilt with an f32 accumulator (a fill
    of the same value, or the low-precision init extended) and its result
    rounded back to the original type by a linalg.generic (arith.truncf),
    which elementwise fusion then merges into the consumers. Without it, a
    K = 4096 reduction in bf16 keeps 8 significant bits of a running sum.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def GeneralizeElementwise : Pass<"turbine-generalize-elementwise", "mlir::ModuleOp"> {
  let summary = "Elementwise-like named linalg ops become linalg.generic";
  let description = [{
    So that they fuse. Contractions, convolutions, pooling and fill keep
    their names: codegen picks strategies by their kind.
  }];
}

def FuseElementwise : Pass<"turbine-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses elementwise chains, folds constants, resolves dims";
  let description = [{
    One greedy rewrite to a fixed point: chains of elementwise generics fuse
    when the producer has one use (not a producer with transcendental math
    that its consumer reads through a broadcast: it would run once per
    consumer element); gathers read function arguments through
    their transposes; a matmul's reshaped result folds into its elementwise
    consumers; constant linalg ops fold (up to 2^24 elements); tensor.dim of
    intermediate values resolves to dims of the arguments.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect", "mlir::affine::AffineDialect"];
}

def QuantizeWeights : Pass<"turbine-quantize-weights", "mlir::ModuleOp"> {
  let summary = "Matmuls by constant f32 weights multiply by group-quantized int8 / int4 weights";
  let description = [{
    For linalg.matmul and linalg.batch_matmul (default indexing maps, f32)
    whose B is a dense f32 constant [..., K, N]: B becomes an i8 constant
    (int8: [..., K/G, G, N]; int4: [..., K/G, G/2, N], two weights of K per
    byte) plus f32 scales [..., K/G, N], one per group of G = `group-size`
    consecutive K elements of a column, and the matmul becomes one fused
    linalg.generic C += A' * (sitofp(q) * scale) over A expanded to groups
    (global-opt/WeightQuantization.h): the dequantized weight is never
    stored. int8: scale = max|w| / 127, q = round(w / scale); int4
    (llama.cpp Q4_0's scheme): scale = m / -8 for the group's value m of
    largest magnitude, q = clamp(round(w / scale), -8, 7). A K that is not a
    multiple of G gets zero rows in q and A is zero-padded to whole groups.
    Weights whose parameter name matches `exclude` (llvm::Regex, anywhere in
    the name) stay f32. weights=none (the default) leaves the module as it is.
  }];
  let options = [
    Option<"weights", "weights", "std::string", "\"none\"",
           "Weight quantization: none, int8 or int4">,
    Option<"groupSize", "group-size", "int64_t", "32",
           "Elements of K per scale (> 0; even for int4)">,
    Option<"exclude", "exclude", "std::string", "\"\"",
           "Regular expression: weights whose parameter name matches stay f32">,
    Option<"columnBlock", "column-block", "int64_t", "128",
           "Columns per block of q (the target's GEMV tile width, "
           "Target::quantizedWeightColumns; a multiple of 32)">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def BindGgufWeights : Pass<"turbine-bind-gguf-weights", "mlir::ModuleOp"> {
  let summary = "Model weights become external parameters of a GGUF file, read in its own types";
  let description = [{
    `turbine compile --weights-from=F.gguf`: for each tensor of the file
    (option `tensors`, one `MODULE_NAME:GGUF_NAME:TYPE:D0xD1...` each), a
    matmul by the constant `MODULE_NAME.T` (a transposed linear weight) of a
    Q8_0 / Q4_0 tensor becomes one linalg.generic decoding the tensor's raw
    blocks (i8 [N, K/32, 34 | 18], an `#ml_program.extern` global named
    GGUF_NAME; global-opt/GgufWeights.h); of an F16 / BF16 / F32 tensor, a
    generic of 32-lane partial sums over the file's [N, K] rows and their
    sum. A constant MODULE_NAME of the same shape read only by
    tensor.extract (the token embedding's gather) reads the file's tensor
    in its own type, the element's block decoded; one used otherwise (norm
    weights) becomes an external F32 parameter, or F16 / BF16 extended.
    Shape mismatches, unsupported ggml types and K not a multiple of 32 are
    errors naming the tensor and the weight.
  }];
  let options = [
    ListOption<"tensors", "tensors", "std::string",
               "The GGUF file's tensors: MODULE_NAME:GGUF_NAME:TYPE:D0xD1...">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::ml_program::MLProgramDialect"];
}

def DataTileMatmuls : Pass<"turbine-data-tile-matmuls", "mlir::ModuleOp"> {
  let summary = "Packs matmul right-hand sides into 32-column panels";
  let description = [{
    A matmul whose B is constant (folded at compile time) or large (M >= 512,
    N >= 1024: a pack dispatch at run time) reads B as (N/32, K, 32) panels
    through a linalg.contract; a run-time B with N >= 1024 and M >= 64 or
    dynamic is instead marked `turbine.pack_b_in_kernel` and packed per
    workgroup inside its kernel. The CPU target's register tile is 8x32.
  }];
  let options = [
    Option<"dataTiling", "data-tiling", "::turbine::compiler::StrategyMode",
           "::turbine::compiler::StrategyMode::Auto",
           "Packing B into panels: auto (the heuristic), off, or all (every eligible matmul)",
           [{::llvm::cl::values(
               clEnumValN(::turbine::compiler::StrategyMode::Auto, "auto", "by the size heuristic"),
               clEnumValN(::turbine::compiler::StrategyMode::Off, "off", "never"),
               clEnumValN(::turbine::compiler::StrategyMode::All, "all", "every eligible matmul"))}]>,
    Option<"kernelPack", "kernel-pack", "::turbine::compiler::StrategyMode",
           "::turbine::compiler::StrategyMode::Auto",
           "Packing B inside the kernel per workgroup: auto, off, or all",
           [{::llvm::cl::values(
               clEnumValN(::turbine::compiler::StrategyMode::Auto, "auto", "by the size heuristic"),
               clEnumValN(::turbine::compiler::StrategyMode::Off, "off", "never"),
               clEnumValN(::turbine::compiler::StrategyMode::All, "all", "every eligible matmul"))}]>,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

def PackConvolutionFilters : Pass<"turbine-pack-convolution-filters", "mlir::ModuleOp"> {
  let summary = "Constant NHWC convolution filters stored [F/32][KH][KW][C][32]";
  let description = [{
    For filters with F > 32 a multiple of 32: a packed-convolution generic
    whose 32-channel tiles codegen lowers to named convolutions over
    contiguous filter slices.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// dispatch
//===----------------------------------------------------------------------===//

def WritePadsInProducers : Pass<"turbine-write-pads-in-producers", "mlir::ModuleOp"> {
  let summary = "A pad in front of a full convolution is written by its producer";
  let description = [{
    The producer's result goes into the interior of a zero-bordered tensor
    (an insert_slice that dispatch formation keeps in the producer's region);
    its other consumers read the interior through an extract_slice.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

def WriteConcatsInProducers : Pass<"turbine-write-concats-in-producers", "mlir::ModuleOp"> {
  let summary = "A concatenation is written in place, slice by slice, by its operands' producers";
  let description = [{
    The frontends' concatenation gather (a select per element between
    extracts of the operands) becomes a chain of `tensor.insert_slice`s into
    one tensor, each marked turbine.slice_update and turbine.concat: the
    producer of each operand writes its slice in place when the operand is a
    fresh linalg result used only there; otherwise an identity copy does.
    Concatenations each of whose operands are the first ones of a larger
    one (DenseNet's blocks: [x0, x1], [x0, x1, x2], ...) become one chain
    for the largest, placed operand by operand as they are computed, and
    extract_slices of it (turbine.concat_prefix) for the others.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

def UpdateSlicesInPlace : Pass<"turbine-update-slices-in-place", "mlir::ModuleOp"> {
  let summary = "Host tensor.insert_slice ops become in-place slice updates, bounds checked";
  let description = [{
    For every `tensor.insert_slice %src into %dest[offsets][sizes][1...]` of
    a host function: a `cf.assert` per dim whose offset or size is a run-time
    value (0 <= offset, offset + size <= dim; a static violation is a compile
    error), then the update in a form dispatch formation turns into one
    kernel that writes only the slice: `%src` copied by an identity
    `linalg.generic` (its root) into `tensor.insert_slice ... into %dest
    {turbine.slice_update}`, whose result is `%dest`'s storage updated in
    place (the dispatch's `in_place` operand).

    In place into module state: when `%dest` is an `ml_program.global_load`
    used only by this insert, the result is stored back into the same
    global, and no other value holding that global's current storage is
    read (another load since the previous store, or the value that store
    stored), the kernel writes the global's storage itself: no copy of the
    whole tensor (a KV-cache step costs the step's slice). That load then
    reads nothing the program observes and is marked
    `turbine.update_only` (an uninitialized global may be its target).
    Otherwise (a function argument, a constant, a value with other readers)
    `%dest` is first copied into a fresh tensor, which is updated instead.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect"];
}

def FormDispatches : Pass<"turbine-form-dispatches", "mlir::ModuleOp"> {
  let summary = "Groups linalg ops into dispatch regions and outlines each into a kernel";
  let description = [{
    Regions: a root (contraction, convolution, reduction, or an elementwise
    op with nothing to fuse into) with its elementwise consumers, the fills
    and empties of its destinations and the pads feeding windowed ops. Each
    becomes a kernel in the kernel container with the kernel ABI and a
    `turbine.dispatch` on the host, named after its root op and shapes
    (`matmul_128x768x768_f32`). Workgroup tiles come from the target.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "Target whose workgroup tiling policy sizes the grids">,
    Option<"targetCpu", "target-cpu", "std::string", "\"\"",
           "CPU the kernels are compiled for (CompileOptions::targetCpu; \"\": the host)">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::bufferization::BufferizationDialect", "::turbine::compiler::TurbineDialect", "mlir::func::FuncDialect", "mlir::arith::ArithDialect", "mlir::tensor::TensorDialect"];
}

def DeduplicateKernels : Pass<"turbine-deduplicate-kernels", "mlir::ModuleOp"> {
  let summary = "Kernels with identical bodies become one; their dispatches call it";
  let description = [{
    After dispatch formation: kernels of the kernel container whose bodies,
    signatures and attributes are identical (a repeated block of a network)
    are replaced by the first of them in every `turbine.dispatch`, and
    erased, so codegen and LLVM compile each distinct kernel once. Each
    dispatch keeps its operands, constants and workgroup counts.
    `CompileOptions::deduplicateKernels` (on by default; `turbine bisect`
    turns it off to report each dispatch's own source ops).
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// codegen (CPU target; anchored on the kernel container)
//===----------------------------------------------------------------------===//

def CpuLowerAttention : Pass<"turbine-cpu-lower-attention", "mlir::ModuleOp"> {
  let summary = "turbine.attention kernels become an online-softmax loop nest on the bindings";
  let description = [{
    Per kernel holding a turbine.attention (its own dispatch): workgroups
    walk (head, query-row tile, batch); each query row keeps a running max,
    sum and a vector<head_dim> accumulator while it walks the keys [0,
    key_length) in blocks of 8 (then one at a time), reading K and V rows of
    head h / (H / KH) straight from their bindings (a KV cache), vectorized
    over head_dim. Runs before turbine-cpu-tile-and-vectorize, which then
    finds nothing left to tile in that kernel.
  }];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect", "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def CpuTileAndVectorize : Pass<"turbine-cpu-tile-and-vectorize", "mlir::ModuleOp"> {
  let summary = "Per kernel: workgroup tile-and-fuse, a vector-level strategy per op";
  let description = [{
    Matmuls get 8x32 register tiles (packed or plain B, leftover rows one at
    a time, masked partial tiles), group-quantized matmuls their fused
    dequantizing tiles (int4 and GGUF Q8_0 / Q4_0 GEMVs with int8 activations
    and vpdpbusd when `target-cpu` has AVX512-VNNI and `int8-activations`),
    bf16 matmuls vdpbf16ps register tiles (x86vector.avx512.dot) when it has
    AVX512-BF16, convolutions and pooling pixel x channel
    tiles, everything else the generic strategy (inner loop by 64, masks).
    Kernels already at the vector level (the kernel language) are left alone.
    With `reference`, only the workgroup level: every op is left to become
    scalar loops (plain reference kernels for `turbine bisect`).
  }];
  let options = [
    Option<"reference", "reference", "bool", "false",
           "Workgroup tiling only; no vector-level strategy (reference kernels)">,
    Option<"targetCpu", "target-cpu", "std::string", "\"\"",
           "CPU whose optional instructions the strategies may use: host, an LLVM "
           "CPU name (znver4, skylake-avx512, ...), or empty for none (CpuFeatures.h)">,
    Option<"int8Activations", "int8-activations", "bool", "false",
           "Quantized-weight GEMVs may round activations to int8 and use vpdpbusd "
           "(where target-cpu has AVX512-VNNI); false: activations never rounded">
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect", "mlir::memref::MemRefDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect", "mlir::affine::AffineDialect", "mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect", "mlir::math::MathDialect", "mlir::LLVM::LLVMDialect", "mlir::x86vector::X86VectorDialect"];
}

def CpuLowerVectorMasks : Pass<"turbine-cpu-lower-vector-masks", "mlir::ModuleOp"> {
  let summary = "vector.mask regions around transfers become masked transfers";
  let dependentDialects = ["mlir::vector::VectorDialect"];
}

def CpuBufferize : Pass<"turbine-cpu-bufferize", "mlir::ModuleOp"> {
  let summary = "Empty-tensor elimination and one-shot bufferization into the output bindings";
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect"];
}

def CpuPrefetchFilterBlocks : Pass<"turbine-cpu-prefetch-filter-blocks", "mlir::ModuleOp"> {
  let summary = "Prefetches the next reduction block's filter in blocked convolutions";
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def CpuLowerVectors : Pass<"turbine-cpu-lower-vectors", "mlir::ModuleOp"> {
  let summary = "Hoists accumulators, lowers contractions, reductions and transfers";
  let description = [{
    Staged, each stage to a fixed point: u8 x s8 dot products of 4 bytes
    per i32 lane (the int4 GEMV tile's form for AVX512-VNNI) to vpdpbusd,
    16-lane f32 table lookups (the Q4_0 decode's form for AVX512F) to
    vpermps, leading unit dims cast away; contractions as outer products, inner
    min/max reductions as one vector.reduction, multi-reductions; transfers
    to rank 1.
  }];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::arith::ArithDialect", "mlir::scf::SCFDialect", "mlir::LLVM::LLVMDialect"];
}

def CpuApproximateMath : Pass<"turbine-cpu-approximate-math", "mlir::ModuleOp"> {
  let summary = "Polynomial approximations of math functions on f32 (exp, tanh, erf, ...); float max / min without the sign of zero";
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::vector::VectorDialect", "mlir::math::MathDialect"];
}

def CpuKeepFillLoopsRolled : Pass<"turbine-cpu-keep-fill-loops-rolled", "mlir::func::FuncOp"> {
  let summary = "Marks loops that only store loop-invariant values as not to be unrolled by LLVM";
  let description = [{
    A loop whose body only writes values computed outside it (a fill: the
    zero border of a padded result, an accumulator's initial value) gains
    nothing from unrolling: it is bound by its stores. LLVM unrolls such
    loops anyway: it turns the innermost into a memset, counts a memset as
    one instruction, then fully unrolls the rows around it (58 rows of a
    56x56 border column: 928 vector stores in one block, over which the
    machine schedulers spend a second per kernel) or runtime-unrolls a
    dynamic batch loop by 8. Such loops get
    `loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>`,
    which convert-scf-to-cf and the LLVM translation carry to
    `llvm.loop.unroll.disable`. Runs on scf.for loops after the vector
    transfers are lowered to loops.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def CpuLowerKernelAbi : Pass<"turbine-cpu-lower-kernel-abi", "mlir::ModuleOp"> {
  let summary = "turbine.binding / push_constant / workgroup_count become loads from the dispatch state";
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// codegen: the CUDA target (targets/cuda)
//===----------------------------------------------------------------------===//

def CudaOutlineKernels : Pass<"turbine-cuda-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Kernel functions (bufferized loops) become gpu.func kernels of one gpu.module";
  let description = [{
    Runs on the kernel container after workgroup tiling, bufferization and
    the lowering of linalg to loops. Every kernel function `@k(%state,
    %wg_x, %wg_y, %wg_z)` becomes `gpu.func @k(ptr b0, ..., ptr bN-1,
    i64 c0, ..., i64 cM-1, i64 count_x, i64 count_y, i64 count_z) kernel`
    in `gpu.module @turbine_cuda_kernels`: one CUDA thread per workgroup of
    the CPU ABI. The workgroup id along axis d is the global thread id
    (blockIdx * blockDim + threadIdx; z: blockIdx.z), the workgroup count is
    the count_d parameter (the host program's grid, passed by the runtime),
    and the body runs only in threads whose ids are below the counts.
    `turbine.binding %state[i]` becomes a dense row-major memref over
    parameter bi, `turbine.push_constant %state[i]` parameter ci. A
    body-less `func.func private @k` with `turbine.kernel`,
    `turbine.cuda.bindings = N` and `turbine.cuda.constants = M` stays in
    the container for the host program and the artifact.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

#endif // TURBINE_COMPILER_PASSES
