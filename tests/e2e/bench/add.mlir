// A tiny artifact for the `turbine bench` smoke tests: elementwise add.
#identity = affine_map<(d0) -> (d0)>
func.func @add(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %empty = tensor.empty() : tensor<8xf32>
  %sum = linalg.generic
      {indexing_maps = [#identity, #identity, #identity],
       iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}
