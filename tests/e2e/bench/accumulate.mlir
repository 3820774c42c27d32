// accumulate.mlir - a stateful function for the `turbine bench` smoke
// tests: every call adds its input to a mutable global and returns the sum
// so far (bench runs it through one Instance).
ml_program.global private mutable @total(dense<0.0> : tensor<8xf32>) : tensor<8xf32>

func.func @accumulate(%x: tensor<8xf32>) -> tensor<8xf32> {
  %t = ml_program.global_load @total : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %sum = linalg.add ins(%t, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  ml_program.global_store @total = %sum : tensor<8xf32>
  return %sum : tensor<8xf32>
}
