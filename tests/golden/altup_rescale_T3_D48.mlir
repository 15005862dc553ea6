!x = tensor<3x48xf32>
!stat = tensor<3xf32>
func.func private @altup_rescale_T3_D48(%x: !x, %target: !stat) -> !x {
  %magnitude = func.call @rms_magnitude_R3_D48_floor(%x) : (tensor<3x48xf32>) -> (tensor<3xf32>)
  %ratio_raw_a64 = stablehlo.convert %target : (tensor<3xf32>) -> tensor<3xf64>
  %ratio_raw_b64 = stablehlo.convert %magnitude : (tensor<3xf32>) -> tensor<3xf64>
  %ratio_raw_64 = stablehlo.divide %ratio_raw_a64, %ratio_raw_b64 : tensor<3xf64>
  %ratio_raw = stablehlo.convert %ratio_raw_64 : (tensor<3xf64>) -> tensor<3xf32>
  %ratio = stablehlo.reduce_precision %ratio_raw, format = e8m7 : !stat
  %ratio_b = stablehlo.broadcast_in_dim %ratio, dims = [0] : (!stat) -> !x
  %scaled_raw = stablehlo.multiply %x, %ratio_b : !x
  %scaled_r = stablehlo.reduce_precision %scaled_raw, format = e8m7 : !x
  %scaled = stablehlo.reshape %scaled_r : (!x) -> !x
  return %scaled : !x
}
