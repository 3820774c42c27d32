// cpu-quantized-gemv-int8-activations.mlir - the int4 GEMV tile by CPU features
// (targets/cpu/QuantizedMatmulCodegen.cpp, CpuFeatures.h): compiled for a
// CPU with AVX512-VNNI (znver4, cascadelake) and int8-activations
// (--quantized-matmul-activations=int8) the 1 x 128 tile quantizes
// each group of activations to int8 (roundeven, fptosi) and multiplies 16
// columns x 4 K values per step as u8 x s8 products summed per i32 lane
// (the pure form of vpdpbusd); for a CPU with AVX2 and no AVX512-VNNI
// (x86-64-v3, skylake-avx512) the same form in the 1 x 64 or 1 x 128 tile,
// marked for vpmaddubsw + vpmaddwd; for a CPU without either (no
// target-cpu at all), or without int8-activations, the tile
// (1 x 128 on AVX-512, 1 x 64 on AVX2, 1 x 32 on SSE: RegisterTiles)
// converts the nibbles to f32 and uses FMAs, with no activation rounding.
// turbine-cpu-lower-vectors turns the marked form into the instructions
// (cpu-lower-vectors-byte-dot.mlir).

// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=znver4 int8-activations=true}))' | FileCheck %s --check-prefix=VNNI
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=cascadelake int8-activations=true}))' | FileCheck %s --check-prefix=VNNI
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=x86-64-v3 int8-activations=true}))' | FileCheck %s --check-prefix=PAIRS
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=skylake-avx512 int8-activations=true}))' | FileCheck %s --check-prefix=PAIRS
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=skylake-avx512}))' | FileCheck %s --check-prefixes=F32,F32-AVX512
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=x86-64-v3}))' | FileCheck %s --check-prefixes=F32,F32-AVX2
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=znver4}))' | FileCheck %s --check-prefixes=F32,F32-AVX512
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int4 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize))' | FileCheck %s --check-prefixes=F32,F32-SSE
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-quantize-weights{weights=int8 group-size=32}, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=znver4 int8-activations=true}))' | FileCheck %s --check-prefix=INT8

// VNNI-LABEL: func.func @
// VNNI:         scf.for
// VNNI:           vector.reduction <maxui>, {{.*}} : vector<32xi32> into i32
// VNNI:           math.roundeven {{.*}} : vector<32xf32>
// VNNI:           arith.fptosi {{.*}} : vector<32xf32> to vector<32xi32>
// VNNI:           vector.bitcast {{.*}} : vector<32xi8> to vector<8xi32>
// VNNI:           scf.for
// VNNI:             arith.extui {{.*}} : vector<16xi8> to vector<16xi32>
// VNNI:             arith.extsi {{.*}} : vector<16x4xi8> to vector<16x4xi32>
// VNNI:             arith.extui {{.*}} : vector<16x4xi8> to vector<16x4xi32>
// VNNI:             vector.multi_reduction <add>, {{.*}} {turbine.byte_dot = "vpdpbusd"} [1] : vector<16x4xi32> to vector<16xi32>
// VNNI:           arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// VNNI:           vector.fma
// VNNI-NOT:     arith.sitofp {{.*}} : vector<128xi32> to vector<128xf32>
// PAIRS-LABEL: func.func @
// PAIRS:         math.roundeven {{.*}} : vector<32xf32>
// PAIRS:         scf.for
// PAIRS-COUNT-4:   vector.multi_reduction <add>, {{.*}} {turbine.byte_dot = "vpmaddubsw"} [1] : vector<16x4xi32> to vector<16xi32>
// PAIRS-NOT:     vpdpbusd
// F32-LABEL:   func.func @
// F32-NOT:       vector.multi_reduction
// F32-NOT:       math.roundeven
// F32-AVX512:    arith.sitofp {{.*}} : vector<128xi32> to vector<128xf32>
// F32-AVX2:      arith.sitofp {{.*}} : vector<64xi32> to vector<64xf32>
// F32-SSE:       arith.sitofp {{.*}} : vector<32xi32> to vector<32xf32>
// F32:           vector.fma
// INT8-LABEL:  func.func @
// INT8-NOT:      vector.multi_reduction
// INT8:          arith.sitofp {{.*}} : vector<128xi8> to vector<128xf32>
func.func @gemv(%a: tensor<1x256xf32>) -> tensor<1x128xf32> {
  %b = arith.constant dense<0.375> : tensor<256x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<1x256xf32>, tensor<256x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %mm : tensor<1x128xf32>
}
