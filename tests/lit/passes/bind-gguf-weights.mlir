// bind-gguf-weights.mlir - turbine-bind-gguf-weights: a matmul by the
// transposed linear weight `KEY.T` [K, N] whose KEY a GGUF file holds as
// Q8_0 / Q4_0 [N, K] becomes one linalg.generic over the file's raw blocks
// (an external i8 [N, K/32, 34 | 18] global named as the GGUF tensor,
// carrying its ggml type and logical shape; global-opt/GgufWeights.h); one
// the file holds as F16 / BF16 / F32 reads its [N, K] rows in place (an
// [N, K/32, 32] global) in the same generic's plain form (no scale); a
// constant KEY that the file holds as F32 of the same shape becomes an
// external f32 global; a table read by a gather (the token embedding)
// decodes the selected element from the file's own type (here Q8_0 and
// F16); a weight the file does not hold stays a constant. Shape mismatches
// (the embedding's vocabulary size too), tensors of other types and K not a
// multiple of 32 are errors naming the tensor and the weight.

// RUN: turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=fc.weight:blk.fc:Q8_0:3x64,norm:out_norm:F32:3' | FileCheck %s
// RUN: turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=fc.weight:blk.fc:Q4_0:3x64' | FileCheck %s --check-prefix=Q4
// RUN: turbine-opt %s --split-input-file --turbine-bind-gguf-weights | FileCheck %s --check-prefix=NONE
// RUN: not turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=fc.weight:blk.fc:Q8_0:4x64' 2>&1 >/dev/null | FileCheck %s --check-prefix=SHAPE
// RUN: turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=fc.weight:blk.fc:F16:3x64,emb:tok:Q8_0:4x64' | FileCheck %s --check-prefix=F16
// RUN: turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=emb:tok:F16:4x64' | FileCheck %s --check-prefix=EMB16
// RUN: turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=norm:out_norm:BF16:3' | FileCheck %s --check-prefix=NORM16
// RUN: not turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=emb:tok:F16:5x64' 2>&1 >/dev/null | FileCheck %s --check-prefix=VOCAB
// RUN: not turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=fc.weight:blk.fc:I16:3x64' 2>&1 >/dev/null | FileCheck %s --check-prefix=I16
// RUN: not turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=fc.weight:blk.fc:Q4_K:3x64' 2>&1 >/dev/null | FileCheck %s --check-prefix=Q4K
// RUN: not turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=odd.weight:blk.odd:Q8_0:2x48' 2>&1 >/dev/null | FileCheck %s --check-prefix=ODDK
// RUN: not turbine-opt %s --split-input-file '--turbine-bind-gguf-weights=tensors=fc.weight:blk.fc' 2>&1 >/dev/null | FileCheck %s --check-prefix=SPEC

// SHAPE: error: --weights-from: GGUF tensor 'blk.fc' (4x64xQ8_0) does not match the model's weight 'fc.weight' (3x64xf32, [out, in])
// Q4K: unsupported ggml type Q4_K for a matmul weight (Turbine binds F32, F16, BF16, Q8_0 and Q4_0 matmul weights)
// I16: error: --weights-from: GGUF tensor 'blk.fc' (3x64xI16), bound to the model's weight 'fc.weight' (3x64xf32, [out, in]): unsupported ggml type I16 for a matmul weight
// VOCAB: error: --weights-from: GGUF tensor 'tok' (5x64xF16) does not match the model's weight 'emb' (4x64xf32)

// F16-DAG: #[[EXW:.+]] = #ml_program.extern : tensor<3x2x32xf16>
// F16-DAG: ml_program.global private @blk.fc(#[[EXW]]) : tensor<3x2x32xf16> {turbine.ggml_shape = array<i64: 3, 64>, turbine.ggml_type = "F16"}
// F16-DAG: affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// F16-LABEL: func.func @linear
// F16: %[[W:.+]] = ml_program.global_load_const @blk.fc : tensor<3x2x32xf16>
// F16: %[[A:.+]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [%{{.+}}, 2, 32] : tensor<?x64xf32> into tensor<?x2x32xf32>
// F16: linalg.generic {indexing_maps = [#[[A8:.+]], #[[W8:.+]], #[[C8:.+]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// F16-SAME: ins(%[[A]], %[[W]] : tensor<?x2x32xf32>, tensor<3x2x32xf16>) outs(%{{.+}} : tensor<?x3xf32>)
// F16: arith.extf %{{.+}} : f16 to f32
// F16-NEXT: arith.mulf
// F16-NEXT: arith.addf
// F16-NOT: linalg.generic
// F16-NOT: linalg.matmul
// F16-LABEL: func.func @odd
// F16: linalg.matmul
// F16: ml_program.global private @tok(#{{.+}}) : tensor<4x2x34xi8> {turbine.ggml_shape = array<i64: 4, 64>, turbine.ggml_type = "Q8_0"}
// F16-LABEL: func.func @gather
// F16: %[[T:.+]] = ml_program.global_load_const @tok : tensor<4x2x34xi8>
// F16: linalg.generic
// F16: tensor.extract %[[T]]
// F16: arith.bitcast %{{.+}} : i16 to f16
// F16: arith.sitofp %{{.+}} : i8 to f32
// F16-NOT: arith.constant {turbine.param_name = "emb"}

// NORM16: ml_program.global private @out_norm(#{{.+}}) : tensor<3xbf16> {turbine.ggml_shape = array<i64: 3>, turbine.ggml_type = "BF16"}
// NORM16-LABEL: func.func @linear
// NORM16: %[[N:.+]] = ml_program.global_load_const @out_norm : tensor<3xbf16>
// NORM16: %[[E:.+]] = linalg.generic {{.+}} ins(%[[N]] : tensor<3xbf16>) outs(%{{.+}} : tensor<3xf32>)
// NORM16: arith.extf %{{.+}} : bf16 to f32
// NORM16: return %{{.+}}, %[[E]]

// EMB16-LABEL: func.func @gather
// EMB16: %[[T:.+]] = ml_program.global_load_const @tok : tensor<4x2x32xf16>
// EMB16: linalg.generic
// EMB16: arith.divui
// EMB16: arith.remui
// EMB16: %[[X:.+]] = tensor.extract %[[T]][%{{.+}}, %{{.+}}, %{{.+}}] : tensor<4x2x32xf16>
// EMB16: arith.extf %[[X]] : f16 to f32
// A tied model: the output head is the embedding table (`emb.T`); both
// read the one global.
// EMB16: ml_program.global private @tok(#{{.+}}) : tensor<4x2x32xf16>
// EMB16-NOT: ml_program.global
// EMB16-LABEL: func.func @tied
// EMB16: %[[G:.+]] = ml_program.global_load_const @tok : tensor<4x2x32xf16>
// EMB16: tensor.extract %[[G]]
// EMB16: %[[H:.+]] = ml_program.global_load_const @tok : tensor<4x2x32xf16>
// EMB16: linalg.generic
// EMB16-SAME: ins(%{{.+}}, %[[H]] : tensor<1x2x32xf32>, tensor<4x2x32xf16>)
// EMB16-NOT: arith.constant {turbine.param_name
// ODDK: error: --weights-from: GGUF tensor 'blk.odd' (2x48xQ8_0): K = 48 is not a multiple of the Q8_0 block of 32
// SPEC: error: bind-gguf-weights: malformed tensor 'fc.weight:blk.fc'

// CHECK-DAG: #[[A8:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[LO8:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>
// CHECK-DAG: #[[HI8:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>
// CHECK-DAG: #[[Q8:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3 + 2)>
// CHECK-DAG: #[[C8:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[EXN:.+]] = #ml_program.extern : tensor<3xf32>
// CHECK-DAG: #[[EXW:.+]] = #ml_program.extern : tensor<3x2x34xi8>
// CHECK-DAG: ml_program.global private @out_norm(#[[EXN]]) : tensor<3xf32>
// CHECK-DAG: ml_program.global private @blk.fc(#[[EXW]]) : tensor<3x2x34xi8> {turbine.ggml_shape = array<i64: 3, 64>, turbine.ggml_type = "Q8_0"}
// CHECK-LABEL: func.func @linear
// CHECK: %[[N:.+]] = ml_program.global_load_const @out_norm : tensor<3xf32>
// CHECK: %[[W:.+]] = ml_program.global_load_const @blk.fc : tensor<3x2x34xi8>
// CHECK: %[[A:.+]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [%{{.+}}, 2, 32] : tensor<?x64xf32> into tensor<?x2x32xf32>
// CHECK: linalg.generic {indexing_maps = [#[[A8]], #[[LO8]], #[[HI8]], #[[Q8]], #[[C8]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[A]], %[[W]], %[[W]], %[[W]] : tensor<?x2x32xf32>, tensor<3x2x34xi8>, tensor<3x2x34xi8>, tensor<3x2x34xi8>)
// CHECK: arith.extui
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: arith.bitcast %{{.+}} : i16 to f16
// CHECK: arith.extf
// CHECK: arith.sitofp %{{.+}} : i8 to f32
// CHECK-NOT: linalg.matmul
// CHECK: return %{{.+}}, %[[N]]

// Q4: ml_program.global private @blk.fc(#{{.+}}) : tensor<3x2x18xi8> {turbine.ggml_shape = array<i64: 3, 64>, turbine.ggml_type = "Q4_0"}
// Q4-LABEL: func.func @linear
// Q4: arith.constant {turbine.param_name = "norm"}
// Q4: tensor.expand_shape %arg0 {{\[}}[0], [1, 2, 3]] output_shape [%{{.+}}, 2, 2, 16] : tensor<?x64xf32> into tensor<?x2x2x16xf32>
// Q4: linalg.generic
// Q4-SAME: iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]
// Q4: arith.andi
// Q4: arith.shrui
// Q4: linalg.index 3
// Q4: arith.select
// Q4: arith.subi
// Q4-NOT: linalg.matmul

// NONE-LABEL: func.func @linear
// NONE: linalg.matmul

func.func @linear(%a: tensor<?x64xf32>) -> (tensor<?x3xf32>, tensor<3xf32>) {
  %w = arith.constant {turbine.param_name = "fc.weight.T"} dense<0.5> : tensor<64x3xf32>
  %n = arith.constant {turbine.param_name = "norm"} dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %p = linalg.matmul ins(%a, %w : tensor<?x64xf32>, tensor<64x3xf32>) outs(%f : tensor<?x3xf32>) -> tensor<?x3xf32>
  return %p, %n : tensor<?x3xf32>, tensor<3xf32>
}

// -----

// A weight the file does not hold (or no file) stays the model's constant.
// CHECK-LABEL: func.func @odd
// CHECK: linalg.matmul
// Q4-LABEL: func.func @odd
// Q4: linalg.matmul
func.func @odd(%a: tensor<1x48xf32>) -> tensor<1x2xf32> {
  %w = arith.constant {turbine.param_name = "odd.weight.T"} dense<0.25> : tensor<48x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %p = linalg.matmul ins(%a, %w : tensor<1x48xf32>, tensor<48x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %p : tensor<1x2xf32>
}

// -----

// The token embedding: a gather of rows of the table `emb`.
func.func @gather(%ids: tensor<2xi64>) -> tensor<2x64xf32> {
  %t = arith.constant {turbine.param_name = "emb"} dense<0.5> : tensor<4x64xf32>
  %e = tensor.empty() : tensor<2x64xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2xi64>) outs(%e : tensor<2x64xf32>) {
  ^bb0(%id: i64, %out: f32):
    %r = arith.index_cast %id : i64 to index
    %c = linalg.index 1 : index
    %x = tensor.extract %t[%r, %c] : tensor<4x64xf32>
    linalg.yield %x : f32
  } -> tensor<2x64xf32>
  return %g : tensor<2x64xf32>
}

// -----

// Tied: the token embedding's table is also the output head's weight.
func.func @tied(%ids: tensor<2xi64>, %x: tensor<1x64xf32>) -> (tensor<2x64xf32>, tensor<1x4xf32>) {
  %t = arith.constant {turbine.param_name = "emb"} dense<0.5> : tensor<4x64xf32>
  %h = arith.constant {turbine.param_name = "emb.T"} dense<0.5> : tensor<64x4xf32>
  %e = tensor.empty() : tensor<2x64xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2xi64>) outs(%e : tensor<2x64xf32>) {
  ^bb0(%id: i64, %out: f32):
    %r = arith.index_cast %id : i64 to index
    %c = linalg.index 1 : index
    %v = tensor.extract %t[%r, %c] : tensor<4x64xf32>
    linalg.yield %v : f32
  } -> tensor<2x64xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x4xf32>) -> tensor<1x4xf32>
  %p = linalg.matmul ins(%x, %h : tensor<1x64xf32>, tensor<64x4xf32>) outs(%f : tensor<1x4xf32>) -> tensor<1x4xf32>
  return %g, %p : tensor<2x64xf32>, tensor<1x4xf32>
}
