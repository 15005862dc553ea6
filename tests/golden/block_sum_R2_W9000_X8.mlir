!x = tensor<2x9000xf32>
!padded = tensor<2x16384xf32>
!grid = tensor<2x2x1024x8xf32>
!by_thread = tensor<2x1024x2x8xf32>
func.func private @block_sum_R2_W9000_X8(%x: !x) -> tensor<2xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %padded = stablehlo.pad %x, %zero, low = [0, 0], high = [0, 7384], interior = [0, 0] : (!x, tensor<f32>) -> !padded
  %grid = stablehlo.reshape %padded : (!padded) -> !grid
  %by_thread = stablehlo.transpose %grid, dims = [0, 2, 1, 3] : (!grid) -> !by_thread
  %rows = stablehlo.reshape %by_thread : (!by_thread) -> !padded
  %sum = func.call @lane_xor_sum_R2_W16384_X16(%rows) : (tensor<2x16384xf32>) -> (tensor<2xf32>)
  return %sum : tensor<2xf32>
}
