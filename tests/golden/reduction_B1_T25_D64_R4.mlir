!x = tensor<1x25x64xf32>
!y = tensor<1x7x64xf32>
!vm = tensor<1x7xi1>
func.func private @reduction_B1_T25_D64_R4(%x: !x, %valid: tensor<1x25xi1>) -> (!y, !vm, tensor<1xi32>) {
  %kept = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 25, 64>, strides = array<i64: 1, 4, 1>} : (!x) -> !y
  %kept_valid = "stablehlo.slice"(%valid) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 25>, strides = array<i64: 1, 4>} : (tensor<1x25xi1>) -> !vm
  %zeros = stablehlo.constant dense<0.000000e+00> : !y
  %valid_b = stablehlo.broadcast_in_dim %kept_valid, dims = [0, 1] : (!vm) -> tensor<1x7x64xi1>
  %reduced = stablehlo.select %valid_b, %kept, %zeros : tensor<1x7x64xi1>, !y
  %ones = stablehlo.convert %kept_valid : (!vm) -> tensor<1x7xi32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %count = stablehlo.reduce(%ones init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<1x7xi32>, tensor<i32>) -> tensor<1xi32>
  return %reduced, %kept_valid, %count : !y, !vm, tensor<1xi32>
}
