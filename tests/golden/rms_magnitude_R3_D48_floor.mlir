!x = tensor<3x48xf32>
!stat = tensor<3xf32>
func.func private @rms_magnitude_R3_D48_floor(%x: !x) -> !stat {
  %square_raw = stablehlo.multiply %x, %x : !x
  %square_r = stablehlo.reduce_precision %square_raw, format = e8m7 : !x
  %square = stablehlo.reshape %square_r : (!x) -> !x
  %ms = func.call @row_mean_R3_W48(%square) : (tensor<3x48xf32>) -> (tensor<3xf32>)
  %floor_s = stablehlo.constant dense<0x37280000> : tensor<f32>
  %floor = stablehlo.broadcast_in_dim %floor_s, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %floored = stablehlo.maximum %ms, %floor : !stat
  %root_raw_x64 = stablehlo.convert %floored : (tensor<3xf32>) -> tensor<3xf64>
  %root_raw_64 = stablehlo.sqrt %root_raw_x64 : tensor<3xf64>
  %root_raw = stablehlo.convert %root_raw_64 : (tensor<3xf64>) -> tensor<3xf32>
  %root = stablehlo.reduce_precision %root_raw, format = e8m7 : !stat
  return %root : !stat
}
